//! What the pipeline benchmarks share: the objects they feed through, the
//! runtimes they run on and the CPU clock of the calling thread.

use std::future::Future;
use std::time::Duration;

use criterion::BenchmarkGroup;
use criterion::measurement::WallTime;
use k8s_client_runtime::dynamic::{DynamicMeta, DynamicObject};

/// Events per run.
pub const EVENTS: u64 = 200_000;
/// Distinct objects per run: an add for each, then updates.
pub const OBJECTS: u64 = 10_000;

/// The dynamic object: a real runtime kind with real metadata, so the
/// benchmarks need no kind of their own.
pub type Thing = DynamicObject;

/// Object `i`, of the `OBJECTS` spread over 10 namespaces.
pub fn thing(i: u64) -> Thing {
    Thing {
        metadata: DynamicMeta {
            name: Some(format!("thing-{i}")),
            namespace: Some(format!("ns-{}", i % 10)),
            ..DynamicMeta::default()
        },
        ..Thing::default()
    }
}

/// CPU time of the calling thread (Linux `schedstat`), to measure on a
/// machine shared with other work; `None` elsewhere.
fn thread_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// The CPU time the calling thread spends from `start` on; zero where it
/// cannot be read.
pub struct CpuClock(Duration);

impl CpuClock {
    pub fn start() -> Self {
        CpuClock(thread_cpu_time().unwrap_or_default())
    }

    pub fn elapsed(&self) -> Duration {
        thread_cpu_time().unwrap_or_default().saturating_sub(self.0)
    }
}

/// Benchmarks `run`, which answers the wall time and the [`CpuClock`] time
/// of what it measures, as `{name}/current_thread` and `{name}/multi_thread`
/// (two workers: producer and consumer contend) by the wall time, and, where
/// the CPU time can be read, as `{name}/current_thread_cpu_time` by that:
/// on one thread everything runs on the caller, so its CPU time is what the
/// code costs, whatever else the machine is doing.
pub fn bench_runs<R, F>(group: &mut BenchmarkGroup<'_, WallTime>, name: &str, run: R)
where
    R: Fn() -> F,
    F: Future<Output = (Duration, Duration)>,
{
    let runtimes = [
        ("current_thread", tokio::runtime::Builder::new_current_thread().enable_all().build()),
        ("multi_thread", tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()),
    ];
    for (flavor, rt) in runtimes {
        let rt = rt.expect("runtime");
        bench_sum(group, format!("{name}/{flavor}"), &rt, || async { run().await.0 });
    }
    if thread_cpu_time().is_some() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        bench_sum(group, format!("{name}/current_thread_cpu_time"), &rt, || async { run().await.1 });
    }
}

/// Benchmarks `id` on `rt`, timing each iteration by what `run` reports.
fn bench_sum<R, F>(group: &mut BenchmarkGroup<'_, WallTime>, id: String, rt: &tokio::runtime::Runtime, run: R)
where
    R: Fn() -> F,
    F: Future<Output = Duration>,
{
    group.bench_function(id, |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += run().await;
                }
                total
            })
        })
    });
}
