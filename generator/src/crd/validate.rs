//! What the apiserver checks of a CRD before it serves it (apiextensions'
//! validation), as far as the generated code depends on it: the names it
//! makes paths, modules and types from, and the structural-schema rules
//! the mapping of [`crate::lower`] assumes. A CRD the apiserver would
//! refuse is refused here, with the JSON pointer of what is wrong, rather
//! than turned into a crate that does not compile or that misreads what a
//! server sends.

use std::collections::BTreeSet;

use super::Crd;
use crate::error::pointer_token;
use crate::naming;
use crate::schema::{AdditionalProperties, Schema};

/// What is wrong, and where: a JSON pointer into the CRD and a message.
pub(super) type Invalid = (String, String);

/// The types a CRD schema may name; a node may also have none (with
/// `x-kubernetes-int-or-string` or `x-kubernetes-preserve-unknown-fields`,
/// or inside `allOf`, `anyOf`, `oneOf` and `not`).
const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

fn invalid(pointer: impl Into<String>, message: impl Into<String>) -> Result<(), Invalid> {
    Err((pointer.into(), message.into()))
}

/// The names and versions of a CRD: group, names, scope, version names, as
/// `ValidateCustomResourceDefinition` checks them.
pub(super) fn names(crd: &Crd) -> Result<(), Invalid> {
    let spec = &crd.spec;
    let names = &spec.names;
    if let Some(e) = naming::group_error(&spec.group, true) {
        return invalid("/spec/group", format!("group {:?} is not a DNS-1123 subdomain with a dot: {e}", spec.group));
    }
    let labels = [
        ("/spec/names/plural", "plural", Some(&names.plural)),
        ("/spec/names/singular", "singular", names.singular.as_ref()),
    ];
    for (pointer, what, value) in labels {
        if let Some(value) = value
            && let Some(e) = naming::dns1035_label_error(value)
        {
            return invalid(pointer, format!("{what} {value:?} is not a DNS-1035 label: {e}"));
        }
    }
    let expected = format!("{}.{}", names.plural, spec.group);
    // A manifest without a name (a template) is named by its plural and group.
    if !crd.metadata.name.is_empty() && crd.metadata.name != expected {
        return invalid(
            "/metadata/name",
            format!("name {:?} must be spec.names.plural + \".\" + spec.group ({expected:?})", crd.metadata.name),
        );
    }
    for (pointer, what, value) in [
        ("/spec/names/kind", "kind", Some(&names.kind)),
        ("/spec/names/listKind", "listKind", names.list_kind.as_ref()),
    ] {
        if let Some(value) = value
            && let Some(e) = naming::kind_error(value)
        {
            return invalid(pointer, format!("{what} {value:?} is not a kind name: {e}"));
        }
    }
    if names.list_kind.as_ref() == Some(&names.kind) {
        return invalid("/spec/names/listKind", "kind and listKind may not be the same");
    }
    for (field, values) in [("shortNames", &names.short_names), ("categories", &names.categories)] {
        for (i, value) in values.iter().enumerate() {
            if let Some(e) = naming::dns1035_label_error(value) {
                return invalid(format!("/spec/names/{field}/{i}"), format!("{value:?} is not a DNS-1035 label: {e}"));
            }
        }
    }
    if spec.scope != "Namespaced" && spec.scope != "Cluster" {
        return invalid("/spec/scope", format!("scope {:?} must be Namespaced or Cluster", spec.scope));
    }
    let mut seen = BTreeSet::new();
    for (i, version) in spec.versions.iter().enumerate() {
        let pointer = format!("/spec/versions/{i}/name");
        if let Some(e) = naming::dns1035_label_error(&version.name) {
            return invalid(pointer, format!("version {:?} is not a DNS-1035 label: {e}", version.name));
        }
        if !seen.insert(version.name.as_str()) {
            return invalid(pointer, format!("version {:?} is listed twice", version.name));
        }
    }
    if spec.versions.iter().filter(|v| v.storage).count() != 1 {
        return invalid("/spec/versions", "must have exactly one version marked as storage version");
    }
    Ok(())
}

/// Where a node of the structural part of a schema sits.
#[derive(Clone, Copy, PartialEq)]
enum Level {
    Root,
    Item,
    Field,
}

