//! The `Greeting` custom resource of the greeting examples, defined in
//! Rust with `#[derive(CustomResource)]`: the same CRD as
//! `examples/crds/greeting.yaml`, which the `greeting_operator` example
//! takes through the generator. `cargo run -p k8s-client-examples
//! --example greeting_crd` prints it as YAML.

use k8s_client::apimachinery::pkg::apis::meta::v1::Time;
use k8s_client::{CustomResource, Schema};

/// A greeting to keep in `replicas` ConfigMaps.
#[derive(CustomResource, Clone, Debug, Default, PartialEq)]
#[resource(group = "example.com", version = "v1", kind = "Greeting", namespaced, status = "GreetingStatus")]
pub struct GreetingSpec {
    /// What the ConfigMaps say.
    pub message: String,
    /// How many ConfigMaps to keep.
    #[schema(default = 1, minimum = 0, maximum = 10)]
    pub replicas: Option<i32>,
}

/// What the operator last did.
#[derive(Schema, Clone, Debug, Default, PartialEq)]
pub struct GreetingStatus {
    /// The generation of the spec the status is about.
    pub observed_generation: Option<i64>,
    /// The conditions, one per type.
    #[schema(list_type = "map", list_map_keys = ["type"])]
    pub conditions: Option<Vec<GreetingCondition>>,
}

/// One condition of a greeting, as `metav1.Condition` but with its status
/// one of three values.
#[derive(Schema, Clone, Debug, Default, PartialEq)]
pub struct GreetingCondition {
    /// The condition's type (`Ready`).
    #[schema(rename = "type")]
    pub type_: String,
    /// Whether it holds.
    pub status: ConditionStatus,
    /// The generation it was set for.
    pub observed_generation: Option<i64>,
    /// When the status last changed.
    pub last_transition_time: Time,
    /// Why, in one CamelCase word.
    pub reason: String,
    /// Why, for people.
    pub message: String,
}

/// Whether a condition holds.
#[derive(Schema, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ConditionStatus {
    /// It holds.
    True,
    /// It does not.
    False,
    /// Not known.
    #[default]
    Unknown,
}
