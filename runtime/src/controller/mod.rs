//! Controllers on the shared informers: reconcile loops, what enqueues
//! them, and the writes controllers make (controller-runtime's builder,
//! `controllerutil` and manager; kube-runtime's `Controller` and
//! `finalizer`).
//!
//! - [`Controller`]: one primary kind, reconciled key by key. It
//!   [`owns`](Controller::owns) kinds (a change of an object whose
//!   controller owner reference names a primary object enqueues that
//!   object) and [`watches`](Controller::watches) any kind through a
//!   mapper to primary keys; [`Predicate`]s drop updates that need no
//!   reconcile (a status written by the controller itself). The reconciler
//!   is an async function of a [`Request`] and a context, returning the
//!   next [`Action`]: done, or look again after a while. Failures go
//!   through an error policy (by default the queue's per-key exponential
//!   backoff, 5 ms doubling to 1000 s, as client-go's controllers).
//! - [`Manager`]: runs several controllers on one client and one
//!   [`SharedInformerFactory`](crate::cache::SharedInformerFactory), so
//!   they share caches; optional leader election (controllers run only
//!   while leading and are stopped before the Lease is handed back);
//!   `/metrics`, `/healthz` and `/readyz` on one address; SIGTERM and
//!   ctrl-c stop it gracefully. Start here for an operator.
//! - Writes: [`finalizer`] (add before acting, clean up on deletion, then
//!   remove; all by patches, so never a conflict),
//!   [`set_controller_reference`] and
//!   [`OwnerReference::controller_of`](crate::object::OwnerReference::controller_of),
//!   [`retry_on_conflict`], [`create_or_update`], [`get_or_create`], and
//!   status conditions ([`set_status_condition`](crate::object::set_status_condition)).
//!
//! # Deleted objects
//! A primary object that is gone is still reconciled: its key comes with
//! no object ([`Request::object`] is `None`), as controller-runtime's
//! `Reconcile` gets a `NotFound` for it. That suits cleanup that only
//! needs the key, or none at all (objects it owned are removed by the
//! garbage collector through their owner references). When cleanup needs
//! the object (outside the cluster, or a cluster without a garbage
//! collector), put a finalizer on it with [`finalizer`]: the reconcile of
//! an object being deleted then runs the cleanup and removes the
//! finalizer, and the apiserver keeps the object until it is removed.
//!
//! # Guarantees
//! A key is never reconciled twice at once; at most
//! [`concurrency`](Controller::concurrency) keys are reconciled at a time.
//! No reconcile starts before every cache the controller reads has synced.
//! On shutdown no new key is taken, and running reconciles get
//! [`shutdown_deadline`](Controller::shutdown_deadline) to finish before
//! they are aborted. A reconcile that panics is counted and retried as a
//! failure; the controller goes on.
//!
//! # Metrics
//! With [`Metrics`] (a [`Manager`] serving metrics hands them to its
//! controllers): controller-runtime's `controller_runtime_reconcile_total`
//! (`controller`, `result` of `success`, `error`, `requeue`,
//! `requeue_after`), `controller_runtime_reconcile_errors_total`,
//! `controller_runtime_reconcile_panics_total`,
//! `controller_runtime_reconcile_time_seconds`,
//! `controller_runtime_max_concurrent_reconciles`,
//! `controller_runtime_active_workers`, and client-go's `workqueue_*`
//! metrics of each controller's queue, named after the controller.

mod builder;
mod finalizer;
mod handlers;
mod manager;
mod metrics;
mod predicate;
mod request;
#[cfg(all(test, feature = "fake"))]
mod tests;
mod workers;
mod write;

pub use builder::Controller;
pub use finalizer::{FinalizerError, FinalizerEvent, finalizer};
pub use manager::{Manager, ManagerBuilder, shutdown_signal};
pub use metrics::Metrics;
pub use predicate::Predicate;
pub use request::{Action, Request};
pub use write::{
    Operation, OwnerReferenceError, RetryBackoff, create_or_update, get_or_create, retry_on_conflict,
    retry_on_conflict_with, set_controller_reference,
};

/// The Prometheus crate the metrics are made with: register collectors of
/// your own in [`Metrics::registry`] with the same version.
pub use prometheus;

/// What a reconciler may fail with: any error, boxed.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Errors of controllers and managers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A cache the controller reads can never sync (its informer failed).
    #[error("controller {controller}: the cache of {resource} failed: {failure}")]
    CacheFailed {
        /// The controller's name.
        controller: String,
        /// The resource whose informer failed.
        resource: String,
        /// Why.
        failure: String,
    },
    /// An event handler could not be added to an informer.
    #[error("controller {controller}: adding an event handler")]
    Handler {
        /// The controller's name.
        controller: String,
        /// The informer's error.
        #[source]
        source: crate::cache::informer::Error,
    },
    /// Metrics could not be registered (a name registered twice).
    #[error("registering metrics")]
    Metrics(#[source] prometheus::Error),
    /// The metrics and probes address could not be bound.
    #[error("serving metrics and probes on {addr}")]
    Serve {
        /// The address.
        addr: std::net::SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The leader election is misconfigured.
    #[error("leader election")]
    LeaderElection(#[source] crate::leaderelection::Error),
    /// Leadership was lost while controllers ran; they were stopped. The
    /// process should exit (and restart) as controller-runtime's managers do.
    #[error("leader election lost")]
    LeadershipLost,
    /// A controller's task panicked.
    #[error("controller {controller} panicked: {message}")]
    Panicked {
        /// The controller's name.
        controller: String,
        /// The panic.
        message: String,
    },
    /// A controller stopped with an error.
    #[error("controller {controller}")]
    Controller {
        /// The controller's name.
        controller: String,
        /// Why.
        #[source]
        source: Box<Error>,
    },
}
