//! The items of a queue waiting for their time, kept beside the queue's
//! items under its lock; a [`DelayingQueue`](super::DelayingQueue) adds to
//! it and the queue takes from it what is due.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use tokio::time::Instant;

use super::{ItemMap, QueueItem};

/// Items waiting for their time, earliest first.
///
/// The heap may hold stale entries (an item whose time was moved earlier);
/// `entries` only knows the current sequence number of each item, so stale
/// ones are skipped when they come out.
pub(super) struct Waiting<T> {
    heap: BinaryHeap<Reverse<(Instant, u64)>>,
    entries: HashMap<u64, T>,
    ready_at: ItemMap<T, (Instant, u64)>,
    next_seq: u64,
}

impl<T> Default for Waiting<T> {
    fn default() -> Self {
        Waiting { heap: BinaryHeap::new(), entries: HashMap::new(), ready_at: ItemMap::default(), next_seq: 0 }
    }
}

impl<T: QueueItem> Waiting<T> {
    /// Schedules `item` at `at`, unless it is already scheduled earlier;
    /// returns whether `at` is now the earliest time of all.
    pub(super) fn insert(&mut self, item: T, at: Instant) -> bool {
        if let Some(&(current, seq)) = self.ready_at.get(&item) {
            if current <= at {
                return false;
            }
            self.entries.remove(&seq);
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let earliest = self.next_ready_at().is_none_or(|first| at < first);
        self.heap.push(Reverse((at, seq)));
        self.entries.insert(seq, item.clone());
        self.ready_at.insert(item, (at, seq));
        earliest
    }

    /// The earliest time an item is due, if any.
    pub(super) fn next_ready_at(&mut self) -> Option<Instant> {
        self.drop_stale_head();
        self.heap.peek().map(|Reverse((at, _))| *at)
    }

    /// Takes the earliest item due at or before `now`.
    pub(super) fn pop_ready(&mut self, now: Instant) -> Option<T> {
        self.drop_stale_head();
        match self.heap.peek() {
            Some(Reverse((at, _))) if *at <= now => {}
            _ => return None,
        }
        let Reverse((_, seq)) = self.heap.pop()?;
        let item = self.entries.remove(&seq)?;
        self.ready_at.remove(&item);
        Some(item)
    }

    pub(super) fn clear(&mut self) {
        *self = Waiting { next_seq: self.next_seq, ..Waiting::default() };
    }

    pub(super) fn len(&self) -> usize {
        self.ready_at.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.ready_at.is_empty()
    }

    fn drop_stale_head(&mut self) {
        while let Some(Reverse((_, seq))) = self.heap.peek() {
            if self.entries.contains_key(seq) {
                break;
            }
            self.heap.pop();
        }
    }
}
