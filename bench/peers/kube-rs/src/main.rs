//! Benchmark peer on kube + k8s-openapi: the same workloads as this project's
//! peer and the client-go one, with the command line and output of
//! `../PROTOCOL.md`. The figures are one JSON object on the last stdout line;
//! any failure is a message on stderr and exit status 1.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::{Parser, Subcommand};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::ObjectList;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Config, Resource};
use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The annotation the harness sets to the write time (Unix nanoseconds).
const WRITTEN_AT: &str = "bench.k8s-client.dev/written-at";

/// The system allocator, counting the bytes currently allocated so `decode`
/// can report the live heap of one decoded list (the protocol requires the
/// system allocator, so this only wraps it).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to `System`; the counter is
// bookkeeping only.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // Wrapping arithmetic expresses "minus old, plus new" in one op.
            LIVE.fetch_add(new_size.wrapping_sub(layout.size()), Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

#[derive(Parser)]
#[command(name = "kube-rs-peer", about = "kube-rs benchmark peer (see bench/peers/PROTOCOL.md)")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Decode a PodList JSON file into `ObjectList<Pod>` repeatedly.
    Decode {
        #[arg(long)]
        file: PathBuf,
        #[arg(long)]
        rounds: usize,
    },
    /// Sync a pod reflector over all namespaces and report time and memory.
    Sync {
        #[arg(long)]
        kubeconfig: PathBuf,
        #[arg(long)]
        expect: usize,
        #[arg(long)]
        drop_managed_fields: bool,
        /// Cache the pods' metadata only (`metadata_watcher`, objects as
        /// `PartialObjectMeta<Pod>`).
        #[arg(long)]
        metadata: bool,
    },
    /// Measure update latency of a synced pod reflector under churn.
    Churn {
        #[arg(long)]
        kubeconfig: PathBuf,
        #[arg(long)]
        expect: usize,
        /// Seconds the harness writes for; the program stops 3 s later.
        #[arg(long)]
        duration: f64,
    },
}

type Result<T, E = String> = std::result::Result<T, E>;

fn main() {
    let cli = Cli::parse();
    let out = match cli.cmd {
        Cmd::Decode { file, rounds } => decode(&file, rounds),
        Cmd::Sync { kubeconfig, expect, drop_managed_fields, metadata } => {
            on_runtime(sync(kubeconfig, expect, drop_managed_fields, metadata))
        }
        Cmd::Churn { kubeconfig, expect, duration } => on_runtime(churn(kubeconfig, expect, duration)),
    };
    match out {
        Ok(v) => println!("{v}"),
        Err(e) => {
            eprintln!("kube-rs-peer: {e}");
            std::process::exit(1);
        }
    }
}

/// The cluster workloads get a multi-threaded runtime; `decode` runs without
/// one so no runtime threads or buffers touch its heap figures.
fn on_runtime(fut: impl Future<Output = Result<serde_json::Value>>) -> Result<serde_json::Value> {
    let rt = tokio::runtime::Runtime::new().map_err(|e| format!("tokio runtime: {e}"))?;
    rt.block_on(fut)
}

fn decode(file: &Path, rounds: usize) -> Result<serde_json::Value> {
    if rounds == 0 {
        return Err("--rounds must be at least 1".into());
    }
    let bytes = std::fs::read(file).map_err(|e| format!("reading {}: {e}", file.display()))?;
    // As kube's client reads a response: the body checked as UTF-8 text
    // (`String::from_utf8`), then `serde_json::from_str`.
    let parse = || {
        let text = std::str::from_utf8(&bytes).map_err(|e| format!("{}: {e}", file.display()))?;
        serde_json::from_str::<ObjectList<Pod>>(text).map_err(|e| format!("decoding {}: {e}", file.display()))
    };

    // The warm-up decode also gives the heap figure: the live-bytes delta
    // while the list is held, before it is dropped.
    let before = LIVE.load(Ordering::Relaxed);
    let list = parse()?;
    let held = LIVE.load(Ordering::Relaxed).saturating_sub(before);
    let pods = list.items.len();
    drop(list);
    if pods == 0 {
        return Err(format!("{} holds no pods", file.display()));
    }

    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        let list = parse()?;
        times.push(start.elapsed().as_secs_f64());
        // Dropping is outside the timed part, like Go's deferred GC work.
        drop(std::hint::black_box(list));
    }
    times.sort_by(f64::total_cmp);
    let mid = times.len() / 2;
    let median = if times.len() % 2 == 0 { (times[mid - 1] + times[mid]) / 2.0 } else { times[mid] };

    Ok(json!({
        "workload": "decode",
        "pods": pods,
        "bytes": bytes.len(),
        "median_s": median,
        "min_s": times[0],
        "heap_bytes_per_pod": held / pods,
    }))
}

