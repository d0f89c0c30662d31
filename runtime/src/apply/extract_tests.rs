use serde::de::MapAccess;
use serde_json::{Map as JsonMap, Value, json};

use super::*;
use crate::apply::{ListMerge, PatchStrategy};
use crate::codec::DecodeOptions;

/// An apply configuration that keeps every field it is given, so a test
/// sees exactly what Extract decoded into it.
#[derive(Debug, Default, PartialEq)]
struct Whole(JsonMap<String, Value>);

impl DecodeFields for Whole {
    const NAME: &'static str = "Whole";
    const KEEPS_UNKNOWN: bool = true;

    fn field_index(_: &str) -> Option<u16> {
        None
    }

    fn decode_field<'de, A: MapAccess<'de>>(&mut self, _: u16, map: &mut A, _: DecodeOptions) -> Result<(), A::Error> {
        map.next_value::<serde::de::IgnoredAny>().map(drop)
    }

    fn decode_unknown<'de, A: MapAccess<'de>>(&mut self, key: String, map: &mut A) -> Result<(), A::Error> {
        self.0.insert(key, map.next_value()?);
        Ok(())
    }
}

/// The merge types of the objects below, as the Kubernetes schema has them.
impl MergeFields for Whole {
    fn merge_fields() -> &'static [(&'static str, Merge)] {
        &[("metadata", Merge::Struct(metadata)), ("spec", Merge::Struct(spec)), ("status", Merge::Struct(status))]
    }
}

fn metadata() -> &'static [(&'static str, Merge)] {
    &[
        ("annotations", Merge::Map(&Merge::Atomic)),
        ("finalizers", Merge::List(&SET)),
        ("labels", Merge::Map(&Merge::Atomic)),
    ]
}

fn spec() -> &'static [(&'static str, Merge)] {
    // `selector` and `atomic` merge whole: not listed.
    &[
        ("args", Merge::List(&SET)),
        (
            "ports",
            Merge::List(&ListMerge {
                apply: ListType::Map(&["port"]),
                patch: PatchStrategy::MergeByKey("port"),
                element: Merge::Struct(no_fields),
            }),
        ),
        (
            "statuses",
            Merge::List(&ListMerge {
                apply: ListType::Atomic,
                patch: PatchStrategy::MergeByKey("type"),
                element: Merge::Struct(no_fields),
            }),
        ),
        ("strategy", Merge::Struct(strategy)),
        ("template", Merge::Struct(template)),
        ("unknown", Merge::Deduced),
    ]
}

/// A set that strategic merge patch merges too.
const SET: ListMerge = ListMerge { apply: ListType::Set, patch: PatchStrategy::MergeByValue, element: Merge::Atomic };

fn strategy() -> &'static [(&'static str, Merge)] {
    &[("rollingUpdate", Merge::Struct(no_fields))]
}

fn template() -> &'static [(&'static str, Merge)] {
    &[("spec", Merge::Struct(pod_spec))]
}

fn pod_spec() -> &'static [(&'static str, Merge)] {
    &[(
        "containers",
        Merge::List(&ListMerge {
            apply: ListType::Map(&["name"]),
            patch: PatchStrategy::MergeByKey("name"),
            element: Merge::Struct(container),
        }),
    )]
}

fn container() -> &'static [(&'static str, Merge)] {
    &[("resources", Merge::Struct(no_fields))]
}

fn status() -> &'static [(&'static str, Merge)] {
    &[]
}

fn no_fields() -> &'static [(&'static str, Merge)] {
    &[]
}

fn extracted(object: &Value, manager: &str, subresource: &str) -> Value {
    Value::Object(extract::<Whole>(object, manager, subresource).unwrap().0)
}

fn entry(manager: &str, operation: &str, subresource: &str, fields: Value) -> Value {
    let mut entry = json!({"manager": manager, "operation": operation, "fieldsType": "FieldsV1", "fieldsV1": fields});
    if !subresource.is_empty() {
        entry["subresource"] = json!(subresource);
    }
    entry
}

