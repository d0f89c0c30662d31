//! Server-side apply and update ownership, in the scenarios
//! `integration/tests/server_side_apply.rs` runs on the real apiserver,
//! with the field sets the apiserver writes for them.

use serde_json::{Value, json};

use super::{ApplyError, record_update, server_side_apply};
use crate::apply::{ListMerge, ListType, Merge, PatchStrategy};
use crate::rest::ApplyConflict;

const NOW: &str = "2026-01-02T03:04:05Z";
const LATER: &str = "2026-01-02T03:04:06Z";

/// A Deployment's merge schema, as the generated `DeploymentApply` has it.
fn deployment() -> &'static [(&'static str, Merge)] {
    &[
        ("metadata", Merge::Struct(object_meta)),
        ("spec", Merge::Struct(deployment_spec)),
        ("status", Merge::Struct(no_fields)),
    ]
}

fn object_meta() -> &'static [(&'static str, Merge)] {
    const FINALIZERS: ListMerge =
        ListMerge { apply: ListType::Set, patch: PatchStrategy::MergeByValue, element: Merge::Atomic };
    &[
        ("annotations", Merge::Map(&Merge::Atomic)),
        ("finalizers", Merge::List(&FINALIZERS)),
        ("labels", Merge::Map(&Merge::Atomic)),
    ]
}

fn deployment_spec() -> &'static [(&'static str, Merge)] {
    // `selector` is an atomic LabelSelector: not listed.
    &[("template", Merge::Struct(pod_template))]
}

fn pod_template() -> &'static [(&'static str, Merge)] {
    &[("metadata", Merge::Struct(object_meta)), ("spec", Merge::Struct(pod_spec))]
}

fn pod_spec() -> &'static [(&'static str, Merge)] {
    const CONTAINERS: ListMerge = ListMerge {
        apply: ListType::Map(&["name"]),
        patch: PatchStrategy::MergeByKey("name"),
        element: Merge::Struct(container),
    };
    &[("containers", Merge::List(&CONTAINERS))]
}

fn container() -> &'static [(&'static str, Merge)] {
    const PORTS: ListMerge = ListMerge {
        apply: ListType::Map(&["containerPort", "protocol"]),
        patch: PatchStrategy::MergeByKey("containerPort"),
        element: Merge::Struct(no_fields),
    };
    &[("ports", Merge::List(&PORTS))]
}

fn no_fields() -> &'static [(&'static str, Merge)] {
    &[]
}

const SCHEMA: Option<Merge> = Some(Merge::Struct(deployment));

fn head() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ns"}})
}

/// The selector and template of `web`, with these containers.
fn shape(containers: Value) -> Value {
    let mut config = head();
    config["spec"] = json!({
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": containers}}
    });
    config
}

fn replicas(count: i64) -> Value {
    let mut config = head();
    config["spec"] = json!({"replicas": count});
    config
}

fn apply(current: Option<&Value>, config: &Value, manager: &str) -> Value {
    server_side_apply(current, config, manager, false, None, SCHEMA, NOW).unwrap()
}

/// `(manager, operation, fieldsV1)` of each managedFields entry, in order.
fn owners(object: &Value) -> Vec<(String, String, Value)> {
    object["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (e["manager"].as_str().unwrap().into(), e["operation"].as_str().unwrap().into(), e["fieldsV1"].clone())
        })
        .collect()
}

fn owned(object: &Value, manager: &str) -> Value {
    owners(object).into_iter().find(|(m, ..)| m == manager).map(|(.., set)| set).unwrap_or(Value::Null)
}

#[test]
fn a_create_is_the_configuration_with_the_appliers_entry_as_the_apiserver_writes_it() {
    let config = shape(json!([{"name": "app", "image": "nginx:1"}]));
    let created = apply(None, &config, "shaper");
    let mut expected = config.clone();
    expected["metadata"]["managedFields"] = json!([{
        "manager": "shaper",
        "operation": "Apply",
        "apiVersion": "apps/v1",
        "time": NOW,
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {
            "f:selector": {},
            "f:template": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:name": {}}}}
            }
        }}
    }]);
    assert_eq!(created, expected);
}

