use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
struct Count;
static N: [AtomicUsize; 64] = [const { AtomicUsize::new(0) }; 64];
static B: [AtomicUsize; 64] = [const { AtomicUsize::new(0) }; 64];
fn bucket(s: usize) -> usize {
    (s.next_power_of_two().trailing_zeros() as usize).min(63)
}
unsafe impl GlobalAlloc for Count {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        N[bucket(l.size())].fetch_add(1, Relaxed);
        B[bucket(l.size())].fetch_add(l.size(), Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        N[bucket(l.size())].fetch_sub(1, Relaxed);
        B[bucket(l.size())].fetch_sub(l.size(), Relaxed);
        unsafe { System.dealloc(p, l) }
    }
}
#[global_allocator]
static A: Count = Count;
fn snap() -> Vec<(usize, usize)> {
    (0..64).map(|i| (N[i].load(Relaxed), B[i].load(Relaxed))).collect()
}
fn main() {
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open("../shared/bench/podlist-5000.json.gz").unwrap())
        .read_to_end(&mut json)
        .unwrap();
    let before = snap();
    let list: k8s_client::api::core::v1::PodList = serde_json::from_slice(&json).unwrap();
    let after = snap();
    let pods = list.items.len() as f64;
    let (mut tn, mut tb, mut tc) = (0.0, 0.0, 0.0);
    for i in 0..64 {
        let n = (after[i].0 - before[i].0) as f64 / pods;
        let b = (after[i].1 - before[i].1) as f64 / pods;
        if n > 0.0 {
            let avg = b / n;
            let chunk = ((avg + 8.0 + 15.0) / 16.0).floor() * 16.0;
            let chunk = chunk.max(32.0);
            println!("<= {:>6} B: {:>7.1} allocs/pod {:>8.0} B/pod  ~{:>8.0} B malloc'd", 1usize << i, n, b, n * chunk);
            tn += n;
            tb += b;
            tc += n * chunk;
        }
    }
    println!(
        "total {tn:.1} allocs/pod {tb:.0} B requested ~{tc:.0} B in chunks; size_of Pod {}",
        std::mem::size_of::<k8s_client::api::core::v1::Pod>()
    );
    std::hint::black_box(list);
}