/// A client from the given kubeconfig file (its current context), as a
/// program run with `--kubeconfig` would build it.
async fn client(path: &Path) -> Result<Client> {
    let kubeconfig = Kubeconfig::read_from(path).map_err(|e| format!("reading kubeconfig {}: {e}", path.display()))?;
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| format!("kubeconfig {}: {e}", path.display()))?;
    Client::try_from(config).map_err(|e| format!("building client: {e}"))
}

/// A running pod reflector: the cache (of pods, or of their metadata) and
/// the task that drives it.
struct Informer<K: Resource + 'static>
where
    K::DynamicType: Eq + std::hash::Hash,
{
    store: Store<K>,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<Vec<f64>>>,
}

/// Starts a reflector over all pods with the default watcher config on its
/// own task. With `latencies`, every `Apply` event (an update seen by the
/// watch, never one of the initial list) carrying the written-at annotation
/// adds `now - written-at` in ms; the task returns them when stopped.
fn start_informer(client: Client, drop_managed_fields: bool, latencies: bool) -> Informer<Pod> {
    let events = watcher(Api::<Pod>::all(client), watcher::Config::default());
    drive(events, drop_managed_fields, latencies)
}

/// Starts a reflector over all pods' metadata, as [`start_informer`] does
/// over the pods: a watcher of `Api<PartialObjectMeta<Pod>>`, which makes
/// metadata-only requests (what kube 5 has instead of the deprecated
/// `metadata_watcher`).
fn start_metadata_informer(client: Client, drop_managed_fields: bool) -> Informer<PartialObjectMeta<Pod>> {
    let events = watcher(Api::<PartialObjectMeta<Pod>>::all(client), watcher::Config::default());
    drive(events, drop_managed_fields, false)
}

/// Caches the objects of `events` in a reflector store on a task of its own.
fn drive<K>(
    events: impl futures::Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
    drop_managed_fields: bool,
    latencies: bool,
) -> Informer<K>
where
    K: Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone + Default + Send + Sync,
{
    let (store, writer) = reflector::store::<K>();
    let events = events
        // What kube-rs documents for trimming objects before they are cached.
        .modify(move |obj: &mut K| {
            if drop_managed_fields {
                obj.meta_mut().managed_fields = None;
            }
        })
        // The watcher itself retries at once; back off as controllers do.
        .default_backoff();
    let mut stream = Box::pin(reflector::reflector(writer, events));
    let (stop, mut stopped) = oneshot::channel();

    let task = tokio::spawn(async move {
        let mut synced = false;
        let mut recorded = Vec::new();
        loop {
            let event = tokio::select! {
                _ = &mut stopped => break,
                event = stream.next() => event,
            };
            match event {
                None => return Err("watch stream ended".to_string()),
                Some(Ok(watcher::Event::InitDone)) => synced = true,
                Some(Ok(watcher::Event::Apply(obj))) if latencies => {
                    if let Some(ms) = latency_ms(&obj) {
                        recorded.push(ms);
                    }
                }
                Some(Ok(_)) => {}
                // Before the first sync an error means the run cannot
                // succeed (bad credentials, no server): fail rather than
                // retry forever. Afterwards, report it and let the watcher
                // recover, as client-go's informer does.
                Some(Err(e)) if !synced => return Err(format!("pod watcher: {e}")),
                Some(Err(e)) => eprintln!("kube-rs-peer: pod watcher: {e}"),
            }
        }
        Ok(recorded)
    });
    Informer { store, stop, task }
}

/// Milliseconds since the object's written-at annotation, if it has one.
fn latency_ms<K: Resource>(obj: &K) -> Option<f64> {
    let stamp: i128 = obj.meta().annotations.as_ref()?.get(WRITTEN_AT)?.parse().ok()?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_nanos() as i128;
    Some((now - stamp) as f64 / 1e6)
}

