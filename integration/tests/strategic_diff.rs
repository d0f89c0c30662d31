//! Two-way strategic merge patches of built-in kinds with their generated
//! merge schemas: merging the patch of two objects into the first gives the
//! second, for seeded random edits of the fully populated testdata objects
//! (no apiserver needed), and the real apiserver merges a patch of a
//! Deployment into what the runtime's own merge gives, and clears the
//! fields a `$retainKeys` patch does not keep.

mod support;

use std::collections::BTreeSet;
use std::path::PathBuf;

use k8s_client::api::apps::v1::{Deployment, DeploymentApply};
use k8s_client::api::core::v1::{Pod, PodApply};
use k8s_client_runtime::apply::{Merge, MergeFields, PatchStrategy};
use k8s_client_runtime::rest::{CreateOptions, Patch, PatchOptions};
use k8s_client_runtime::strategic;
use serde_json::{Value, json};
use support::testdata::first_difference;

fn testdata(file: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata/kubernetes-1.34").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("testdata missing at {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// How field `name` of a value merging as `schema` merges, and whether its
/// patches carry `$retainKeys` (the runtime's lookup, from outside).
fn field(schema: Merge, name: &str) -> Merge {
    match schema {
        Merge::Struct(fields) => fields().iter().find(|(f, _)| *f == name).map_or(Merge::Atomic, |f| f.1),
        Merge::Map(value) => *value,
        Merge::Deduced => Merge::Deduced,
        Merge::RetainKeys(inner) => field(*inner, name),
        _ => Merge::Atomic,
    }
}

fn unwrapped(schema: Merge) -> Merge {
    match schema {
        Merge::RetainKeys(inner) => unwrapped(*inner),
        other => other,
    }
}

/// xorshift64: reproducible edits without a dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// Edits `value` (merging as `schema`) at random: scalars changed or
/// dropped, map keys added and removed, elements of lists that merge added
/// (with fresh keys), removed, moved and edited, other lists replaced.
/// `fresh` numbers the new keys so none repeats one in its list.
fn edit(value: &mut Value, schema: Merge, rng: &mut Rng, fresh: &mut u64) {
    let schema = unwrapped(schema);
    match value {
        Value::Object(fields) => {
            let names: Vec<String> = fields.keys().cloned().collect();
            for name in names {
                if rng.chance(4) {
                    fields.remove(&name);
                } else if rng.chance(40) {
                    edit(fields.get_mut(&name).unwrap(), field(schema, &name), rng, fresh);
                }
            }
            if matches!(schema, Merge::Map(_)) && rng.chance(30) {
                *fresh += 1;
                fields.insert(format!("added-{fresh}"), json!(format!("v{fresh}")));
            }
        }
        Value::Array(items) => {
            let Merge::List(list) = schema else {
                if rng.chance(50) {
                    items.reverse();
                }
                items.truncate(items.len().saturating_sub(rng.below(2)));
                return;
            };
            for _ in 0..=rng.below(3) {
                match rng.below(5) {
                    0 if !items.is_empty() => {
                        let at = rng.below(items.len());
                        items.remove(at);
                    }
                    1 if !items.is_empty() => {
                        let mut item = items[rng.below(items.len())].clone();
                        *fresh += 1;
                        match (&mut item, list.patch) {
                            (Value::Object(fields), PatchStrategy::MergeByKey(key)) => {
                                let fresh_key = match fields.get(key) {
                                    Some(Value::Number(n)) => json!(n.as_u64().unwrap_or(0) + 1000 + *fresh),
                                    _ => json!(format!("key-{fresh}")),
                                };
                                fields.insert(key.to_owned(), fresh_key);
                            }
                            (Value::Number(n), _) => item = json!(n.as_u64().unwrap_or(0) + 1000 + *fresh),
                            _ => item = json!(format!("item-{fresh}")),
                        }
                        let at = rng.below(items.len() + 1);
                        items.insert(at, item);
                    }
                    2 if items.len() > 1 => {
                        let item = items.remove(rng.below(items.len()));
                        let at = rng.below(items.len() + 1);
                        items.insert(at, item);
                    }
                    3 if !items.is_empty() => {
                        let at = rng.below(items.len());
                        let key = match list.patch {
                            PatchStrategy::MergeByKey(key) => items[at].get(key).cloned(),
                            _ => None,
                        };
                        if items[at].is_object() {
                            edit(&mut items[at], list.element, rng, fresh);
                            // The key stays: an element that lost it is another element.
                            if let (Some(key_value), PatchStrategy::MergeByKey(key)) = (key, list.patch) {
                                items[at][key] = key_value;
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        Value::String(text) => text.push('x'),
        Value::Number(n) => *value = json!(n.as_i64().unwrap_or(0) + 1),
        Value::Bool(b) => *b = !*b,
        Value::Null => {}
    }
}

/// Adds the fields `patch` changes (by name, at any depth) to `changed`,
/// lists patched element by element as `name[]`.
fn changed_fields(patch: &Value, changed: &mut BTreeSet<String>) {
    match patch {
        Value::Object(fields) => {
            for (name, value) in fields {
                match name.strip_prefix("$setElementOrder/") {
                    Some(list) => changed.insert(format!("{list}[]")),
                    None => changed.insert(name.clone()),
                };
                changed_fields(value, changed);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| changed_fields(item, changed)),
        _ => {}
    }
}

/// For 200 seeds per kind: `new` is a random edit of the testdata object,
/// and merging `two_way_patch(old, new)` into `old` gives `new`. Returns
/// the fields the patches changed.
fn assert_round_trips(file: &str, schema: Merge) -> BTreeSet<String> {
    let old = testdata(file);
    let mut changed = BTreeSet::new();
    for seed in 1..=200u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut new = old.clone();
        let mut fresh = 0;
        for _ in 0..3 {
            edit(&mut new, schema, &mut rng, &mut fresh);
        }
        let patch = strategic::two_way_patch(&old, &new, schema)
            .unwrap_or_else(|e| panic!("{file} seed {seed}: creating the patch: {e}"));
        changed_fields(&patch, &mut changed);
        let merged =
            strategic::merge(&old, &patch, schema).unwrap_or_else(|e| panic!("{file} seed {seed}: merging: {e}"));
        assert!(merged == new, "{file} seed {seed}: {}\npatch: {patch}", first_difference(&merged, &new, ""));
    }
    changed
}

#[test]
fn patches_of_edited_testdata_objects_merge_back_into_the_edit() {
    let deployment = assert_round_trips("apps.v1.Deployment.json", Merge::Struct(DeploymentApply::merge_fields));
    let pod = assert_round_trips("core.v1.Pod.json", Merge::Struct(PodApply::merge_fields));
    // The edits reached the lists that merge element by element, and labels.
    for changed in [deployment, pod] {
        for field in ["containers[]", "env[]", "ports[]", "volumes[]", "volumeMounts[]", "labels"] {
            assert!(changed.contains(field), "no patch changed {field}: {changed:?}");
        }
    }
}

/// The typed path: `Patch::strategic_diff` with the kind's generated schema
/// gives the untyped function's patch of the same objects with its apply
/// configuration's.
#[test]
fn typed_diff_is_the_diff_of_the_objects_json() {
    let old: Pod = serde_json::from_value(testdata("core.v1.Pod.json")).unwrap();
    let mut new = old.clone();
    let spec = new.spec.as_mut().unwrap();
    spec.containers[0].image = Some("app:2".into());
    spec.containers[0].env = None;
    new.metadata.labels.get_or_insert_default().insert("tier", "web".into());
    let patch = Patch::strategic_diff(&old, &new).unwrap();
    let expected = strategic::two_way_patch(
        &serde_json::to_value(&old).unwrap(),
        &serde_json::to_value(&new).unwrap(),
        Merge::Struct(PodApply::merge_fields),
    )
    .unwrap();
    assert_eq!(patch, Patch::Strategic(expected));
    assert_eq!(patch.body()["metadata"], json!({"labels": {"tier": "web"}}));
}

fn web(namespace: &str) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": namespace, "labels": {"app": "web", "team": "a"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "app:1",
                            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                            "ports": [{"containerPort": 80, "name": "http"}, {"containerPort": 9090, "name": "metrics"}],
                            "volumeMounts": [{"name": "cache", "mountPath": "/cache"}],
                        },
                        {"name": "log", "image": "log:1"},
                    ],
                    "volumes": [{"name": "cache", "emptyDir": {}}, {"name": "tmp", "emptyDir": {}}],
                },
            },
        },
    }))
    .unwrap()
}