#[test]
fn replicas_applied_alone_while_another_owns_selector_and_template_is_no_conflict() {
    let shaped = apply(None, &shape(json!([{"name": "app", "image": "nginx:1"}])), "shaper");
    let scaled = apply(Some(&shaped), &replicas(3), "scaler");
    assert_eq!(scaled["spec"]["replicas"], json!(3));
    assert_eq!(scaled["spec"]["template"]["spec"]["containers"][0]["image"], json!("nginx:1"));
    assert_eq!(owned(&scaled, "scaler"), json!({"f:spec": {"f:replicas": {}}}));
    assert_eq!(owned(&scaled, "shaper"), owned(&shaped, "shaper"));
}

#[test]
fn two_managers_each_own_one_container_of_the_keyed_list() {
    let shaped = apply(None, &shape(json!([{"name": "app", "image": "nginx:1"}])), "shaper");
    let mut sidecar = head();
    sidecar["spec"] = json!({"template": {"spec": {"containers": [{"name": "sidecar", "image": "proxy:1"}]}}});
    let both = apply(Some(&shaped), &sidecar, "sidecars");
    let names: Vec<&Value> =
        both["spec"]["template"]["spec"]["containers"].as_array().unwrap().iter().map(|c| &c["name"]).collect();
    assert_eq!(names, [&json!("app"), &json!("sidecar")]);
    assert_eq!(
        owned(&both, "sidecars"),
        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"sidecar\"}": {".": {}, "f:image": {}, "f:name": {}}
        }}}}})
    );
    // The shaper changes its image through what it owns; the sidecar stays.
    let changed = apply(Some(&both), &shape(json!([{"name": "app", "image": "nginx:2"}])), "shaper");
    let images: Vec<&Value> =
        changed["spec"]["template"]["spec"]["containers"].as_array().unwrap().iter().map(|c| &c["image"]).collect();
    assert_eq!(images, [&json!("nginx:2"), &json!("proxy:1")]);
}

/// The owner's configuration: the shape, a label and two replicas.
fn owned_by_owner() -> Value {
    let mut config = shape(json!([{"name": "app", "image": "nginx:1"}]));
    config["metadata"]["labels"] = json!({"team": "blue"});
    config["spec"]["replicas"] = json!(2);
    apply(None, &config, "owner")
}

#[test]
fn a_conflict_names_the_field_and_its_owner_as_the_apiserver_does() {
    let current = owned_by_owner();
    let err = server_side_apply(Some(&current), &replicas(5), "scaler", false, None, SCHEMA, NOW).unwrap_err();
    assert_eq!(
        err,
        ApplyError::Conflicts(vec![ApplyConflict {
            field: ".spec.replicas".into(),
            manager: "owner".into(),
            message: "conflict with \"owner\"".into(),
        }])
    );
    // The same value is shared, not a conflict.
    let shared = apply(Some(&current), &replicas(2), "scaler");
    assert_eq!(owned(&shared, "scaler"), json!({"f:spec": {"f:replicas": {}}}));
    assert_eq!(owned(&shared, "owner")["f:spec"]["f:replicas"], json!({}));
}

#[test]
fn a_conflict_with_an_update_names_its_api_version_and_subresource() {
    let current = owned_by_owner();
    let mut scaled = current.clone();
    scaled["spec"]["replicas"] = json!(4);
    record_update(Some(&current), &mut scaled, "hpa", Some("scale"), SCHEMA, LATER);
    let err = server_side_apply(Some(&scaled), &replicas(5), "scaler", false, None, SCHEMA, NOW).unwrap_err();
    let ApplyError::Conflicts(conflicts) = err else { panic!("{err:?}") };
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    assert_eq!(conflicts[0].message, "conflict with \"hpa\" with subresource \"scale\" using apps/v1");
}

