//! How many informers one `Client` carries: a testenv of its own, one
//! namespace per informer with a ConfigMap in it, and N namespace-scoped
//! ConfigMap informers on one client (HTTP/2 with 100 streams per
//! connection, so N/100 connections). Once all have synced, GETs are
//! issued one after another while objects change in random namespaces,
//! and their latency is reported with the sync time, the connections, and
//! the process's resident memory.
//!
//! Run: `cargo run --release -p k8s-client-bench --example informer_scale -- --informers 1000`
//! (after `make testenv-build`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use k8s_client::api::core::v1::ConfigMap;
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client_runtime::Map;
use k8s_client_runtime::cache::{HasSynced, ResourceEventHandlerFuncs, SharedIndexInformer, wait_for_cache_sync};
use k8s_client_runtime::config::{Config, KubeconfigOptions};
use k8s_client_runtime::rest::{Client, CreateOptions, GetOptions, Patch, PatchOptions, ResourceClient};
use k8s_client_testenv::TestEnv;
use tokio_util::sync::CancellationToken;

#[derive(Parser)]
struct Args {
    /// Informers on the one client (one namespace each).
    #[arg(long, default_value_t = 1000)]
    informers: usize,
    /// GETs to time once all have synced.
    #[arg(long, default_value_t = 400)]
    gets: usize,
    /// Pause between two GETs, in milliseconds.
    #[arg(long, default_value_t = 50)]
    interval_ms: u64,
    /// Changes a second made meanwhile, in random namespaces.
    #[arg(long, default_value_t = 50)]
    changes_per_second: u64,
    /// The measured client's rate limit (requests a second; 0: none).
    #[arg(long, default_value_t = 50.0)]
    qps: f32,
}

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        data: Some(Map::from([("v", "0".to_owned())])),
        ..Default::default()
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let env = TestEnv::start_with_args(&["--no-node"]);
    let config = |qps: f32| {
        let mut c = Config::from_kubeconfig_file(env.kubeconfig_path(), &KubeconfigOptions::default()).unwrap();
        c.qps = qps;
        c.burst = (qps * 2.0) as u32;
        c
    };
    let bulk = Client::new(config(0.0)).unwrap();
    let namespaces: Vec<String> = (0..args.informers).map(|_| env.create_namespace("scale")).collect();
    for ns in &namespaces {
        ResourceClient::<ConfigMap>::namespaced(bulk.clone(), ns)
            .create(&config_map("seed"), &CreateOptions::default())
            .await
            .unwrap();
    }
    let rss_before = k8s_client_bench::rss_kib().0;

    let client = Client::new(config(args.qps)).unwrap();
    let events = Arc::new(AtomicU64::new(0));
    let cancel = CancellationToken::new();
    let informers: Vec<SharedIndexInformer<ConfigMap>> = namespaces
        .iter()
        .map(|ns| {
            let informer =
                SharedIndexInformer::new(ResourceClient::<ConfigMap>::namespaced(client.clone(), ns), Duration::ZERO);
            let counted = events.clone();
            informer
                .add_event_handler(ResourceEventHandlerFuncs::new().on_update(move |_, _: &Arc<ConfigMap>| {
                    counted.fetch_add(1, Ordering::Relaxed);
                }))
                .unwrap();
            informer
        })
        .collect();
    let started = Instant::now();
    for informer in &informers {
        informer.start(cancel.clone());
    }
    let all: Vec<&(dyn HasSynced + Sync)> = informers.iter().map(|i| i as _).collect();
    let synced = tokio::time::timeout(Duration::from_secs(300), wait_for_cache_sync(&cancel, &all)).await;
    let sync_time = started.elapsed();
    if !matches!(synced, Ok(true)) {
        let behind = informers.iter().filter(|i| !i.has_synced()).count();
        eprintln!("{behind} of {} informers not synced after {sync_time:?}", args.informers);
        std::process::exit(1);
    }

    // Changes in random namespaces, through another client, while GETs go.
    let stop = Arc::new(AtomicBool::new(false));
    let churn = {
        let (stop, namespaces, bulk) = (stop.clone(), namespaces.clone(), bulk.clone());
        let pause = Duration::from_micros(1_000_000 / args.changes_per_second.max(1));
        tokio::spawn(async move {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let ns = &namespaces[(n.wrapping_mul(2_654_435_761) % namespaces.len() as u64) as usize];
                let patch = Patch::Merge(serde_json::json!({"data": {"v": n.to_string()}}));
                let cms = ResourceClient::<ConfigMap>::namespaced(bulk.clone(), ns);
                cms.patch("seed", &patch, &PatchOptions::default()).await.unwrap();
                tokio::time::sleep(pause).await;
            }
            n
        })
    };
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), &namespaces[namespaces.len() / 2]);
    let mut latencies = Vec::with_capacity(args.gets);
    for _ in 0..args.gets {
        let took = Instant::now();
        cms.get("seed", &GetOptions::default()).await.unwrap();
        latencies.push(took.elapsed());
        tokio::time::sleep(Duration::from_millis(args.interval_ms)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let changes = churn.await.unwrap();
    latencies.sort();
    let connections = client.connections();
    let rss_after = k8s_client_bench::rss_kib().0;
    println!(
        "{} informers on one client: synced in {:.2} s over {} connections {:?}",
        args.informers,
        sync_time.as_secs_f64(),
        connections.len(),
        connections
    );
    println!(
        "{} GETs meanwhile ({} changes, {} update notifications): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        latencies.len(),
        changes,
        events.load(Ordering::Relaxed),
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        latencies.last().copied().unwrap_or_default().as_secs_f64() * 1e3
    );
    println!("resident memory of the informers: {} KiB", rss_after.saturating_sub(rss_before));
    cancel.cancel();
}
