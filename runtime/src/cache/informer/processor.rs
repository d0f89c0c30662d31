//! Fan-out of notifications to handlers, as client-go's
//! `sharedProcessor` and `processorListener`.
//!
//! Every handler gets a [`Mailbox`] (a growing ring buffer, as client-go's
//! `processorListener`) and a task that drains it into the handler:
//! distributing never waits, so neither the informer nor another handler is
//! held up by a slow one.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::runtime::RuntimeFlavor;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::handler::ResourceEventHandler;
use crate::cache::delta_fifo::DeltaObject;

/// Shortest per-handler resync period (client-go `minimumResyncPeriod`).
pub(crate) const MINIMUM_RESYNC_PERIOD: Duration = Duration::from_secs(1);

pub(crate) enum Notification<K> {
    Add(Arc<K>, bool),
    Update(Arc<K>, Arc<K>),
    Delete(DeltaObject<K>),
}

impl<K> Clone for Notification<K> {
    fn clone(&self) -> Self {
        match self {
            Notification::Add(o, i) => Notification::Add(Arc::clone(o), *i),
            Notification::Update(o, n) => Notification::Update(Arc::clone(o), Arc::clone(n)),
            Notification::Delete(d) => Notification::Delete(d.clone()),
        }
    }
}

/// What a registration needs to answer `has_synced` and `pending`.
#[derive(Debug)]
pub(crate) struct ListenerSync {
    /// Initial-list notifications queued but not yet handled.
    pending_initial: AtomicUsize,
    /// Notifications queued but not yet handled.
    pending: AtomicUsize,
    /// The informer's own sync flag.
    pub(crate) informer_synced: Arc<AtomicBool>,
}

impl ListenerSync {
    pub(crate) fn pending(&self) -> usize {
        self.pending.load(Ordering::Acquire)
    }

    pub(crate) fn has_synced(&self) -> bool {
        // Notifications are counted before the informer flag flips, so
        // reading the flag first cannot miss pending ones.
        self.informer_synced.load(Ordering::Acquire) && self.pending_initial.load(Ordering::Acquire) == 0
    }
}

/// An unbounded single-consumer queue: the producer never waits, the
/// consumer takes everything queued at once (two buffers swapped, so a
/// steady stream allocates nothing).
struct Mailbox<T> {
    state: Mutex<MailboxState<T>>,
    ready: Notify,
}

struct MailboxState<T> {
    buf: VecDeque<T>,
    /// The consumer found the box empty and waits: only then is a wake-up
    /// worth its cost.
    waiting: bool,
    closed: bool,
}

impl<T> Mailbox<T> {
    fn new() -> Self {
        Mailbox {
            state: Mutex::new(MailboxState { buf: VecDeque::new(), waiting: false, closed: false }),
            ready: Notify::new(),
        }
    }

    fn send(&self, item: T) {
        let mut st = self.state.lock();
        if st.closed {
            return;
        }
        st.buf.push_back(item);
        let wake = std::mem::take(&mut st.waiting);
        drop(st);
        if wake {
            self.ready.notify_one();
        }
    }

    /// No more items; the consumer drains what is queued, then stops.
    fn close(&self) {
        self.state.lock().closed = true;
        self.ready.notify_one();
    }

    /// Moves everything queued into `out` (empty on entry); false once
    /// closed and drained.
    ///
    /// # Cancel safety
    /// Cancel safe: items move only in a synchronous step.
    async fn recv_all(&self, out: &mut VecDeque<T>) -> bool {
        loop {
            {
                let mut st = self.state.lock();
                if !st.buf.is_empty() {
                    std::mem::swap(out, &mut st.buf);
                    return true;
                }
                if st.closed {
                    return false;
                }
                st.waiting = true;
            }
            // A send between the unlock and here leaves a permit, so this
            // returns at once.
            self.ready.notified().await;
        }
    }
}