/// A version's `openAPIV3Schema` at `pointer`: a structural schema of the
/// types the apiserver knows.
pub(super) fn schema(schema: &Schema, pointer: &str) -> Result<(), Invalid> {
    structural(schema, Level::Root, pointer)
}

/// The rules for the nodes that say what a value holds (properties, items,
/// map values), as `ValidateStructural` checks them.
fn structural(s: &Schema, level: Level, pointer: &str) -> Result<(), Invalid> {
    known_type(s, pointer)?;
    let ty = s.ty.as_deref().unwrap_or_default();
    if s.embedded_resource && ty != "object" {
        return invalid(format!("{pointer}/type"), "must be object if x-kubernetes-embedded-resource is true");
    }
    if ty.is_empty() && !s.int_or_string && !s.preserves_unknown_fields() {
        let message = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        return invalid(format!("{pointer}/type"), message);
    }
    if level == Level::Root && !ty.is_empty() && ty != "object" {
        return invalid(format!("{pointer}/type"), format!("type {ty:?} must be object at the root"));
    }
    if ty == "array" && s.items.is_none() {
        return invalid(format!("{pointer}/items"), "must be specified for an array");
    }
    if let Some(additional) = &s.additional_properties {
        if level == Level::Root {
            return invalid(format!("{pointer}/additionalProperties"), "must not be used at the root");
        }
        if !s.properties.is_empty() && !matches!(additional, AdditionalProperties::Bool(true)) {
            return invalid(
                format!("{pointer}/additionalProperties"),
                "additionalProperties and properties are mutually exclusive",
            );
        }
    }
    if level == Level::Root || s.embedded_resource {
        for field in ["apiVersion", "kind"] {
            if let Some(p) = s.properties.get(field)
                && p.ty.as_deref() != Some("string")
            {
                return invalid(format!("{pointer}/properties/{field}/type"), "must be string");
            }
        }
    }
    for (name, p) in &s.properties {
        structural(p, Level::Field, &format!("{pointer}/properties/{}", pointer_token(name)))?;
    }
    if let Some(items) = &s.items {
        structural(items, Level::Item, &format!("{pointer}/items"))?;
    }
    if let Some(AdditionalProperties::Schema(values)) = &s.additional_properties {
        structural(values, Level::Field, &format!("{pointer}/additionalProperties"))?;
    }
    value_validations(s, pointer)
}

/// A node's `type`, when it has one, is one the apiserver knows, and it
/// refers to no other schema.
fn known_type(s: &Schema, pointer: &str) -> Result<(), Invalid> {
    if s.reference.is_some() {
        return invalid(format!("{pointer}/$ref"), "$ref is not allowed in a CRD schema");
    }
    match s.ty.as_deref() {
        None | Some("") => Ok(()),
        Some("null") => invalid(format!("{pointer}/type"), "type cannot be null; use nullable instead"),
        Some(t) if TYPES.contains(&t) => Ok(()),
        Some(t) => {
            invalid(format!("{pointer}/type"), format!("unsupported type {t:?}: must be one of {}", TYPES.join(", ")))
        }
    }
}

/// `allOf`, `anyOf`, `oneOf` and `not` only validate; their nodes, to any
/// depth, may name only known types.
fn value_validations(s: &Schema, pointer: &str) -> Result<(), Invalid> {
    let lists = [("allOf", &s.all_of), ("anyOf", &s.any_of), ("oneOf", &s.one_of)];
    for (keyword, list) in lists {
        for (i, child) in list.iter().enumerate() {
            any_depth(child, &format!("{pointer}/{keyword}/{i}"))?;
        }
    }
    if let Some(not) = &s.not {
        any_depth(not, &format!("{pointer}/not"))?;
    }
    Ok(())
}

fn any_depth(s: &Schema, pointer: &str) -> Result<(), Invalid> {
    known_type(s, pointer)?;
    for (name, p) in &s.properties {
        any_depth(p, &format!("{pointer}/properties/{}", pointer_token(name)))?;
    }
    if let Some(items) = &s.items {
        any_depth(items, &format!("{pointer}/items"))?;
    }
    if let Some(AdditionalProperties::Schema(values)) = &s.additional_properties {
        any_depth(values, &format!("{pointer}/additionalProperties"))?;
    }
    value_validations(s, pointer)
}
