//! Broken connections under an informer, against the real apiserver: a
//! TCP proxy on loopback sits between the client and the apiserver and
//! severs every connection (a reset, or a plain close) while objects churn.
//! As in client-go, a watch stream that breaks is resumed from the last
//! resourceVersion: the state is loaded once, the watches are re-established
//! and the cache ends equal to the server.

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_client::api::core::v1::ConfigMap;
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client_runtime::Map;
use k8s_client_runtime::cache::{SharedIndexInformer, reflector, wait_for_cache_sync};
use k8s_client_runtime::rest::{self, Client, CreateOptions, DeleteOptions, ResourceClient};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// How the proxy ends the connections it severs.
#[derive(Debug, Clone, Copy)]
enum Cut {
    /// RST to the client (zero linger), as a crashed peer or a middlebox.
    Reset,
    /// A plain close (FIN) in the middle of whatever was being sent.
    Close,
}

/// Forwards loopback TCP connections to the apiserver; `sever` drops every
/// connection open at that moment, mid-stream.
struct Proxy {
    addr: std::net::SocketAddr,
    /// The token of the current generation of connections, and how the
    /// last cut ends them.
    generation: Arc<Mutex<(CancellationToken, Cut)>>,
    accepted: Arc<AtomicUsize>,
    stop: CancellationToken,
}

impl Proxy {
    async fn start(upstream: std::net::SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let generation = Arc::new(Mutex::new((CancellationToken::new(), Cut::Close)));
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = CancellationToken::new();
        let (g, n, s) = (generation.clone(), accepted.clone(), stop.clone());
        tokio::spawn(async move {
            loop {
                let (mut client, _) = tokio::select! {
                    () = s.cancelled() => return,
                    r = listener.accept() => r.unwrap(),
                };
                n.fetch_add(1, Ordering::SeqCst);
                let cut = g.lock().unwrap().0.clone();
                let g = g.clone();
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(upstream).await else { return };
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        () = cut.cancelled() => {
                            if let Cut::Reset = g.lock().unwrap().1 {
                                let _ = client.set_zero_linger();
                                let _ = server.set_zero_linger();
                            }
                            // Dropping both sockets here, with bytes possibly
                            // half-way through an event, is the cut.
                        }
                    }
                });
            }
        });
        Proxy { addr, generation, accepted, stop }
    }

    /// Severs every connection open now; later ones go through.
    fn sever(&self, how: Cut) {
        let old = {
            let mut g = self.generation.lock().unwrap();
            g.1 = how;
            std::mem::take(&mut g.0)
        };
        old.cancel();
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// An admin client whose connections go through `proxy`.
fn client_via(proxy: &Proxy) -> Client {
    let mut config = support::config_for(support::env(), None);
    config.cluster_url = format!("https://{}", proxy.addr).parse().unwrap();
    Client::new(config).unwrap()
}

fn apiserver_addr() -> std::net::SocketAddr {
    let url = support::env().server_url();
    let hostport = url.trim_start_matches("https://").trim_end_matches('/');
    std::net::ToSocketAddrs::to_socket_addrs(hostport).unwrap().next().unwrap()
}

/// A ConfigMap of about 20 KiB, so an event spans several TLS records and
/// HTTP/2 frames and a cut often lands inside one.
fn cm(name: &str, round: usize) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        data: Some(Map::from([("v", format!("{round}-{}", "x".repeat(20 * 1024)))])),
        ..Default::default()
    }
}

