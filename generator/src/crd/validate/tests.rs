//! The structural-schema rules, node by node (cases checked against the
//! apiserver's `ValidateStructural`).

use serde_json::json;

fn check(schema: serde_json::Value) -> Option<(String, String)> {
    super::schema(&serde_json::from_value(schema).unwrap(), "").err()
}

#[test]
fn structural_schemas_pass() {
    let schema = json!({"type": "object", "properties": {
        "size": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "port": {"x-kubernetes-int-or-string": true,
                 "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"pattern": "^[0-9]+$"}]},
        "open": {"x-kubernetes-preserve-unknown-fields": true},
        "mode": {"type": "string", "oneOf": [{"enum": ["a"]}, {"enum": ["b"]}]},
        "pair": {"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{"required": ["a"]}]},
        "list": {"type": "array", "items": {"type": "string"}}
    }});
    assert_eq!(check(schema), None);
}

#[test]
fn a_field_without_a_type_is_named() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "inline": {"properties": {"a": {"type": "string"}}}
    }}}});
    let (pointer, message) = check(schema).unwrap();
    assert_eq!(pointer, "/properties/spec/properties/inline/type");
    assert!(message.contains("specified object fields"), "{message}");
}

#[test]
fn an_array_without_items_is_named() {
    let schema = json!({"type": "object", "properties": {"steps": {"type": "array", "items": {"type": "array"}}}});
    assert_eq!(check(schema).unwrap().0, "/properties/steps/items/items");
}

#[test]
fn a_type_below_a_junctor_is_named() {
    let schema = json!({"type": "object", "properties": {"id": {
        "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
    }}});
    // The untyped field is found first, as the apiserver lists it too.
    assert_eq!(check(schema).unwrap().0, "/properties/id/type");
    let typed = json!({"type": "object", "properties": {"id": {"type": "string",
        "oneOf": [{"type": "string"}, {"format": "uuid"}]}}});
    assert_eq!(check(typed).unwrap().0, "/properties/id/oneOf/0/type");
    let deep = json!({"type": "object", "properties": {"m": {"type": "object",
        "anyOf": [{"properties": {"x": {"default": 1}}}]}}});
    assert_eq!(check(deep).unwrap().0, "/properties/m/anyOf/0/properties/x/default");
}

#[test]
fn the_root_is_an_object_without_additional_properties() {
    assert_eq!(check(json!({"type": "string"})).unwrap().0, "/type");
    assert_eq!(check(json!({"properties": {}})).unwrap().0, "/type");
    let open_root = json!({"type": "object", "additionalProperties": {"type": "string"}});
    assert_eq!(check(open_root).unwrap().0, "/additionalProperties");
}

#[test]
fn the_int_or_string_pattern_only_counts_exactly() {
    let loose = json!({"type": "object", "properties": {"n": {"x-kubernetes-int-or-string": true,
        "anyOf": [{"type": "integer"}, {"type": "string", "format": "byte"}]}}});
    assert_eq!(check(loose).unwrap().0, "/properties/n/anyOf/0/type");
}
