//! One client under the load of a controller at scale, against the real
//! apiserver: hundreds of watches (kube-apiserver takes 100 streams on one
//! HTTP/2 connection), streams the program never reads, a cut of the
//! shared connection, and a panic in code an informer runs.

mod support;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_client::api::core::v1::{ConfigMap, Pod, Secret};
use k8s_client::clientset::Clientset;
use k8s_client::clientset::core_v1::PodLogParams;
use k8s_client::prelude::*;
use k8s_client_runtime::Object as _;
use k8s_client_runtime::cache::{
    HasSynced, IndexFn, Indexers, ResourceEventHandlerFuncs, SharedIndexInformer, SharedInformerFactory, SyncStopped,
    wait_for_cache_sync,
};
use k8s_client_runtime::config::{Config, KubeconfigOptions};
use k8s_client_runtime::leaderelection::{LeaderElectionRecord, LeaseLock, ResourceLock as _};
use k8s_client_runtime::rest::{Client, CreateOptions, GetOptions, ResourceClient};
use k8s_client_testenv::TestEnv;
use serde_json::json;
use support::proxy::{Cut, Proxy, apiserver_addr};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// A client as a controller gets it: the kubeconfig's, with client-go's
/// default rate limit (5 QPS, burst 10).
fn default_client(env: &TestEnv) -> Client {
    Client::new(Config::from_kubeconfig_file(env.kubeconfig_path(), &KubeconfigOptions::default()).unwrap()).unwrap()
}

/// Informers of ConfigMaps, one per namespace, on `client`; each tells
/// `seen` the namespace and name of every ConfigMap added or updated.
fn informers(
    client: &Client,
    namespaces: &[String],
    seen: &mpsc::UnboundedSender<(String, String)>,
) -> Vec<SharedIndexInformer<ConfigMap>> {
    namespaces
        .iter()
        .map(|ns| {
            let informer =
                SharedIndexInformer::new(ResourceClient::<ConfigMap>::namespaced(client.clone(), ns), Duration::ZERO);
            let (on_add, on_update) = (seen.clone(), seen.clone());
            let named =
                |c: &ConfigMap| (c.namespace().unwrap_or_default().to_owned(), c.name().unwrap_or_default().to_owned());
            informer
                .add_event_handler(
                    ResourceEventHandlerFuncs::new()
                        .on_add(move |c: &Arc<ConfigMap>, _| drop(on_add.send(named(c))))
                        .on_update(move |_, c: &Arc<ConfigMap>| drop(on_update.send(named(c)))),
                )
                .unwrap();
            informer
        })
        .collect()
}

/// Starts `informers` and waits up to 60 s until all have synced.
async fn start_and_sync(informers: &[SharedIndexInformer<ConfigMap>], cancel: &CancellationToken) -> bool {
    for informer in informers {
        informer.start(cancel.clone());
    }
    let all: Vec<&(dyn HasSynced + Sync)> = informers.iter().map(|i| i as _).collect();
    matches!(tokio::time::timeout(Duration::from_secs(60), wait_for_cache_sync(cancel, &all)).await, Ok(true))
}

/// Waits up to `limit` until `seen` reports `(namespace, name)`.
async fn sees(seen: &mut mpsc::UnboundedReceiver<(String, String)>, ns: &str, name: &str, limit: Duration) -> Duration {
    let start = Instant::now();
    let found = tokio::time::timeout(limit, async {
        while let Some((n, m)) = seen.recv().await {
            if n == ns && m == name {
                return;
            }
        }
    })
    .await;
    assert!(found.is_ok(), "no handler saw {ns}/{name} within {limit:?}");
    start.elapsed()
}

fn config_map(name: &str) -> ConfigMap {
    ConfigMap { metadata: ObjectMeta { name: Some(name.into()), ..Default::default() }, ..Default::default() }
}

