//! The deduplicating FIFO shared by all queue kinds.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::metrics::{MetricsProvider, QueueMetrics};
use super::waiting::Waiting;
use super::{ItemSet, QueueItem};

/// How often the "unfinished work" gauges are refreshed, as client-go.
const UNFINISHED_WORK_UPDATE_PERIOD: Duration = Duration::from_millis(500);

/// Everything a queue knows, under one lock so that the dirty/processing
/// rules and the delayed items are always seen together.
pub(super) struct State<T> {
    /// Items to hand out, in order; every one is also in `dirty`.
    queue: VecDeque<T>,
    /// Items that need processing (queued, or re-added while processing).
    dirty: ItemSet<T>,
    /// Items a worker holds between `get` and `done`.
    processing: ItemSet<T>,
    shutting_down: bool,
    /// A `shut_down_with_drain` call is waiting for `processing` to empty.
    drain: bool,
    /// Items added with a delay that is not over yet.
    pub(super) waiting: Waiting<T>,
    pub(super) metrics: Option<QueueMetrics<T>>,
}

impl<T: QueueItem> State<T> {
    /// The `Add` of client-go; returns whether a worker should be woken.
    pub(super) fn add(&mut self, item: T) -> bool {
        if self.shutting_down || self.dirty.contains(&item) {
            return false;
        }
        if let Some(m) = &mut self.metrics {
            m.add(&item);
        }
        if self.processing.contains(&item) {
            // Handed out again by `done`.
            self.dirty.insert(item);
            return false;
        }
        self.dirty.insert(item.clone());
        self.queue.push_back(item);
        true
    }

    pub(super) fn is_shutting_down(&self) -> bool {
        self.shutting_down
    }

    /// Moves the delayed items whose time has come into the queue; returns
    /// how many workers to wake.
    fn promote_ready(&mut self, now: Instant) -> usize {
        let mut woken = 0;
        while let Some(item) = self.waiting.pop_ready(now) {
            if self.add(item) {
                woken += 1;
            }
        }
        woken
    }
}

pub(super) struct Inner<T> {
    pub(super) state: Mutex<State<T>>,
    /// Signalled when an item becomes available, a delayed item becomes the
    /// earliest, or the queue shuts down.
    pub(super) item_ready: Notify,
    /// Signalled when the last processed item is done, for draining.
    drained: Notify,
}

impl<T: QueueItem> Inner<T> {
    pub(super) fn wake(&self, workers: usize) {
        for _ in 0..workers {
            self.item_ready.notify_one();
        }
    }
}

/// A deduplicating FIFO work queue, as client-go's `workqueue.Type`.
///
/// * An item is queued at most once: adding an item already waiting is a
///   no-op, and order is that of the first add.
/// * While a worker holds an item (between [`get`](Self::get) and
///   [`done`](Self::done)), adding it again only marks it dirty; `done` puts
///   it back in the queue. So one item is never processed concurrently.
/// * After [`shut_down`](Self::shut_down) adds are ignored, items still
///   queued are handed out, then `get` returns `None`.
///
/// Cloning gives another handle to the same queue.
#[doc(alias = "Type")]
pub struct Queue<T> {
    pub(super) inner: Arc<Inner<T>>,
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Queue { inner: Arc::clone(&self.inner) }
    }
}

impl<T: QueueItem> Default for Queue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> fmt::Debug for Queue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.inner.state.lock();
        f.debug_struct("Queue")
            .field("len", &st.queue.len())
            .field("processing", &st.processing.len())
            .field("shutting_down", &st.shutting_down)
            .finish_non_exhaustive()
    }
}

impl<T: QueueItem> Queue<T> {
    /// A queue without metrics.
    pub fn new() -> Self {
        Self::build(None)
    }

    /// A queue reporting its metrics under `name`.
    ///
    /// When called inside a tokio runtime, also starts a task refreshing the
    /// unfinished-work gauges every 500 ms until the queue shuts down or is
    /// dropped.
    pub fn with_metrics(name: &str, provider: &dyn MetricsProvider) -> Self {
        let queue = Self::build(Some(QueueMetrics::new(name, provider)));
        queue.spawn_unfinished_work_updates();
        queue
    }

