//! Where a decoded pod's memory goes: the size of the big pod types, and the
//! heap blocks one decoded PodList of `shared/bench/podlist-5000.json.gz`
//! keeps, per pod, by size class (with glibc's chunk rounding estimated);
//! then the same for the list decoded as metadata only
//! (`PartialObjectMetadata`, what a metadata informer caches).
//!
//! Run: `cargo run --release -p k8s-client-bench --example alloc_profile`.
// Counting allocations takes a `GlobalAlloc`, an unsafe trait: the crate's
// manifest denies unsafe code, and this program alone lifts it whole.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use k8s_client::api::core::v1::*;
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client_runtime::ObjectList;
use k8s_client_runtime::metadata::PartialObjectMetadata;

/// Live blocks and bytes by power-of-two size class.
struct Counting;
static BLOCKS: [AtomicUsize; 64] = [const { AtomicUsize::new(0) }; 64];
static BYTES: [AtomicUsize; 64] = [const { AtomicUsize::new(0) }; 64];
/// Calls, including blocks freed or moved before the decode returns.
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static REALLOCS: AtomicUsize = AtomicUsize::new(0);

fn class(size: usize) -> usize {
    (size.next_power_of_two().trailing_zeros() as usize).min(63)
}

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BLOCKS[class(l.size())].fetch_add(1, Relaxed);
        BYTES[class(l.size())].fetch_add(l.size(), Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        REALLOCS.fetch_add(1, Relaxed);
        BLOCKS[class(l.size())].fetch_sub(1, Relaxed);
        BYTES[class(l.size())].fetch_sub(l.size(), Relaxed);
        BLOCKS[class(new_size)].fetch_add(1, Relaxed);
        BYTES[class(new_size)].fetch_add(new_size, Relaxed);
        unsafe { System.realloc(p, l, new_size) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        BLOCKS[class(l.size())].fetch_sub(1, Relaxed);
        BYTES[class(l.size())].fetch_sub(l.size(), Relaxed);
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn snapshot() -> Vec<(usize, usize)> {
    (0..64).map(|i| (BLOCKS[i].load(Relaxed), BYTES[i].load(Relaxed))).collect()
}

/// Prints the blocks kept between two snapshots, per item, by size class.
fn report(before: &[(usize, usize)], after: &[(usize, usize)], pods: f64) {
    let (mut blocks, mut bytes, mut chunks) = (0.0, 0.0, 0.0);
    for (i, ((b0, s0), (b1, s1))) in before.iter().zip(after).enumerate() {
        let n = (b1 - b0) as f64 / pods;
        let b = (s1 - s0) as f64 / pods;
        if n > 0.0 {
            // glibc: 8 bytes of header, 16-byte granules, 32 bytes at least.
            let chunk = ((b / n + 8.0 + 15.0) / 16.0).floor().max(2.0) * 16.0;
            println!(
                "blocks <= {:>8} B: {n:>6.1} per pod, {b:>7.0} B, ~{:>7.0} B with malloc's rounding",
                1usize << i,
                n * chunk
            );
            (blocks, bytes, chunks) = (blocks + n, bytes + b, chunks + n * chunk);
        }
    }
    println!("per pod: {blocks:.1} blocks, {bytes:.0} B requested, ~{chunks:.0} B with malloc's rounding");
}

fn main() {
    macro_rules! sizes { ($($t:ty),*) => { $( println!("size_of {:<22} {:>6} B", stringify!($t), std::mem::size_of::<$t>()); )* } }
    sizes!(Pod, PodSpec, PodStatus, ObjectMeta, Container, ContainerStatus, Volume, Probe, SecurityContext, EnvVar);

    let json =
        k8s_client_bench::gunzip_file(k8s_client_bench::SHARED_PODLIST.as_ref()).unwrap_or_else(|e| panic!("{e}"));
    let before = snapshot();
    let calls = (ALLOCS.load(Relaxed), REALLOCS.load(Relaxed));
    let list: PodList = k8s_client_runtime::codec::decode_json(&json).expect("decode PodList");
    let after = snapshot();
    let pods = list.items.len() as f64;
    println!(
        "calls per pod: {:.1} allocations, {:.1} reallocations",
        (ALLOCS.load(Relaxed) - calls.0) as f64 / pods,
        (REALLOCS.load(Relaxed) - calls.1) as f64 / pods
    );
    report(&before, &after, pods);
    let mut list = list;
    let before_strip: isize = (0..64).map(|i| BYTES[i].load(Relaxed) as isize).sum();
    for pod in &mut list.items {
        pod.metadata.managed_fields = None;
    }
    let after_strip: isize = (0..64).map(|i| BYTES[i].load(Relaxed) as isize).sum();
    println!("managedFields per pod: {:.0} B", (before_strip - after_strip) as f64 / pods);
    std::hint::black_box(list);

    println!("\nmetadata only (PartialObjectMetadata, managedFields dropped):");
    println!("size_of PartialObjectMetadata {:>6} B", std::mem::size_of::<PartialObjectMetadata>());
    println!("size_of OwnerReference {:>6} B", std::mem::size_of::<k8s_client_runtime::metadata::OwnerReference>());
    let before = snapshot();
    let list: ObjectList<PartialObjectMetadata> = k8s_client_runtime::codec::decode_json(&json).expect("decode list");
    let mut list = list;
    for item in &mut list.items {
        item.metadata.managed_fields = None;
    }
    report(&before, &snapshot(), list.items.len() as f64);
    std::hint::black_box(list);
}
