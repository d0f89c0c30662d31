//! Strategic merge patch, against cases ported from apimachinery's
//! `pkg/util/strategicpatch/patch_test.go` (its `MergeItem` schema) and
//! properties.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::strategic_merge;
use crate::apply::{ListMerge, ListType, Merge, PatchStrategy};

/// apimachinery's test `MergeItem`: `mergingList` merged by `name`,
/// `mergingIntList` by value, the `nonMerging` lists replaced.
fn merge_item() -> &'static [(&'static str, Merge)] {
    &[
        ("mergeItemPtr", Merge::Struct(merge_item)),
        ("mergingIntList", Merge::List(&INT_SET)),
        ("mergingList", Merge::List(&BY_NAME)),
        ("retainKeysMap", Merge::Struct(retain_keys_item)),
        ("retainKeysMergingList", Merge::List(&BY_NAME)),
        ("simpleMap", Merge::Map(&Merge::Atomic)),
    ]
}

fn retain_keys_item() -> &'static [(&'static str, Merge)] {
    &[("mergingIntList", Merge::List(&INT_SET)), ("mergingList", Merge::List(&BY_NAME))]
}

const INT_SET: ListMerge =
    ListMerge { apply: ListType::Set, patch: PatchStrategy::MergeByValue, element: Merge::Atomic };
const BY_NAME: ListMerge = ListMerge {
    apply: ListType::Map(&["name"]),
    patch: PatchStrategy::MergeByKey("name"),
    element: Merge::Struct(merge_item),
};

fn patched(original: Value, patch: Value) -> Result<Value, String> {
    strategic_merge(&original, &patch, Some(Merge::Struct(merge_item)))
}

