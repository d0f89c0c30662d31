//! Taking keys off a controller's queue and reconciling them, at most N at
//! a time, until shutdown.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::metrics::{ControllerMetrics, Outcome};
use super::request::Next;
use super::{Action, BoxError, Request};
use crate::ErrorChain;
use crate::cache::Store;
use crate::workqueue::RateLimitingQueue;

/// What to do after a failed reconcile: given the key, the error and the
/// backoffs it had in a row.
pub(super) type ErrorPolicy = Arc<dyn Fn(&str, &(dyn std::error::Error + 'static), u32) -> Action + Send + Sync>;

pub(super) struct Workers<K, C, F> {
    pub(super) name: String,
    pub(super) queue: RateLimitingQueue<String>,
    pub(super) store: Store<K>,
    pub(super) reconcile: Arc<F>,
    pub(super) context: Arc<C>,
    pub(super) error_policy: ErrorPolicy,
    pub(super) metrics: Option<ControllerMetrics>,
}

impl<K, C, F, Fut, E> Workers<K, C, F>
where
    K: Send + Sync + 'static,
    C: Send + Sync + 'static,
    F: Fn(Request<K>, Arc<C>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: Into<BoxError> + 'static,
{
    /// Reconciles keys, `concurrency` at a time, until `shutdown`; then
    /// shuts the queue down and gives running reconciles `deadline`.
    pub(super) async fn run(self: Arc<Self>, concurrency: usize, deadline: Duration, shutdown: impl Future<Output = ()>) {
        let permits = Arc::new(Semaphore::new(concurrency));
        let mut running = JoinSet::new();
        tokio::pin!(shutdown);
        loop {
            // A permit first, then a key: a key taken is a key worked on.
            let permit = tokio::select! {
                biased;
                () = &mut shutdown => break,
                permit = permits.clone().acquire_owned() => match permit {
                    Ok(permit) => permit,
                    Err(_) => break, // never closed
                },
            };
            let key = tokio::select! {
                biased;
                () = &mut shutdown => break,
                key = self.queue.get() => match key {
                    Some(key) => key,
                    None => break,
                },
            };
            let workers = self.clone();
            running.spawn(async move {
                workers.reconcile_one(key).await;
                drop(permit);
            });
            while running.try_join_next().is_some() {}
        }
        self.queue.shut_down();
        let finished = tokio::time::timeout(deadline, async { while running.join_next().await.is_some() {} }).await;
        if finished.is_err() {
            tracing::warn!(controller = %self.name, aborted = running.len(), ?deadline, "reconciles still running at the shutdown deadline, aborting them");
            running.shutdown().await;
        }
    }

    /// One reconcile of `key`, then what the answer (or the error policy)
    /// says to do with the key.
    async fn reconcile_one(&self, key: String) {
        let active = self.metrics.as_ref().map(|m| ActiveGuard::new(&m.active));
        let request = Request::new(key.clone(), self.store.get_by_key(&key));
        let started = Instant::now();
        let reconcile = self.reconcile.clone();
        let context = self.context.clone();
        // The reconciler is called inside the guarded future: a panic while
        // it makes its future is caught as well as one while it runs.
        let result = AssertUnwindSafe(async move { reconcile(request, context).await }).catch_unwind().await;
        let (action, outcome) = match result {
            Ok(Ok(action)) => {
                let outcome = match action.0 {
                    Next::Done => Outcome::Success,
                    Next::RequeueAfter(_) => Outcome::RequeueAfter,
                    Next::Backoff => Outcome::Requeue,
                };
                (action, outcome)
            }
            Ok(Err(error)) => {
                let error: BoxError = error.into();
                let retries = self.queue.num_requeues(&key);
                tracing::error!(controller = %self.name, %key, retries, error = %ErrorChain(&*error), "reconcile failed");
                ((self.error_policy)(&key, &*error, retries), Outcome::Error)
            }
            Err(panic) => {
                let message = crate::cache::informer::panic_message(&*panic);
                tracing::error!(controller = %self.name, %key, panic = %message, "reconcile panicked");
                (Action::backoff(), Outcome::Panic)
            }
        };
        if let Some(metrics) = &self.metrics {
            metrics.observe(outcome, started.elapsed());
        }
        match action.0 {
            Next::Done => self.queue.forget(&key),
            Next::RequeueAfter(delay) => {
                self.queue.forget(&key);
                self.queue.add_after(key.clone(), delay);
            }
            Next::Backoff => self.queue.add_rate_limited(key.clone()),
        }
        self.queue.done(&key);
        drop(active);
    }
}

/// Counts a running reconcile in `controller_runtime_active_workers`, also
/// when it is aborted.
struct ActiveGuard(prometheus::IntGauge);

impl ActiveGuard {
    fn new(gauge: &prometheus::IntGauge) -> Self {
        gauge.inc();
        ActiveGuard(gauge.clone())
    }
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}
