//! The greeting operator (`examples/examples/greeting_operator.rs`, run as
//! written) on the real apiserver and on the fake cluster: one scenario,
//! two backends. On the apiserver also: two instances under leader
//! election, and 1,000 Greetings converging.

mod support;

#[allow(dead_code)]
#[path = "../../examples/examples/greeting_operator.rs"]
mod greeting_operator;

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use greeting_operator::Args;
use k8s_client::api::core::v1::ConfigMap;
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client::clientset::Clientset;
use k8s_client_example_greetings::com::example::v1::{Greeting, GreetingSpec};
use k8s_client_runtime::fake::FakeCluster;
use k8s_client_runtime::object::{Metadata as _, is_status_condition_true};
use k8s_client_runtime::rest::{Client, ListOptions, Patch, PatchOptions};
use k8s_client_runtime::{Object as _, ResourceClient};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const FINALIZER: &str = "example.com/greeting-cleanup";

/// A running operator, stopped by `stop`.
struct Operator {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), k8s_client_runtime::controller::BoxError>>,
    metrics: SocketAddr,
}

fn start(client: Client, namespace: &str, leader_elect: bool) -> Operator {
    let metrics = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let args = Args { namespace: Some(namespace.into()), leader_elect, metrics_addr: Some(metrics), ..Args::default() };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        greeting_operator::run(client, &args, async {
            let _ = stopped.await;
        })
        .await
    });
    Operator { stop, task, metrics }
}

impl Operator {
    async fn stop(self) {
        let _ = self.stop.send(());
        let result = tokio::time::timeout(Duration::from_secs(60), self.task).await.expect("the operator stops");
        result.unwrap().unwrap_or_else(|e| panic!("operator: {}", k8s_client_runtime::ErrorChain(&*e)));
    }

    /// Reconciles so far, from its `/metrics`.
    async fn reconciles(&self) -> u64 {
        let (status, body) = http_get(self.metrics, "/metrics").await.unwrap();
        assert_eq!(status, 200, "{body}");
        body.lines()
            .filter(|l| l.starts_with("controller_runtime_reconcile_total{"))
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum()
    }
}

/// A GET over HTTP/1.0: the status and the body.
async fn http_get(addr: SocketAddr, path: &str) -> std::io::Result<(u16, String)> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream.write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes()).await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    let status = response.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    Ok((status, response.split_once("\r\n\r\n").map(|(_, body)| body.to_owned()).unwrap_or_default()))
}

/// Polls `check` until it answers, for at most 60 s.
async fn eventually<T, F: Future<Output = Option<T>>>(what: &str, mut check: impl FnMut() -> F) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(done) = check().await {
            return done;
        }
        assert!(Instant::now() < deadline, "not within 60 s: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn greeting(name: &str, message: &str, replicas: i32) -> Greeting {
    Greeting {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        spec: GreetingSpec { message: message.into(), replicas: Some(replicas) },
        ..Default::default()
    }
}

/// The ConfigMaps a Greeting controls: name → (message, uid).
async fn owned(configmaps: &ResourceClient<ConfigMap>, owner_uid: &str) -> BTreeMap<String, (String, String)> {
    let all = configmaps.list(&ListOptions::default()).await.unwrap().items;
    all.into_iter()
        .filter(|cm| cm.metadata.controller_reference().is_some_and(|r| r.uid == owner_uid))
        .map(|cm| {
            let message = cm.data.as_ref().and_then(|d| d.get("message")).map(|m| m.to_string()).unwrap_or_default();
            (cm.name().unwrap().to_owned(), (message, cm.metadata.uid.as_deref().unwrap().to_owned()))
        })
        .collect()
}

/// Whether the Greeting reports Ready for its current generation.
fn ready(g: &Greeting) -> bool {
    let status = g.status.as_ref();
    let conditions = status.and_then(|s| s.conditions.as_deref()).unwrap_or_default();
    status.and_then(|s| s.observed_generation) == g.metadata.generation && is_status_condition_true(conditions, "Ready")
}

/// Waits until the Greeting `name` is Ready and controls exactly `want`
/// (name → message); returns its ConfigMaps.
async fn converged(
    greetings: &ResourceClient<Greeting>,
    configmaps: &ResourceClient<ConfigMap>,
    name: &str,
    want: &[(&str, &str)],
) -> BTreeMap<String, (String, String)> {
    eventually(&format!("{name} ready with {want:?}"), || async {
        let g = greetings.get(name, &Default::default()).await.unwrap();
        let cms = owned(configmaps, g.metadata.uid.as_deref().unwrap()).await;
        let messages: Vec<(&str, &str)> = cms.iter().map(|(n, (m, _))| (n.as_str(), m.as_str())).collect();
        (ready(&g) && messages == want).then_some(cms)
    })
    .await
}

