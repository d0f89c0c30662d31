//! This project's program of `make bench-peers`: one subcommand per workload,
//! the figures as one JSON object on the last line of stdout. The command
//! line and the figures are those of `bench/peers/PROTOCOL.md`, which the
//! client-go and kube-rs programs follow too.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use k8s_client::api::core::v1::{Pod, PodList};
use k8s_client::informers::SharedInformerFactory;
use k8s_client::prelude::*;
use k8s_client_bench::{LATENCY_ANNOTATION, Latencies, cpu_seconds, free_unused_heap, rss_kib, unix_nanos};
use k8s_client_runtime::cache::{PrometheusInformerMetrics, QueueKind, ResourceEventHandlerFuncs};
use k8s_client_runtime::config::{Config, ContentType, KubeconfigOptions};
use k8s_client_runtime::controller::prometheus::Registry;
use k8s_client_runtime::metadata::MetadataInformerFactory;
use k8s_client_runtime::protobuf::DecodeProto as _;
use k8s_client_runtime::rest::Client;
use k8s_client_runtime::rest::metrics::PrometheusRequestMetrics;
use k8s_client_runtime::workqueue::{RateLimitingQueue, default_controller_rate_limiter};
use k8s_client_runtime::{DynamicResource, ErrorChain};
use serde_json::json;
use tracing_subscriber::layer::{Context, SubscriberExt as _};

// Counts the heap the `decode` workload keeps (on its one thread); the
// system allocator underneath, as for the other Rust program.
#[global_allocator]
static ALLOC: k8s_client_bench::CountingAlloc = k8s_client_bench::CountingAlloc;

#[derive(Parser)]
#[command(about = "This project's side of `make bench-peers` (see bench/peers/PROTOCOL.md)")]
struct Cli {
    #[command(subcommand)]
    workload: Workload,
}

