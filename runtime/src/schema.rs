//! OpenAPI schemas of Rust types, for the CustomResourceDefinitions that
//! `#[derive(CustomResource)]` writes (the generated crate's `derive`
//! feature).
//!
//! # When to use what
//! - **`#[derive(k8s_client::CustomResource)]`** on a spec struct, and
//!   **`#[derive(k8s_client::Schema)]`** on every struct and enum it holds:
//!   the kind, its `crd()` and its structural schema. This module is what
//!   their expansions call.
//! - **[`Schema`] by hand**, for a type no derive can describe (one that
//!   serializes itself): return its structural schema.
//! - **[`merge_crds`]**, for a kind with several versions (one module per
//!   version, each deriving its own kind): one CRD serving them all.
//! - **[`to_yaml`]**, for a manifest `kubectl apply -f` and Helm charts use.
//!
//! Structural schemas do not refer to one another: every schema here is a
//! tree, each type's schema written in full where it is held.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map as JsonMap, Value};

/// A type's structural OpenAPI v3 schema, as a CRD's
/// `openAPIV3Schema` holds it.
pub trait Schema {
    /// The schema, a JSON object.
    fn schema() -> Value;
}

/// A type's [`Schema::schema`].
pub type SchemaFn = fn() -> Value;

/// A schema given as a JSON template with other types' schemas placed in
/// it: each `(pointer, schema)` puts `schema()` at the JSON pointer,
/// keeping the keywords the template already has there (a field's
/// description and validation win over the held type's). What derived
/// [`Schema`] impls call.
///
/// A type holding itself through others (which no derive sees) would be an
/// endless tree: below [`MAX_DEPTH`] nested schemas, a held type's schema
/// is cut to an object preserving unknown fields.
pub fn from_template(template: &str, places: &[(&str, SchemaFn)]) -> Value {
    let mut root: Value = serde_json::from_str(template).unwrap_or_else(|_| Value::Object(JsonMap::new()));
    let Some(_depth) = DepthGuard::enter() else {
        return serde_json::json!({
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
            "description": format!("Nested deeper than {MAX_DEPTH} schemas: a type holds itself."),
        });
    };
    for (pointer, schema) in places {
        if let Some(Value::Object(at)) = root.pointer_mut(pointer)
            && let Value::Object(held) = schema()
        {
            for (key, value) in held {
                at.entry(key).or_insert(value);
            }
        }
    }
    root
}

/// How deep schemas nest in [`from_template`] before one is cut.
pub const MAX_DEPTH: usize = 64;