struct Listener<K> {
    id: u64,
    mailbox: Arc<Mailbox<Notification<K>>>,
    /// Whether the delivery task was spawned.
    delivering: bool,
    handler: Arc<dyn ResourceEventHandler<K>>,
    /// Entered around the handler's calls (client-go's per-handler logger).
    span: tracing::Span,
    requested_resync: Duration,
    resync_period: Duration,
    next_resync: Instant,
    syncing: bool,
    sync: Arc<ListenerSync>,
}

impl<K> Listener<K> {
    fn send(&self, n: Notification<K>) {
        if let Notification::Add(_, true) = n {
            self.sync.pending_initial.fetch_add(1, Ordering::AcqRel);
        }
        self.sync.pending.fetch_add(1, Ordering::AcqRel);
        self.mailbox.send(n);
    }
}

impl<K> Drop for Listener<K> {
    fn drop(&mut self) {
        self.mailbox.close();
    }
}

/// client-go `determineResyncPeriod`.
fn effective_resync(desired: Duration, check: Duration) -> Duration {
    if desired.is_zero() || check.is_zero() { Duration::ZERO } else { desired.max(check) }
}

pub(crate) struct Processor<K> {
    listeners: Vec<Listener<K>>,
    /// Set while running: new listeners start delivering at once.
    running: Option<CancellationToken>,
    next_id: AtomicU64,
}

impl<K: Send + Sync + 'static> Processor<K> {
    pub(crate) fn new() -> Self {
        Processor { listeners: Vec::new(), running: None, next_id: AtomicU64::new(1) }
    }

    pub(crate) fn add_listener(
        &mut self,
        handler: Arc<dyn ResourceEventHandler<K>>,
        span: tracing::Span,
        requested_resync: Duration,
        resync_period: Duration,
        informer_synced: Arc<AtomicBool>,
    ) -> (u64, Arc<ListenerSync>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let sync = Arc::new(ListenerSync {
            pending_initial: AtomicUsize::new(0),
            pending: AtomicUsize::new(0),
            informer_synced,
        });
        let mut listener = Listener {
            id,
            mailbox: Arc::new(Mailbox::new()),
            delivering: false,
            handler,
            span,
            requested_resync,
            resync_period,
            next_resync: Instant::now() + resync_period,
            syncing: false,
            sync: Arc::clone(&sync),
        };
        if let Some(cancel) = &self.running {
            spawn_delivery(&mut listener, cancel.clone());
        }
        self.listeners.push(listener);
        (id, sync)
    }

    /// Queues `n` for the listener `id` only (replays to a late handler).
    pub(crate) fn send_to(&self, id: u64, n: Notification<K>) {
        if let Some(l) = self.listeners.iter().find(|l| l.id == id) {
            l.send(n);
        }
    }

    pub(crate) fn remove_listener(&mut self, id: u64) -> bool {
        let before = self.listeners.len();
        // Dropping the listener closes its mailbox: the delivery task drains
        // it and ends.
        self.listeners.retain(|l| l.id != id);
        self.listeners.len() != before
    }

    pub(crate) fn len(&self) -> usize {
        self.listeners.len()
    }

    /// Sends `n` to every listener, or with `sync` only to those whose
    /// resync is due.
    pub(crate) fn distribute(&self, n: Notification<K>, sync: bool) {
        let mut targets = self.listeners.iter().filter(|l| !sync || l.syncing).peekable();
        while let Some(l) = targets.next() {
            if targets.peek().is_none() {
                l.send(n);
                return;
            }
            l.send(n.clone());
        }
    }

    /// Marks the listeners whose resync is due; true if there is any
    /// (client-go `sharedProcessor.shouldResync`).
    pub(crate) fn should_resync(&mut self, now: Instant) -> bool {
        let mut any = false;
        for l in &mut self.listeners {
            l.syncing = !l.resync_period.is_zero() && now >= l.next_resync;
            if l.syncing {
                any = true;
                l.next_resync = now + l.resync_period;
            }
        }
        any
    }

    pub(crate) fn resync_check_period_changed(&mut self, check: Duration) {
        for l in &mut self.listeners {
            l.resync_period = effective_resync(l.requested_resync, check);
        }
    }

    /// Starts every listener's delivery task; they stop with `cancel`.
    pub(crate) fn start(&mut self, cancel: CancellationToken) {
        for l in &mut self.listeners {
            spawn_delivery(l, cancel.clone());
        }
        self.running = Some(cancel);
    }

    /// Stops delivering; queued notifications are dropped (as client-go).
    pub(crate) fn stop(&mut self) {
        if let Some(cancel) = self.running.take() {
            cancel.cancel();
        }
        self.listeners.clear();
    }
}