/// Create, scale up and down, owned ConfigMaps edited and deleted, message
/// changed, no reconcile while idle, deletion behind the finalizer.
async fn scenario(client: Client, namespace: &str) {
    let greetings = ResourceClient::<Greeting>::namespaced(client.clone(), namespace);
    let configmaps = Clientset::new(client.clone()).core_v1().config_maps(namespace);
    let operator = start(client.clone(), namespace, false);

    let created = greetings.create(&greeting("hello", "hi", 3), &Default::default()).await.unwrap();
    let three = [("hello-0", "hi"), ("hello-1", "hi"), ("hello-2", "hi")];
    converged(&greetings, &configmaps, "hello", &three).await;
    let g = greetings.get("hello", &Default::default()).await.unwrap();
    assert_eq!(g.metadata.finalizers(), [FINALIZER]);
    let cm = configmaps.get("hello-0", &Default::default()).await.unwrap();
    let owner = cm.metadata.controller_reference().unwrap();
    assert_eq!((&*owner.api_version, &*owner.kind, &*owner.name), ("example.com/v1", "Greeting", "hello"));
    assert_eq!(Some(&*owner.uid), created.metadata.uid.as_deref());

    let merge = |body: serde_json::Value| Patch::Merge(body);
    let scale = merge(serde_json::json!({"spec": {"replicas": 1}}));
    greetings.patch("hello", &scale, &PatchOptions::default()).await.unwrap();
    let one = converged(&greetings, &configmaps, "hello", &[("hello-0", "hi")]).await;

    let tamper = merge(serde_json::json!({"data": {"message": "tampered"}}));
    configmaps.patch("hello-0", &tamper, &PatchOptions::default()).await.unwrap();
    converged(&greetings, &configmaps, "hello", &[("hello-0", "hi")]).await;
    configmaps.delete("hello-0", &Default::default()).await.unwrap();
    let again = eventually("hello-0 put back", || async {
        let cms = converged(&greetings, &configmaps, "hello", &[("hello-0", "hi")]).await;
        (cms["hello-0"].1 != one["hello-0"].1).then_some(cms)
    })
    .await;
    assert_ne!(again["hello-0"].1, one["hello-0"].1, "a new ConfigMap");

    let reword = merge(serde_json::json!({"spec": {"message": "hey"}}));
    greetings.patch("hello", &reword, &PatchOptions::default()).await.unwrap();
    converged(&greetings, &configmaps, "hello", &[("hello-0", "hey")]).await;

    // Idle: its own status writes do not come back as reconciles.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (before, version) = (
        operator.reconciles().await,
        greetings.get("hello", &Default::default()).await.unwrap().metadata.resource_version,
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(operator.reconciles().await, before, "reconciles while nothing changed");
    assert_eq!(greetings.get("hello", &Default::default()).await.unwrap().metadata.resource_version, version);

    greetings.delete("hello", &Default::default()).await.unwrap();
    eventually("hello and its ConfigMaps gone", || async {
        let gone = greetings.get_opt("hello", &Default::default()).await.unwrap().is_none();
        let left = owned(&configmaps, created.metadata.uid.as_deref().unwrap()).await;
        (gone && left.is_empty()).then_some(())
    })
    .await;
    operator.stop().await;
}

#[tokio::test]
async fn the_operator_keeps_greetings_on_the_apiserver() {
    let client = support::client();
    greeting_operator::install_crd(&client).await.unwrap();
    scenario(client, &support::namespace("greet-op")).await;
}

#[tokio::test]
async fn the_operator_keeps_greetings_on_the_fake_cluster() {
    let fake = FakeCluster::new();
    fake.register_with_status::<Greeting>().register::<ConfigMap>();
    scenario(fake.client(), "demo").await;
}

#[tokio::test]
async fn under_leader_election_one_instance_acts_and_hands_over_when_stopped() {
    let client = support::client();
    greeting_operator::install_crd(&client).await.unwrap();
    let namespace = support::namespace("greet-le");
    let greetings = ResourceClient::<Greeting>::namespaced(client.clone(), &namespace);
    let configmaps = Clientset::new(client.clone()).core_v1().config_maps(&namespace);

    let first = start(client.clone(), &namespace, true);
    greetings.create(&greeting("one", "hi", 1), &Default::default()).await.unwrap();
    converged(&greetings, &configmaps, "one", &[("one-0", "hi")]).await;
    let second = start(client.clone(), &namespace, true);
    eventually("the second instance serves its probes", || async {
        http_get(second.metrics, "/readyz").await.is_ok_and(|(status, _)| status == 200).then_some(())
    })
    .await;
    greetings.create(&greeting("two", "hi", 1), &Default::default()).await.unwrap();
    converged(&greetings, &configmaps, "two", &[("two-0", "hi")]).await;
    assert!(first.reconciles().await > 0);
    assert_eq!(second.reconciles().await, 0, "the instance not leading reconciled");

    first.stop().await;
    greetings.create(&greeting("three", "hi", 1), &Default::default()).await.unwrap();
    converged(&greetings, &configmaps, "three", &[("three-0", "hi")]).await;
    assert!(second.reconciles().await > 0, "the second instance took over");
    second.stop().await;
}

#[tokio::test]
async fn a_thousand_greetings_converge() {
    let client = support::client();
    greeting_operator::install_crd(&client).await.unwrap();
    let namespace = support::namespace("greet-1000");
    let greetings = ResourceClient::<Greeting>::namespaced(client.clone(), &namespace);
    let operator = start(client.clone(), &namespace, false);
    let started = Instant::now();
    futures_util::stream::iter(0..1000)
        .map(|i| {
            let greetings = greetings.clone();
            async move { greetings.create(&greeting(&format!("g{i}"), "hi", 1), &Default::default()).await.unwrap() }
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let all = greetings.list(&ListOptions::default()).await.unwrap().items;
        let done = all.iter().filter(|g| ready(g)).count();
        if done == 1000 {
            break;
        }
        assert!(Instant::now() < deadline, "{done} of 1000 ready after 300 s");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let configmaps = Clientset::new(client).core_v1().config_maps(&namespace);
    assert_eq!(configmaps.list(&ListOptions::default()).await.unwrap().items.len(), 1000);
    eprintln!("1,000 Greetings ready in {:.1} s", started.elapsed().as_secs_f64());
    operator.stop().await;
}
