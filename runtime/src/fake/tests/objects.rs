//! Reads and writes of single objects and lists.

use std::time::Duration;

use serde_json::json;

use super::*;
use crate::fake::{Action, Reaction};
use crate::rest::{
    ApplyOptions, DeleteOptions, DeleteResult, GetOptions, ListOptions, Patch, PatchOptions, Preconditions, Status,
    WriteOptions,
};

#[tokio::test]
async fn create_get_list_update_delete() {
    let fake = FakeCluster::new();
    let client = pods(&fake, "ns");
    let created = client.create(&pod("ns", "web", "n1"), &WriteOptions::default()).await.unwrap();
    assert_eq!(created.metadata.namespace.as_deref(), Some("ns"));
    let got = client.get("web", &GetOptions::default()).await.unwrap();
    assert_eq!(got, created);
    let list = client.list(&ListOptions::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.metadata.resource_version.as_deref(), Some(fake.resource_version().to_string().as_str()));
    let mut changed = got.clone();
    changed.node = "n2".into();
    let updated = client.update(&changed, &WriteOptions::default()).await.unwrap();
    assert_eq!(updated.node, "n2");
    assert_ne!(updated.metadata.resource_version, got.metadata.resource_version);
    let deleted = client.delete("web", &DeleteOptions::default()).await.unwrap();
    assert!(matches!(deleted, DeleteResult::Status(ref s) if s.is_success()), "{deleted:?}");
    let missing = client.get("web", &GetOptions::default()).await.unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
    assert_eq!(missing.status().unwrap().message, "pods \"web\" not found");
}

#[tokio::test]
async fn create_fills_in_metadata_and_refuses_duplicates() {
    let fake = FakeCluster::new();
    let client = pods(&fake, "ns");
    let mut template = pod("ns", "", "");
    template.metadata.generate_name = Some("web-".into());
    let created = client.create(&template, &WriteOptions::default()).await.unwrap();
    let name = created.metadata.name.clone().unwrap();
    assert!(name.starts_with("web-") && name.len() == 9, "{name}");
    assert_eq!(created.metadata.uid.as_deref().map(str::len), Some(36));
    assert_eq!(created.metadata.generation, Some(1));
    assert!(created.metadata.other["creationTimestamp"].as_str().unwrap().ends_with('Z'));
    assert_eq!(created.metadata.resource_version.as_deref(), Some("1"));
    let again = client.create(&pod("ns", &name, ""), &WriteOptions::default()).await.unwrap_err();
    assert!(again.is_already_exists(), "{again}");
    let nameless = client.create(&pod("ns", "", ""), &WriteOptions::default()).await.unwrap_err();
    assert!(nameless.is_invalid(), "{nameless}");
    // Dry run: answered, not stored.
    let dry = WriteOptions { dry_run: true, ..WriteOptions::default() };
    client.create(&pod("ns", "dry", ""), &dry).await.unwrap();
    assert!(fake.object::<Pod>("ns", "dry").is_none());
}

#[tokio::test]
async fn stale_updates_conflict_and_generation_follows_the_spec() {
    let fake = FakeCluster::new();
    let client = pods(&fake, "ns");
    let first = client.create(&pod("ns", "web", "n1"), &WriteOptions::default()).await.unwrap();
    let mut second = first.clone();
    second.node = "n2".into();
    let second = client.update(&second, &WriteOptions::default()).await.unwrap();
    let mut stale = first.clone();
    stale.node = "n3".into();
    let conflict = client.update(&stale, &WriteOptions::default()).await.unwrap_err();
    assert!(conflict.is_conflict(), "{conflict}");
    assert!(conflict.status().unwrap().message.contains("the object has been modified"));
    // Without a resourceVersion the update is unconditional.
    stale.metadata.resource_version = None;
    let forced = client.update(&stale, &WriteOptions::default()).await.unwrap();
    assert_eq!((forced.node.as_str(), forced.metadata.generation), ("n3", Some(3)));
    // A label is metadata: no new generation.
    let mut labelled = forced.clone();
    labelled.metadata.labels = Some([("a", "b")].into_iter().collect());
    let labelled = client.update(&labelled, &WriteOptions::default()).await.unwrap();
    assert_eq!(labelled.metadata.generation, Some(3));
    assert_ne!(second.metadata.resource_version, labelled.metadata.resource_version);
    // Nothing changed: nothing written.
    let same = client.update(&labelled, &WriteOptions::default()).await.unwrap();
    assert_eq!(same.metadata.resource_version, labelled.metadata.resource_version);
    let missing = client.update(&pod("ns", "other", ""), &WriteOptions::default()).await.unwrap_err();
    assert!(missing.is_not_found());
}