#[test]
fn force_takes_the_field_from_its_owner() {
    let current = owned_by_owner();
    let forced = server_side_apply(Some(&current), &replicas(5), "scaler", true, None, SCHEMA, LATER).unwrap();
    assert_eq!(forced["spec"]["replicas"], json!(5));
    assert_eq!(owned(&forced, "scaler"), json!({"f:spec": {"f:replicas": {}}}));
    let owner = owned(&forced, "owner");
    assert!(owner["f:spec"].get("f:replicas").is_none(), "{owner}");
    assert_eq!(owner["f:metadata"], json!({"f:labels": {"f:team": {}}}));
    // Entries sorted as the apiserver sorts them: by time among appliers.
    let order: Vec<String> = owners(&forced).into_iter().map(|(m, ..)| m).collect();
    assert_eq!(order, ["owner", "scaler"]);
}

#[test]
fn a_field_the_applier_stops_applying_leaves_the_object_unless_another_owns_it() {
    let current = owned_by_owner();
    let mut without = shape(json!([{"name": "app", "image": "nginx:1"}]));
    without["metadata"]["labels"] = json!({"team": "blue"});
    let dropped = apply(Some(&current), &without, "owner");
    assert!(dropped["spec"].get("replicas").is_none(), "{dropped}");
    // Also owned by the scaler (same value): kept.
    let shared = apply(Some(&current), &replicas(2), "scaler");
    let kept = apply(Some(&shared), &without, "owner");
    assert_eq!(kept["spec"]["replicas"], json!(2));
    // A container the applier stops applying leaves the list.
    let mut two = shape(json!([{"name": "app", "image": "nginx:1"}, {"name": "extra", "image": "x:1"}]));
    let with_two = apply(None, &two, "shaper");
    two["spec"]["template"]["spec"]["containers"] = json!([{"name": "app", "image": "nginx:1"}]);
    let one = apply(Some(&with_two), &two, "shaper");
    assert_eq!(one["spec"]["template"]["spec"]["containers"], json!([{"name": "app", "image": "nginx:1"}]));
}

#[test]
fn an_update_takes_what_it_changed_and_drops_emptied_entries() {
    let current = apply(Some(&owned_by_owner()), &shape(json!([{"name": "app", "image": "nginx:1"}])), "shaper");
    let mut edited = current.clone();
    edited["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:3");
    edited["spec"]["replicas"] = json!(7);
    edited["metadata"]["finalizers"] = json!(["example.com/keep"]);
    record_update(Some(&current), &mut edited, "editor", None, SCHEMA, LATER);
    assert_eq!(
        owned(&edited, "editor"),
        json!({
            "f:metadata": {"f:finalizers": {".": {}, "v:\"example.com/keep\"": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {"f:image": {}}}}}
            }
        })
    );
    let entry = &edited["metadata"]["managedFields"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (&entry["operation"], &entry["apiVersion"], &entry["time"]),
        (&json!("Update"), &json!("apps/v1"), &json!(LATER))
    );
    let shaper = owned(&edited, "shaper");
    assert!(shaper["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"].get("f:image").is_none());
    // The owner kept its label; its replicas went to the editor.
    assert!(owned(&edited, "owner")["f:spec"].get("f:replicas").is_none());

    // Everything a manager owned taken by an update: its entry goes.
    let scaled = apply(Some(&edited), &replicas(7), "scaler");
    let mut rescaled = scaled.clone();
    rescaled["spec"]["replicas"] = json!(1);
    record_update(Some(&scaled), &mut rescaled, "editor", None, SCHEMA, LATER);
    assert!(owners(&rescaled).iter().all(|(m, ..)| m != "scaler"), "{:?}", owners(&rescaled));
}

#[test]
fn a_create_by_update_owns_every_field_but_the_stripped_metadata() {
    let mut created = replicas(1);
    created["metadata"]["uid"] = json!("u-1");
    created["metadata"]["labels"] = json!({"a": "b"});
    record_update(None, &mut created, "creator", None, SCHEMA, NOW);
    assert_eq!(
        owned(&created, "creator"),
        json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}}, "f:spec": {".": {}, "f:replicas": {}}})
    );
}