impl<K: Resource + Clone + 'static> Informer<K>
where
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    /// Waits for the first full list to be in the cache and checks its size.
    async fn synced(&mut self, expect: usize) -> Result<usize> {
        if self.store.wait_until_ready().await.is_err() {
            // The writer lives in the task, so the task has ended before the
            // sync (see `start_informer`); its result says why.
            return Err(match (&mut self.task).await {
                Ok(Err(e)) => e,
                Ok(Ok(_)) => "pod watcher stopped before sync".into(),
                Err(e) => format!("pod watcher task: {e}"),
            });
        }
        let pods = self.store.len();
        if pods != expect {
            return Err(format!("synced {pods} pods, expected {expect}"));
        }
        Ok(pods)
    }

    /// Stops the driving task and returns what it recorded.
    async fn stop(self) -> Result<Vec<f64>> {
        // An Err here only means the task already ended; its result says why.
        let _ = self.stop.send(());
        self.task.await.map_err(|e| format!("pod watcher task: {e}"))?
    }
}

async fn sync(
    kubeconfig: PathBuf,
    expect: usize,
    drop_managed_fields: bool,
    metadata: bool,
) -> Result<serde_json::Value> {
    let client = client(&kubeconfig).await?;
    let rss_before = proc_status_kib("VmRSS")?;

    let start = Instant::now();
    let (pods, synced_s, rss_after, peak) = if metadata {
        measure_sync(start_metadata_informer(client, drop_managed_fields), expect, start).await?
    } else {
        measure_sync(start_informer(client, drop_managed_fields, false), expect, start).await?
    };

    Ok(json!({
        "workload": "sync",
        "pods": pods,
        "synced_s": synced_s,
        "rss_before_kib": rss_before,
        "rss_after_kib": rss_after,
        "peak_rss_kib": peak,
        "rss_per_pod_bytes": (rss_after as i64 - rss_before as i64) * 1024 / pods.max(1) as i64,
    }))
}

async fn churn(kubeconfig: PathBuf, expect: usize, duration: f64) -> Result<serde_json::Value> {
    if !(duration.is_finite() && duration > 0.0) {
        return Err("--duration must be a positive number of seconds".into());
    }
    let client = client(&kubeconfig).await?;
    let mut informer = start_informer(client, true, true);
    informer.synced(expect).await?;

    let cpu_start = cpu_seconds()?;
    let window = Duration::from_secs_f64(duration + 3.0);
    let deadline = tokio::time::Instant::now() + window;
    // The harness starts writing when it reads this line.
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "ready").and_then(|()| stdout.flush()).map_err(|e| format!("writing stdout: {e}"))?;
    drop(stdout);

    tokio::time::sleep_until(deadline).await;
    let mut latencies = informer.stop().await?;
    let cpu_s = cpu_seconds()? - cpu_start;

    latencies.sort_by(f64::total_cmp);
    Ok(json!({
        "workload": "churn",
        "events": latencies.len(),
        "events_per_s": latencies.len() as f64 / duration,
        "p50_ms": percentile(&latencies, 0.50),
        "p99_ms": percentile(&latencies, 0.99),
        "cpu_s": cpu_s,
    }))
}

/// Waits for `informer` to sync; then, its cache still alive, frees what is
/// free and reads RSS: (pods, seconds since `start`, RSS KiB, peak RSS KiB).
async fn measure_sync<K: Resource + Clone + 'static>(
    mut informer: Informer<K>,
    expect: usize,
    start: Instant,
) -> Result<(usize, f64, u64, u64)>
where
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    let pods = informer.synced(expect).await?;
    let synced_s = start.elapsed().as_secs_f64();
    trim_heap();
    let rss_after = proc_status_kib("VmRSS")?;
    let peak = proc_status_kib("VmHWM")?;
    // The cache (`informer.store`) is alive up to here, so it is measured.
    drop(informer);
    Ok((pods, synced_s, rss_after, peak))
}

/// Nearest-rank percentile of sorted values; 0 when there are none.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// A `kB` field of /proc/self/status (VmRSS, VmHWM), in KiB.
fn proc_status_kib(field: &str) -> Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| format!("reading /proc/self/status: {e}"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().strip_suffix("kB")?.trim().parse().ok())
        .ok_or_else(|| format!("no {field} in /proc/self/status"))
}

/// Returns freed heap pages to the OS before RSS is read: glibc keeps freed
/// memory in its arenas, so without this RSS would include garbage that Go's
/// peer releases with `debug.FreeOSMemory()`.
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own arenas; it has no
    // preconditions and is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// User + system CPU time of the whole process so far.
fn cpu_seconds() -> Result<f64> {
    // SAFETY: getrusage only writes the struct we pass; all-zero is a valid
    // value of it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return Err(format!("getrusage: {}", std::io::Error::last_os_error()));
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok(secs(usage.ru_utime) + secs(usage.ru_stime))
}