#[tokio::test]
async fn label_and_field_selectors() {
    let fake = FakeCluster::new();
    for (ns, name, app) in [("a", "one", "web"), ("a", "two", "db"), ("b", "three", "web")] {
        fake.add(&labelled(ns, name, &[("app", app)])).unwrap();
    }
    let all = ResourceClient::<Pod>::all(fake.client());
    let names = |list: crate::ObjectList<Pod>| -> Vec<String> {
        list.items.into_iter().map(|p| p.metadata.name.unwrap()).collect()
    };
    let web = all.list(&ListOptions::default().labels("app=web")).await.unwrap();
    assert_eq!(names(web), ["one", "three"]);
    let not_web = all.list(&ListOptions::default().labels("app!=web")).await.unwrap();
    assert_eq!(names(not_web), ["two"]);
    let by_name = all.list(&ListOptions::default().fields("metadata.name=three")).await.unwrap();
    assert_eq!(names(by_name), ["three"]);
    let by_namespace = all.list(&ListOptions::default().fields("metadata.namespace=a")).await.unwrap();
    assert_eq!(names(by_namespace), ["one", "two"]);
    let in_b = pods(&fake, "b").list(&ListOptions::default()).await.unwrap();
    assert_eq!(names(in_b), ["three"]);
    let bad = all.list(&ListOptions::default().labels("app in (")).await.unwrap_err();
    assert_eq!(bad.status().unwrap().code, 400, "{bad}");
}

#[tokio::test]
async fn paging_with_limit_and_continue_and_expired_tokens() {
    let fake = FakeCluster::new();
    for i in 0..5 {
        fake.add(&pod("ns", &format!("p{i}"), "")).unwrap();
    }
    let client = pods(&fake, "ns");
    let first = client.list(&ListOptions::default().limit(2)).await.unwrap();
    assert_eq!(first.items.len(), 2);
    assert_eq!(first.metadata.remaining_item_count, Some(3));
    let token = first.metadata.continue_.clone().unwrap();
    let second = client.list(&ListOptions::default().limit(2).continue_token(&token)).await.unwrap();
    let third =
        client.list(&ListOptions::default().limit(2).continue_token(second.metadata.continue_.unwrap())).await.unwrap();
    let names: Vec<_> = [first.items, second.items, third.items.clone()]
        .concat()
        .into_iter()
        .map(|p| p.metadata.name.unwrap())
        .collect();
    assert_eq!(names, ["p0", "p1", "p2", "p3", "p4"]);
    assert_eq!(third.metadata.continue_, None);
    // After a write and a compaction, the first page's token is too old.
    fake.add(&pod("ns", "p5", "")).unwrap();
    fake.compact();
    let expired = client.list(&ListOptions::default().limit(2).continue_token(token)).await.unwrap_err();
    assert!(expired.is_resource_expired() && expired.is_gone(), "{expired}");
    let garbage = client.list(&ListOptions::default().continue_token("not-a-token")).await.unwrap_err();
    assert_eq!(garbage.status().unwrap().code, 400);
}

#[tokio::test]
async fn finalizers_hold_a_deleted_object_until_removed() {
    let fake = FakeCluster::new();
    let client = pods(&fake, "ns");
    let mut held = pod("ns", "held", "");
    held.metadata.other.insert("finalizers".into(), json!(["example.com/cleanup"]));
    client.create(&held, &WriteOptions::default()).await.unwrap();
    let marked = client.delete("held", &DeleteOptions::background()).await.unwrap().object().unwrap();
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert_eq!(marked.metadata.other["deletionGracePeriodSeconds"], 0);
    // Deleting again changes nothing.
    let again = client.delete("held", &DeleteOptions::default()).await.unwrap().object().unwrap();
    assert_eq!(again.metadata.resource_version, marked.metadata.resource_version);
    let mut released = client.get("held", &GetOptions::default()).await.unwrap();
    released.metadata.other.remove("finalizers");
    let last = client.update(&released, &WriteOptions::default()).await.unwrap();
    assert!(last.metadata.deletion_timestamp.is_some());
    assert!(client.get("held", &GetOptions::default()).await.unwrap_err().is_not_found());
}