/// Creates, updates and deletes ConfigMaps until `stop`; returns how many
/// changes it made.
async fn churn(cms: ResourceClient<ConfigMap>, stop: Arc<AtomicBool>) -> usize {
    let mut changes = 0;
    let mut round = 0;
    while !stop.load(Ordering::SeqCst) {
        round += 1;
        for i in 0..6 {
            let name = format!("churn-{i}");
            let r = match (round + i) % 3 {
                0 => cms.create(&cm(&name, round), &CreateOptions::default()).await.map(|_| ()),
                1 => cms
                    .patch(
                        &name,
                        &rest::Patch::Merge(serde_json::json!({"data": {"r": round.to_string()}})),
                        &Default::default(),
                    )
                    .await
                    .map(|_| ()),
                _ => cms.delete(&name, &DeleteOptions::default()).await.map(|_| ()),
            };
            // Not found / already exists are part of the churn.
            if r.is_ok() {
                changes += 1;
            }
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    changes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn severed_tcp_connections_rewatch_without_relisting() {
    let ns = support::namespace("tcpcut");
    let direct = ResourceClient::<ConfigMap>::namespaced(support::client(), &ns);
    for i in 0..20 {
        direct.create(&cm(&format!("pre-{i}"), 0), &CreateOptions::default()).await.unwrap();
    }

    let proxy = Proxy::start(apiserver_addr()).await;
    let lw = ResourceClient::<ConfigMap>::namespaced(client_via(&proxy), &ns);
    // What the reflector reports (a cut must not be one of them), kept
    // for the failure message.
    let reported = Arc::new(Mutex::new(Vec::<String>::new()));
    let errors = reported.clone();
    let informer = SharedIndexInformer::builder(lw)
        .watch_error_handler(move |e: &reflector::Error| {
            let chain = std::iter::successors(Some(e as &dyn std::error::Error), |e| e.source())
                .map(|e| format!("{e} [{e:?}]"))
                .collect::<Vec<_>>()
                .join(" <- ");
            errors.lock().unwrap().push(chain);
        })
        .build()
        .unwrap();
    let counters = informer.reflector_counters();
    let cancel = CancellationToken::new();
    informer.start(cancel.clone());
    let ok = tokio::time::timeout(Duration::from_secs(60), wait_for_cache_sync(&cancel, &[&informer])).await;
    assert!(matches!(ok, Ok(true)), "informer did not sync");
    assert_eq!(counters.full_loads(), 1);

    let stop = Arc::new(AtomicBool::new(false));
    let churner = tokio::spawn(churn(direct.clone(), stop.clone()));

    const CUTS: usize = 10;
    for n in 0..CUTS {
        // Each watch gets more than a second and some events before it is
        // cut: a watch that ends within a second with nothing received is
        // treated as a misbehaving server (a relist), here as in client-go.
        tokio::time::sleep(Duration::from_millis(1300)).await;
        let before = counters.watches() + counters.watch_lists();
        let how = if n % 2 == 0 { Cut::Reset } else { Cut::Close };
        proxy.sever(how);
        // Wait for the next watch; the counts say what it took (asserted
        // at the end, so a failing run still reports them).
        let start = Instant::now();
        while counters.watches() + counters.watch_lists() <= before && start.elapsed() < Duration::from_secs(45) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        println!(
            "after cut {n} ({how:?}): lists {}, watch-lists {}, watches {} ({:?} to watch again)",
            counters.lists(),
            counters.watch_lists(),
            counters.watches(),
            start.elapsed()
        );
    }
    stop.store(true, Ordering::SeqCst);
    let changes = churner.await.unwrap();

    support::cache_converges(&informer, &direct).await;

    let (lists, watch_lists, watches) = (counters.lists(), counters.watch_lists(), counters.watches());
    println!(
        "{CUTS} cuts, {changes} changes, {} connections: lists {lists}, watch-lists {watch_lists}, watches {watches}",
        proxy.accepted.load(Ordering::SeqCst)
    );
    for e in reported.lock().unwrap().iter() {
        println!("reported: {e}");
    }
    assert_eq!(
        lists + watch_lists,
        1,
        "a broken connection must not cause a relist (lists {lists}, watch-lists {watch_lists}, watches {watches})"
    );
    assert!(watches >= CUTS as u64, "every cut is followed by a new watch: {watches}");
    cancel.cancel();
}