/// `customStrategicMergePatchTestCaseData` and
/// `customStrategicMergePatchRawTestCases`: original, two-way patch,
/// modified.
#[test]
fn upstream_custom_cases() {
    let cases = [
        (
            "unique scalars when merging lists",
            json!({"mergingIntList": [1, 2]}),
            json!({"mergingIntList": [2, 3]}),
            json!({"mergingIntList": [1, 2, 3]}),
        ),
        (
            "delete map from nested map",
            json!({"simpleMap": {"key1": 1, "key2": 1}}),
            json!({"simpleMap": {"$patch": "delete"}}),
            json!({"simpleMap": {}}),
        ),
        (
            "delete all items from merging list",
            json!({"mergingList": [{"name": 1}, {"name": 2}]}),
            json!({"mergingList": [{"$patch": "replace"}]}),
            json!({"mergingList": []}),
        ),
        (
            "merge empty merging lists",
            json!({"mergingList": []}),
            json!({"mergingList": []}),
            json!({"mergingList": []}),
        ),
        ("delete all keys from map", json!({"name": 1, "value": 1}), json!({"$patch": "replace"}), json!({})),
        (
            "add key and delete all keys from map",
            json!({"name": 1, "value": 1}),
            json!({"other": "a", "$patch": "replace"}),
            json!({"other": "a"}),
        ),
        (
            "delete all duplicate entries in a merging list",
            json!({"mergingList": [{"name": 1}, {"name": 1}, {"name": 2, "value": "a"}, {"name": 3}, {"name": 3}]}),
            json!({"mergingList": [{"name": 1, "$patch": "delete"}, {"name": 3, "$patch": "delete"}]}),
            json!({"mergingList": [{"name": 2, "value": "a"}]}),
        ),
        (
            "retainKeys map can add a field",
            json!({"retainKeysMap": {"name": "foo"}}),
            json!({"retainKeysMap": {"value": "bar"}}),
            json!({"retainKeysMap": {"name": "foo", "value": "bar"}}),
        ),
        (
            "retainKeys map can delete a field",
            json!({"retainKeysMap": {"name": "foo", "value": "a"}}),
            json!({"retainKeysMap": {"value": null}}),
            json!({"retainKeysMap": {"name": "foo"}}),
        ),
        (
            "retainKeys map merge an empty map",
            json!({"retainKeysMap": {"name": "foo", "value": "a"}}),
            json!({"retainKeysMap": {}}),
            json!({"retainKeysMap": {"name": "foo", "value": "a"}}),
        ),
        (
            "retainKeys list can delete a field",
            json!({"retainKeysMergingList": [{"name": "bar"}, {"name": "foo", "value": "a"}]}),
            json!({"retainKeysMergingList": [{"name": "foo", "value": null}]}),
            json!({"retainKeysMergingList": [{"name": "bar"}, {"name": "foo"}]}),
        ),
        (
            "preserve the order from the patch in a merging list",
            json!({"mergingList": [{"name": 1}, {"name": 2, "value": "b"}, {"name": 3}]}),
            json!({"mergingList": [{"name": 3, "value": "c"}, {"name": 1, "value": "a"}, {"name": 2, "other": "x"}]}),
            json!({"mergingList": [{"name": 3, "value": "c"}, {"name": 1, "value": "a"}, {"name": 2, "value": "b", "other": "x"}]}),
        ),
        (
            "preserve the order from the patch in a merging list 2",
            json!({"mergingList": [{"name": 1}, {"name": 2, "value": "b"}, {"name": 3}]}),
            json!({"mergingList": [{"name": 3, "value": "c"}, {"name": 1, "value": "a"}]}),
            json!({"mergingList": [{"name": 2, "value": "b"}, {"name": 3, "value": "c"}, {"name": 1, "value": "a"}]}),
        ),
        (
            "preserve the order from the patch in a merging int list",
            json!({"mergingIntList": [1, 2, 3]}),
            json!({"mergingIntList": [3, 1, 2]}),
            json!({"mergingIntList": [3, 1, 2]}),
        ),
        (
            "preserve the order from the patch in a merging int list 2",
            json!({"mergingIntList": [1, 2, 3]}),
            json!({"mergingIntList": [3, 1]}),
            json!({"mergingIntList": [2, 3, 1]}),
        ),
        (
            "$setElementOrder contains item that is not present in the list to be merged",
            json!({"mergingList": [{"name": 1}, {"name": 3}]}),
            json!({"$setElementOrder/mergingList": [{"name": 3}, {"name": 2}, {"name": 1}], "mergingList": [{"name": 3, "value": 3}, {"name": 1, "value": 1}]}),
            json!({"mergingList": [{"name": 3, "value": 3}, {"name": 1, "value": 1}]}),
        ),
        (
            "$setElementOrder contains item that is not present in the int list to be merged",
            json!({"mergingIntList": [1, 3]}),
            json!({"$setElementOrder/mergingIntList": [3, 2, 1]}),
            json!({"mergingIntList": [3, 1]}),
        ),
        (
            "$deleteFromPrimitiveList of nonexistent item",
            json!({"mergingIntList": [1, 2]}),
            json!({"$deleteFromPrimitiveList/mergingIntList": [3]}),
            json!({"mergingIntList": [1, 2]}),
        ),
        (
            "$deleteFromPrimitiveList on nonexistent primitive list",
            json!({"foo": ["bar"]}),
            json!({"$deleteFromPrimitiveList/mergingIntList": [3]}),
            json!({"foo": ["bar"]}),
        ),
        (
            "$deleteFromPrimitiveList deletes from a merging list",
            json!({"mergingIntList": [1, 2, 3]}),
            json!({"$deleteFromPrimitiveList/mergingIntList": [2]}),
            json!({"mergingIntList": [1, 3]}),
        ),
        (
            "$deleteFromPrimitiveList deletes from a non-merging list",
            json!({"nonMergingIntList": [1, 2, 3]}),
            json!({"$deleteFromPrimitiveList/nonMergingIntList": [2]}),
            json!({"nonMergingIntList": [1, 3]}),
        ),
    ];
    for (description, original, patch, modified) in cases {
        assert_eq!(patched(original, patch).unwrap(), modified, "{description}");
    }
}