#[tokio::test]
async fn delete_preconditions_and_delete_collection() {
    let fake = FakeCluster::new();
    let client = pods(&fake, "ns");
    for (name, app) in [("a", "web"), ("b", "web"), ("c", "db")] {
        client.create(&labelled("ns", name, &[("app", app)]), &WriteOptions::default()).await.unwrap();
    }
    let wrong_uid = DeleteOptions {
        preconditions: Some(Preconditions { uid: Some("other".into()), resource_version: None }),
        ..DeleteOptions::default()
    };
    let refused = client.delete("a", &wrong_uid).await.unwrap_err();
    assert!(refused.is_conflict() && refused.status().unwrap().message.contains("Precondition failed"), "{refused}");
    let deleted = client.delete_collection(&DeleteOptions::default(), &ListOptions::default().labels("app=web")).await;
    let DeleteResult::Object(list) = deleted.unwrap() else { panic!("expected the deleted objects") };
    assert_eq!(list.items.len(), 2);
    let left = client.list(&ListOptions::default()).await.unwrap();
    assert_eq!(left.items.iter().map(|p| p.metadata.name.as_deref().unwrap()).collect::<Vec<_>>(), ["c"]);
}

#[tokio::test]
async fn patches_and_apply() {
    let (fake, client) = widget_cluster();
    client.create(&widget("w", 1), &WriteOptions::default()).await.unwrap();
    let opts = PatchOptions::default();
    let merged = client.patch("w", &Patch::Merge(json!({"spec": {"color": "red"}})), &opts).await.unwrap();
    assert_eq!(merged.data["spec"], json!({"replicas": 1, "color": "red"}));
    let ops = json!([{"op": "replace", "path": "/spec/replicas", "value": 4}]);
    let patched = client.patch("w", &Patch::Json(ops), &opts).await.unwrap();
    assert_eq!(patched.data["spec"]["replicas"], 4);
    let failing = json!([{"op": "test", "path": "/spec/replicas", "value": 9}]);
    let failed = client.patch("w", &Patch::Json(failing), &opts).await.unwrap_err();
    assert_eq!(failed.status().unwrap().code, 422, "{failed}");
    let strategic = client.patch("w", &Patch::Strategic(json!({"spec": {"size": "L"}})), &opts).await.unwrap();
    assert_eq!(strategic.data["spec"]["size"], "L");
    let stale = client.patch("w", &Patch::Merge(json!({"metadata": {"resourceVersion": "1"}})), &opts).await;
    assert!(stale.unwrap_err().is_conflict());
    // Apply creates, then updates.
    let applied =
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"}, "spec": {"replicas": 2}});
    let created = client.apply("a", &applied, &ApplyOptions::new("me")).await.unwrap();
    assert_eq!(created.data["spec"]["replicas"], 2);
    let changed =
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"}, "spec": {"color": "blue"}});
    let updated = client.apply("a", &changed, &ApplyOptions::new("me")).await.unwrap();
    // What the manager stopped applying, and no one else owns, is gone.
    assert_eq!(updated.data["spec"], json!({"color": "blue"}));
    let other =
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"}, "spec": {"replicas": 3}});
    let shared = client.apply("a", &other, &ApplyOptions::new("other")).await.unwrap();
    assert_eq!(shared.data["spec"], json!({"replicas": 3, "color": "blue"}));
    let apply_action = fake.actions().into_iter().rfind(|a| a.verb == "patch").unwrap();
    assert_eq!(apply_action.patch_type.as_deref(), Some("application/apply-patch+yaml"));
    assert_eq!(apply_action.query_param("fieldManager"), Some("other"));
    let missing = client.patch("nope", &Patch::Merge(json!({})), &opts).await.unwrap_err();
    assert!(missing.is_not_found());
}

#[test]
fn apply_conflicts_round_trip_through_the_client_error() {
    use crate::rest::{ApplyConflict, Error};
    let gvr = crate::fake::tracker::Gvr { group: "apps".into(), version: "v1".into(), resource: "deployments".into() };
    let conflicts = vec![
        ApplyConflict {
            field: ".spec.replicas".into(),
            manager: "kubectl".into(),
            message: "conflict with \"kubectl\" using apps/v1".into(),
        },
        ApplyConflict { field: ".spec.paused".into(), manager: "other".into(), message: String::new() },
    ];
    let st = crate::fake::status::apply_conflicts(&gvr, "web", &conflicts);
    let body = serde_json::to_vec(&st).unwrap();
    let error = Error::Api(Box::new(Status::from_body(&body).unwrap()));
    assert!(error.is_conflict());
    let read = error.apply_conflicts();
    assert_eq!(read[0], conflicts[0]);
    assert_eq!((read[1].field.as_str(), read[1].manager.as_str()), (".spec.paused", "other"));
    assert!(st.message.starts_with("Apply failed with 2 conflicts: "), "{}", st.message);
}

