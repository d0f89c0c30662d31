//! The fan-out both event broadcasters stand on (client-go's
//! `watch.Broadcaster` in `DropIfChannelFull` mode): bounded queues per
//! watcher, events that do not fit dropped, watcher tasks counted so that
//! a broadcaster can wait for them to finish.
//!
//! [`crate::record`] fans out core/v1 events, [`crate::events`]
//! events.k8s.io/v1 ones; the queueing, shutdown and draining rules are
//! the same and live here once.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

struct Slot<T> {
    id: u64,
    tx: mpsc::Sender<T>,
}

/// Watchers of events of type `T` and the broadcaster's shutdown state.
pub(crate) struct Fanout<T> {
    queue_length: usize,
    watchers: Mutex<Vec<Slot<T>>>,
    next_id: AtomicU64,
    shut_down: AtomicBool,
    /// Flips to `true` on shutdown; wakes sink writers sleeping between
    /// retries.
    shutdown_tx: watch::Sender<bool>,
    /// Watcher tasks still running, for [`Fanout::drain`].
    running: Arc<watch::Sender<usize>>,
}

/// Counts a watcher task as running until it ends, however it ends. It
/// holds only the counter: a task keeping the whole fan-out alive would
/// keep its own channel open forever once every broadcaster is dropped.
pub(crate) struct RunningGuard(Arc<watch::Sender<usize>>);

impl Drop for RunningGuard {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// What a [`WatcherHandle`] needs of its broadcaster, whatever it carries.
pub(crate) trait Unsubscribe: Send + Sync {
    fn unsubscribe(&self, id: u64);
}

impl<T: Send> Unsubscribe for Fanout<T> {
    fn unsubscribe(&self, id: u64) {
        self.watchers.lock().retain(|s| s.id != id);
    }
}

/// The runtime watcher tasks are spawned on.
pub(crate) fn current_runtime() -> Result<tokio::runtime::Handle, tokio::runtime::TryCurrentError> {
    tokio::runtime::Handle::try_current()
}

impl<T: Clone + Send + 'static> Fanout<T> {
    /// No watchers yet; each watcher queues up to `queue_length` events.
    pub(crate) fn new(queue_length: usize) -> Self {
        Fanout {
            queue_length: queue_length.max(1),
            watchers: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(0),
            shut_down: AtomicBool::new(false),
            shutdown_tx: watch::channel(false).0,
            running: Arc::new(watch::channel(0).0),
        }
    }

    /// Watchers currently subscribed.
    pub(crate) fn watcher_count(&self) -> usize {
        self.watchers.lock().len()
    }

    /// Whether [`shutdown`](Self::shutdown) or [`drain`](Self::drain) ran.
    pub(crate) fn is_shut_down(&self) -> bool {
        self.shut_down.load(Ordering::Acquire)
    }

    /// A new watcher's id and queue. After shutdown the queue is closed
    /// at once.
    pub(crate) fn subscribe(&self) -> (u64, mpsc::Receiver<T>) {
        let (tx, rx) = mpsc::channel(self.queue_length);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        if !self.is_shut_down() {
            self.watchers.lock().push(Slot { id, tx });
        }
        (id, rx)
    }

    /// Counts a watcher task as running while the guard lives.
    pub(crate) fn running_guard(&self) -> RunningGuard {
        self.running.send_modify(|n| *n += 1);
        RunningGuard(self.running.clone())
    }

    /// Flips to `true` on shutdown.
    pub(crate) fn shutdown_signal(&self) -> watch::Receiver<bool> {
        self.shutdown_tx.subscribe()
    }

    /// Stops all watchers: queued events are still delivered, retry sleeps
    /// end at once, and later events are discarded.
    pub(crate) fn shutdown(&self) {
        self.shut_down.store(true, Ordering::Release);
        self.watchers.lock().clear();
        self.shutdown_tx.send_replace(true);
    }

    /// Stops accepting events and waits until every watcher task ended.
    pub(crate) async fn drain(&self) {
        self.shut_down.store(true, Ordering::Release);
        self.watchers.lock().clear();
        let mut running = self.running.subscribe();
        // The sender lives in `self`, so this cannot fail.
        let _ = running.wait_for(|n| *n == 0).await;
    }

    /// Hands `event` to every watcher without waiting (`ActionOrDrop`);
    /// `describe` names an event dropped because a queue is full.
    pub(crate) fn action_or_drop(&self, event: T, describe: impl Fn(&T) -> String) {
        if self.is_shut_down() {
            return;
        }
        let mut watchers = self.watchers.lock();
        watchers.retain(|slot| match slot.tx.try_send(event.clone()) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(e)) => {
                tracing::warn!(event = %describe(&e), "event queue full, dropping event");
                true
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        });
    }
}

/// A watcher started by an event broadcaster: stop it, or wait for its
/// task.
pub struct WatcherHandle {
    id: u64,
    /// Weak: a handle must not keep a dropped broadcaster's channels open.
    fanout: Weak<dyn Unsubscribe>,
    task: JoinHandle<()>,
}

impl fmt::Debug for WatcherHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatcherHandle").field("id", &self.id).finish_non_exhaustive()
    }
}

impl WatcherHandle {
    pub(crate) fn new<T: Clone + Send + 'static>(id: u64, fanout: &Arc<Fanout<T>>, task: JoinHandle<()>) -> Self {
        let fanout: Arc<dyn Unsubscribe> = fanout.clone();
        WatcherHandle { id, fanout: Arc::downgrade(&fanout), task }
    }

    /// Unsubscribes the watcher. Events already queued for it are still
    /// handled; use [`join`](Self::join) to wait for that.
    pub fn stop(&self) {
        if let Some(fanout) = self.fanout.upgrade() {
            fanout.unsubscribe(self.id);
        }
    }

    /// Waits until the watcher's task has finished (after [`stop`](Self::stop)
    /// or the broadcaster's `shutdown`).
    ///
    /// # Cancel safety
    /// Cancel safe: dropping the future leaves the task running.
    pub async fn join(self) {
        // A panic in a user closure ends only that watcher; nothing to report.
        let _ = self.task.await;
    }
}
