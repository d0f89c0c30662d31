//! What happens when code an informer runs panics: a transform, an index
//! or key function, the watch error handler.
//!
//! They run in the informer's own task. Unwinding it silently would leave
//! the informer looking alive, `has_synced` frozen and the cache going
//! stale, with nobody told. Instead the panic is caught, logged, and the
//! informer stops, marked failed with the panic's message
//! ([`SharedIndexInformer::failure`](super::SharedIndexInformer::failure)),
//! which [`wait_for_cache_sync`](super::wait_for_cache_sync) and the
//! factory's [`wait_for_cache_sync_within`](crate::cache::SharedInformerFactory::wait_for_cache_sync_within)
//! and [`failures`](crate::cache::SharedInformerFactory::failures) report.
//! [`OnPanic::Abort`] is client-go's choice instead (`HandleCrash`): the
//! whole process ends, which a Deployment then restarts.
//!
//! Resource event handlers run in tasks of their own; a panicking handler
//! loses only the notification it was given (logged) and goes on.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;

/// What an informer does when code it runs panics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnPanic {
    /// Stop this informer and mark it failed with the panic's message
    /// (the default): the rest of the program goes on and can report it.
    #[default]
    Fail,
    /// Log the panic and abort the process, as client-go does by default.
    Abort,
}

/// Runs `work`, turning a panic in it into its message; aborts the process
/// instead if `on_panic` says so.
pub(super) async fn catch<F: Future>(name: &str, on_panic: OnPanic, work: F) -> Result<F::Output, String> {
    match AssertUnwindSafe(work).catch_unwind().await {
        Ok(out) => Ok(out),
        Err(payload) => {
            let message = panic_message(&*payload);
            tracing::error!(informer = %name, panic = %message, "code run by the informer panicked; the informer stopped");
            if on_panic == OnPanic::Abort {
                std::process::abort();
            }
            Err(message)
        }
    }
}

/// The text a panic was raised with.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(s), _) => (*s).to_owned(),
        (None, Some(s)) => s.clone(),
        (None, None) => "a panic without a message".to_owned(),
    }
}
