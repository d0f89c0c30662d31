//! Measuring this project beside its peers.
//!
//! - `benches/`: criterion-free bench binaries against k8s-openapi alone
//!   (`decode`) and against the test apiserver (`cluster`).
//! - `src/bin/k8s-client-peer.rs`: this project's program of
//!   `make bench-peers`, and `src/bin/bench-peers/`: the harness that runs it
//!   beside the client-go and kube-rs programs under `peers/` (their command
//!   line: `peers/PROTOCOL.md`).
//!
//! This library holds what the programs written in Rust measure alike.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Read;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

/// The annotation the churn writer stamps with the write time, in Unix
/// nanoseconds; a handler seeing it knows how long the update took to arrive.
pub const LATENCY_ANNOTATION: &str = "bench.k8s-client.dev/written-at";

/// The common benchmark input beside the checkout: 5,000 realistic pods as
/// one gzipped PodList.
pub const SHARED_PODLIST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/bench/podlist-5000.json.gz");

/// The contents of a gzipped file; the error names the file.
pub fn gunzip_file(path: &Path) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(file).read_to_end(&mut out).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(out)
}

/// Nanoseconds since the Unix epoch: the clock the writer and the handlers share.
pub fn unix_nanos() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// (current, peak) resident set size of this process in KiB (`VmRSS`,
/// `VmHWM` of /proc/self/status); zeros where /proc is missing.
pub fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// User + system CPU seconds this process has used (`getrusage`), as the
/// Go and kube-rs programs read it.
pub fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes one plain struct that this call owns.
    #[allow(unsafe_code)]
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
            return 0.0;
        }
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// Returns the heap's free pages to the system before resident memory is
/// read, as the Go program does with `debug.FreeOSMemory()`: glibc keeps
/// freed memory mapped otherwise, and RSS would count what the process no
/// longer holds.
pub fn free_unused_heap() {
    // SAFETY: malloc_trim only walks glibc's own arenas; it takes no pointers.
    #[allow(unsafe_code)]
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The global allocator of the Rust programs that report heap figures: the
/// system allocator, counting the bytes each thread holds.
///
/// Counted per thread, without atomics: a counter shared by all threads is
/// one cache line every allocation of every thread writes, and in the
/// multi-threaded workloads (a workqueue, an informer) that line bouncing
/// between cores cost more than the work measured (a shared counter cut one
/// workqueue worker's throughput from about 4 to 1.6 M ops/s). The figure is
/// exact for work done on one thread ([`thread_heap_bytes`] around it), as
/// the decode workloads are.
pub struct CountingAlloc;

thread_local! {
    /// Bytes allocated minus bytes freed on this thread. Const-initialised
    /// and without a destructor, so reachable from the allocator at any time.
    static HELD: Cell<usize> = const { Cell::new(0) };
}

fn count(added: usize, removed: usize) {
    // `try_with`: a thread being torn down may still free memory. Wrapping:
    // a thread may free more than it allocated (what others allocated).
    let _ = HELD.try_with(|held| held.set(held.get().wrapping_add(added).wrapping_sub(removed)));
}

/// Bytes allocated minus bytes freed on the calling thread so far (with
/// [`CountingAlloc`] as the global allocator); the difference of two reads
/// is the heap that work on this thread between them kept.
pub fn thread_heap_bytes() -> usize {
    HELD.try_with(Cell::get).unwrap_or(0)
}

// SAFETY: every call is passed to the system allocator unchanged; the
// counting only reads sizes and touches a thread-local integer.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on as it is.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            count(layout.size(), 0);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            count(layout.size(), 0);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as `alloc`.
        unsafe { System.dealloc(ptr, layout) };
        count(0, layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `alloc`.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            count(new_size, layout.size());
        }
        new
    }
}

/// Latencies recorded by an event handler, in nanoseconds.
#[derive(Default)]
pub struct Latencies(Mutex<Vec<u64>>);

impl Latencies {
    /// Records one latency.
    pub fn record(&self, nanos: u64) {
        self.0.lock().push(nanos);
    }

    /// Forgets what was recorded so far (events of the initial sync).
    pub fn clear(&self) {
        self.0.lock().clear();
    }

    /// (count, p50 ms, p99 ms), percentiles by nearest rank; zeros when empty.
    pub fn summary(&self) -> (usize, f64, f64) {
        let mut all = self.0.lock().clone();
        all.sort_unstable();
        let rank = |p: f64| {
            if all.is_empty() {
                return 0.0;
            }
            let i = ((p * all.len() as f64).ceil() as usize).clamp(1, all.len()) - 1;
            all[i] as f64 / 1e6
        };
        (all.len(), rank(0.50), rank(0.99))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let l = Latencies::default();
        assert_eq!(l.summary(), (0, 0.0, 0.0));
        for ms in 1..=100 {
            l.record(ms * 1_000_000);
        }
        assert_eq!(l.summary(), (100, 50.0, 99.0));
        l.clear();
        l.record(7_000_000);
        assert_eq!(l.summary(), (1, 7.0, 7.0));
    }

    #[test]
    fn process_figures_are_read() {
        let (rss, peak) = rss_kib();
        assert!(rss > 0 && peak >= rss, "rss {rss} peak {peak}");
        let spin = std::time::Instant::now();
        while spin.elapsed().as_millis() < 50 {
            std::hint::black_box(0u64.wrapping_add(1));
        }
        assert!(cpu_seconds() > 0.0);
    }
}