fn spawn_delivery<K: Send + Sync + 'static>(l: &mut Listener<K>, cancel: CancellationToken) {
    if std::mem::replace(&mut l.delivering, true) {
        return;
    }
    tokio::spawn(deliver(Arc::clone(&l.mailbox), Arc::clone(&l.handler), l.span.clone(), Arc::clone(&l.sync), cancel));
}

async fn deliver<K: Send + Sync + 'static>(
    mailbox: Arc<Mailbox<Notification<K>>>,
    handler: Arc<dyn ResourceEventHandler<K>>,
    span: tracing::Span,
    sync: Arc<ListenerSync>,
    cancel: CancellationToken,
) {
    // Handlers are plain functions that may block or run long. On a
    // multi-thread runtime the batch runs under `block_in_place`, which hands
    // this worker's other queued tasks to another thread first: a stuck
    // handler then holds up only its own notifications. (A current-thread
    // runtime has nowhere to move them; there a blocking handler blocks all.)
    let multi_thread = tokio::runtime::Handle::current().runtime_flavor() == RuntimeFlavor::MultiThread;
    let mut batch = VecDeque::new();
    let cancelled = cancel.cancelled();
    tokio::pin!(cancelled);
    loop {
        let open = tokio::select! {
            biased;
            () = &mut cancelled => return,
            open = mailbox.recv_all(&mut batch) => open,
        };
        if !open {
            return;
        }
        // Entered once per batch, not per call: a disabled span costs nothing.
        let _entered = span.enter();
        if multi_thread {
            tokio::task::block_in_place(|| dispatch(&*handler, &sync, &mut batch));
        } else {
            dispatch(&*handler, &sync, &mut batch);
        }
    }
}

fn dispatch<K: 'static>(
    handler: &dyn ResourceEventHandler<K>,
    sync: &ListenerSync,
    batch: &mut VecDeque<Notification<K>>,
) {
    // A panicking handler would end this task and leave its mailbox growing
    // forever: log it, drop that notification and go on with the rest. One
    // unwind guard per batch, not per call.
    while !batch.is_empty() {
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
            while let Some(notification) = batch.pop_front() {
                deliver_one(handler, sync, notification);
            }
        }));
        if outcome.is_err() {
            tracing::error!("resource event handler panicked; notification dropped");
        }
    }
}

fn deliver_one<K: 'static>(handler: &dyn ResourceEventHandler<K>, sync: &ListenerSync, n: Notification<K>) {
    /// Counts a notification as handled even if the handler panics, so
    /// `has_synced` does not wait forever.
    struct Handled<'a>(&'a AtomicUsize);
    impl Drop for Handled<'_> {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::AcqRel);
        }
    }
    let _handled = Handled(&sync.pending);
    match n {
        Notification::Add(obj, initial) => {
            let _handled = initial.then(|| Handled(&sync.pending_initial));
            handler.on_add(&obj, initial);
        }
        Notification::Update(old, new) => handler.on_update(&old, &new),
        Notification::Delete(obj) => handler.on_delete(&obj),
    }
}
