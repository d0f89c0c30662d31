//! Golden test of CRD input: the manifests under `tests/fixtures/crds`
//! (one per group of schema features) generate exactly the crate under
//! `tests/golden/crds`, which `make test` also compiles. The other tests
//! here say, feature by feature, what the mapping is.
//! `UPDATE_GOLDEN=1 cargo test -p k8s-client-gen --test crd_golden`
//! accepts a deliberate change; review the diff.

mod support;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use k8s_client_gen::Generated;
use k8s_client_gen::emit::Options;
use support::file;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/crds")
}

fn generated() -> &'static Generated {
    static GENERATED: OnceLock<Generated> = OnceLock::new();
    GENERATED.get_or_init(|| {
        let opts = Options {
            crate_name: "crd-fixtures".into(),
            crate_version: None,
            runtime_path: Some("../../../../runtime".into()),
            client_path: Some("../../../../generated".into()),
            group_names: Default::default(),
            standalone: true,
            source_label: "crds".into(),
            sources_in_label: false,
        };
        k8s_client_gen::generate_from_crds(&[fixtures()], &opts).expect("fixtures generate")
    })
}

fn kind_file(rel: &str) -> String {
    file(&generated().output, rel)
}

#[test]
fn fixtures_match_golden_files() {
    support::assert_golden(&generated().output, &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/crds"));
}

#[test]
fn other_documents_and_unserved_versions_are_skipped_with_a_note() {
    let notes = &generated().notes;
    assert!(
        notes.iter().any(|n| n.contains("01-widgets.yaml: document 0: skipped Namespace \"widgets-system\"")),
        "{notes:?}"
    );
    assert!(notes.iter().any(|n| n.contains("widgets.example.com v1alpha1 is not served")), "{notes:?}");
}

#[test]
fn paths_follow_the_published_schema_names() {
    let files = &generated().output.files;
    // example.com/v1 Widget → com.example.v1.Widget; 3scale.net → net._3scale.
    for rel in [
        "src/com/example/v1/widget.rs",
        "src/com/example/v1beta1/widget.rs",
        "src/com/example/features/v1/scalars.rs",
        "src/net/_3scale/v1alpha1/ap_icast.rs",
    ] {
        assert!(files.contains_key(Path::new(rel)), "{rel} missing");
    }
    let clientset = kind_file("src/clientset/mod.rs");
    assert!(clientset.contains("pub fn example_com_v1(&self)"), "{clientset}");
    assert!(clientset.contains("pub fn _3scale_net_v1alpha1("), "{clientset}");
}

#[test]
fn kinds_document_what_the_crd_says_beside_the_schema() {
    let widget = kind_file("src/com/example/v1/widget.rs");
    for needle in [
        "/// A Widget is a thing with replicas.",
        "/// Custom resource `widgets.example.com` (example.com/v1), namespaced; stored as v1.",
        "/// Short names: wd.",
        "/// Categories: all, examples.",
        "/// - `Replicas` (integer, `.spec.replicas`): Desired replicas.",
        "/// Validation: `self.replicas <= 100` (at most 100 replicas).",
        "/// Default: `1`.",
    ] {
        assert!(widget.contains(needle), "{needle} not in\n{widget}");
    }
    let beta = kind_file("src/com/example/v1beta1/widget.rs");
    assert!(beta.contains("/// Deprecated: example.com/v1beta1 Widget is deprecated; use example.com/v1"), "{beta}");
}

#[test]
fn subresources_and_verbs() {
    let v1 = kind_file("src/clientset/example_com_v1.rs");
    assert!(v1.contains("impl ::k8s_client_runtime::rest::HasStatus for crate::com::example::v1::Widget {}"), "{v1}");
    assert!(v1.contains("impl ::k8s_client_runtime::rest::HasScale for crate::com::example::v1::Widget"), "{v1}");
    assert!(v1.contains("type Scale = ::k8s_client::api::autoscaling::v1::Scale;"), "{v1}");
    let beta = kind_file("src/clientset/example_com_v1beta1.rs");
    assert!(beta.contains("HasStatus for crate::com::example::v1beta1::Widget"));
    assert!(!beta.contains("HasScale"));
    let cargo = kind_file("Cargo.toml");
    assert!(
        cargo.contains(&format!(
            "k8s-client = {{ version = \"{}\", path = \"../../../../generated\", default-features = false, features = [\"autoscaling\"] }}",
            env!("CARGO_PKG_VERSION")
        )),
        "{cargo}"
    );
    // Informers and listers for every served kind.
    assert!(kind_file("src/informers/features_example_com_v1.rs").contains("pub fn deeps(&self)"));
    assert!(kind_file("src/listers/example_com_v1.rs").contains("pub type WidgetLister"));
}

#[test]
fn apimachinery_shapes_are_taken_from_k8s_client() {
    let widget = kind_file("src/com/example/v1/widget.rs");
    let unwrapped: String = widget.split_whitespace().collect();
    assert!(unwrapped.contains("ThinVec<::k8s_client::apimachinery::pkg::apis::meta::v1::Condition,>"), "{widget}");
    assert!(widget.contains("pub metadata: ::k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta,"));
    // The condition's status enum went with it.
    assert!(!widget.contains("Status {\n    /// `\"True\"`"));
    let objects = kind_file("src/com/example/features/v1/objects.rs");
    assert!(
        objects.contains("::std::boxed::Box<::k8s_client::apimachinery::pkg::apis::meta::v1::LabelSelector>,"),
        "{objects}"
    );
    let list = kind_file("src/com/example/v1/widget_list.rs");
    assert!(list.contains("::k8s_client::apimachinery::pkg::apis::meta::v1::ListMeta"), "{list}");
}

#[test]
fn scalars_formats_nullable_and_enums() {
    let s = kind_file("src/com/example/features/v1/scalars.rs");
    for needle in [
        // int-or-string, with or without the anyOf that spells it out
        "pub port: ::k8s_client::apimachinery::pkg::util::intstr::IntOrString,",
        "pub max_surge: Option<::k8s_client::apimachinery::pkg::util::intstr::IntOrString>,",
        // formats
        "pub created_at: Option<::k8s_client::apimachinery::pkg::apis::meta::v1::Time>,",
        "pub day: Option<::k8s_client_runtime::LeanString>,",
        "pub small: Option<i32>,",
        "pub big: Option<i64>,",
        "pub plain: Option<i64>,",
        "pub ratio: Option<f64>,",
        "pub blob: Option<::k8s_client_runtime::codec::ByteString>,",
        // required is plain; required and nullable is an Option written as null
        "pub name: ::k8s_client_runtime::LeanString,",
        "pub nullable_but_required: Option<::k8s_client_runtime::LeanString>,",
        "out.field(\"nullableButRequired\", &self.nullable_but_required)?;",
        // defaults are documented
        "/// Default: `\"30s\"`.",
        // string enums are enums with a fallback; others the plain type
        "pub mode: Option<crate::com::example::features::v1::ScalarsSpecMode>,",
        "/// Allowed values: `1`, `2`, `3`.\n    pub level: Option<i64>,",
        "if let ::std::option::Option::Some(value) = &self.level {\n            out.field(\"level\", value)?;",
        "pub flexible: Option<::k8s_client::apimachinery::pkg::util::intstr::IntOrString>,",
        "/// Allowed values: `\"a\"`, `1`, `true`.",
        "pub mixed: Option<::serde_json::Value>,",
        "pub toggles: Option<bool>,",
        "pub with_null: Option<crate::com::example::features::v1::ScalarsSpecWithNull>,",
    ] {
        assert!(s.contains(needle), "{needle} not in\n{s}");
    }
    // Values named as variants, the fallback renamed when a value takes `Other`.
    for needle in [
        "    Fast,",
        "    Slow,",
        "    Empty,",
        "    Http11,",
        "    Other,",
        "    _3d,",
        "    Other_2(::std::string::String),",
    ] {
        assert!(s.contains(needle), "{needle} not in the enum");
    }
    assert!(s.contains("\"HTTP/1.1\" => ScalarsSpecMode::Http11,"));
}

#[test]
fn objects_maps_raw_json_and_nesting() {
    let o = kind_file("src/com/example/features/v1/objects.rs");
    for needle in [
        "pub labels: Option<::k8s_client_runtime::Map>,",
        "::k8s_client_runtime::Map<crate::com::example::features::v1::ObjectsSpecPorts>,",
        "pub annotations_any: Option<::k8s_client_runtime::Map<::serde_json::Value>>,",
        "pub anything: Option<::serde_json::Value>,",
        "pub config: Option<::serde_json::Value>,",
        "/// Raw JSON, keeping unknown fields; known fields: `known`.",
        "pub template: Option<::serde_json::Value>,",
        "pub empty: Option<::serde_json::Value>,",
        "pub matrix: Option<\n        ::k8s_client_runtime::ThinVec<::k8s_client_runtime::ThinVec<i64>>,\n    >,",
        "::k8s_client_runtime::ThinVec<\n                crate::com::example::features::v1::ObjectsSpecGrid,\n            >,",
        "pub choice: Option<::serde_json::Value>,",
        "pub struct ObjectsSpecTypedTemplate {",
        "pub metadata: Option<\n        ::std::boxed::Box<::k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta>,\n    >,",
        "pub struct ObjectsSpecEntries {",
    ] {
        assert!(o.contains(needle), "{needle} not in\n{o}");
    }
}

#[test]
fn property_names_are_escaped_by_one_rule() {
    let n = kind_file("src/net/_3scale/v1alpha1/ap_icast.rs");
    for (wire, rust) in [
        ("type", "type_"),
        ("Self", "self_"),
        ("self", "self_2"),
        ("match", "match_"),
        ("3d", "_3d"),
        ("$ref", "ref_path"),
        ("$", "dollar"),
        ("-", "dash"),
        ("_", "underscore"),
        ("x-forwarded-for", "x_forwarded_for"),
        ("example.com/weight", "example_com_weight"),
        ("a.b", "a_b"),
        ("FooBar", "foo_bar"),
        ("fooBar", "foo_bar_2"),
        ("foo_bar", "foo_bar_3"),
        ("größe", "gr_u00f6_u00df_e"),
    ] {
        // The property is written from the field of that name.
        let write = format!("out.field({wire:?}, value)?;");
        let at = n.find(&write).unwrap_or_else(|| panic!("{wire} missing"));
        let reads = n[..at].trim_end().lines().next_back().unwrap().trim();
        assert_eq!(reads, format!("if let ::std::option::Option::Some(value) = &self.{rust} {{"), "{wire}");
        assert!(n.contains(&format!("    pub {rust}: ")), "{rust} not declared");
    }
    // Two paths that spell the same name: the shallower keeps it.
    assert!(n.contains("pub nested_inner: Option<\n        ::std::boxed::Box<crate::net::_3scale::v1alpha1::APIcastSpecNestedInner>,\n    >,"), "{n}");
    assert!(n.contains("pub inner: Option<\n        ::std::boxed::Box<crate::net::_3scale::v1alpha1::APIcastSpecNestedInner_2>,\n    >,"), "{n}");
}

#[test]
fn deep_schemas_generate() {
    let d = kind_file("src/com/example/features/v1/deep.rs");
    // The kind, spec and 31 levels of `next` (33 object levels in all), each
    // a type of its own, with unique names.
    // (Each with its apply configuration beside it.)
    let structs: Vec<&str> = d.lines().filter(|l| l.starts_with("pub struct ") && !l.ends_with("Apply {")).collect();
    assert_eq!(structs.len(), 33, "{structs:#?}");
    assert_eq!(d.lines().filter(|l| l.starts_with("pub struct ") && l.ends_with("Apply {")).count(), 33);
    let mut names: Vec<&str> = structs.iter().map(|l| l.split_whitespace().nth(2).unwrap()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 33);
}

#[test]
fn kinds_that_are_not_upper_camel_case_get_type_names_of_their_own() {
    let files = &generated().output.files;
    // `postgresql` is `Postgresql` in `postgresql.rs`; `backup` and `Backup`
    // of one group/version are `Backup_2` and `Backup` (sorted: upper case
    // first); `operator-config` is `OperatorConfig`.
    for rel in [
        "src/do_/zalan/acid/v1/postgresql.rs",
        "src/do_/zalan/acid/v1/postgresql_list.rs",
        "src/do_/zalan/acid/v1/backup.rs",
        "src/do_/zalan/acid/v1/backup_2.rs",
        "src/do_/zalan/acid/v1/backup_list.rs",
        "src/do_/zalan/acid/v1/backup_job_list.rs",
        "src/do_/zalan/acid/v1/operator_config.rs",
    ] {
        assert!(files.contains_key(Path::new(rel)), "{rel} missing");
    }
    let module = kind_file("src/do_/zalan/acid/v1/mod.rs");
    for needle in [
        "mod postgresql;\npub use self::postgresql::{Postgresql, PostgresqlSpec, PostgresqlSpecMode};",
        "mod postgresql_list;\npub use self::postgresql_list::PostgresqlList;",
        "mod backup_2;\npub use self::backup_2::{Backup_2, Backup_2Spec};",
        "pub use self::operator_config::OperatorConfig;",
    ] {
        assert!(module.contains(needle), "{needle} not in\n{module}");
    }
    // On the wire, the kind is as declared.
    let pg = kind_file("src/do_/zalan/acid/v1/postgresql.rs");
    const META: &str = "__ObjectMeta";
    assert_eq!(
        support::resource_args(&pg),
        format!(
            r#"Postgresql, "acid.zalan.do", "v1", "acid.zalan.do/v1", "postgresql", "postgresqls", Namespaced, "postgresqlList", {META}"#
        )
    );
    let backup = kind_file("src/do_/zalan/acid/v1/backup_2.rs");
    assert_eq!(
        support::resource_args(&backup),
        format!(
            r#"Backup_2, "acid.zalan.do", "v1", "acid.zalan.do/v1", "backup", "backups", Namespaced, "backupList", {META}"#
        )
    );
    // A list kind that is not `<kind>List` is the CRD's.
    let backup = kind_file("src/do_/zalan/acid/v1/backup.rs");
    assert_eq!(
        support::resource_args(&backup),
        format!(
            r#"Backup, "acid.zalan.do", "v1", "acid.zalan.do/v1", "Backup", "backupjobs", Cluster, "BackupJobList", {META}"#
        )
    );
    let clients = kind_file("src/clientset/acid_zalan_do_v1.rs");
    assert!(clients.contains("pub fn postgresqls(&self, namespace: &str) -> PostgresqlClient"), "{clients}");
    assert!(clients.contains("pub fn backups(&self, namespace: &str) -> Backup_2Client"), "{clients}");
    assert!(clients.contains("pub fn backupjobs(&self) -> BackupClient"), "{clients}");
    assert!(kind_file("src/listers/acid_zalan_do_v1.rs").contains("pub type PostgresqlLister"));
}

#[test]
fn doc_comments_break_lines_at_every_line_break_and_escape_what_rustc_refuses() {
    let pg = kind_file("src/do_/zalan/acid/v1/postgresql.rs");
    for needle in [
        "/// Line one.\n/// Line two, after a lone carriage return.\n/// Line three \\u{202e}right-to-left\\u{202c}.\n",
        "    /// Team\n    /// id\n",
        "    /// `\"a\\u{202e}b\"`\n    AU202eB,",
    ] {
        assert!(pg.contains(needle), "{needle} not in\n{pg}");
    }
    for (path, text) in &generated().output.files {
        assert!(!text.contains('\r'), "{} holds a carriage return", path.display());
        assert!(!text.contains('\u{202e}'), "{} holds a right-to-left override", path.display());
    }
}

#[test]
fn groups_are_named_by_their_whole_name_and_never_as_a_built_in() {
    let clientset = kind_file("src/clientset/mod.rs");
    for accessor in ["operator_alpha_example_com_v1", "operator_beta_example_com_v1", "autoscaling_example_com_v1"] {
        assert!(clientset.contains(&format!("pub fn {accessor}(")), "{accessor}: {clientset}");
    }
    assert!(!clientset.contains("pub fn autoscaling_v1("), "{clientset}");
    let informers = kind_file("src/informers/mod.rs");
    assert!(informers.contains("fn autoscaling_example_com_v1("), "{informers}");
    // The same kind in two groups: two types, in two modules.
    assert!(kind_file("src/com/example/alpha/operator/v1/installation.rs").contains("pub struct Installation"));
    assert!(kind_file("src/com/example/beta/operator/v1/installation.rs").contains("pub struct Installation"));
}

#[test]
fn aliases_of_kinds_named_like_each_others_items_stay_apart() {
    let listers = kind_file("src/listers/aliases_example_com_v1.rs");
    // `HubNamespace`'s lister keeps its name; `Hub`'s namespace lister is
    // the runtime's type, said so in the docs.
    assert_eq!(listers.matches("pub type HubNamespaceLister =").count(), 1, "{listers}");
    assert!(listers.contains("pub type HubNamespaceLister = ::k8s_client_runtime::cache::Lister<"), "{listers}");
    assert!(listers.contains("Its namespace lister is `NamespaceLister<Hub>`"), "{listers}");
    // `Hub` lists as `HubCollection`; `HubList` and `HubStatus` are kinds
    // of their own, and `Hub`'s status type is told apart.
    assert!(kind_file("src/com/example/aliases/v1/hub_collection.rs").contains("pub struct HubCollection"));
    assert!(kind_file("src/com/example/aliases/v1/hub_list.rs").contains("pub struct HubList "));
    assert!(kind_file("src/com/example/aliases/v1/hub_status.rs").contains("pub struct HubStatus "));
    assert!(
        kind_file("src/com/example/aliases/v1/hub.rs")
            .contains("pub status: Option<crate::com::example::aliases::v1::HubStatus_2>")
    );
    let clients = kind_file("src/clientset/aliases_example_com_v1.rs");
    for alias in ["HubClient", "HubListClient", "HubNamespaceClient", "HubStatusClient"] {
        assert_eq!(clients.matches(&format!("pub type {alias} =")).count(), 1, "{alias}");
    }
}

#[test]
fn every_generated_text_names_what_the_crate_has() {
    let files = &generated().output.files;
    let crate_text: String = files.values().map(String::as_str).collect();
    // Every accessor a comment shows (`factory.x()`, `clientset.x()`,
    // `.y(..)`) is a function of this crate.
    let mut shown = 0;
    for (rel, text) in files {
        for line in text.lines().filter(|l| l.trim_start().starts_with("//")) {
            for code in line.split('`').skip(1).step_by(2) {
                for call in code.split('.').skip(1) {
                    let Some((name, _)) = call.split_once('(') else { continue };
                    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                        continue;
                    }
                    if ["list", "informer", "start"].contains(&name) {
                        continue; // the runtime's
                    }
                    shown += 1;
                    assert!(
                        crate_text.contains(&format!("fn {name}(")),
                        "{}: `{code}` names `{name}`, which the crate lacks",
                        rel.display()
                    );
                }
            }
        }
    }
    assert!(shown >= 4, "only {shown} accessors shown in comments");
    // Without group features, Cargo.toml does not speak of them; by default
    // it has informers (custom resources have no exec or port-forward).
    let cargo = file(&generated().output, "Cargo.toml");
    assert!(
        cargo.contains("default = [\"informers\"]") && !cargo.contains("Every API group is on by default"),
        "{cargo}"
    );
    assert!(!cargo.contains("ws = "), "{cargo}");
}

