//! Adding items after a delay, as client-go's `DelayingInterface`.

use std::fmt;
use std::ops::Deref;
use std::time::Duration;

use tokio::time::Instant;

use super::QueueItem;
use super::idle::Wakers;
use super::metrics::MetricsProvider;
use super::queue::Queue;

/// Stands in for delays past what `Instant` can represent (as tokio does).
const FOREVER: Duration = Duration::from_secs(86_400 * 365 * 30);

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
        let wakers = if delay.is_zero() {
            let mut wakers = Wakers::default();
            let hash = inner.hasher.hash(&item);
            wakers.push(st.add(item, hash));
            wakers
        } else {
            let now = Instant::now();
            // A delay too long to represent is as good as forever.
            let at = now.checked_add(delay).unwrap_or_else(|| now + FOREVER);
            if st.waiting.insert(item, at) {
                // A new earliest time: waiting workers must look at it.
                st.idle.take_all()
            } else {
                Wakers::default()
            }
        };
        drop(st);
        wakers.wake();
    }

    /// Number of items added with a delay whose time has not come yet.
    pub fn len_waiting(&self) -> usize {
        // Due items are moved first so they are not counted twice.
        let _ = self.queue.len();
        self.queue.inner.state.lock().waiting.len()
    }
}