#[tokio::test]
async fn status_and_scale_subresources() {
    let (_fake, client) = widget_cluster();
    let mut with_status = widget("w", 3);
    with_status.data.insert("status".into(), json!({"replicas": 1}));
    let created = client.create(&with_status, &WriteOptions::default()).await.unwrap();
    assert!(!created.data.contains_key("status"), "create drops the status of a resource with a status subresource");
    let mut status_write = created.clone();
    status_write.data.insert("status".into(), json!({"replicas": 2, "selector": "app=w"}));
    status_write.data.insert("spec".into(), json!({"replicas": 100}));
    let after = client.update_status(&status_write, &WriteOptions::default()).await.unwrap();
    assert_eq!(
        (after.data["spec"]["replicas"].as_i64(), after.data["status"]["replicas"].as_i64()),
        (Some(3), Some(2))
    );
    assert_eq!(after.metadata.generation, Some(1));
    let mut main_write = after.clone();
    main_write.data.insert("status".into(), json!({"replicas": 50}));
    let main = client.update(&main_write, &WriteOptions::default()).await.unwrap();
    assert_eq!(main.data["status"]["replicas"], 2, "the main resource leaves .status alone");
    let scale = client.get_scale("w").await.unwrap();
    assert_eq!(scale["kind"], "Scale");
    assert_eq!((scale["spec"]["replicas"].as_i64(), scale["status"]["replicas"].as_i64()), (Some(3), Some(2)));
    assert_eq!(scale["status"]["selector"], "app=w");
    let mut rescale = scale.clone();
    rescale["spec"]["replicas"] = json!(7);
    let rescaled = client.update_scale("w", &rescale, &WriteOptions::default()).await.unwrap();
    assert_eq!(rescaled["spec"]["replicas"], 7);
    let stale = client.update_scale("w", &rescale, &WriteOptions::default()).await.unwrap_err();
    assert!(stale.is_conflict());
    let more = Patch::Merge(json!({"spec": {"replicas": 9}}));
    let patched = client.patch_scale("w", &more, &PatchOptions::default()).await.unwrap();
    assert_eq!(patched["spec"]["replicas"], 9);
    let object = client.get("w", &GetOptions::default()).await.unwrap();
    assert_eq!((object.data["spec"]["replicas"].as_i64(), object.metadata.generation), (Some(9), Some(3)));
}

#[tokio::test]
async fn reactors_inject_errors_and_delays_and_actions_are_recorded() {
    let fake = FakeCluster::new();
    fake.add(&pod("ns", "web", "")).unwrap();
    let client = pods(&fake, "ns");
    fake.prepend_reactor("get", "pods", |action: &Action| {
        (action.name == "web").then(|| {
            Reaction::Error(Status {
                code: 503,
                reason: "ServiceUnavailable".into(),
                message: "injected".into(),
                ..Status::default()
            })
        })
    });
    let injected = client.get("web", &GetOptions::default()).await.unwrap_err();
    assert_eq!(injected.status().map(|s| (s.code, s.message.as_str())), Some((503, "injected")));
    fake.clear_reactors();
    client.get("web", &GetOptions::default()).await.unwrap();

    fake.prepend_reactor("*", "*", |_| Some(Reaction::Delay(Duration::from_millis(150))));
    let started = std::time::Instant::now();
    client.list(&ListOptions::default()).await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(150));
    fake.clear_reactors();

    fake.prepend_reactor("create", "pods/eviction", |_| {
        Some(Reaction::Respond(json!({"kind": "Status", "status": "Success"})))
    });
    let eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web"}});
    let _: serde_json::Value =
        client.create_subresource("web", "eviction", &eviction, &WriteOptions::default()).await.unwrap();

    let actions = fake.actions();
    let summary: Vec<_> = actions.iter().map(|a| (a.verb.as_str(), a.name.as_str(), a.subresource.as_str())).collect();
    assert_eq!(summary, [("get", "web", ""), ("get", "web", ""), ("list", "", ""), ("create", "web", "eviction")]);
    assert_eq!(
        (actions[0].namespace.as_str(), actions[0].resource.as_str(), actions[0].version.as_str()),
        ("ns", "pods", "v1")
    );
    assert_eq!(actions[3].body.as_ref().unwrap()["kind"], "Eviction");
    assert!(actions[3].matches("create", "pods") && actions[3].matches("*", "pods/eviction"));
    assert!(!actions[3].matches("create", "pods/status"));
    fake.clear_actions();
    assert!(fake.actions().is_empty());
}

