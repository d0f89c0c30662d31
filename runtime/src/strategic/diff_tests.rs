//! Two-way patches against apimachinery's cases, and properties.

use serde::Deserialize;
use serde_json::{Value, json};

use super::diff::go_text;
use super::{Precondition, StrategicPatchError, merge, two_way_patch, two_way_patch_of, two_way_patch_with};
use crate::apply::{ListMerge, ListType, Merge, PatchStrategy};

/// apimachinery's test `MergeItem` (`pkg/util/strategicpatch/patch_test.go`):
/// `mergingList` merged by `name`, `mergingIntList` by value, the
/// `nonMerging` lists replaced, `retainKeys` fields. `mergeItemPtr` is a
/// pointer to a `MergeItem` upstream, which its struct schema reads as a
/// list merged by `name` when the value is a list, as the cases have it.
fn merge_item() -> &'static [(&'static str, Merge)] {
    &[
        ("mergeItemPtr", Merge::List(&BY_NAME)),
        ("mergingIntList", Merge::List(&INT_SET)),
        ("mergingList", Merge::List(&BY_NAME)),
        ("retainKeysMap", Merge::RetainKeys(&RETAIN_KEYS_ITEM)),
        ("retainKeysMergingList", Merge::RetainKeys(&Merge::List(&BY_NAME))),
        ("simpleMap", Merge::Map(&Merge::Atomic)),
    ]
}

const RETAIN_KEYS_ITEM: Merge = Merge::Struct(retain_keys_item);

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
const SCHEMA: Merge = Merge::Struct(merge_item);