#[test]
fn upstream_error_cases_name_the_path() {
    let cases = [
        (
            "order in $setElementOrder and patch list do not match",
            json!({"mergingList": [{"name": 1}, {"name": 3}, {"name": 2}]}),
            json!({"$setElementOrder/mergingList": [{"name": 1}, {"name": 2}, {"name": 3}], "mergingList": [{"name": 3, "value": 3}, {"name": 1, "value": 1}]}),
            ".mergingList",
        ),
        (
            "order in $setElementOrder and int patch list do not match",
            json!({"mergingIntList": [1, 3, 2]}),
            json!({"$setElementOrder/mergingIntList": [1, 2, 3], "mergingIntList": [3, 1]}),
            ".mergingIntList",
        ),
        (
            "missing merge key",
            json!({"mergingList": [{"name": 1, "value": "a"}]}),
            json!({"mergingList": [{"value": "b"}]}),
            ".mergingList",
        ),
        (
            "a patch key not in $retainKeys",
            json!({"retainKeysMap": {"name": "a"}}),
            json!({"retainKeysMap": {"$retainKeys": ["name"], "value": "b"}}),
            ".retainKeysMap",
        ),
        (
            "an unknown directive",
            json!({"mergeItemPtr": {"name": "a"}}),
            json!({"mergeItemPtr": {"$patch": "bogus"}}),
            ".mergeItemPtr",
        ),
        (
            "$patch merge on a list element",
            json!({"mergingList": [{"name": 1}]}),
            json!({"mergingList": [{"name": 1, "$patch": "merge"}]}),
            ".mergingList",
        ),
    ];
    for (description, original, patch, path) in cases {
        let err = patched(original, patch).expect_err(description);
        assert!(err.contains(path), "{description}: {err}");
    }
}

#[test]
fn retain_keys_clears_the_fields_not_listed() {
    let original = json!({"retainKeysMap": {"name": "foo", "value": "a", "other": "x"}});
    let patch = json!({"retainKeysMap": {"$retainKeys": ["name", "value"], "value": "b"}});
    assert_eq!(patched(original, patch).unwrap(), json!({"retainKeysMap": {"name": "foo", "value": "b"}}));
}

#[test]
fn nested_merging_lists_merge_by_key_and_new_elements_lose_their_directives() {
    let original = json!({"mergingList": [{"name": "a", "mergingList": [{"name": "x", "value": "1"}]}]});
    let patch = json!({"mergingList": [
        {"name": "a", "mergingList": [{"name": "y"}]},
        {"name": "b", "simpleMap": {"k": "v", "gone": null}, "$setElementOrder/mergingList": [{"name": "z"}]},
    ]});
    assert_eq!(
        patched(original, patch).unwrap(),
        json!({"mergingList": [
            // Without `$setElementOrder`, new elements come first, as upstream
            // orders them.
            {"name": "a", "mergingList": [{"name": "y"}, {"name": "x", "value": "1"}]},
            {"name": "b", "simpleMap": {"k": "v"}},
        ]})
    );
}

#[test]
fn non_merging_lists_and_scalars_are_replaced_and_null_deletes() {
    let original = json!({"nonMergingList": [{"name": 1}], "name": "a", "simpleMap": {"k": "v", "j": "w"}});
    let patch = json!({"nonMergingList": [{"name": 2}], "name": "b", "simpleMap": {"j": null}});
    assert_eq!(
        patched(original, patch).unwrap(),
        json!({"nonMergingList": [{"name": 2}], "name": "b", "simpleMap": {"k": "v"}})
    );
}