/// The apiserver merges the patch of a Deployment changed in its labels,
/// replicas, containers (one edited, one added, one removed), env, ports
/// and volumes into exactly the changed Deployment, as the runtime's
/// merge does.
#[tokio::test]
async fn the_apiserver_merges_a_two_way_patch_into_the_changed_object() {
    let namespace = support::namespace("smp");
    let deployments = support::clientset().apps_v1().deployments(&namespace);
    let old = deployments.create(&web(&namespace), &CreateOptions::default()).await.unwrap();

    let mut new = old.clone();
    let labels = new.metadata.labels.as_mut().unwrap();
    labels.remove("team");
    labels.insert("tier", "front".into());
    new.spec.replicas = Some(3);
    let pod = new.spec.template.spec.as_mut().unwrap();
    // A copy of the defaulted container, so the apiserver adds no defaults.
    let mut sidecar = pod.containers[1].clone();
    sidecar.name = "proxy".into();
    sidecar.image = Some("proxy:1".into());
    pod.containers.remove(1);
    pod.containers.insert(0, sidecar);
    let app = &mut pod.containers[1];
    app.image = Some("app:2".into());
    let env = app.env.as_mut().unwrap();
    env.retain(|e| e.name != "A");
    env.push(serde_json::from_value(json!({"name": "C", "value": "3"})).unwrap());
    app.ports.as_mut().unwrap().retain(|p| p.container_port != 9090);
    let volumes = pod.volumes.as_mut().unwrap();
    volumes.retain(|v| v.name != "tmp");
    volumes.push(serde_json::from_value(json!({"name": "scratch", "emptyDir": {}})).unwrap());

    let patch = Patch::strategic_diff(&old, &new).unwrap();
    let body = patch.body();
    // Sent element by element, not whole lists.
    assert_eq!(
        body["spec"]["template"]["spec"]["$setElementOrder/containers"],
        json!([{"name": "proxy"}, {"name": "app"}])
    );
    assert!(
        body["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .contains(&json!({"name": "log", "$patch": "delete"}))
    );
    assert_eq!(body["metadata"], json!({"labels": {"team": null, "tier": "front"}}));

    let patched = deployments.patch("web", &patch, &PatchOptions::default()).await.unwrap();
    let served = serde_json::to_value(&patched).unwrap();
    let wanted = serde_json::to_value(&new).unwrap();
    assert_eq!(served["spec"], wanted["spec"], "{}", first_difference(&served["spec"], &wanted["spec"], "/spec"));
    assert_eq!(served["metadata"]["labels"], wanted["metadata"]["labels"]);

    let merged =
        strategic::merge(&serde_json::to_value(&old).unwrap(), body, Merge::Struct(DeploymentApply::merge_fields))
            .unwrap();
    assert_eq!(merged["spec"], served["spec"]);
}

/// A Deployment as its author wrote it, with a strategy of `strategy_type`
/// (the apiserver defaults `rollingUpdate` in when it is `RollingUpdate`).
fn web_with_strategy(namespace: &str, strategy_type: &str) -> Deployment {
    let mut deployment = serde_json::to_value(web(namespace)).unwrap();
    deployment["spec"]["strategy"] = json!({"type": strategy_type});
    serde_json::from_value(deployment).unwrap()
}

/// `spec.strategy` is `retainKeys`: the patch from the author's
/// `RollingUpdate` to `Recreate` lists the fields it keeps, as
/// apimachinery's does, so the apiserver drops the `rollingUpdate` it
/// defaulted in, which the author never wrote and so cannot delete (without
/// `$retainKeys` the same patch is refused: `Recreate` with
/// `rollingUpdate`).
#[tokio::test]
async fn a_retain_keys_patch_clears_the_strategy_fields_it_does_not_keep() {
    let namespace = support::namespace("smp-retain");
    let deployments = support::clientset().apps_v1().deployments(&namespace);
    let written = web_with_strategy(&namespace, "RollingUpdate");
    let created = deployments.create(&written, &CreateOptions::default()).await.unwrap();
    let defaulted = serde_json::to_value(&created).unwrap();
    assert!(defaulted["spec"]["strategy"]["rollingUpdate"].is_object(), "{}", defaulted["spec"]["strategy"]);

    // From the object as served, the field to drop is in the patch too.
    let mut recreate = created.clone();
    recreate.spec.strategy = Some(Box::new(serde_json::from_value(json!({"type": "Recreate"})).unwrap()));
    assert_eq!(
        Patch::strategic_diff(&created, &recreate).unwrap().body(),
        &json!({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": null, "type": "Recreate"}}})
    );

    let patch = Patch::strategic_diff(&written, &web_with_strategy(&namespace, "Recreate")).unwrap();
    assert_eq!(patch.body(), &json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}));

    let mut without_retain_keys = patch.body().clone();
    without_retain_keys["spec"]["strategy"].as_object_mut().unwrap().remove("$retainKeys");
    let refused =
        deployments.patch("web", &Patch::Strategic(without_retain_keys), &PatchOptions::default()).await.unwrap_err();
    assert!(refused.is_invalid(), "{refused}");

    let patched = deployments.patch("web", &patch, &PatchOptions::default()).await.unwrap();
    assert_eq!(serde_json::to_value(&patched).unwrap()["spec"]["strategy"], json!({"type": "Recreate"}));
    // The runtime's own merge of the patch into the defaulted object agrees.
    let merged = strategic::merge(&defaulted, patch.body(), Merge::Struct(Deployment::merge_fields)).unwrap();
    assert_eq!(merged["spec"]["strategy"], json!({"type": "Recreate"}));
}