#[derive(Subcommand)]
enum Workload {
    /// Decode a PodList JSON file `rounds` times after one warm-up.
    Decode {
        #[arg(long)]
        file: PathBuf,
        #[arg(long, default_value_t = 10)]
        rounds: usize,
    },
    /// Initial sync of a pod informer over all namespaces.
    Sync {
        #[arg(long)]
        kubeconfig: PathBuf,
        #[arg(long)]
        expect: usize,
        /// Accepted for symmetry: this project's informers drop managedFields by default.
        #[arg(long)]
        drop_managed_fields: bool,
        /// Speak JSON to the apiserver (`ContentType::Json`) instead of
        /// protobuf, the default for built-in kinds.
        #[arg(long)]
        json: bool,
        /// The informer's queue.
        #[arg(long, value_enum, default_value_t = Queue::RealFifo)]
        queue: Queue,
        /// Cache the pods' metadata only (a metadata informer, objects as
        /// `PartialObjectMetadata`).
        #[arg(long)]
        metadata: bool,
        /// Request and informer metrics and request spans on ([`Observed`]).
        #[arg(long)]
        observe: bool,
    },
    /// A synced pod informer with one update handler, measuring write-to-handler latency.
    Churn {
        #[arg(long)]
        kubeconfig: PathBuf,
        #[arg(long)]
        expect: usize,
        #[arg(long)]
        duration: f64,
        /// The informer's queue.
        #[arg(long, value_enum, default_value_t = Queue::RealFifo)]
        queue: Queue,
        /// Request and informer metrics and request spans on ([`Observed`]).
        #[arg(long)]
        observe: bool,
    },
    /// Add, get, forget and done `items` keys through a rate-limiting queue,
    /// `rounds` times (each with a new queue) after one warm-up.
    Workqueue {
        #[arg(long, default_value_t = 4)]
        workers: usize,
        #[arg(long, default_value_t = 100_000)]
        items: usize,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
}

/// The informer queue to run (`QueueKind`).
#[derive(Clone, Copy, clap::ValueEnum)]
enum Queue {
    /// Every change in order: the default.
    RealFifo,
    /// Changes grouped per object.
    DeltaFifo,
}

impl Queue {
    fn kind(self) -> QueueKind {
        match self {
            Queue::RealFifo => QueueKind::RealFifo,
            Queue::DeltaFifo => QueueKind::DeltaFifo,
        }
    }
}

type Failure = Box<dyn std::error::Error>;
/// The churn workload's update handler.
type OnUpdate = Box<dyn Fn(&Pod) + Send + Sync>;

fn main() {
    let cli = Cli::parse();
    let result = match cli.workload {
        Workload::Decode { file, rounds } => decode(&file, rounds),
        Workload::Sync { kubeconfig, expect, drop_managed_fields: _, json, queue, metadata, observe } => {
            let observed = observe.then(Observed::install);
            runtime().block_on(sync(&kubeconfig, expect, json, queue.kind(), metadata, observed.as_ref()))
        }
        Workload::Churn { kubeconfig, expect, duration, queue, observe } => {
            let observed = observe.then(Observed::install);
            runtime().block_on(churn(&kubeconfig, expect, duration, queue.kind(), observed.as_ref()))
        }
        Workload::Workqueue { workers, items, rounds } => runtime().block_on(workqueue(workers, items, rounds)),
    };
    match result {
        Ok(figures) => println!("{figures}"),
        Err(e) => {
            eprintln!("k8s-client-peer: {}", ErrorChain(&*e));
            std::process::exit(1);
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Runtime::new().expect("tokio runtime")
}

fn decode(file: &PathBuf, rounds: usize) -> Result<serde_json::Value, Failure> {
    let json = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    // What the runtime does with every response body and watch event: a
    // body starting with `k8s\0` is protobuf (client-go's decoder tells
    // them apart the same way), anything else JSON.
    let protobuf = json.starts_with(&k8s_client_runtime::protobuf::MAGIC);
    let decode = || -> Result<PodList, Failure> {
        if protobuf {
            let envelope = k8s_client_runtime::protobuf::Envelope::decode(&json)?;
            Ok(PodList::decode(envelope.raw, Default::default())?)
        } else {
            Ok(k8s_client_runtime::codec::decode_json::<PodList>(&json)?)
        }
    };
    let before = k8s_client_bench::thread_heap_bytes();
    let warm = decode()?;
    let heap = k8s_client_bench::thread_heap_bytes() - before;
    let pods = warm.items.len();
    drop(warm);
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds.max(1) {
        let start = Instant::now();
        let list = decode()?;
        times.push(start.elapsed().as_secs_f64());
        drop(list);
    }
    times.sort_by(f64::total_cmp);
    Ok(json!({
        "workload": "decode",
        "pods": pods,
        "bytes": json.len(),
        "median_s": times[times.len() / 2],
        "min_s": times[0],
        "heap_bytes_per_pod": heap / pods.max(1),
    }))
}

/// What a production controller turns on (`--observe`): client-go's
/// request and informer metrics in a Prometheus registry, and a subscriber
/// that takes every request span (counting them, as an exporter would
/// take them) and the events of level INFO and above, as a service's
/// usual filter does (taking every DEBUG and TRACE event too would measure
/// the logging, not the spans).
struct Observed {
    registry: Registry,
    spans: Arc<AtomicUsize>,
}

struct CountSpans(Arc<AtomicUsize>);

impl CountSpans {
    fn wanted(metadata: &tracing::Metadata<'_>) -> bool {
        (metadata.is_span() && metadata.name() == "request") || *metadata.level() <= tracing::Level::INFO
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for CountSpans {
    fn register_callsite(&self, metadata: &'static tracing::Metadata<'static>) -> tracing::subscriber::Interest {
        if Self::wanted(metadata) {
            tracing::subscriber::Interest::always()
        } else {
            tracing::subscriber::Interest::never()
        }
    }

    fn enabled(&self, metadata: &tracing::Metadata<'_>, _: Context<'_, S>) -> bool {
        Self::wanted(metadata)
    }

    fn on_new_span(&self, _: &tracing::span::Attributes<'_>, _: &tracing::span::Id, _: Context<'_, S>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

impl Observed {
    fn install() -> Observed {
        let spans = Arc::new(AtomicUsize::new(0));
        let subscriber = tracing_subscriber::registry().with(CountSpans(Arc::clone(&spans)));
        if tracing::subscriber::set_global_default(subscriber).is_err() {
            eprintln!("k8s-client-peer: a subscriber was already installed");
        }
        Observed { registry: Registry::new(), spans }
    }

    fn figures(&self, figures: &mut serde_json::Value) {
        figures["spans"] = json!(self.spans.load(Ordering::Relaxed));
        figures["metric_families"] = json!(self.registry.gather().len());
    }
}

fn client(kubeconfig: &PathBuf, json: bool, observed: Option<&Observed>) -> Result<Client, Failure> {
    let mut config = Config::from_kubeconfig_file(kubeconfig, &KubeconfigOptions::default())?;
    if json {
        config.content_type = ContentType::Json;
    }
    // As high as the other programs': the apiserver, not client throttling, is measured.
    config.qps = 1000.0;
    config.burst = 2000;
    let mut builder = Client::builder(config);
    if let Some(observed) = observed {
        builder = builder.metrics(PrometheusRequestMetrics::new(&observed.registry)?);
    }
    Ok(builder.build()?)
}

/// Starts a pod informer over all namespaces and waits until it is synced
/// with `expect` pods; `on_update` is its one handler, if any.
async fn synced_informer(
    kubeconfig: &PathBuf,
    expect: usize,
    json: bool,
    queue: QueueKind,
    on_update: Option<OnUpdate>,
    observed: Option<&Observed>,
) -> Result<(SharedInformerFactory, Duration, u64), Failure> {
    let mut factory = SharedInformerFactory::builder(client(kubeconfig, json, observed)?).queue(queue);
    if let Some(observed) = observed {
        factory = factory.metrics("k8s-client-peer", PrometheusInformerMetrics::new(&observed.registry)?);
    }
    let factory = factory.build();
    let informer = factory.core_v1().pods().informer();
    if let Some(on_update) = on_update {
        informer
            .add_event_handler(ResourceEventHandlerFuncs::new().on_update(move |_, pod: &Arc<Pod>| on_update(pod)))?;
    }
    let (rss_before, _) = rss_kib();
    let start = Instant::now();
    factory.start();
    // Checked every millisecond, as the client-go program does: the
    // factory's own wait polls every 100 ms, like client-go's.
    while !informer.has_synced() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let elapsed = start.elapsed();
    let pods = informer.store().len();
    if pods != expect {
        return Err(format!("cache holds {pods} pods, expected {expect}").into());
    }
    Ok((factory, elapsed, rss_before))
}

/// Starts an informer of the pods' metadata over all namespaces and waits
/// until it is synced with `expect` pods.
async fn synced_metadata_informer(
    kubeconfig: &PathBuf,
    expect: usize,
    json: bool,
    queue: QueueKind,
) -> Result<(SharedInformerFactory, Duration, u64), Failure> {
    let factory = MetadataInformerFactory::with_factory(
        SharedInformerFactory::builder(client(kubeconfig, json, None)?).queue(queue).build(),
    );
    let informer = factory.for_resource(&DynamicResource::of::<Pod>());
    let (rss_before, _) = rss_kib();
    let start = Instant::now();
    factory.start();
    while !informer.has_synced() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let elapsed = start.elapsed();
    let pods = informer.store().len();
    if pods != expect {
        return Err(format!("cache holds {pods} pods' metadata, expected {expect}").into());
    }
    Ok((factory.factory().clone(), elapsed, rss_before))
}

async fn sync(
    kubeconfig: &PathBuf,
    expect: usize,
    json: bool,
    queue: QueueKind,
    metadata: bool,
    observed: Option<&Observed>,
) -> Result<serde_json::Value, Failure> {
    let (factory, synced, rss_before) = if metadata {
        synced_metadata_informer(kubeconfig, expect, json, queue).await?
    } else {
        synced_informer(kubeconfig, expect, json, queue, None, observed).await?
    };
    free_unused_heap();
    let (rss_after, peak) = rss_kib();
    let mut figures = json!({
        "workload": "sync",
        "pods": expect,
        "synced_s": synced.as_secs_f64(),
        "rss_before_kib": rss_before,
        "rss_after_kib": rss_after,
        "peak_rss_kib": peak,
        "rss_per_pod_bytes": (rss_after as f64 - rss_before as f64) * 1024.0 / expect.max(1) as f64,
    });
    if let Some(observed) = observed {
        observed.figures(&mut figures);
    }
    factory.shutdown();
    Ok(figures)
}

async fn churn(
    kubeconfig: &PathBuf,
    expect: usize,
    duration: f64,
    queue: QueueKind,
    observed: Option<&Observed>,
) -> Result<serde_json::Value, Failure> {
    let latencies = Arc::new(Latencies::default());
    let record = latencies.clone();
    let on_update = move |pod: &Pod| {
        let stamp = pod.metadata.annotations.as_ref().and_then(|a| a.get(LATENCY_ANNOTATION));
        if let Some(written) = stamp.and_then(|s| s.parse::<u64>().ok()) {
            record.record(unix_nanos().saturating_sub(written));
        }
    };
    let (factory, _, _) =
        synced_informer(kubeconfig, expect, false, queue, Some(Box::new(on_update)), observed).await?;
    latencies.clear();
    let cpu_before = cpu_seconds();
    println!("ready");
    std::io::stdout().flush()?;
    tokio::time::sleep(Duration::from_secs_f64(duration + 3.0)).await;
    let cpu = cpu_seconds() - cpu_before;
    factory.shutdown();
    let (events, p50, p99) = latencies.summary();
    let mut figures = json!({
        "workload": "churn",
        "events": events,
        "events_per_s": events as f64 / duration,
        "p50_ms": p50,
        "p99_ms": p99,
        "cpu_s": cpu,
    });
    if let Some(observed) = observed {
        observed.figures(&mut figures);
    }
    Ok(figures)
}

/// The median of `rounds` timed rounds of [`workqueue_round`] after one
/// warm-up (one round of a few dozen milliseconds is mostly noise and
/// first-touched memory).
async fn workqueue(workers: usize, items: usize, rounds: usize) -> Result<serde_json::Value, Failure> {
    let worker_count = workers.max(1);
    workqueue_round(worker_count, items).await?;
    let mut times = Vec::with_capacity(rounds.max(1));
    for _ in 0..rounds.max(1) {
        times.push(workqueue_round(worker_count, items).await?);
    }
    times.sort_by(f64::total_cmp);
    let seconds = times[times.len() / 2];
    Ok(json!({
        "workload": "workqueue",
        "items": items,
        "workers": worker_count,
        "rounds": times.len(),
        "seconds": seconds,
        "ops_per_s": items as f64 / seconds,
    }))
}

/// One producer adds `items` distinct keys while `workers` tasks get,
/// forget and done them; the seconds until the last is done.
async fn workqueue_round(workers: usize, items: usize) -> Result<f64, Failure> {
    let queue: RateLimitingQueue<String> = RateLimitingQueue::new(default_controller_rate_limiter());
    let processed = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let producer = {
        let queue = queue.clone();
        tokio::spawn(async move {
            for i in 0..items {
                queue.add(format!("ns/pod-{i}"));
            }
        })
    };
    if items == 0 {
        queue.shut_down();
    }
    let workers: Vec<_> = (0..workers)
        .map(|_| {
            let (queue, processed) = (queue.clone(), processed.clone());
            tokio::spawn(async move {
                while let Some(key) = queue.get().await {
                    queue.forget(&key);
                    queue.done(&key);
                    if processed.fetch_add(1, Ordering::Relaxed) + 1 == items {
                        queue.shut_down();
                    }
                }
            })
        })
        .collect();
    producer.await?;
    for worker in workers {
        worker.await?;
    }
    Ok(start.elapsed().as_secs_f64())
}