#[test]
fn sets_and_keyed_lists_write_their_steps() {
    let mut config = head();
    config["metadata"]["finalizers"] = json!(["b", "a"]);
    config["spec"] = json!({"template": {"spec": {"containers": [
        {"name": "app", "ports": [{"containerPort": 80, "protocol": "TCP"}]}
    ]}}});
    let created = apply(None, &config, "m");
    assert_eq!(
        owned(&created, "m"),
        json!({
            "f:metadata": {"f:finalizers": {"v:\"a\"": {}, "v:\"b\"": {}}},
            "f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {
                ".": {}, "f:name": {},
                "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                    ".": {}, "f:containerPort": {}, "f:protocol": {}
                }}
            }}}}}
        })
    );
}

#[test]
fn a_subresource_apply_is_an_entry_of_its_own() {
    let created = apply(None, &replicas(1), "m");
    let mut status = head();
    status["status"] = json!({"replicas": 1});
    let both = server_side_apply(Some(&created), &status, "m", false, Some("status"), SCHEMA, LATER).unwrap();
    let entries = both["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert_eq!(entries[0].get("subresource"), None);
    assert_eq!(entries[1]["subresource"], json!("status"));
    assert_eq!(entries[1]["fieldsV1"], json!({"f:status": {"f:replicas": {}}}));
    // The main resource's apply no longer holding replicas does not touch
    // what the status entry owns.
    let mut again = head();
    again["spec"] = json!({"paused": true});
    let main = server_side_apply(Some(&both), &again, "m", false, None, SCHEMA, LATER).unwrap();
    assert_eq!(main["status"], json!({"replicas": 1}));
    assert!(main["spec"].get("replicas").is_none(), "{main}");
}

#[test]
fn invalid_configurations_are_refused() {
    let mut config = head();
    config["spec"] = json!({"template": {"spec": {"containers": [{"image": "x"}]}}});
    let err = server_side_apply(None, &config, "m", false, None, SCHEMA, NOW).unwrap_err();
    assert!(matches!(&err, ApplyError::Invalid(why) if why.contains("key fields")), "{err:?}");
    let current = apply(None, &shape(json!([{"name": "app"}])), "m");
    let dupes = shape(json!([{"name": "app"}, {"name": "app"}]));
    let err = server_side_apply(Some(&current), &dupes, "m", false, None, SCHEMA, NOW).unwrap_err();
    assert!(matches!(&err, ApplyError::Invalid(why) if why.contains("duplicate")), "{err:?}");
    assert!(matches!(server_side_apply(None, &json!([]), "m", false, None, SCHEMA, NOW), Err(ApplyError::Invalid(_))));
}

/// The managedFields kube-apiserver v1.35.8 (the project's testenv) wrote
/// after `shaper`, `scaler` and `sidecars` applied, `editor` sent a
/// strategic merge patch, and `other` applied replicas (its 409), replayed
/// here: the same entries, field sets and conflict.
#[test]
fn the_field_sets_are_those_kube_apiserver_wrote_for_the_same_writes() {
    let shaped = apply(None, &shape(json!([{"name": "app", "image": "nginx:1"}])), "shaper");
    let scaled = apply(Some(&shaped), &replicas(3), "scaler");
    let mut sidecar = head();
    sidecar["spec"] = json!({"template": {"spec": {"containers": [
        {"name": "sidecar", "image": "proxy:1", "ports": [{"containerPort": 8080, "protocol": "TCP"}]}
    ]}}});
    let applied = apply(Some(&scaled), &sidecar, "sidecars");
    let captured_after_apply = json!([
        ["scaler", "Apply", {"f:spec": {"f:replicas": {}}}],
        ["shaper", "Apply", {"f:spec": {"f:selector": {}, "f:template": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:name": {}}}}
        }}}],
        ["sidecars", "Apply", {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"sidecar\"}": {
            ".": {}, "f:image": {}, "f:name": {},
            "f:ports": {"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}, "f:protocol": {}}}
        }}}}}}],
    ]);
    assert_eq!(json!(owners(&applied)), captured_after_apply);

    let patch = json!({
        "metadata": {"finalizers": ["example.com/keep"], "labels": {"team": "blue"}},
        "spec": {"replicas": 4, "template": {"spec": {"containers": [{"name": "app", "image": "nginx:3"}]}}}
    });
    let mut edited = super::strategic_merge(&applied, &patch, SCHEMA).unwrap();
    // The patched object as the apiserver returned it (less its defaults).
    let containers = &edited["spec"]["template"]["spec"]["containers"];
    assert_eq!((&containers[0]["name"], &containers[0]["image"]), (&json!("app"), &json!("nginx:3")));
    assert_eq!((&containers[1]["name"], containers.as_array().unwrap().len()), (&json!("sidecar"), 2));
    assert_eq!(edited["metadata"]["labels"], json!({"team": "blue"}));
    record_update(Some(&applied), &mut edited, "editor", None, SCHEMA, NOW);
    let captured_after_update = json!([
        ["shaper", "Apply", {"f:spec": {"f:selector": {}, "f:template": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:name": {}}}}
        }}}],
        ["sidecars", "Apply", {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"sidecar\"}": {
            ".": {}, "f:image": {}, "f:name": {},
            "f:ports": {"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}, "f:protocol": {}}}
        }}}}}}],
        ["editor", "Update", {
            "f:metadata": {"f:finalizers": {".": {}, "v:\"example.com/keep\"": {}}, "f:labels": {".": {}, "f:team": {}}},
            "f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {"f:image": {}}}}}}
        }],
    ]);
    assert_eq!(json!(owners(&edited)), captured_after_update);

    let err = server_side_apply(Some(&edited), &replicas(3), "other", false, None, SCHEMA, NOW).unwrap_err();
    // The 409's cause: {"reason": "FieldManagerConflict", "message": ..., "field": ...}.
    assert_eq!(
        err,
        ApplyError::Conflicts(vec![ApplyConflict {
            field: ".spec.replicas".into(),
            manager: "editor".into(),
            message: "conflict with \"editor\" using apps/v1".into(),
        }])
    );
}

