//! The recovering watch and the waits against the real apiserver: a
//! watcher loses and repeats no event across an apiserver restart,
//! relists after compaction expires its resourceVersion (410), and a retry
//! watcher ends there; `await_condition` sees a new CRD established and
//! deleted; `until` and `until_with_sync` stop at the first matching event.

mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use k8s_client::api::core::v1::ConfigMap;
use k8s_client::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_client::clientset::Clientset;
use k8s_client_runtime::rest::{Client, CreateOptions, DeleteOptions, ListOptions, ResourceClient, WatchEvent};
use k8s_client_runtime::wait::{self, Condition as _, conditions};
use k8s_client_runtime::watcher::{self, BackoffConfig, Event};
use k8s_client_testenv::TestEnv;
use tokio_util::sync::CancellationToken;

/// What a watcher has told so far, checked as it comes.
#[derive(Default)]
struct Seen {
    /// name → resourceVersion, as the events say the server holds them.
    state: BTreeMap<String, String>,
    /// The list being received, until its `InitDone`.
    listing: Option<BTreeMap<String, String>>,
    /// Lists received (`Init` … `InitDone`).
    lists: usize,
    /// The last version of the stream: every event must come after it.
    last_rv: u64,
    /// Names of new objects, in the order they became known: `Added`
    /// events, and those a relist shows for the first time.
    delivered: Vec<String>,
    /// Events out of order or repeated, or that contradict the state.
    violations: Vec<String>,
    /// Errors the stream yielded (retried by the watcher).
    errors: Vec<String>,
}

impl Seen {
    fn apply(&mut self, event: Event<ConfigMap>) {
        let name = |c: &ConfigMap| c.metadata.name.clone().unwrap().to_string();
        let rv = |c: &ConfigMap| c.metadata.resource_version.clone().unwrap().to_string();
        match event {
            Event::Init => self.listing = Some(BTreeMap::new()),
            Event::InitApply(c) => match self.listing.as_mut() {
                Some(listing) => drop(listing.insert(name(&c), rv(&c))),
                None => self.violations.push(format!("InitApply outside a list: {}", name(&c))),
            },
            Event::InitDone { resource_version } => {
                let listed = self.listing.take().unwrap_or_else(|| {
                    self.violations.push("InitDone without Init".into());
                    BTreeMap::new()
                });
                // A list replaces the state; what it shows first is new.
                let new = listed.keys().filter(|n| !self.state.contains_key(*n)).cloned().collect::<Vec<_>>();
                self.delivered.extend(new);
                self.state = listed;
                self.lists += 1;
                self.last_rv = resource_version.parse().unwrap();
            }
            Event::Watch(event) => {
                let event_rv = match &event {
                    WatchEvent::Added(c) | WatchEvent::Modified(c) | WatchEvent::Deleted(c) => rv(c),
                    WatchEvent::Bookmark(b) => b.resource_version.clone(),
                };
                let event_rv: u64 = event_rv.parse().unwrap();
                // In order, and nothing twice: versions only grow, even
                // across reconnects (a bookmark may repeat the last one).
                let bookmark = matches!(event, WatchEvent::Bookmark(_));
                if event_rv < self.last_rv || (event_rv == self.last_rv && !bookmark) {
                    self.violations.push(format!("event at {event_rv} after {}: {event:?}", self.last_rv));
                }
                self.last_rv = event_rv;
                match event {
                    WatchEvent::Added(c) => {
                        self.delivered.push(name(&c));
                        if self.state.insert(name(&c), rv(&c)).is_some() {
                            self.violations.push(format!("added twice: {}", name(&c)));
                        }
                    }
                    WatchEvent::Modified(c) => {
                        if self.state.insert(name(&c), rv(&c)).is_none() {
                            self.violations.push(format!("modified unknown {}", name(&c)));
                        }
                    }
                    WatchEvent::Deleted(c) => {
                        if self.state.remove(&name(&c)).is_none() {
                            self.violations.push(format!("deleted unknown {}", name(&c)));
                        }
                    }
                    WatchEvent::Bookmark(_) => {}
                }
            }
        }
    }
}

fn cm(name: &str, value: &str) -> ConfigMap {
    support::config_map(name, ("app", "watcher"), &[("v", value)])
}

