//! Leader election (client-go's `tools/leaderelection`) on a
//! coordination.k8s.io/v1 `Lease`.
//!
//! Run several replicas of a controller and let exactly one of them work at
//! a time: each replica runs a [`LeaderElector`] on the same [`LeaseLock`]
//! with its own identity; the elected one gets `on_started_leading` with a
//! [`LeadershipToken`] that is cancelled when leadership ends.
//!
//! ```no_run
//! # async fn demo(client: k8s_client_runtime::Client) -> Result<(), k8s_client_runtime::leaderelection::Error> {
//! use k8s_client_runtime::leaderelection::*;
//! let lock = LeaseLock::new(client, "kube-system", "my-controller", "pod-1");
//! let config = LeaderElectionConfig {
//!     release_on_cancel: true,
//!     callbacks: LeaderCallbacks::new().on_started_leading(|token: LeadershipToken| async move {
//!         // work until token.cancelled() resolves
//!         token.cancelled().await;
//!     }),
//!     ..Default::default()
//! };
//! let elector = LeaderElector::new(config, lock)?;
//! elector.run(async { let _ = tokio::signal::ctrl_c().await; }).await;
//! # Ok(()) }
//! ```
//!
//! Rules, as in client-go: a lease is taken over when it has not changed
//! for `lease_duration` on the *local* clock (so skew between machines
//! does not matter); the leader renews every `retry_period` and gives up
//! when it could not renew within `renew_deadline`; writes use the
//! resourceVersion read last, so concurrent candidates see a conflict and
//! re-read. Leader election is not fencing: a leader that lost its lease
//! may briefly still be working, so keep `renew_deadline` well below
//! `lease_duration`.
//!
//! Implement [`ResourceLock`] to elect over something else (tests use an
//! in-memory lock). [`LeaseLock`] holds the Lease as a
//! [`DynamicObject`](crate::dynamic::DynamicObject) (the runtime does not
//! depend on the generated crate); [`lease_spec_to_record`] and
//! [`record_to_lease_spec`] convert between its `spec` and the
//! [`LeaderElectionRecord`].

mod elector;
mod lock;
#[cfg(test)]
mod tests;

pub use elector::{JITTER_FACTOR, LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeadershipToken};
pub use lock::{LeaderElectionRecord, LeaseLock, ResourceLock, lease_spec_to_record, record_to_lease_spec};

/// Errors of the `leaderelection` module.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing the lock object failed.
    #[error("leader election lock")]
    Rest(#[source] crate::rest::Error),
    /// `update` was called before the lock object was read or created.
    #[error("leader election lock not initialized: get or create it first")]
    LockNotInitialized,
    /// This candidate still believes it leads but has not renewed in time
    /// (from [`LeaderElector::check`]).
    #[error("leader election lost: lease {lock} not renewed for {since:?}")]
    RenewalOverdue {
        /// The lock, as [`ResourceLock::describe`] names it.
        lock: String,
        /// How long ago the record was last seen renewed.
        since: std::time::Duration,
    },
    /// The timing or identity does not allow a sound election.
    #[error("invalid leader election config: {0}")]
    InvalidConfig(String),
}

impl Error {
    /// The lock object does not exist (yet).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::Rest(e) if e.is_not_found())
    }
    /// Somebody else changed the lock since it was read.
    pub fn is_conflict(&self) -> bool {
        matches!(self, Error::Rest(e) if e.is_conflict())
    }
}