    fn build(metrics: Option<QueueMetrics<T>>) -> Self {
        Queue {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    queue: VecDeque::new(),
                    dirty: ItemSet::default(),
                    processing: ItemSet::default(),
                    shutting_down: false,
                    drain: false,
                    waiting: Waiting::default(),
                    metrics,
                }),
                item_ready: Notify::new(),
                drained: Notify::new(),
            }),
        }
    }

    fn spawn_unfinished_work_updates(&self) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let weak: Weak<Inner<T>> = Arc::downgrade(&self.inner);
        handle.spawn(async move {
            let mut ticker = tokio::time::interval(UNFINISHED_WORK_UPDATE_PERIOD);
            loop {
                ticker.tick().await;
                let Some(inner) = weak.upgrade() else { return };
                let st = inner.state.lock();
                if st.shutting_down {
                    return;
                }
                if let Some(m) = &st.metrics {
                    m.update_unfinished_work();
                }
            }
        });
    }

    /// Queues `item` unless it is already queued; see the type's docs for
    /// items being processed and shutdown.
    pub fn add(&self, item: T) {
        let woken = self.inner.state.lock().add(item);
        if woken {
            self.inner.item_ready.notify_one();
        }
    }

    /// Waits for the next item and marks it as being processed; `None` once
    /// the queue is shut down and empty.
    ///
    /// Call [`done`](Self::done) with the item when finished with it.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: an item is taken from the queue only in the poll that
    /// returns it, so dropping the future loses nothing.
    pub async fn get(&self) -> Option<T> {
        loop {
            let notified = self.inner.item_ready.notified();
            tokio::pin!(notified);
            // Register before looking, so a wake-up between the look and the
            // await is not lost.
            notified.as_mut().enable();
            let next_delayed = {
                let mut st = self.inner.state.lock();
                let woken = st.promote_ready(Instant::now());
                if let Some(item) = st.queue.pop_front() {
                    st.dirty.remove(&item);
                    st.processing.insert(item.clone());
                    if let Some(m) = &mut st.metrics {
                        m.get(&item);
                    }
                    drop(st);
                    // Other promoted items are for other workers.
                    self.inner.wake(woken.saturating_sub(1));
                    return Some(item);
                }
                if st.shutting_down {
                    return None;
                }
                st.waiting.next_ready_at()
            };
            match next_delayed {
                Some(at) => {
                    tokio::select! {
                        _ = &mut notified => {}
                        _ = tokio::time::sleep_until(at) => {}
                    }
                }
                None => notified.await,
            }
        }
    }

    /// Marks `item` as no longer processed; if it was added meanwhile, it is
    /// queued again.
    pub fn done(&self, item: &T) {
        let mut st = self.inner.state.lock();
        if let Some(m) = &mut st.metrics {
            m.done(item);
        }
        st.processing.remove(item);
        if st.dirty.contains(item) {
            st.queue.push_back(item.clone());
            drop(st);
            self.inner.item_ready.notify_one();
        } else if st.processing.is_empty() {
            drop(st);
            self.inner.drained.notify_waiters();
        }
    }

    /// Number of items waiting to be handed out (not those being processed,
    /// nor delayed ones whose time has not come).
    pub fn len(&self) -> usize {
        let mut st = self.inner.state.lock();
        let woken = st.promote_ready(Instant::now());
        let len = st.queue.len();
        drop(st);
        self.inner.wake(woken);
        len
    }

    /// Whether no item is waiting to be handed out (see [`len`](Self::len)).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stops accepting items and lets workers exit: `get` hands out what is
    /// still queued, then returns `None`. Items being processed are not
    /// waited for; a pending [`shut_down_with_drain`](Self::shut_down_with_drain)
    /// stops waiting.
    pub fn shut_down(&self) {
        {
            let mut st = self.inner.state.lock();
            st.shutting_down = true;
            st.drain = false;
            st.waiting.clear();
        }
        self.inner.item_ready.notify_waiters();
        self.inner.drained.notify_waiters();
    }

    /// Shuts down like [`shut_down`](Self::shut_down), then waits until every
    /// item handed out has been marked [`done`](Self::done).
    ///
    /// Workers must keep calling `done`, or this waits forever; a concurrent
    /// `shut_down` ends the wait.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the queue is shut down at the first poll; dropping the
    /// future only stops the waiting.
    pub async fn shut_down_with_drain(&self) {
        {
            let mut st = self.inner.state.lock();
            st.shutting_down = true;
            st.drain = true;
            st.waiting.clear();
        }
        self.inner.item_ready.notify_waiters();
        loop {
            let drained = self.inner.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            {
                let st = self.inner.state.lock();
                if st.processing.is_empty() || !st.drain {
                    return;
                }
            }
            drained.await;
        }
    }

    /// Whether [`shut_down`](Self::shut_down) or
    /// [`shut_down_with_drain`](Self::shut_down_with_drain) was called.
    pub fn shutting_down(&self) -> bool {
        self.inner.state.lock().shutting_down
    }
}