/// Runs a watcher of `cms` into a shared [`Seen`] until `cancel`.
fn watch_into(cms: ResourceClient<ConfigMap>, cancel: CancellationToken) -> Arc<Mutex<Seen>> {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let into = seen.clone();
    let backoff =
        BackoffConfig { initial: Duration::from_millis(100), max: Duration::from_secs(1), ..Default::default() };
    let mut config = watcher::Config::default().labels("app=watcher").backoff(backoff);
    // Watches end after a second: many resumes.
    config.list_options.timeout_seconds = Some(1);
    tokio::spawn(async move {
        let mut events = std::pin::pin!(watcher::watcher(cms, config));
        loop {
            tokio::select! {
                () = cancel.cancelled() => return,
                item = events.next() => match item {
                    Some(Ok(event)) => into.lock().unwrap().apply(event),
                    Some(Err(e)) => into.lock().unwrap().errors.push(k8s_client_runtime::ErrorChain(&e).to_string()),
                    None => panic!("a relisting watcher ended"),
                },
            }
        }
    });
    seen
}

/// The test's ConfigMaps, not the namespace's own (`kube-root-ca.crt`).
fn selected() -> ListOptions {
    ListOptions { label_selector: Some("app=watcher".into()), ..ListOptions::default() }
}

/// name → resourceVersion of the server's ConfigMaps the watcher selects.
async fn server_state(cms: &ResourceClient<ConfigMap>) -> BTreeMap<String, String> {
    let list = cms.list(&selected()).await.unwrap();
    list.items
        .into_iter()
        .map(|c| (c.metadata.name.unwrap().into(), c.metadata.resource_version.unwrap().into()))
        .collect()
}

/// Every object created became known once, in order, and no event broke
/// the order of versions or contradicted the state.
fn check(seen: &Mutex<Seen>, created: &[String]) {
    let seen = seen.lock().unwrap();
    assert!(seen.violations.is_empty(), "{:?}", seen.violations);
    assert_eq!(seen.delivered, created, "every object once, in order; errors {:?}", seen.errors);
}