/// A GET, a create and a Lease renewal (read, then write, as the leader
/// elector renews), each within a second; and a change in the last
/// namespace reaching its handler within two.
async fn requests_still_answer(
    client: &Client,
    namespaces: &[String],
    seen: &mut mpsc::UnboundedReceiver<(String, String)>,
    round: &str,
) {
    let tag: String = round.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_ascii_lowercase();
    let first = ResourceClient::<ConfigMap>::namespaced(client.clone(), &namespaces[0]);
    let took = Instant::now();
    first.get("seed", &GetOptions::default()).await.unwrap();
    let get = took.elapsed();
    let took = Instant::now();
    first.create(&config_map(&format!("created-{tag}")), &CreateOptions::default()).await.unwrap();
    let create = took.elapsed();
    let lock = LeaseLock::new(client.clone(), &namespaces[0], &format!("lease-{tag}"), "scale-test");
    let mut record =
        LeaderElectionRecord { holder_identity: "scale-test".into(), lease_duration_seconds: 15, ..Default::default() };
    lock.create(&record).await.unwrap();
    let took = Instant::now();
    lock.get().await.unwrap();
    record.renew_time = Some(jiff::Timestamp::now());
    lock.update(&record).await.unwrap();
    let renew = took.elapsed();
    println!(
        "{round}: GET {get:?}, create {create:?}, lease renewal {renew:?}; connections {:?}",
        client.connections()
    );
    for (what, took) in [("GET", get), ("create", create), ("lease renewal", renew)] {
        assert!(took < Duration::from_secs(1), "{round}: a {what} took {took:?}");
    }

    let last = namespaces.last().unwrap();
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), last);
    cms.create(&config_map(&format!("change-{tag}")), &CreateOptions::default()).await.unwrap();
    let delivered = sees(seen, last, &format!("change-{tag}"), Duration::from_secs(2)).await;
    println!("{round}: a change in {last} reached its handler in {delivered:?}");
}

/// 300 informers on one client: three connections' worth of watches. All
/// sync, and requests of every kind still answer at once, also while two
/// followed logs that are never read hold 10 MB between them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_informers_on_one_client_leave_room_for_requests() {
    const NAMESPACES: usize = 300;
    let env = support::env();
    let bulk = support::client();
    let namespaces: Vec<String> = (0..NAMESPACES).map(|_| env.create_namespace("scale")).collect();
    for ns in &namespaces {
        let cms = ResourceClient::<ConfigMap>::namespaced(bulk.clone(), ns);
        cms.create(&config_map("seed"), &CreateOptions::default()).await.unwrap();
    }

    let client = default_client(env);
    let (tx, mut seen) = mpsc::unbounded_channel();
    let informers = informers(&client, &namespaces, &tx);
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let synced = start_and_sync(&informers, &cancel).await;
    let unsynced = informers.iter().filter(|i| !i.has_synced()).count();
    assert!(synced, "{unsynced} of {NAMESPACES} informers not synced; connections {:?}", client.connections());
    println!("{NAMESPACES} informers synced in {:?}; connections {:?}", started.elapsed(), client.connections());
    let connections = client.connections();
    assert!(connections.iter().all(|&streams| streams <= 100), "a connection over the server's limit: {connections:?}");
    assert!(connections.iter().sum::<usize>() >= NAMESPACES, "every watch is open: {connections:?}");
    assert!(informers.iter().all(|i| i.reflector_counters().full_loads() == 1), "each informer loaded once");

    requests_still_answer(&client, &namespaces, &mut seen, "300 watches").await;

    // Two followed logs, never read: 5 MB each waits in the client's
    // buffers and flow-control windows, which must not hold up the rest.
    let node = env.node_name().expect("the testenv runs its node");
    let write = "head -c 5000000 /dev/zero | tr '\\0' x | fold -w 999; sleep 3600";
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "chatty"},
        "spec": {
            "nodeName": node,
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {"name": "one", "image": "ignored", "command": ["sh", "-c", write]},
                {"name": "two", "image": "ignored", "command": ["sh", "-c", write]},
            ],
        },
    }))
    .unwrap();
    let pods = Clientset::new(bulk.clone()).core_v1().pods(&namespaces[0]);
    pods.create(&pod, &CreateOptions::default()).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let pod = pods.get("chatty", &GetOptions::default()).await.unwrap();
        let running =
            pod.status.as_ref().and_then(|s| s.container_statuses.as_ref()).is_some_and(|s| {
                s.len() == 2 && s.iter().all(|c| c.state.as_ref().is_some_and(|st| st.running.is_some()))
            });
        if running {
            break;
        }
        assert!(Instant::now() < deadline, "the chatty pod does not run: {:?}", pod.status);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let followed = Clientset::new(client.clone()).core_v1().pods(&namespaces[0]);
    let mut unread = Vec::new();
    for container in ["one", "two"] {
        let params = PodLogParams { follow: Some(true), container: Some(container.into()), ..Default::default() };
        unread.push(followed.log_stream("chatty", &params).await.unwrap());
    }
    // Time for the apiserver to push what flow control lets through.
    tokio::time::sleep(Duration::from_secs(3)).await;
    requests_still_answer(&client, &namespaces, &mut seen, "300 watches and 2 unread logs").await;
    drop(unread);
    cancel.cancel();
}

