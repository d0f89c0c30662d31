//! Custom resources defined in Rust, shared by the derive's tests: a
//! namespaced kind with every kind of field, its status and scale, a
//! second version of it, and a cluster-scoped kind.

use std::collections::BTreeMap;

use k8s_client::apimachinery::pkg::api::resource::Quantity;
use k8s_client::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_client::apimachinery::pkg::util::intstr::IntOrString;
use k8s_client::{CustomResource, Schema};

/// A greeting to keep in `replicas` copies.
#[derive(CustomResource, Clone, Debug, Default, PartialEq)]
#[resource(
    group = "derive.example.com",
    version = "v1",
    kind = "Salute",
    namespaced,
    status = "SaluteStatus",
    shortname = "sal",
    category = "derived",
    printcolumn(name = "Message", type_ = "string", json_path = ".spec.message"),
    selectable = ".spec.color",
    scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas")
)]
#[schema(validation(rule = "self.message != 'forbidden'", message = "that greeting is forbidden"))]
pub struct SaluteSpec {
    /// What to say.
    #[schema(min_length = 1, max_length = 100)]
    pub message: String,
    /// How many copies to keep.
    #[schema(minimum = 0, maximum = 10)]
    pub replicas: Option<i32>,
    /// How it looks.
    pub settings: Option<Settings>,
    /// The color it is written in.
    pub color: Option<Color>,
    /// Where it is served.
    #[schema(list_type = "map", list_map_keys = ["name"])]
    pub ports: Option<Vec<Port>>,
    /// Labels to put on the copies.
    pub labels: Option<BTreeMap<String, String>>,
    /// A size, as a number or a percentage.
    pub size: Option<IntOrString>,
    /// Memory for each copy.
    pub memory: Option<Quantity>,
    /// Not before this time.
    pub not_before: Option<Time>,
    /// Anything else, kept as it is.
    #[schema(preserve_unknown_fields)]
    pub extra: Option<serde_json::Value>,
    /// Named on the wire otherwise.
    #[schema(rename = "ttl_seconds")]
    pub time_to_live: Option<u32>,
    /// Tags, each once.
    #[schema(list_type = "set")]
    pub tags: Vec<String>,
}

/// How a greeting looks.
#[derive(Schema, Clone, Debug, Default, PartialEq)]
pub struct Settings {
    /// Bold or not.
    pub bold: Option<bool>,
    /// The font's name.
    #[schema(pattern = "^[a-z]+$")]
    pub font: Option<String>,
    /// The size in points.
    pub points: Option<f64>,
}

/// A color.
#[derive(Schema, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Color {
    /// Red.
    #[schema(rename = "red")]
    Red,
    /// Green.
    #[schema(rename = "green")]
    Green,
}

/// A port a greeting is served on.
#[derive(Schema, Clone, Debug, Default, PartialEq)]
pub struct Port {
    /// Its name, the key of the list.
    pub name: String,
    /// Its number.
    #[schema(minimum = 1, maximum = 65535)]
    pub port: i32,
}

/// What was last seen of a greeting.
#[derive(Schema, Clone, Debug, Default, PartialEq)]
pub struct SaluteStatus {
    /// Copies that exist.
    pub replicas: Option<i32>,
    /// The generation last acted on.
    pub observed_generation: Option<i64>,
    /// The conditions, by type.
    #[schema(list_type = "map", list_map_keys = ["type"])]
    pub conditions: Option<Vec<Condition>>,
}

/// The first version of the kind: the same greeting, fewer fields.
pub mod v1alpha1 {
    use k8s_client::CustomResource;

    /// A greeting, as v1alpha1 has it.
    #[derive(CustomResource, Clone, Debug, Default, PartialEq)]
    #[resource(
        group = "derive.example.com",
        version = "v1alpha1",
        kind = "Salute",
        namespaced,
        status = "super::SaluteStatus",
        shortname = "sal",
        category = "derived",
        scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas")
    )]
    pub struct SaluteSpec {
        /// What to say.
        pub message: String,
        /// How many copies to keep.
        pub replicas: Option<i32>,
    }
}

/// A cluster-scoped kind without status.
#[derive(CustomResource, Clone, Debug, Default, PartialEq)]
#[resource(group = "derive.example.com", version = "v1", kind = "Policy")]
pub struct PolicySpec {
    /// Whether it holds.
    pub enforced: bool,
    /// Rules by name.
    pub rules: BTreeMap<String, Rule>,
}

/// A rule of a policy.
#[derive(Schema, Clone, Debug, Default, PartialEq)]
pub struct Rule {
    /// What it allows.
    pub allow: Vec<String>,
    /// Its weight.
    #[schema(default = 1)]
    pub weight: Option<i64>,
}
