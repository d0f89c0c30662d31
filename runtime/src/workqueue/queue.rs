//! The deduplicating FIFO shared by all queue kinds.

use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::{Instant, Sleep};

use super::QueueItem;
use super::idle::{IdleWorkers, Wakers};
use super::items::{Done, ItemHasher, Items};
use super::metrics::{MetricsProvider, QueueMetrics};
use super::waiting::Waiting;

/// How often the "unfinished work" gauges are refreshed, as client-go.
const UNFINISHED_WORK_UPDATE_PERIOD: Duration = Duration::from_millis(500);

/// Everything a queue knows, under one lock so that the dirty/processing
/// rules, the delayed items and the waiting workers are always seen
/// together.
pub(super) struct State<T> {
    /// The FIFO and the dirty and processing sets.
    items: Items<T>,
    /// Workers waiting in `get`.
    pub(super) idle: IdleWorkers,
    shutting_down: bool,
    /// A `shut_down_with_drain` call is waiting for processing to end.
    drain: bool,
    /// Items added with a delay that is not over yet.
    pub(super) waiting: Waiting<T>,
    pub(super) metrics: Option<QueueMetrics<T>>,
    /// For the delayed items that become due.
    hasher: ItemHasher,
}

impl<T: QueueItem> State<T> {
    /// The `Add` of client-go of `item`, whose hash is `hash`; returns the
    /// worker to wake, if one waits.
    pub(super) fn add(&mut self, item: T, hash: u32) -> Option<Waker> {
        if self.shutting_down {
            return None;
        }
        let metrics = &mut self.metrics;
        let queued = self.items.add(item, hash, |item| {
            if let Some(m) = metrics {
                m.add(item);
            }
        });
        if queued { self.idle.take_one() } else { None }
    }

    pub(super) fn is_shutting_down(&self) -> bool {
        self.shutting_down
    }

    /// Moves the delayed items whose time has come into the queue; returns
    /// the workers to wake for them.
    fn promote_ready(&mut self) -> Wakers {
        let mut wakers = Wakers::default();
        if self.waiting.is_empty() {
            // Spares the clock read on every `get` of a queue without delays.
            return wakers;
        }
        let now = Instant::now();
        while let Some(item) = self.waiting.pop_ready(now) {
            let hash = self.hasher.hash(&item);
            wakers.push(self.add(item, hash));
        }
        wakers
    }
}

pub(super) struct Inner<T> {
    pub(super) state: Mutex<State<T>>,
    /// Items are hashed before taking the lock, to hold it shorter.
    pub(super) hasher: ItemHasher,
    /// Signalled when the last processed item is done while a
    /// `shut_down_with_drain` waits.
    drained: Notify,
}

/// A `get` that registered as waiting: unregisters when dropped, and passes
/// on a wake-up it received but did not use.
struct Ticket<'a, T: QueueItem> {
    inner: &'a Inner<T>,
    ticket: Option<u64>,
}

impl<T: QueueItem> Drop for Ticket<'_, T> {
    fn drop(&mut self) {
        let Some(ticket) = self.ticket else { return };
        let mut st = self.inner.state.lock();
        if st.idle.unregister(ticket) || st.items.len() == 0 {
            return;
        }
        // Woken for an item this `get` will not take: another worker must.
        let waker = st.idle.take_one();
        drop(st);
        if let Some(waker) = waker {
            waker.wake();
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
/// Cloning gives another handle to the same queue. A queue holds at most
/// `u32::MAX` distinct items at once (adding more panics, as a `Vec` does
/// past its capacity).
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
            .field("len", &st.items.len())
            .field("processing", &st.items.processing())
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
        let hasher = ItemHasher::default();
        Queue {
            inner: Arc::new(Inner {
                hasher: hasher.clone(),
                state: Mutex::new(State {
                    items: Items::new(),
                    hasher,
                    idle: IdleWorkers::default(),
                    shutting_down: false,
                    drain: false,
                    waiting: Waiting::default(),
                    metrics,
                }),
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
        let hash = self.inner.hasher.hash(&item);
        let waker = self.inner.state.lock().add(item, hash);
        if let Some(waker) = waker {
            waker.wake();
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
        let mut ticket = Ticket { inner: &self.inner, ticket: None };
        // Created only when delayed items are pending.
        let mut timer: Option<Pin<Box<Sleep>>> = None;
        poll_fn(|cx| self.poll_get(cx, &mut ticket, &mut timer)).await
    }

    /// One look at the queue for [`get`](Self::get): an item, `None` at
    /// shutdown, or registered as waiting (with a timer for the earliest
    /// delayed item) and pending.
    fn poll_get(
        &self,
        cx: &mut Context<'_>,
        ticket: &mut Ticket<'_, T>,
        timer: &mut Option<Pin<Box<Sleep>>>,
    ) -> Poll<Option<T>> {
        loop {
            let mut st = self.inner.state.lock();
            if let Some(t) = ticket.ticket.take() {
                // Woken or not, this look decides.
                st.idle.unregister(t);
            }
            let wakers = st.promote_ready();
            let State { items, metrics, .. } = &mut *st;
            let item = items.pop(|item| {
                if let Some(m) = metrics {
                    m.get(item);
                }
            });
            if item.is_some() || st.shutting_down {
                // Promoted items beyond this one are for other workers, and
                // one woken for nothing looks again and waits.
                drop(st);
                wakers.wake();
                return Poll::Ready(item);
            }
            ticket.ticket = Some(st.idle.register(cx.waker()));
            let next_delayed = st.waiting.next_ready_at();
            drop(st);
            wakers.wake();
            let Some(at) = next_delayed else {
                *timer = None;
                return Poll::Pending;
            };
            let sleep = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
            if sleep.deadline() != at {
                sleep.as_mut().reset(at);
            }
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            // The earliest delayed item is due: look again.
        }
    }

    /// Marks `item` as no longer processed; if it was added meanwhile, it is
    /// queued again.
    pub fn done(&self, item: &T) {
        let hash = self.inner.hasher.hash(item);
        let mut st = self.inner.state.lock();
        if let Some(m) = &mut st.metrics {
            m.done(item);
        }
        let (done, freed) = st.items.done(item, hash);
        match done {
            Done::Requeued => {
                let waker = st.idle.take_one();
                drop(st);
                if let Some(waker) = waker {
                    waker.wake();
                }
            }
            Done::Idle if st.drain => {
                drop(st);
                self.inner.drained.notify_waiters();
            }
            Done::Idle | Done::Busy => drop(st),
        }
        // Dropped without the lock held.
        drop(freed);
    }

    /// Number of items waiting to be handed out (not those being processed,
    /// nor delayed ones whose time has not come).
    pub fn len(&self) -> usize {
        let mut st = self.inner.state.lock();
        let wakers = st.promote_ready();
        let len = st.items.len();
        drop(st);
        wakers.wake();
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
        let wakers = {
            let mut st = self.inner.state.lock();
            st.shutting_down = true;
            st.drain = false;
            st.waiting.clear();
            st.idle.take_all()
        };
        wakers.wake();
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
        let wakers = {
            let mut st = self.inner.state.lock();
            st.shutting_down = true;
            st.drain = true;
            st.waiting.clear();
            st.idle.take_all()
        };
        wakers.wake();
        loop {
            let drained = self.inner.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            {
                let st = self.inner.state.lock();
                if st.items.processing() == 0 || !st.drain {
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
