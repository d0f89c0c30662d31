//! What a handler's registration tells (client-go's
//! `ResourceEventHandlerRegistration`), how a handler is added
//! ([`HandlerOptions`]), and waiting for caches to sync ([`HasSynced`],
//! [`wait_for_cache_sync`]).

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::processor::ListenerSync;

/// Something that can tell whether it has caught up with the apiserver
/// (client-go `InformerSynced`): informers and handler registrations.
#[doc(alias = "InformerSynced")]
pub trait HasSynced {
    /// True once the initial list has been fully delivered (client-go's
    /// `InformerSynced` function).
    fn has_synced(&self) -> bool;

    /// Why it can never sync any more, if so: an informer stopped by a
    /// panic in code it ran ([`OnPanic`](super::OnPanic)). `None` by default.
    fn failure(&self) -> Option<String> {
        None
    }
}

/// Waits until everything in `synced` has synced, polling every 100 ms as
/// client-go's `WaitForCacheSync`; false if `cancel` fired first or one of
/// them failed for good ([`HasSynced::failure`]). Bound the wait with
/// [`tokio::time::timeout`] if needed.
///
/// # Cancel safety
/// Cancel safe: it only reads.
#[doc(alias = "WaitForCacheSync")]
pub async fn wait_for_cache_sync(cancel: &CancellationToken, synced: &[&(dyn HasSynced + Sync)]) -> bool {
    let mut poll = tokio::time::interval(Duration::from_millis(100));
    loop {
        if synced.iter().all(|s| s.has_synced()) {
            return true;
        }
        if synced.iter().any(|s| s.failure().is_some()) {
            return false;
        }
        tokio::select! {
            biased;
            () = cancel.cancelled() => return false,
            _ = poll.tick() => {}
        }
    }
}

/// A handler's registration (client-go `ResourceEventHandlerRegistration`):
/// tells whether the handler has seen the initial list, and removes it.
#[doc(alias = "ResourceEventHandlerRegistration")]
#[derive(Debug, Clone)]
pub struct HandlerRegistration {
    pub(super) id: u64,
    pub(super) sync: Arc<ListenerSync>,
}

impl HasSynced for HandlerRegistration {
    /// True once the informer synced and this handler was called for every
    /// object of the initial list (or, if added late, the replayed ones).
    fn has_synced(&self) -> bool {
        self.sync.has_synced()
    }
}

impl HandlerRegistration {
    /// True once the informer synced and this handler was called for every
    /// object of the initial list (or, if added late, the replayed ones); the
    /// same as [`HasSynced::has_synced`], without importing the trait.
    pub fn has_synced(&self) -> bool {
        self.sync.has_synced()
    }

    /// Notifications queued for this handler and not yet handled: its
    /// backlog. A handler that cannot keep up lets it grow without bound
    /// (it never holds up the informer or other handlers).
    pub fn pending(&self) -> usize {
        self.sync.pending()
    }
}

/// How to add a handler ([`SharedIndexInformer::add_event_handler_with_options`](super::SharedIndexInformer::add_event_handler_with_options),
/// client-go `HandlerOptions`).
#[derive(Debug, Clone, Default)]
pub struct HandlerOptions {
    pub(super) resync_period: Option<Duration>,
    pub(super) span: Option<tracing::Span>,
}

impl HandlerOptions {
    /// The informer's default resync period, no span.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also deliver every cached object as an update every `period`
    /// (zero: never), instead of the informer's default period.
    #[must_use]
    pub fn resync_period(mut self, period: Duration) -> Self {
        self.resync_period = Some(period);
        self
    }

    /// Runs the handler's calls in `span` (client-go's per-handler
    /// `Logger`): what they log carries its fields, e.g.
    /// `tracing::info_span!("handler", controller = "web")`.
    #[must_use]
    pub fn span(mut self, span: tracing::Span) -> Self {
        self.span = Some(span);
        self
    }
}