#[test]
fn apply_configurations_of_custom_resources_hold_the_kubernetes_crates() {
    let widget = kind_file("src/com/example/v1/widget.rs");
    // Metadata is the Kubernetes crate's apply configuration, and its
    // builders are the kind's own too.
    assert!(
        widget.contains(
            "pub metadata: Option<\n        ::k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMetaApply,\n    >,"
        ),
        "{widget}"
    );
    for method in
        ["with_name", "with_namespace", "with_labels", "with_annotations", "with_owner_references", "with_finalizers"]
    {
        assert!(widget.contains(&format!("    pub fn {method}(")), "{method} missing: {widget}");
    }
    assert!(
        widget.contains("Item = ::k8s_client::apimachinery::pkg::apis::meta::v1::OwnerReferenceApply,"),
        "{widget}"
    );
    // Served with patch and a status subresource: both extractions and the
    // apply body.
    assert!(widget.contains("::k8s_client_runtime::apply::extract(object, field_manager, \"\")"), "{widget}");
    assert!(widget.contains("::k8s_client_runtime::apply::extract(object, field_manager, \"status\")"), "{widget}");
    assert!(
        widget.contains("impl ::k8s_client_runtime::apply::ApplyConfiguration<Widget> for WidgetApply {}"),
        "{widget}"
    );
    let manifest = &generated().output.files[std::path::Path::new("Cargo.toml")];
    assert!(manifest.contains("\napply = [\"k8s-client/apply\"]\n"), "{manifest}");
}