/// A list apply replaces whole that strategic merge patch merges by key
/// (a Job's `status.conditions`), and one apply keys by two fields that
/// strategic merge patch merges by one (a container's `ports`).
#[test]
fn the_patch_strategy_not_the_apply_list_type_decides() {
    fn status() -> &'static [(&'static str, Merge)] {
        const CONDITIONS: ListMerge =
            ListMerge { apply: ListType::Atomic, patch: PatchStrategy::MergeByKey("type"), element: Merge::Atomic };
        const PORTS: ListMerge = ListMerge {
            apply: ListType::Map(&["containerPort", "protocol"]),
            patch: PatchStrategy::MergeByKey("containerPort"),
            element: Merge::Atomic,
        };
        const CLAIMS: ListMerge =
            ListMerge { apply: ListType::Map(&["name"]), patch: PatchStrategy::Replace, element: Merge::Atomic };
        &[("claims", Merge::List(&CLAIMS)), ("conditions", Merge::List(&CONDITIONS)), ("ports", Merge::List(&PORTS))]
    }
    let original = json!({
        "conditions": [{"type": "Complete", "status": "False"}],
        "ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}],
        "claims": [{"name": "a"}],
    });
    let patch = json!({
        "conditions": [{"type": "Complete", "status": "True"}, {"type": "Failed", "status": "False"}],
        "ports": [{"containerPort": 80, "protocol": "UDP"}],
        "claims": [{"name": "b"}],
    });
    assert_eq!(
        strategic_merge(&original, &patch, Some(Merge::Struct(status))).unwrap(),
        json!({
            "conditions": [{"type": "Complete", "status": "True"}, {"type": "Failed", "status": "False"}],
            "ports": [{"containerPort": 80, "protocol": "UDP", "name": "http"}],
            "claims": [{"name": "b"}],
        })
    );
}

#[test]
fn a_patch_that_is_not_an_object_is_an_error() {
    assert!(patched(json!({}), json!([1])).unwrap_err().contains("not a JSON object"));
}

/// RFC 7386's JSON merge patch, the reference for objects without lists.
fn json_merge_patch(target: &Value, patch: &Value) -> Value {
    let Value::Object(patch) = patch else { return patch.clone() };
    let mut out = match target {
        Value::Object(t) => t.clone(),
        _ => serde_json::Map::new(),
    };
    for (k, v) in patch {
        if v.is_null() {
            out.remove(k);
        } else {
            let merged = json_merge_patch(out.get(k).unwrap_or(&Value::Null), v);
            out.insert(k.clone(), merged);
        }
    }
    Value::Object(out)
}

/// JSON objects of scalars and objects, no lists, keys without `$`.
fn object_without_lists() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-5i64..5).prop_map(Value::from),
        "[a-c]{0,2}".prop_map(Value::from)
    ];
    let tree = leaf.prop_recursive(3, 24, 4, |inner| {
        prop::collection::btree_map("[a-d]", inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect()))
    });
    prop::collection::btree_map("[a-d]", tree, 0..4).prop_map(|m| Value::Object(m.into_iter().collect()))
}

fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(m) => {
            Value::Object(m.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), without_nulls(v))).collect())
        }
        other => other.clone(),
    }
}

proptest! {
    #[test]
    fn an_empty_patch_is_the_identity(original in object_without_lists(), lists in prop::collection::vec(0i64..4, 0..4)) {
        let mut original = original;
        original["mergingIntList"] = json!(lists);
        original["mergingList"] = json!(lists.iter().map(|n| json!({"name": n})).collect::<Vec<_>>());
        let mut deduped = original.clone();
        // A list with repeated keys is kept as it is.
        deduped["mergingList"] = original["mergingList"].clone();
        prop_assert_eq!(patched(original.clone(), json!({})).unwrap(), deduped);
    }

    #[test]
    fn without_lists_it_is_a_json_merge_patch(original in object_without_lists(), patch in object_without_lists()) {
        let original = without_nulls(&original);
        for schema in [None, Some(Merge::Struct(merge_item))] {
            let merged = strategic_merge(&original, &patch, schema).unwrap();
            prop_assert_eq!(&merged, &json_merge_patch(&original, &patch));
        }
    }
}