#[tokio::test]
async fn bad_requests_get_statuses() {
    let fake = FakeCluster::new();
    let client = fake.client();
    let unknown = client.get("/healthz").json::<serde_json::Value>().await.unwrap_err();
    assert!(unknown.is_not_found(), "{unknown}");
    let not_json =
        client.post("/api/v1").namespace("ns").resource("pods").body("{not json", "application/json").bytes().await;
    assert_eq!(not_json.unwrap_err().status().unwrap().code, 400);
    let not_object =
        client.post("/api/v1").namespace("ns").resource("pods").body("[1]", "application/json").bytes().await;
    assert_eq!(not_object.unwrap_err().status().unwrap().code, 400);
    let odd_patch =
        client.patch("/api/v1").namespace("ns").resource("pods").name("x").body("{}", "text/plain").bytes().await;
    assert_eq!(odd_patch.unwrap_err().status().unwrap().code, 415);
    let put_collection = client.put("/api/v1").namespace("ns").resource("pods").body("{}", "application/json").bytes();
    assert_eq!(put_collection.await.unwrap_err().status().unwrap().reason, "MethodNotAllowed");
    let mismatched = json!({"metadata": {"name": "x", "namespace": "other"}});
    let wrong_ns = client.post("/api/v1").namespace("ns").resource("pods").json_body(&mismatched).bytes().await;
    assert_eq!(wrong_ns.unwrap_err().status().unwrap().reason, "BadRequest");
}

#[tokio::test]
async fn resources_never_registered_are_served() {
    let fake = FakeCluster::new();
    let gadgets = DynamicResource {
        group: "example.org".into(),
        version: "v2".into(),
        kind: "Gadget".into(),
        plural: "gadgets".into(),
        namespaced: false,
    };
    let client = DynamicClient::all_with(fake.client(), &gadgets);
    let created = client.create(&DynamicObject::new(&gadgets, "g"), &WriteOptions::default()).await.unwrap();
    assert_eq!((created.kind.as_str(), created.api_version.as_str()), ("Gadget", "example.org/v2"));
    let list: serde_json::Value = fake.client().get("/apis/example.org/v2").resource("gadgets").json().await.unwrap();
    assert_eq!(list["kind"], "GadgetList");
    assert_eq!(list["items"][0]["metadata"]["name"], "g");
    assert!(fake.object_dynamic(&gadgets, "", "g").is_some());
}

#[tokio::test]
async fn apply_reads_yaml_bodies() {
    let (fake, _client) = widget_cluster();
    let yaml = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: y\nspec:\n  replicas: 5\n";
    let created: serde_json::Value = fake
        .client()
        .patch("/apis/example.com/v1")
        .namespace("ns")
        .resource("widgets")
        .name("y")
        .param("fieldManager", "yaml-user")
        .body(yaml, "application/apply-patch+yaml")
        .json()
        .await
        .unwrap();
    assert_eq!(created["spec"]["replicas"], 5);
    assert_eq!(fake.actions()[0].body.as_ref().unwrap()["spec"]["replicas"], 5);
    let no_manager = fake
        .client()
        .patch("/apis/example.com/v1")
        .namespace("ns")
        .resource("widgets")
        .name("y")
        .body(yaml, "application/apply-patch+yaml")
        .bytes()
        .await
        .unwrap_err();
    assert!(no_manager.is_invalid(), "{no_manager}");
}

#[tokio::test]
async fn namespace_finalize_changes_only_the_finalizers() {
    let fake = FakeCluster::new();
    let namespaces = DynamicResource {
        group: String::new(),
        version: "v1".into(),
        kind: "Namespace".into(),
        plural: "namespaces".into(),
        namespaced: false,
    };
    let client = DynamicClient::all_with(fake.client(), &namespaces);
    let ns = DynamicObject::new(&namespaces, "team")
        .with_data(json!({"spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}));
    let created = client.create(&ns, &WriteOptions::default()).await.unwrap();
    let mut finalized = created.clone();
    finalized.data.insert("spec".into(), json!({"finalizers": []}));
    finalized.data.insert("status".into(), json!({"phase": "Gone"}));
    let after: DynamicObject =
        client.update_subresource("team", "finalize", &finalized, &WriteOptions::default()).await.unwrap();
    assert_eq!(after.data["spec"]["finalizers"], json!([]));
    assert_eq!(after.data["status"]["phase"], "Active");
}