/// A deployment as the apiserver returns it after `mine` applied replicas,
/// a label, the selector and the app container's image, and `other`
/// (an update) set another label, the container's resources and a sidecar.
fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "prod",
            "uid": "1234",
            "resourceVersion": "42",
            "labels": {"app": "web", "team": "blue"},
            "managedFields": [
                entry("mine", "Apply", "", json!({
                    "f:metadata": {"f:labels": {"f:app": {}}},
                    "f:spec": {
                        "f:replicas": {},
                        "f:selector": {},
                        "f:template": {"f:spec": {"f:containers": {
                            "k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:name": {}}
                        }}}
                    }
                })),
                entry("other", "Update", "", json!({
                    "f:metadata": {"f:labels": {"f:team": {}}},
                    "f:spec": {"f:template": {"f:spec": {"f:containers": {
                        "k:{\"name\":\"app\"}": {"f:resources": {}},
                        "k:{\"name\":\"sidecar\"}": {".": {}, "f:image": {}, "f:name": {}}
                    }}}}
                })),
                entry("mine", "Apply", "status", json!({"f:status": {"f:replicas": {}}})),
            ]
        },
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"spec": {"containers": [
                {"name": "app", "image": "web:2", "resources": {"limits": {"cpu": "1"}}},
                {"name": "sidecar", "image": "proxy:1"}
            ]}}
        },
        "status": {"replicas": 3, "readyReplicas": 2}
    })
}

#[test]
fn takes_only_the_managers_fields() {
    assert_eq!(
        extracted(&deployment(), "mine", ""),
        json!({
            "metadata": {"name": "web", "namespace": "prod", "labels": {"app": "web"}},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"spec": {"containers": [{"name": "app", "image": "web:2"}]}}
            }
        })
    );
}

#[test]
fn takes_the_entry_of_the_subresource_asked_for() {
    assert_eq!(
        extracted(&deployment(), "mine", "status"),
        json!({"metadata": {"name": "web", "namespace": "prod"}, "status": {"replicas": 3}})
    );
}

#[test]
fn a_manager_that_never_applied_gets_name_and_namespace_only() {
    let only_names = json!({"metadata": {"name": "web", "namespace": "prod"}});
    // `other` only updated; `nobody` has no entry; and an object without
    // managedFields (an informer's copy) owns nothing.
    assert_eq!(extracted(&deployment(), "other", ""), only_names);
    assert_eq!(extracted(&deployment(), "nobody", ""), only_names);
    let mut cached = deployment();
    cached["metadata"].as_object_mut().unwrap().remove("managedFields");
    assert_eq!(extracted(&cached, "mine", ""), only_names);
}

#[test]
fn a_granular_leaf_gives_nothing_an_atomic_one_is_taken_whole() {
    // `mine` applied `strategy: {}` and an empty `annotations` map, which
    // the apiserver defaulted or others filled: none of their parts is
    // `mine`'s. The selector is atomic: taken whole though only its field
    // is in the set. A preserved-unknown object merges key by key, a list
    // in it whole.
    let object = json!({
        "metadata": {
            "name": "x",
            "annotations": {"a": "1"},
            "finalizers": ["keep", "other"],
            "managedFields": [
                entry("mine", "Apply", "", json!({
                    "f:metadata": {"f:annotations": {}, "f:finalizers": {"v:\"keep\"": {}}},
                    "f:spec": {"f:strategy": {}, "f:selector": {}, "f:unknown": {"f:list": {}, "f:object": {}}}
                })),
                entry("other", "Update", "", json!({"f:metadata": {"f:annotations": {"f:a": {}}}})),
            ]
        },
        "spec": {
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}},
            "selector": {"matchLabels": {"app": "x"}},
            "unknown": {"list": [1, 2], "object": {"k": "v"}, "scalar": 3}
        }
    });
    assert_eq!(
        extracted(&object, "mine", ""),
        json!({"metadata": {"name": "x", "finalizers": ["keep"]}, "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "unknown": {"list": [1, 2]}
        }})
    );
}

#[test]
fn an_owned_empty_map_or_list_is_extracted_present_and_empty() {
    // `mine` applied empty annotations, finalizers, strategy and args and
    // an empty object in preserved-unknown fields; they are still empty.
    // Labels it owned a key of are empty now (the key went away since):
    // structured-merge-diff gives back an empty value it reaches whatever
    // the set says below it. A non-empty granular leaf and a null still
    // give nothing, and emptiness the manager does not own is not taken.
    let object = json!({
        "metadata": {
            "name": "x",
            "annotations": {},
            "finalizers": [],
            "labels": {},
            "managedFields": [
                entry("mine", "Apply", "", json!({
                    "f:metadata": {"f:annotations": {}, "f:finalizers": {}, "f:labels": {"f:gone": {}}},
                    "f:spec": {
                        "f:strategy": {},
                        "f:args": {},
                        "f:ports": {},
                        "f:template": {},
                        "f:unknown": {"f:object": {}},
                    }
                })),
                entry("other", "Apply", "", json!({"f:spec": {"f:selector": {}, "f:statuses": {}}})),
            ]
        },
        "spec": {
            "strategy": {},
            "args": [],
            "ports": null,
            "template": {"spec": {}},
            "unknown": {"object": {}, "list": []},
            "selector": {},
            "statuses": [],
        }
    });
    assert_eq!(
        extracted(&object, "mine", ""),
        json!({
            "metadata": {"name": "x", "annotations": {}, "finalizers": [], "labels": {}},
            "spec": {"strategy": {}, "args": [], "unknown": {"object": {}}}
        })
    );
    assert_eq!(
        extracted(&object, "other", ""),
        json!({"metadata": {"name": "x"}, "spec": {"selector": {}, "statuses": []}}),
        "atomic values were taken whole, empty or not, already"
    );
}