/// A server that allows 10 streams per connection: the client learns the
/// limit from the server's settings and spreads 25 watches over three
/// connections, never more than 10 on one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_s_stream_limit_is_read_from_its_settings() {
    let env = TestEnv::start_with_args(&["--no-node", "--apiserver-arg=--http2-max-streams-per-connection=10"]);
    let namespaces: Vec<String> = (0..25).map(|_| env.create_namespace("streams")).collect();
    let client = default_client(&env);
    let (tx, mut seen) = mpsc::unbounded_channel();
    let informers = informers(&client, &namespaces, &tx);
    let cancel = CancellationToken::new();
    assert!(start_and_sync(&informers, &cancel).await, "connections {:?}", client.connections());
    let connections = client.connections();
    println!("25 watches at 10 streams per connection: {connections:?}");
    assert!(connections.iter().all(|&streams| streams <= 10), "{connections:?}");
    assert!(connections.len() >= 3, "{connections:?}");
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), &namespaces[24]);
    let took = Instant::now();
    cms.create(&config_map("ping"), &CreateOptions::default()).await.unwrap();
    sees(&mut seen, &namespaces[24], "ping", Duration::from_secs(2)).await;
    assert!(took.elapsed() < Duration::from_secs(2));
    cancel.cancel();
}

/// One cut of the connection 50 informers share, on a client limited to 5
/// requests a second: watches do not wait for the rate limiter, so all
/// are watching again, and see a change, within 2 s, without a relist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_informers_watch_again_within_two_seconds_of_a_cut() {
    const INFORMERS: usize = 50;
    let env = support::env();
    let namespaces: Vec<String> = (0..INFORMERS).map(|_| env.create_namespace("rewatch")).collect();
    let proxy = Proxy::start(apiserver_addr()).await;
    let client = proxy.client(5.0, 10);
    let (tx, mut seen) = mpsc::unbounded_channel();
    let informers = informers(&client, &namespaces, &tx);
    let cancel = CancellationToken::new();
    assert!(start_and_sync(&informers, &cancel).await, "{}", proxy.counts());
    // The watches are open once each informer started its watch.
    while informers.iter().any(|i| i.reflector_counters().watch_lists() + i.reflector_counters().watches() == 0) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let bulk = support::client();
    let before: Vec<u64> = informers.iter().map(|i| i.reflector_counters().watches()).collect();
    let cut = Instant::now();
    proxy.sever(Cut::Reset);
    for ns in &namespaces {
        let cms = ResourceClient::<ConfigMap>::namespaced(bulk.clone(), ns);
        cms.create(&config_map("after-cut"), &CreateOptions::default()).await.unwrap();
    }
    let mut waiting: HashMap<String, ()> = namespaces.iter().map(|ns| (ns.clone(), ())).collect();
    let all_seen = tokio::time::timeout(Duration::from_secs(2) - cut.elapsed().min(Duration::from_secs(2)), async {
        while let Some((ns, name)) = seen.recv().await {
            if name == "after-cut" {
                waiting.remove(&ns);
                if waiting.is_empty() {
                    return;
                }
            }
        }
    })
    .await;
    let rewatched = informers.iter().zip(&before).filter(|(i, b)| i.reflector_counters().watches() > **b).count();
    println!(
        "after a cut, {rewatched} of {INFORMERS} informers watching again and {} seeing a change in {:?}; {}",
        INFORMERS - waiting.len(),
        cut.elapsed(),
        proxy.counts()
    );
    assert!(all_seen.is_ok(), "{} informers did not see a change within 2 s of the cut", waiting.len());
    assert_eq!(rewatched, INFORMERS);
    assert!(informers.iter().all(|i| i.reflector_counters().full_loads() == 1), "a cut relisted");
    cancel.cancel();
}