/// As kube-apiserver v1.35.8 does: an apply or update that changes nothing
/// gives a new manager an entry without a time (apply) or none (update),
/// and leaves an existing applier's time.
#[test]
fn a_write_that_changes_nothing_keeps_times() {
    let current = owned_by_owner();
    let shared = server_side_apply(Some(&current), &replicas(2), "scaler", false, None, SCHEMA, LATER).unwrap();
    let entries = shared["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!((&entries[0]["manager"], entries[0].get("time")), (&json!("scaler"), None));
    assert_eq!((&entries[1]["manager"], &entries[1]["time"]), (&json!("owner"), &json!(NOW)));

    let mut same = owned_by_owner();
    let again = server_side_apply(
        Some(&current),
        &{
            let mut c = current.clone();
            c["metadata"].as_object_mut().unwrap().remove("managedFields");
            c
        },
        "owner",
        false,
        None,
        SCHEMA,
        LATER,
    )
    .unwrap();
    assert_eq!(again["metadata"]["managedFields"][0]["time"], json!(NOW));

    record_update(Some(&current), &mut same, "noop", None, SCHEMA, LATER);
    assert!(owners(&same).iter().all(|(m, ..)| m != "noop"));
}

#[test]
fn an_applied_configuration_with_managed_fields_is_refused() {
    let mut config = replicas(1);
    config["metadata"]["managedFields"] = json!([]);
    let err = server_side_apply(None, &config, "m", false, None, SCHEMA, NOW).unwrap_err();
    assert_eq!(err, ApplyError::Invalid("metadata.managedFields must be nil".into()));
}

mod properties {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::super::fields::{FieldSet, field_set};
    use super::{NOW, SCHEMA, head, server_side_apply};
    use crate::apply::Merge;

    /// A deployment configuration: some labels, replicas, containers with
    /// distinct names.
    fn configuration() -> impl Strategy<Value = Value> {
        let labels = prop::collection::btree_map("[a-c]", "[x-z]", 0..3);
        // Never empty: a list or map emptied by what an applier dropped
        // goes, where an applied empty one stays.
        let containers = prop::collection::btree_map("[a-d]", prop::option::of("[1-3]"), 1..4);
        (labels, prop::option::of(0i64..4), containers).prop_map(|(labels, replicas, containers)| {
            let mut config = head();
            if !labels.is_empty() {
                config["metadata"]["labels"] = json!(labels);
            }
            let containers: Vec<Value> = containers
                .into_iter()
                .map(|(name, image)| match image {
                    Some(image) => json!({"name": name, "image": image}),
                    None => json!({"name": name}),
                })
                .collect();
            config["spec"] = json!({"template": {"spec": {"containers": containers}}});
            if let Some(replicas) = replicas {
                config["spec"]["replicas"] = json!(replicas);
            }
            config
        })
    }

    proptest! {
        #[test]
        fn a_field_set_reads_back_as_written(config in configuration()) {
            for schema in [SCHEMA.unwrap(), Merge::Deduced] {
                let set = field_set(&config, schema).unwrap();
                prop_assert_eq!(FieldSet::parse(&set.to_value()).unwrap(), set);
            }
        }

        #[test]
        fn applying_again_changes_nothing(first in configuration(), second in configuration()) {
            let created = server_side_apply(None, &first, "a", false, None, SCHEMA, NOW).unwrap();
            let once = server_side_apply(Some(&created), &second, "a", false, None, SCHEMA, NOW).unwrap();
            let twice = server_side_apply(Some(&once), &second, "a", false, None, SCHEMA, NOW).unwrap();
            prop_assert_eq!(&twice, &once);
        }

        #[test]
        fn keyed_lists_merge_in_applied_order_keeping_live_only_elements(
            live in prop::collection::vec("[a-e]", 0..6),
            applied in prop::collection::btree_set("[a-e]", 0..5),
            order in any::<prop::sample::Index>(),
        ) {
            // Live elements may repeat (the apiserver allows that in stored
            // objects); applied ones may not.
            let mut applied: Vec<String> = applied.into_iter().collect();
            if !applied.is_empty() {
                let at = order.index(applied.len());
                applied.rotate_left(at);
            }
            let mut current = super::shape(json!(live.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()));
            current["metadata"]["uid"] = json!("u");
            let config = super::shape(json!(applied.iter().map(|n| json!({"name": n, "image": "i"})).collect::<Vec<_>>()));
            let merged = server_side_apply(Some(&current), &config, "a", true, None, SCHEMA, NOW).unwrap();
            let names: Vec<String> = merged["spec"]["template"]["spec"]["containers"]
                .as_array()
                .map(|items| items.iter().map(|c| c["name"].as_str().unwrap().to_owned()).collect())
                .unwrap_or_default();
            // Every applied element once, in applied order; every live-only
            // name kept.
            let applied_in_result: Vec<&String> = names.iter().filter(|n| applied.contains(n)).collect();
            prop_assert_eq!(applied_in_result, applied.iter().collect::<Vec<_>>());
            for name in &live {
                prop_assert!(names.contains(name), "{} lost: {:?}", name, names);
            }
        }

        #[test]
        fn a_sole_applier_gets_what_it_applies(first in configuration(), second in configuration()) {
            // With no other owner, what the applier dropped goes and what
            // it applies is there as applied.
            let created = server_side_apply(None, &first, "a", false, None, SCHEMA, NOW).unwrap();
            let mut updated = server_side_apply(Some(&created), &second, "a", false, None, SCHEMA, NOW).unwrap();
            updated["metadata"].as_object_mut().unwrap().remove("managedFields");
            prop_assert_eq!(updated, second);
        }
    }
}