#[test]
fn list_elements_by_key_value_and_position() {
    let object = json!({
        "metadata": {"name": "x", "managedFields": [entry("mine", "Apply", "", json!({"f:spec": {
            "f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:port": {}, "f:protocol": {}, "f:name": {}}},
            "f:args": {"i:1": {}},
            "f:atomic": {},
            // Atomic for apply though strategic merge patch merges it by key.
            "f:statuses": {},
        }}))]},
        "spec": {
            "ports": [{"port": 80, "protocol": "UDP", "name": "u"}, {"port": 80, "protocol": "TCP", "name": "t", "nodePort": 3}],
            "args": ["a", "b", "c"],
            "atomic": [{"x": 1}, {"y": 2}],
            "statuses": [{"type": "a"}, {"type": "b"}],
        }
    });
    assert_eq!(
        extracted(&object, "mine", ""),
        json!({"metadata": {"name": "x"}, "spec": {
            "ports": [{"port": 80, "protocol": "TCP", "name": "t"}],
            "args": ["b"],
            "atomic": [{"x": 1}, {"y": 2}],
            "statuses": [{"type": "a"}, {"type": "b"}],
        }})
    );
}

#[test]
fn an_empty_field_set_owns_nothing() {
    let object = json!({"metadata": {"name": "x", "managedFields": [
        {"manager": "mine", "operation": "Apply"},
        entry("other", "Apply", "", json!({})),
    ]}, "spec": {"a": 1}});
    assert_eq!(extracted(&object, "mine", ""), json!({"metadata": {"name": "x"}}));
    assert_eq!(extracted(&object, "other", ""), json!({"metadata": {"name": "x"}}));
}

#[test]
fn malformed_managed_fields_are_errors_naming_where() {
    let with = |entries: Value| json!({"metadata": {"name": "x", "managedFields": entries}});
    let message = |object: Value| extract::<Whole>(&object, "mine", "").unwrap_err().to_string();
    assert_eq!(message(json!({"metadata": {"managedFields": 3}})), "metadata.managedFields is not a list");
    assert_eq!(message(with(json!([1]))), "metadata.managedFields[0] is malformed: not an object");
    assert_eq!(
        message(with(json!([entry("a", "Apply", "", json!({})), {"manager": 7}]))),
        "metadata.managedFields[1] is malformed: manager is not a string"
    );
    assert_eq!(
        message(with(json!([{"manager": "a", "fieldsType": "FieldsV2"}]))),
        "metadata.managedFields[0] is malformed: fieldsType \"FieldsV2\" is not FieldsV1"
    );
    let bad_set = message(with(json!([entry("other", "Update", "", json!({"f:spec": {"q:1": {}}}))])));
    assert_eq!(
        bad_set,
        "metadata.managedFields[0].fieldsV1 (manager \"other\") is malformed at .f:spec.q:1: \
         path element \"q:1\" has the unknown prefix \"q\""
    );
}

#[test]
fn a_configuration_of_another_shape_is_a_decode_error() {
    #[derive(Debug, Default)]
    struct Numbered(u64);
    impl DecodeFields for Numbered {
        const NAME: &'static str = "Numbered";
        fn field_index(key: &str) -> Option<u16> {
            (key == "spec").then_some(0)
        }
        fn decode_field<'de, A: MapAccess<'de>>(
            &mut self,
            _: u16,
            map: &mut A,
            _: DecodeOptions,
        ) -> Result<(), A::Error> {
            self.0 = map.next_value()?;
            Ok(())
        }
    }
    impl MergeFields for Numbered {
        fn merge_fields() -> &'static [(&'static str, Merge)] {
            &[]
        }
    }
    let err = extract::<Numbered>(&deployment(), "mine", "").unwrap_err();
    assert!(matches!(err, ExtractError::Decode { type_name: "Numbered", .. }), "{err:?}");
}