/// Waits, up to 60 s, until the watcher's view is the server's.
async fn converges(seen: &Mutex<Seen>, cms: &ResourceClient<ConfigMap>) {
    let server = server_state(cms).await;
    let start = Instant::now();
    while seen.lock().unwrap().state != server {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "watcher never matched the server: {:?} vs {server:?}; errors {:?}",
            seen.lock().unwrap().state,
            seen.lock().unwrap().errors
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watcher_survives_restart_and_relists_after_compaction() {
    // A private apiserver: this test restarts and compacts it.
    let env = TestEnv::start();
    let client = Client::new(support::config_for(&env, None)).unwrap();
    let ns = env.create_namespace("watcher");
    let other = env.create_namespace("elsewhere");
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), &ns);
    for i in 0..5 {
        cms.create(&cm(&format!("a-{i}"), "x"), &CreateOptions::default()).await.unwrap();
    }
    let mut created: Vec<String> = (0..5).map(|i| format!("a-{i}")).collect();
    let cancel = CancellationToken::new();
    let seen = watch_into(cms.clone(), cancel.clone());
    converges(&seen, &cms).await;

    // The server ends each watch after a second: the watcher resumes each
    // time from where it was, without a relist, losing and repeating nothing.
    for i in 0..10 {
        let name = format!("b-{i}");
        cms.create(&cm(&name, "x"), &CreateOptions::default()).await.unwrap();
        created.push(name);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    converges(&seen, &cms).await;
    check(&seen, &created);
    assert_eq!(seen.lock().unwrap().lists, 1, "an ended watch must not cause a relist");

    // A restart in the middle of changes. The restarted apiserver's watch
    // cache starts at the current revision, so a watch from before it is
    // 410 Gone and the watcher relists: the changes in between come as the
    // list, the rest as events, none twice, none out of order.
    for i in 0..3 {
        let name = format!("c-{i}");
        cms.create(&cm(&name, "x"), &CreateOptions::default()).await.unwrap();
        created.push(name);
    }
    env.restart_apiserver();
    for i in 0..3 {
        let name = format!("d-{i}");
        cms.create(&cm(&name, "x"), &CreateOptions::default()).await.unwrap();
        created.push(name);
    }
    cms.update(&cm("a-1", "y"), &Default::default()).await.unwrap();
    cms.delete("a-0", &DeleteOptions::default()).await.unwrap();
    converges(&seen, &cms).await;
    check(&seen, &created);
    // The version the watcher has reached: a retry watcher from it fails below.
    let (old_rv, lists_before) = {
        let seen = seen.lock().unwrap();
        (seen.last_rv.to_string(), seen.lists)
    };

    // Move the store's revision on elsewhere, compact it, and restart: the
    // watcher's last resourceVersion is now too old (410), so it relists.
    let others = Clientset::new(client.clone()).core_v1().config_maps(&other);
    for i in 0..10 {
        others.create(&cm(&format!("o-{i}"), "x"), &CreateOptions::default()).await.unwrap();
    }
    env.compact();
    env.restart_apiserver();
    cms.create(&cm("e-after-compaction", "x"), &CreateOptions::default()).await.unwrap();
    created.push("e-after-compaction".into());
    cms.delete("a-2", &DeleteOptions::default()).await.unwrap();
    converges(&seen, &cms).await;
    check(&seen, &created);
    assert!(seen.lock().unwrap().lists > lists_before, "a compacted resourceVersion must lead to a relist");

    // client-go's RetryWatcher semantics: the same 410 ends the stream.
    let mut retry = std::pin::pin!(watcher::retry_watcher(cms.clone(), &old_rv, ListOptions::default()));
    let ended = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            match retry.next().await {
                Some(Err(watcher::Error::Expired { resource_version, .. })) => break resource_version,
                Some(Err(e)) if e.is_transient() => {}
                other => panic!("expected 410 Gone from {old_rv}, got {other:?}"),
            }
        }
    })
    .await
    .expect("410 within 60 s");
    assert_eq!(ended, old_rv);
    assert!(retry.next().await.is_none(), "the retry watcher ends after 410");
    cancel.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn await_condition_sees_a_crd_established_then_deleted() {
    // A CRD of its own, named after a fresh namespace so that it is new.
    let suffix = support::namespace("crdwait").replace('-', "");
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("crds/gadgets.yaml");
    let mut crd: serde_json::Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(manifest).unwrap()).expect("gadgets.yaml");
    let plural = format!("gadgets{suffix}");
    crd["metadata"]["name"] = format!("{plural}.example.com").into();
    crd["spec"]["names"] = serde_json::json!({"kind": format!("Gadget{suffix}"), "plural": plural});
    let crd: CustomResourceDefinition = serde_json::from_value(crd).unwrap();
    let name = crd.metadata.name.clone().unwrap().to_string();

    let crds = support::clientset().apiextensions_v1().custom_resource_definitions();
    let (waiting, crd_name) = (crds.clone(), name.clone());
    let established =
        tokio::spawn(async move { wait::await_condition(waiting, &crd_name, conditions::is_crd_established()).await });
    let created = crds.create(&crd, &CreateOptions::default()).await.unwrap();
    let found = tokio::time::timeout(Duration::from_secs(60), established)
        .await
        .expect("established within 60 s")
        .unwrap()
        .unwrap()
        .expect("the CRD exists");
    assert!(conditions::is_crd_established().matches_object(Some(&found)));
    assert_eq!(found.metadata.uid, created.metadata.uid);

    let uid = created.metadata.uid.clone().unwrap();
    crds.delete(&name, &DeleteOptions::default()).await.unwrap();
    let gone =
        tokio::time::timeout(Duration::from_secs(60), wait::await_condition(crds, &name, conditions::is_deleted(&uid)))
            .await
            .expect("deleted within 60 s")
            .unwrap();
    assert!(gone.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn until_stops_at_the_first_matching_event() {
    let ns = support::namespace("until");
    let cms = ResourceClient::<ConfigMap>::namespaced(support::client(), &ns);
    let first = cms.create(&cm("first", "x"), &CreateOptions::default()).await.unwrap();
    let from = first.metadata.resource_version.clone().unwrap().to_string();
    // Created before the wait starts: `until` from `from` still sees them.
    cms.create(&cm("second", "x"), &CreateOptions::default()).await.unwrap();
    cms.create(&cm("target", "x"), &CreateOptions::default()).await.unwrap();
    let mut names = Vec::new();
    let event = tokio::time::timeout(
        Duration::from_secs(60),
        wait::until(cms.clone(), &from, ListOptions::default(), |e| {
            let WatchEvent::Added(c) = e else { return false };
            names.push(c.metadata.name.clone().unwrap().to_string());
            c.metadata.name.as_deref() == Some("target")
        }),
    )
    .await
    .expect("within 60 s")
    .unwrap();
    assert!(matches!(event, WatchEvent::Added(_)));
    assert_eq!(names, ["second", "target"]);

    // The precondition holds of what is there: no watch needed.
    let held = wait::until_with_sync(cms.clone(), selected(), |all| all.len() == 3, |_| false).await.unwrap();
    assert!(held.is_none());
    // It does not: the first matching event ends the wait.
    let (listed, has_listed) = tokio::sync::oneshot::channel();
    let cms2 = cms.clone();
    let waiting = tokio::spawn(async move {
        let precondition = move |all: &[&ConfigMap]| {
            let _ = listed.send(());
            all.len() > 3
        };
        wait::until_with_sync(cms2, selected(), precondition, |e| matches!(e, WatchEvent::Deleted(_))).await
    });
    has_listed.await.unwrap();
    cms.delete("second", &DeleteOptions::default()).await.unwrap();
    let event = tokio::time::timeout(Duration::from_secs(60), waiting).await.expect("within 60 s").unwrap().unwrap();
    assert!(matches!(event, Some(WatchEvent::Deleted(c)) if c.metadata.name.as_deref() == Some("second")));
}
