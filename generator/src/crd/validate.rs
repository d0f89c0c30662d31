//! What the apiserver checks of a CRD before it serves it (apiextensions'
//! validation), as far as the generated code depends on it: the names it
//! makes paths, modules and types from, and the structural-schema rules
//! the mapping of [`crate::lower`] assumes. A CRD the apiserver would
//! refuse is refused here, with the JSON pointer of what is wrong, rather
//! than turned into a crate that does not compile or that misreads what a
//! server sends. What only decides what a cluster stores (the storage
//! version, [`storage`]) is a warning: the code does not depend on it.

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
    Ok(())
}

/// What the apiserver checks of a CRD but the generated code does not
/// depend on: which version it stores. A catalog publishes one version
/// per file, and a version copied out of a CRD keeps its `storage` flag,
/// so a file may mark none or several; the code is the same either way.
/// A warning at the JSON pointer, not an error.
pub(super) fn storage(crd: &Crd) -> Option<Invalid> {
    let stored: Vec<&str> = crd.spec.versions.iter().filter(|v| v.storage).map(|v| v.name.as_str()).collect();
    let message = match stored.as_slice() {
        [_] => return None,
        [] => "no version is marked as storage version".to_owned(),
        several => format!("{} versions ({}) are marked as storage version", several.len(), several.join(", ")),
    };
    Some(("/spec/versions".to_owned(), format!("{message} (the apiserver requires exactly one)")))
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

/// The `anyOf` of the int-or-string pattern: exactly an integer and a string.
fn int_or_string_any_of(any_of: &[Schema]) -> bool {
    let only = |ty: &str| Schema { ty: Some(ty.into()), ..Schema::default() };
    any_of == [only("integer"), only("string")]
}

/// `allOf`, `anyOf`, `oneOf` and `not` only restrict values: below them,
/// to any depth, no `type`, `default`, `description`, `nullable`,
/// `additionalProperties` or `x-kubernetes-*` extension, save the
/// int-or-string pattern (`anyOf: [{type: integer}, {type: string}]`,
/// directly or as `allOf[0]`), and never a `$ref`.
fn value_validations(s: &Schema, pointer: &str) -> Result<(), Invalid> {
    junctors(s, int_or_string_any_of(&s.any_of), pointer)
}

fn junctors(s: &Schema, skip_any_of: bool, pointer: &str) -> Result<(), Invalid> {
    let any_of = s.any_of.iter().enumerate().filter(|_| !skip_any_of).map(|(i, n)| (format!("anyOf/{i}"), n, false));
    let all_of = s.all_of.iter().enumerate().map(|(i, n)| {
        // `allOf[0]` may hold the int-or-string pattern too.
        (format!("allOf/{i}"), n, i == 0 && int_or_string_any_of(&n.any_of))
    });
    let one_of = s.one_of.iter().enumerate().map(|(i, n)| (format!("oneOf/{i}"), n, false));
    let not = s.not.iter().map(|n| ("not".to_owned(), n.as_ref(), false));
    for (at, nested, skip) in any_of.chain(all_of).chain(one_of).chain(not) {
        value_only(nested, skip, &format!("{pointer}/{at}"))?;
    }
    Ok(())
}

/// A node below a junctor: it may restrict values, nothing more.
fn value_only(s: &Schema, skip_any_of: bool, pointer: &str) -> Result<(), Invalid> {
    if s.reference.is_some() {
        return invalid(format!("{pointer}/$ref"), "$ref is not allowed in a CRD schema");
    }
    let forbidden = [
        ("type", s.ty.is_some()),
        ("default", s.default.is_some()),
        ("description", s.description.as_deref().is_some_and(|d| !d.is_empty())),
        ("nullable", s.nullable),
        ("additionalProperties", s.additional_properties.is_some()),
        ("x-kubernetes-preserve-unknown-fields", s.preserves_unknown_fields()),
        ("x-kubernetes-embedded-resource", s.embedded_resource),
        ("x-kubernetes-int-or-string", s.int_or_string),
        ("x-kubernetes-list-type", s.list_type.is_some()),
        ("x-kubernetes-list-map-keys", !s.list_map_keys.is_empty()),
        ("x-kubernetes-map-type", s.map_type.is_some()),
        ("x-kubernetes-validations", !s.validations.is_empty()),
    ];
    if let Some((keyword, _)) = forbidden.iter().find(|(_, set)| *set) {
        return invalid(
            format!("{pointer}/{keyword}"),
            "must not be set below allOf, anyOf, oneOf or not (the schema is not structural)",
        );
    }
    if let Some(items) = &s.items {
        value_only(items, false, &format!("{pointer}/items"))?;
    }
    for (name, p) in &s.properties {
        value_only(p, false, &format!("{pointer}/properties/{}", pointer_token(name)))?;
    }
    junctors(s, skip_any_of, pointer)
}

#[cfg(test)]
mod tests;
