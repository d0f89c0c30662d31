//! Adding items after a delay, as client-go's `DelayingInterface`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt;
use std::ops::Deref;
use std::time::Duration;

use tokio::time::Instant;

use super::{ItemMap, QueueItem};

/// Stands in for delays past what `Instant` can represent (as tokio does).
const FOREVER: Duration = Duration::from_secs(86_400 * 365 * 30);
use super::metrics::MetricsProvider;
use super::queue::Queue;

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

    fn drop_stale_head(&mut self) {
        while let Some(Reverse((_, seq))) = self.heap.peek() {
            if self.entries.contains_key(seq) {
                break;
            }
            self.heap.pop();
        }
    }
}

/// A [`Queue`] that can also add items later, as client-go's
/// `DelayingInterface`: use it to look at something again after a while.
///
/// All of [`Queue`]'s methods are available through `Deref`. Items whose
/// time has not come are not counted by `len` and are dropped on shutdown.
#[doc(alias = "DelayingInterface")]
pub struct DelayingQueue<T> {
    queue: Queue<T>,
}

impl<T> Clone for DelayingQueue<T> {
    fn clone(&self) -> Self {
        DelayingQueue { queue: self.queue.clone() }
    }
}

impl<T> fmt::Debug for DelayingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DelayingQueue").field(&self.queue).finish()
    }
}

impl<T: QueueItem> Default for DelayingQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Deref for DelayingQueue<T> {
    type Target = Queue<T>;
    fn deref(&self) -> &Queue<T> {
        &self.queue
    }
}

impl<T: QueueItem> DelayingQueue<T> {
    /// An empty queue without metrics.
    pub fn new() -> Self {
        DelayingQueue { queue: Queue::new() }
    }

    /// A queue reporting metrics under `name`; see [`Queue::with_metrics`].
    pub fn with_metrics(name: &str, provider: &dyn MetricsProvider) -> Self {
        DelayingQueue { queue: Queue::with_metrics(name, provider) }
    }

    /// Adds `item` once `delay` has passed; a zero delay adds it now.
    ///
    /// If the item is already waiting, the earlier of the two times wins.
    /// Ignored after shutdown. Counts as a retry in the metrics.
    pub fn add_after(&self, item: T, delay: Duration) {
        let inner = &self.queue.inner;
        let mut st = inner.state.lock();
        if st.is_shutting_down() {
            return;
        }
        if let Some(m) = &st.metrics {
            m.retry();
        }
        let wake = if delay.is_zero() {
            st.add(item)
        } else {
            // A new earliest time: sleeping workers must look at it.
            let now = Instant::now();
            // A delay too long to represent is as good as forever.
            let at = now.checked_add(delay).unwrap_or_else(|| now + FOREVER);
            let earliest = st.waiting.insert(item, at);
            if earliest {
                drop(st);
                inner.item_ready.notify_waiters();
                return;
            }
            false
        };
        drop(st);
        if wake {
            inner.item_ready.notify_one();
        }
    }

    /// Number of items added with a delay whose time has not come yet.
    pub fn len_waiting(&self) -> usize {
        // Due items are moved first so they are not counted twice.
        let _ = self.queue.len();
        self.queue.inner.state.lock().waiting.len()
    }
}