thread_local! {
    static DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// One level of [`from_template`]'s nesting, left when dropped.
struct DepthGuard;

impl DepthGuard {
    fn enter() -> Option<DepthGuard> {
        DEPTH.with(|d| {
            if d.get() >= MAX_DEPTH {
                return None;
            }
            d.set(d.get() + 1);
            Some(DepthGuard)
        })
    }
}

impl Drop for DepthGuard {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

fn typed(ty: &str, format: Option<&str>) -> Value {
    let mut map = JsonMap::new();
    map.insert("type".into(), ty.into());
    if let Some(format) = format {
        map.insert("format".into(), format.into());
    }
    Value::Object(map)
}

macro_rules! schema_of {
    ($($ty:ty => $kind:literal $(, $format:literal)?;)*) => {
        $(impl Schema for $ty {
            fn schema() -> Value {
                #[allow(unused_mut, unused_assignments)]
                let mut format = None;
                $(format = Some($format);)?
                typed($kind, format)
            }
        })*
    };
}

schema_of! {
    String => "string";
    crate::LeanString => "string";
    bool => "boolean";
    i8 => "integer", "int32";
    i16 => "integer", "int32";
    i32 => "integer", "int32";
    i64 => "integer", "int64";
    u8 => "integer", "int32";
    u16 => "integer", "int32";
    u32 => "integer", "int64";
    u64 => "integer", "int64";
    f32 => "number", "float";
    f64 => "number", "double";
}

impl Schema for Value {
    fn schema() -> Value {
        serde_json::json!({ "x-kubernetes-preserve-unknown-fields": true })
    }
}

impl<T: Schema> Schema for Option<T> {
    fn schema() -> Value {
        T::schema()
    }
}

impl<T: Schema> Schema for Box<T> {
    fn schema() -> Value {
        T::schema()
    }
}

fn array(items: Value) -> Value {
    serde_json::json!({ "type": "array", "items": items })
}

fn map(values: Value) -> Value {
    serde_json::json!({ "type": "object", "additionalProperties": values })
}

impl<T: Schema> Schema for Vec<T> {
    fn schema() -> Value {
        array(T::schema())
    }
}

impl<T: Schema> Schema for crate::ThinVec<T> {
    fn schema() -> Value {
        array(T::schema())
    }
}

impl<T: Schema> Schema for BTreeMap<String, T> {
    fn schema() -> Value {
        map(T::schema())
    }
}

impl<T: Schema, S> Schema for HashMap<String, T, S> {
    fn schema() -> Value {
        map(T::schema())
    }
}

impl Schema for crate::Map {
    fn schema() -> Value {
        map(String::schema())
    }
}

/// Why [`merge_crds`] could not merge.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No CRD was given.
    #[error("no CustomResourceDefinition to merge")]
    Empty,
    /// A CRD is not the JSON of a CustomResourceDefinition.
    #[error("CustomResourceDefinition {index} is not a CustomResourceDefinition: {reason}")]
    Malformed {
        /// Its place in the input.
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// Two CRDs disagree on what must be the same for every version.
    #[error("CustomResourceDefinition {index} has {field} {found}, the first has {expected}")]
    Mismatch {
        /// Its place in the input.
        index: usize,
        /// The field (`spec.group`, `spec.names`, `spec.scope`).
        field: &'static str,
        /// Its value in the first CRD.
        expected: String,
        /// Its value in this one.
        found: String,
    },
    /// The storage version is not among the versions.
    #[error("storage version {0:?} is not one of the versions merged ({1})")]
    NoStorage(String, String),
    /// Two CRDs define the same version.
    #[error("version {0:?} is defined twice")]
    DuplicateVersion(String),
}

/// One CustomResourceDefinition serving every version of `crds` (each the
/// `crd()` of one version of a kind, as kube-rs's `merge_crds`), with
/// `storage` the version objects are stored as. Their group, names and
/// scope must agree.
pub fn merge_crds<C: Serialize + DeserializeOwned>(crds: Vec<C>, storage: &str) -> Result<C, MergeError> {
    let mut values = Vec::with_capacity(crds.len());
    for (index, crd) in crds.iter().enumerate() {
        let value = serde_json::to_value(crd).map_err(|e| MergeError::Malformed { index, reason: e.to_string() })?;
        values.push(value);
    }
    let mut iter = values.into_iter().enumerate();
    let Some((_, mut merged)) = iter.next() else { return Err(MergeError::Empty) };
    let versions_of = |v: &mut Value, index: usize| -> Result<Vec<Value>, MergeError> {
        match v.pointer_mut("/spec/versions").map(Value::take) {
            Some(Value::Array(versions)) => Ok(versions),
            _ => Err(MergeError::Malformed { index, reason: "it has no spec.versions".into() }),
        }
    };
    let mut versions = versions_of(&mut merged, 0)?;
    for (index, mut other) in iter {
        for (field, pointer) in
            [("spec.group", "/spec/group"), ("spec.names", "/spec/names"), ("spec.scope", "/spec/scope")]
        {
            let (expected, found) = (merged.pointer(pointer), other.pointer(pointer));
            if expected != found {
                let show = |v: Option<&Value>| v.map_or_else(|| "nothing".to_owned(), Value::to_string);
                return Err(MergeError::Mismatch { index, field, expected: show(expected), found: show(found) });
            }
        }
        versions.extend(versions_of(&mut other, index)?);
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut found_storage = false;
    for version in &mut versions {
        let name = version.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
        if !seen.insert(name.clone()) {
            return Err(MergeError::DuplicateVersion(name));
        }
        found_storage |= name == storage;
        if let Value::Object(v) = version {
            v.insert("storage".into(), Value::Bool(name == storage));
        }
    }
    if !found_storage {
        return Err(MergeError::NoStorage(storage.to_owned(), seen.into_iter().collect::<Vec<_>>().join(", ")));
    }
    if let Some(slot) = merged.pointer_mut("/spec/versions") {
        *slot = Value::Array(versions);
    }
    serde_json::from_value(merged).map_err(|e| MergeError::Malformed { index: 0, reason: e.to_string() })
}

/// `value` (a CRD, any object) as YAML the way kubectl prints it: sorted
/// keys, 2-space indentation, YAML 1.1 quoting.
pub fn to_yaml<T: Serialize>(value: &T) -> Result<String, serde_json::Error> {
    Ok(crate::config::kubeconfig_yaml::to_yaml(&serde_json::to_value(value)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Value {
        serde_json::json!({ "type": "object", "properties": { "color": { "type": "string" } } })
    }

    #[test]
    fn a_template_takes_held_schemas_and_keeps_its_own_keywords() {
        let schema = from_template(
            r#"{"type":"object","properties":{"settings":{"description":"How."},"all":{"type":"array","items":{}}}}"#,
            &[("/properties/settings", settings), ("/properties/all/items", settings)],
        );
        assert_eq!(schema["properties"]["settings"]["description"], "How.");
        assert_eq!(schema["properties"]["settings"]["properties"]["color"]["type"], "string");
        assert_eq!(schema["properties"]["all"]["items"]["type"], "object");
    }

    struct Ping;
    struct Pong;
    impl Schema for Ping {
        fn schema() -> Value {
            from_template(r#"{"type":"object","properties":{"pong":{}}}"#, &[("/properties/pong", Pong::schema)])
        }
    }
    impl Schema for Pong {
        fn schema() -> Value {
            from_template(r#"{"type":"object","properties":{"ping":{}}}"#, &[("/properties/ping", Ping::schema)])
        }
    }

    #[test]
    fn types_holding_each_other_are_cut_not_endless() {
        let schema = Ping::schema();
        let mut at = &schema;
        let mut depth = 0;
        while let Some(next) = at["properties"].as_object().and_then(|p| p.values().next()) {
            at = next;
            depth += 1;
        }
        assert_eq!(depth, MAX_DEPTH);
        assert_eq!(at["x-kubernetes-preserve-unknown-fields"], true);
    }

    #[test]
    fn containers_hold_their_elements_schemas() {
        assert_eq!(
            <Vec<Option<i32>>>::schema(),
            serde_json::json!({"type": "array", "items": {"type": "integer", "format": "int32"}})
        );
        assert_eq!(<BTreeMap<String, bool>>::schema()["additionalProperties"]["type"], "boolean");
    }

    fn crd(version: &str, scope: &str) -> Value {
        serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "greetings.example.com"},
            "spec": {"group": "example.com", "names": {"kind": "Greeting", "plural": "greetings"}, "scope": scope,
                     "versions": [{"name": version, "served": true, "storage": true}]}
        })
    }

    #[test]
    fn merged_crds_serve_every_version_and_store_one() {
        let merged = merge_crds(vec![crd("v1alpha1", "Namespaced"), crd("v1", "Namespaced")], "v1").unwrap();
        let versions = merged["spec"]["versions"].as_array().unwrap();
        assert_eq!(versions.len(), 2);
        assert_eq!(versions[0]["storage"], false);
        assert_eq!(versions[1]["storage"], true);
    }

    #[test]
    fn crds_that_disagree_are_not_merged() {
        let e = merge_crds(vec![crd("v1alpha1", "Namespaced"), crd("v1", "Cluster")], "v1").unwrap_err();
        assert!(e.to_string().contains("spec.scope"), "{e}");
        let e = merge_crds(vec![crd("v1", "Namespaced"), crd("v1", "Namespaced")], "v1").unwrap_err();
        assert!(matches!(e, MergeError::DuplicateVersion(_)), "{e}");
        let e = merge_crds(vec![crd("v1", "Namespaced")], "v2").unwrap_err();
        assert!(e.to_string().contains("\"v2\""), "{e}");
        assert!(matches!(merge_crds::<Value>(vec![], "v1"), Err(MergeError::Empty)));
    }
}