#[derive(Deserialize)]
struct UpstreamCases {
    #[serde(rename = "createStrategicMergePatchTestCaseData")]
    structured: Vec<Case>,
    #[serde(rename = "strategicMergePatchRawTestCases")]
    raw: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Case {
    description: String,
    #[serde(default)]
    original: Value,
    modified: Value,
    two_way: Value,
    two_way_result: Option<Value>,
}

fn upstream_cases() -> UpstreamCases {
    serde_yaml_ng::from_str(include_str!("two_way_cases.yaml")).expect("two_way_cases.yaml parses")
}

/// Upstream's `sortMergeListsByName`, which its test runs on the
/// structured cases' objects and patches before using them: lists that
/// merge sorted by the text of their merge key (scalars sorted and without
/// repeats), `$retainKeys` and `$deleteFromPrimitiveList` sorted.
fn sort_merge_lists(value: &Value, schema: Merge) -> Value {
    let Value::Object(map) = value else { return value.clone() };
    let sorted_scalars = |list: &Vec<Value>| {
        let mut list = list.clone();
        list.dedup();
        list.sort_by_key(go_text);
        Value::Array(list)
    };
    let mut out = serde_json::Map::new();
    for (name, value) in map {
        let sorted = match value {
            Value::Array(list) if name == "$retainKeys" || name.starts_with("$deleteFromPrimitiveList/") => {
                sorted_scalars(list)
            }
            _ if name.starts_with('$') => value.clone(),
            Value::Object(_) => sort_merge_lists(value, schema.field(name)),
            Value::Array(list) => match schema.field(name).patch_list() {
                PatchStrategy::Replace => value.clone(),
                PatchStrategy::MergeByValue => sorted_scalars(list),
                PatchStrategy::MergeByKey(_) if !list.iter().all(Value::is_object) => sorted_scalars(list),
                PatchStrategy::MergeByKey(key) => {
                    let element = schema.field(name).element();
                    let mut list: Vec<Value> = list.iter().map(|item| sort_merge_lists(item, element)).collect();
                    list.sort_by_key(|item| item.get(key).map(go_text).unwrap_or_default());
                    Value::Array(list)
                }
            },
            _ => value.clone(),
        };
        out.insert(name.clone(), sorted);
    }
    Value::Object(out)
}

/// Runs one case: the created patch is the expected one, and merging it
/// into the original gives the expected result. Returns what went wrong.
fn check(case: &Case, normalize: impl Fn(&Value) -> Value) -> Result<(), String> {
    let original = normalize(&case.original);
    let modified = normalize(&case.modified);
    let expected_patch = normalize(&case.two_way);
    let expected_result = normalize(case.two_way_result.as_ref().unwrap_or(&case.modified));
    let patch = two_way_patch(&original, &modified, SCHEMA).map_err(|e| format!("creating: {e}"))?;
    if patch != expected_patch {
        return Err(format!("patch {patch}, expected {expected_patch}"));
    }
    let result = merge(&original, &patch, SCHEMA).map_err(|e| format!("merging: {e}"))?;
    if result != expected_result {
        return Err(format!("merged {result}, expected {expected_result}"));
    }
    Ok(())
}

fn check_all(cases: &[Case], normalize: impl Fn(&Value) -> Value) {
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| check(case, &normalize).err().map(|e| format!("{}: {e}", case.description)))
        .collect();
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// `createStrategicMergePatchTestCaseData` of `TestStrategicMergePatch`,
/// its objects and patches sorted as upstream's test sorts them.
#[test]
fn upstream_structured_two_way_cases() {
    let cases = upstream_cases().structured;
    assert_eq!(cases.len(), 22);
    check_all(&cases, |value| sort_merge_lists(value, SCHEMA));
}

/// `strategicMergePatchRawTestCases` of `TestStrategicMergePatch`, as
/// written (order matters in them).
#[test]
fn upstream_raw_two_way_cases() {
    let cases = upstream_cases().raw;
    assert_eq!(cases.len(), 94);
    check_all(&cases, Value::clone);
}

#[test]
fn equal_objects_give_an_empty_patch_and_null_reads_as_empty() {
    let object = json!({"mergingList": [{"name": "a", "value": "1"}], "simpleMap": {"k": "v"}});
    assert_eq!(two_way_patch(&object, &object, SCHEMA).unwrap(), json!({}));
    assert_eq!(two_way_patch(&Value::Null, &object, SCHEMA).unwrap(), object);
    assert_eq!(two_way_patch(&object, &Value::Null, SCHEMA).unwrap(), json!({"mergingList": null, "simpleMap": null}));
}

/// Without a schema, a JSON merge patch: objects recursed, lists whole.
#[test]
fn without_a_schema_it_is_a_json_merge_patch() {
    let original = json!({"mergingList": [{"name": "a"}, {"name": "b"}], "m": {"k": 1, "gone": 2}, "same": [1]});
    let modified = json!({"mergingList": [{"name": "a"}], "m": {"k": 3}, "same": [1]});
    for schema in [Merge::Deduced, Merge::Atomic] {
        let patch = two_way_patch(&original, &modified, schema).unwrap();
        assert_eq!(patch, json!({"mergingList": [{"name": "a"}], "m": {"k": 3, "gone": null}}));
        let mut merged = original.clone();
        json_patch::merge(&mut merged, &patch);
        assert_eq!(merged, modified);
    }
}

#[test]
fn errors_name_the_path() {
    let cases = [
        (json!({"mergingList": [{"name": "a"}]}), json!({"mergingList": [{"value": "b"}]}), ".mergingList"),
        (
            json!({"mergingList": [{"name": "a", "mergingList": [{"name": "x"}]}]}),
            json!({"mergingList": [{"name": "a", "mergingList": [{"value": "y"}]}]}),
            r#".mergingList[name="a"].mergingList"#,
        ),
        (json!({"mergingIntList": [1]}), json!({"mergingIntList": ["a"]}), ".mergingIntList"),
        (json!({"mergingIntList": [[1]]}), json!({"mergingIntList": [[2]]}), ".mergingIntList"),
    ];
    for (original, modified, path) in cases {
        let err = two_way_patch(&original, &modified, SCHEMA).unwrap_err().to_string();
        assert!(err.starts_with(&format!("{path}: ")), "{err}");
    }
    assert!(matches!(
        two_way_patch(&json!([1]), &json!({}), SCHEMA),
        Err(StrategicPatchError::NotAnObject { what: "the original object" })
    ));
}

#[test]
fn preconditions_refuse_patches_that_change_their_fields() {
    let original = json!({"kind": "Pod", "metadata": {"name": "a", "labels": {"x": "1"}}});
    let relabeled = json!({"kind": "Pod", "metadata": {"name": "a", "labels": {"x": "2"}}});
    let renamed = json!({"kind": "Pod", "metadata": {"name": "b", "labels": {"x": "1"}}});
    let preconditions = [Precondition::KeyUnchanged("kind".into()), Precondition::MetadataKeyUnchanged("name".into())];
    assert_eq!(
        two_way_patch_with(&original, &relabeled, Merge::Deduced, &preconditions).unwrap(),
        json!({"metadata": {"labels": {"x": "2"}}})
    );
    let err = two_way_patch_with(&original, &renamed, Merge::Deduced, &preconditions).unwrap_err();
    assert!(matches!(&err, StrategicPatchError::PreconditionFailed { path } if path == ".metadata.name"), "{err}");
    let err = two_way_patch_with(&original, &json!({"metadata": original["metadata"]}), Merge::Deduced, &preconditions)
        .unwrap_err();
    assert!(matches!(&err, StrategicPatchError::PreconditionFailed { path } if path == ".kind"), "{err}");
}

#[test]
fn typed_objects_are_encoded_first() {
    #[derive(serde::Serialize)]
    struct Item {
        name: &'static str,
        #[serde(rename = "mergingIntList")]
        merging_int_list: Vec<i32>,
    }
    let patch = two_way_patch_of(
        &Item { name: "a", merging_int_list: vec![1, 2] },
        &Item { name: "a", merging_int_list: vec![2, 3] },
        SCHEMA,
    )
    .unwrap();
    assert_eq!(
        patch,
        json!({"mergingIntList": [3], "$deleteFromPrimitiveList/mergingIntList": [1], "$setElementOrder/mergingIntList": [2, 3]})
    );
}

#[test]
fn go_text_prints_numbers_as_go_does() {
    let cases = [(json!(1), "1"), (json!(100000), "100000"), (json!(1000000), "1e+06"), (json!(0.00001), "1e-05")];
    for (value, text) in cases {
        assert_eq!(go_text(&value), text);
    }
    assert_eq!(go_text(&json!(1.5)), "1.5");
    assert_eq!(go_text(&json!("x")), "x");
}