/// An index function that panics on the real apiserver: its informer is
/// reported failed at once, naming the panic, and the factory's other
/// informers keep working.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_index_function_fails_its_informer_and_spares_the_others() {
    let ns = support::namespace("panics");
    let bulk = support::client();
    ResourceClient::<ConfigMap>::namespaced(bulk.clone(), &ns)
        .create(&config_map("victim"), &CreateOptions::default())
        .await
        .unwrap();
    let factory = SharedInformerFactory::builder(bulk.clone()).namespace(&ns).build();
    // This panic is printed without a backtrace (the default hook resolves
    // one when RUST_BACKTRACE is set, which takes longer than the report);
    // any other goes to the default hook.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let text = info.payload().downcast_ref::<String>().map(String::as_str).unwrap_or_default();
        if text.starts_with("the index function cannot take") {
            eprintln!("{info}");
        } else {
            default_hook(info);
        }
    }));
    // When the panic happens: the time to report it counts from there, not
    // from the start (the list before it waits for the apiserver, which
    // the other tests keep busy).
    let panicked_at = Arc::new(std::sync::OnceLock::<Instant>::new());
    let at = panicked_at.clone();
    let exploding: IndexFn<ConfigMap> = Arc::new(move |cm: &ConfigMap| -> Vec<String> {
        at.get_or_init(Instant::now);
        panic!("the index function cannot take {}", cm.name().unwrap_or_default())
    });
    factory.core_v1().config_maps().informer().add_indexers(Indexers::from([("boom".to_owned(), exploding)])).unwrap();
    let secrets = factory.core_v1().secrets().lister();
    factory.start();
    let err = factory.wait_for_cache_sync_within(Duration::from_secs(30)).await.unwrap_err();
    let took = panicked_at.get().expect("the index function ran").elapsed();
    println!("reported {took:?} after the panic: {err}");
    assert!(took < Duration::from_secs(1), "reported {took:?} after the panic");
    assert_eq!(err.reason, SyncStopped::Failed);
    let failed: Vec<_> = err.not_synced.iter().filter(|n| n.failure.is_some()).collect();
    assert_eq!(failed.len(), 1, "{err}");
    assert_eq!(failed[0].resource.plural, "configmaps");
    assert!(err.to_string().contains("the index function cannot take victim"), "{err}");
    let failures = factory.failures();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].failure.as_deref(), Some("the index function cannot take victim"));

    // The Secret informer syncs and follows the server.
    let secrets_informer = factory.core_v1().secrets().informer();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !secrets_informer.has_synced() {
        assert!(Instant::now() < deadline, "the Secret informer did not sync");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let secret =
        Secret { metadata: ObjectMeta { name: Some("kept".into()), ..Default::default() }, ..Default::default() };
    Clientset::new(bulk).core_v1().secrets(&ns).create(&secret, &CreateOptions::default()).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while secrets.namespace(&ns).get("kept").is_err() {
        assert!(Instant::now() < deadline, "the Secret informer stopped following");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    factory.shutdown();
}

/// A server that does not offer HTTP/2 (a TLS-terminating proxy speaking
/// HTTP/1.1, say): the client, which expects h2 from an https server,
/// learns otherwise from the first connection and speaks HTTP/1.1, to
/// many requests at once too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_http2_is_spoken_to_over_http1() {
    use tokio_rustls::rustls::ServerConfig;
    use tokio_rustls::rustls::pki_types::pem::PemObject as _;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

    let pki = support::env().state_dir().join("pki");
    let certs = CertificateDer::pem_file_iter(pki.join("serving.crt")).unwrap().collect::<Result<Vec<_>, _>>().unwrap();
    let key = PrivateKeyDer::from_pem_file(pki.join("serving.key")).unwrap();
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let mut tls = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|builder| builder.with_no_client_auth().with_single_cert(certs, key))
        .unwrap();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else { continue };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else { return };
                let service = hyper::service::service_fn(|_request| async {
                    let body = http_body_util::Full::new(bytes::Bytes::from_static(br#"{"major":"1","minor":"35"}"#));
                    Ok::<_, std::convert::Infallible>(hyper::Response::new(body))
                });
                let io = hyper_util::rt::TokioIo::new(tls);
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
            });
        }
    });
    let mut config = Config::new(format!("https://127.0.0.1:{port}").parse().unwrap());
    config.root_ca_pem = Some(support::env().ca_pem().as_bytes().to_vec());
    config.proxy = k8s_client_runtime::config::Proxy::None;
    let client = Client::new(config).unwrap();
    let version: serde_json::Value = client.get("/version").json().await.unwrap();
    assert_eq!(version["minor"], "35");
    let all = futures_util::future::join_all((0..20).map(|_| client.get("/version").bytes())).await;
    assert!(all.iter().all(Result::is_ok), "{:?}", all.iter().find(|r| r.is_err()));
}
