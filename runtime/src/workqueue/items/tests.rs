//! `Items` against a model made of client-go's own three structures (a FIFO,
//! a dirty set and a processing set), including stale index entries,
//! rebuilds, colliding hashes and `done` without `get`.

use std::collections::{HashSet, VecDeque};
use std::hash::{Hash, Hasher};

use proptest::prelude::*;

use super::{Done, ItemHasher, Items};

/// client-go's `Typed[T]` bookkeeping, step for step.
#[derive(Default)]
struct Model {
    queue: VecDeque<u16>,
    dirty: HashSet<u16>,
    processing: HashSet<u16>,
}

impl Model {
    fn add(&mut self, item: u16) -> bool {
        if !self.dirty.insert(item) || self.processing.contains(&item) {
            return false;
        }
        self.queue.push_back(item);
        true
    }

    fn pop(&mut self) -> Option<u16> {
        let item = self.queue.pop_front()?;
        self.processing.insert(item);
        self.dirty.remove(&item);
        Some(item)
    }

    /// `Some(true)`: requeued; `Some(false)`: nothing processed any more.
    fn done(&mut self, item: u16) -> (bool, bool) {
        self.processing.remove(&item);
        if self.dirty.contains(&item) {
            self.queue.push_back(item);
            return (true, self.processing.is_empty());
        }
        (false, self.processing.is_empty())
    }
}

/// An item whose hash is the same for a whole group of values, so that
/// lookups must tell items apart by comparing them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Colliding(u16);

impl Hash for Colliding {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.0 % 3).hash(state);
    }
}

#[derive(Clone, Debug)]
enum Op {
    Add(u16),
    Get,
    Done(u16),
    /// `done` of the item handed out longest ago (the usual worker).
    DoneOldest,
}

fn ops(distinct: u16) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        4 => (0..distinct).prop_map(Op::Add),
        3 => Just(Op::Get),
        1 => (0..distinct).prop_map(Op::Done),
        3 => Just(Op::DoneOldest),
    ];
    proptest::collection::vec(op, 0..1500)
}

/// Runs `ops` on `Items` of `T` (made from the `u16` by `wrap`) and on the
/// model, comparing every answer.
fn check<T: super::QueueItem + std::fmt::Debug>(ops: &[Op], wrap: impl Fn(u16) -> T) -> Result<(), TestCaseError> {
    let hasher = ItemHasher::default();
    let mut items = Items::<T>::new();
    let mut model = Model::default();
    let mut held: VecDeque<u16> = VecDeque::new();
    let mut most_live = 0;
    for op in ops {
        match *op {
            Op::Add(n) => {
                let item = wrap(n);
                let hash = hasher.hash(&item);
                prop_assert_eq!(items.add(item, hash, |_| {}), model.add(n), "add {}", n);
            }
            Op::Get => {
                let got = items.pop(|_| {});
                let want = model.pop();
                prop_assert_eq!(got, want.map(&wrap));
                held.extend(want);
            }
            Op::Done(_) | Op::DoneOldest => {
                let n = match *op {
                    Op::Done(n) => n,
                    _ => match held.pop_front() {
                        Some(n) => n,
                        None => continue,
                    },
                };
                let item = wrap(n);
                let (got, _) = items.done(&item, hasher.hash(&item));
                let (requeued, idle) = model.done(n);
                let got = (matches!(got, Done::Requeued), matches!(got, Done::Idle));
                // A requeue says nothing about the others.
                let want = (requeued, idle && !requeued);
                prop_assert_eq!(got, want, "done {}", n);
            }
        }
        prop_assert_eq!(items.len(), model.queue.len());
        prop_assert_eq!(items.processing(), model.processing.len());
        most_live = most_live.max(items.slots.len());
        // The index grows only while stale entries are fewer than live ones.
        prop_assert!(items.index.capacity() <= 4 * most_live + 8, "{} for {}", items.index.capacity(), most_live);
    }
    // Every item the model still knows is found again, and no other.
    for n in 0..64 {
        let item = wrap(n);
        let known = model.dirty.contains(&n) || model.processing.contains(&n) || model.queue.contains(&n);
        prop_assert_eq!(items.find(&item, hasher.hash(&item)).is_some(), known, "item {}", n);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn items_behave_as_client_gos_sets(ops in ops(40)) {
        check(&ops, |n| n)?;
    }

    #[test]
    fn items_with_colliding_hashes_are_told_apart(ops in ops(12)) {
        check(&ops, Colliding)?;
    }

    #[test]
    fn owned_items_behave_as_client_gos_sets(ops in ops(64)) {
        check(&ops, |n| format!("ns/pod-{n}"))?;
    }
}

/// A burst bigger than the room kept is given back once drained, and the
/// queue works as before afterwards.
#[test]
fn drained_burst_gives_back_its_room() {
    let hasher = ItemHasher::default();
    let mut items = Items::<u32>::new();
    let burst = 3 * super::RELEASE_ABOVE as u32;
    for n in 0..burst {
        assert!(items.add(n, hasher.hash(&n), |_| {}));
    }
    assert!(items.slots.capacity() > super::RELEASE_ABOVE);
    while let Some(n) = items.pop(|_| {}) {
        items.done(&n, hasher.hash(&n));
    }
    assert_eq!(items.slots.capacity(), 0);
    assert_eq!(items.index.capacity(), 0);
    assert!(items.add(7, hasher.hash(&7), |_| {}));
    assert_eq!(items.pop(|_| {}), Some(7));
}

/// Freed slots leave stale index entries, which are purged instead of
/// making the index grow.
#[test]
fn stale_index_entries_do_not_grow_the_index() {
    let hasher = ItemHasher::default();
    let mut items = Items::<u32>::new();
    for n in 0..100_000u32 {
        items.add(n, hasher.hash(&n), |_| {});
        let got = items.pop(|_| {}).expect("just added");
        items.done(&got, hasher.hash(&got));
        assert!(items.index.capacity() <= 8, "{}", items.index.capacity());
    }
    assert_eq!(items.slots.len(), 0);
}

/// After a burst drained to a few items, a steady flow does not keep the
/// burst's index.
#[test]
fn index_shrinks_after_a_burst() {
    let hasher = ItemHasher::default();
    let mut items = Items::<u32>::new();
    for n in 0..1000u32 {
        items.add(n, hasher.hash(&n), |_| {});
    }
    let big = items.index.capacity();
    // Keep one item back so that the queue never empties.
    while items.len() > 1 {
        let got = items.pop(|_| {}).expect("queued");
        items.done(&got, hasher.hash(&got));
    }
    for n in 1000..5000u32 {
        items.add(n, hasher.hash(&n), |_| {});
        let got = items.pop(|_| {}).expect("queued");
        items.done(&got, hasher.hash(&got));
    }
    assert!(items.index.capacity() < big / 4, "{} of {big}", items.index.capacity());
}
