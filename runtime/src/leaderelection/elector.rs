//! [`LeaderElector`]: client-go's election loop over a [`ResourceLock`].

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use parking_lot::Mutex;
use tokio::sync::watch;
use tokio::time::Instant;

use super::Error;
use super::lock::{LeaderElectionRecord, ResourceLock};

/// client-go's `JitterFactor`: retries while acquiring wait up to 2.2
/// retry periods so that candidates do not hammer the lock in lockstep.
pub const JITTER_FACTOR: f64 = 1.2;

/// Writes a release tries before giving up when each one conflicts: a
/// conflict comes from one stray write (a renewal that landed after the
/// cancel), so a few suffice, and a lock that keeps changing is not ours
/// to hand back.
const RELEASE_ATTEMPTS: u32 = 5;

type StartedFn = Arc<dyn Fn(LeadershipToken) -> BoxFuture<'static, ()> + Send + Sync>;
type StoppedFn = Arc<dyn Fn() + Send + Sync>;
type NewLeaderFn = Arc<dyn Fn(&str) + Send + Sync>;

/// What to do on leadership changes (client-go's `LeaderCallbacks`). All
/// are optional.
#[derive(Clone, Default)]
pub struct LeaderCallbacks {
    on_started_leading: Option<StartedFn>,
    on_stopped_leading: Option<StoppedFn>,
    on_new_leader: Option<NewLeaderFn>,
}

impl fmt::Debug for LeaderCallbacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeaderCallbacks")
            .field("on_started_leading", &self.on_started_leading.is_some())
            .field("on_stopped_leading", &self.on_stopped_leading.is_some())
            .field("on_new_leader", &self.on_new_leader.is_some())
            .finish()
    }
}

impl LeaderCallbacks {
    /// Callbacks that do nothing until set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Spawned as a task when this candidate becomes leader. The token is
    /// cancelled when leadership ends; the work must stop then.
    #[must_use]
    #[doc(alias = "OnStartedLeading")]
    pub fn on_started_leading<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(LeadershipToken) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.on_started_leading = Some(Arc::new(move |t| f(t).boxed()));
        self
    }

    /// Called when [`LeaderElector::run`] returns, whether or not this
    /// candidate ever led (as in client-go).
    #[must_use]
    #[doc(alias = "OnStoppedLeading")]
    pub fn on_stopped_leading(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.on_stopped_leading = Some(Arc::new(f));
        self
    }

    /// Called with the new holder's identity whenever the observed leader
    /// changes (also for this candidate; `""` after a release). Runs on the
    /// election task: keep it short.
    #[must_use]
    #[doc(alias = "OnNewLeader")]
    pub fn on_new_leader(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_new_leader = Some(Arc::new(f));
        self
    }
}

/// Cancelled when this candidate stops leading; given to
/// `on_started_leading` (client-go passes a `context.Context`).
#[derive(Debug, Clone)]
pub struct LeadershipToken {
    rx: watch::Receiver<bool>,
}

impl LeadershipToken {
    /// Whether leadership has ended (or the elector is gone).
    pub fn is_cancelled(&self) -> bool {
        // A dropped sender means the elector is gone: no longer leading.
        *self.rx.borrow() || self.rx.has_changed().is_err()
    }

    /// Resolves once leadership has ended.
    ///
    /// # Cancel safety
    /// Cancel safe.
    pub async fn cancelled(&self) {
        let mut rx = self.rx.clone();
        // Err means the sender is gone, which also ends leadership.
        let _ = rx.wait_for(|c| *c).await;
    }
}

/// Timing and behaviour of an election (client-go's `LeaderElectionConfig`
/// minus the lock and with client-go's defaults).
#[derive(Debug, Clone)]
pub struct LeaderElectionConfig {
    /// How long non-leaders wait after last seeing the record change before
    /// taking over. Bounds how long a crashed leader blocks the others.
    pub lease_duration: Duration,
    /// How long the leader keeps retrying a failed renewal before giving up.
    pub renew_deadline: Duration,
    /// Pause between attempts to acquire or renew.
    pub retry_period: Duration,
    /// On cancel, hand the lease back (empty holder, 1 s duration) so that
    /// another candidate takes over at once. The leader's work is signalled
    /// through the token first, and the lease is released only once the
    /// `on_started_leading` future has returned: make it return soon after
    /// the token is cancelled.
    #[doc(alias = "ReleaseOnCancel")]
    pub release_on_cancel: bool,
    /// Name of this election, for logs.
    pub name: String,
    /// What to run when leadership starts and ends and when the leader changes.
    pub callbacks: LeaderCallbacks,
}

impl Default for LeaderElectionConfig {
    fn default() -> Self {
        LeaderElectionConfig {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            release_on_cancel: false,
            name: String::new(),
            callbacks: LeaderCallbacks::default(),
        }
    }
}

#[derive(Debug, Default)]
struct State {
    observed: LeaderElectionRecord,
    /// When `observed` last changed, on the local (tokio) clock.
    observed_time: Option<Instant>,
    reported_leader: String,
}

struct Inner<L> {
    config: LeaderElectionConfig,
    lock: L,
    state: Mutex<State>,
}

/// Runs an election over a lock (client-go's `LeaderElector`). Cheap to
/// clone; clones share state, so one clone can [`run`](Self::run) while
/// others ask [`is_leader`](Self::is_leader).
///
/// Expiry is judged on the local clock from the moment this candidate saw
/// the record change, never from the times written in it, so clock skew
/// between machines does not matter.
pub struct LeaderElector<L> {
    inner: Arc<Inner<L>>,
}

impl<L> Clone for LeaderElector<L> {
    fn clone(&self) -> Self {
        LeaderElector { inner: self.inner.clone() }
    }
}

impl<L: ResourceLock> fmt::Debug for LeaderElector<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeaderElector")
            .field("lock", &self.inner.lock.describe())
            .field("identity", &self.inner.lock.identity())
            .field("leader", &self.get_leader())
            .finish()
    }
}

enum RenewEnd {
    Cancelled,
    Lost,
}

fn jittered(d: Duration, max_factor: f64) -> Duration {
    d + d.mul_f64(rand::random::<f64>() * max_factor)
}

impl<L: ResourceLock> LeaderElector<L> {
    /// Checks the config as client-go's `NewLeaderElector` does.
    #[doc(alias = "NewLeaderElector")]
    pub fn new(config: LeaderElectionConfig, lock: L) -> Result<Self, Error> {
        let invalid = |m: &str| Err(Error::InvalidConfig(m.to_owned()));
        if config.lease_duration <= config.renew_deadline {
            return invalid("lease_duration must be greater than renew_deadline");
        }
        if config.renew_deadline <= config.retry_period.mul_f64(JITTER_FACTOR) {
            return invalid("renew_deadline must be greater than retry_period * 1.2");
        }
        if config.retry_period.is_zero() {
            return invalid("retry_period must be greater than zero");
        }
        if lock.identity().is_empty() {
            return invalid("lock identity is empty");
        }
        Ok(LeaderElector { inner: Arc::new(Inner { config, lock, state: Mutex::new(State::default()) }) })
    }

    /// The lock the election runs on.
    pub fn lock(&self) -> &L {
        &self.inner.lock
    }

    /// The election's timing and callbacks.
    pub fn config(&self) -> &LeaderElectionConfig {
        &self.inner.config
    }

    /// Whether the last observed record names this candidate. As in
    /// client-go this is what was last *seen*: after `run` gave up because
    /// renewals failed it can still say `true`; [`check`](Self::check)
    /// tells a stale belief apart.
    #[doc(alias = "IsLeader")]
    pub fn is_leader(&self) -> bool {
        self.inner.state.lock().observed.holder_identity == self.inner.lock.identity()
    }

    /// The identity of the last observed leader (`""` if none).
    #[doc(alias = "GetLeader")]
    pub fn get_leader(&self) -> String {
        self.inner.state.lock().observed.holder_identity.clone()
    }

    /// A health check (client-go's `HealthzAdaptor`/`Check`): fails when
    /// this candidate believes it leads but has not renewed for longer than
    /// `lease_duration + max_tolerable_expired_lease`, i.e. another
    /// candidate may already have taken over.
    #[doc(alias = "Check")]
    pub fn check(&self, max_tolerable_expired_lease: Duration) -> Result<(), Error> {
        let st = self.inner.state.lock();
        if st.observed.holder_identity != self.inner.lock.identity() {
            return Ok(());
        }
        let limit = self.inner.config.lease_duration + max_tolerable_expired_lease;
        match st.observed_time {
            Some(t) if t.elapsed() > limit => {
                Err(Error::RenewalOverdue { lock: self.inner.lock.describe(), since: t.elapsed() })
            }
            _ => Ok(()),
        }
    }

    /// Campaigns until elected, leads until leadership is lost or `cancel`
    /// resolves, then returns. `on_stopped_leading` runs last, always.
    ///
    /// To run again after losing, call `run` again (client-go's
    /// `RunOrDie` in a loop).
    ///
    /// # Cancel safety
    /// Resolve `cancel` to stop gracefully (token cancelled, lease
    /// released if configured, `on_stopped_leading`). Dropping the future
    /// instead cancels the token but skips the release and the callback;
    /// the lease then expires after `lease_duration`.
    pub async fn run(&self, cancel: impl Future<Output = ()>) {
        let cancel = cancel.fuse();
        tokio::pin!(cancel);
        if self.acquire(&mut cancel).await {
            let (tx, rx) = watch::channel(false);
            let work = self
                .inner
                .config
                .callbacks
                .on_started_leading
                .as_ref()
                .map(|f| tokio::spawn(f(LeadershipToken { rx })));
            let end = self.renew(&mut cancel).await;
            tx.send_replace(true);
            if let RenewEnd::Lost = end {
                self.inner.lock.record_event("stopped leading");
                tracing::info!(election = %self.inner.config.name, lock = %self.inner.lock.describe(), "failed to renew lease, stopped leading");
            }
            if self.inner.config.release_on_cancel {
                // Handing the lease back while the leader's work still
                // writes would let another candidate act beside it.
                if let Some(work) = work {
                    let _ = work.await;
                }
                self.release().await;
            }
        }
        if let Some(f) = &self.inner.config.callbacks.on_stopped_leading {
            f();
        }
    }

    /// Tries every retry period (jittered) until the lock is ours; `false`
    /// if cancelled first.
    async fn acquire<C: Future<Output = ()> + Unpin>(&self, cancel: &mut C) -> bool {
        let describe = self.inner.lock.describe();
        tracing::info!(election = %self.inner.config.name, lock = %describe, "attempting to acquire leader lease");
        loop {
            let acquired = tokio::select! {
                ok = self.try_acquire_or_renew() => ok,
                _ = &mut *cancel => return false,
            };
            self.maybe_report_transition();
            if acquired {
                self.inner.lock.record_event("became leader");
                tracing::info!(election = %self.inner.config.name, lock = %describe, "successfully acquired lease");
                return true;
            }
            tokio::select! {
                _ = tokio::time::sleep(jittered(self.inner.config.retry_period, JITTER_FACTOR)) => {}
                _ = &mut *cancel => return false,
            }
        }
    }

    /// Renews every retry period; ends when a renewal has not succeeded
    /// within the renew deadline, or on cancel.
    async fn renew<C: Future<Output = ()> + Unpin>(&self, cancel: &mut C) -> RenewEnd {
        let cfg = &self.inner.config;
        loop {
            let renewal = async {
                loop {
                    if self.try_acquire_or_renew().await {
                        return;
                    }
                    tokio::time::sleep(cfg.retry_period).await;
                }
            };
            let renewed = tokio::select! {
                r = tokio::time::timeout(cfg.renew_deadline, renewal) => r.is_ok(),
                _ = &mut *cancel => return RenewEnd::Cancelled,
            };
            self.maybe_report_transition();
            if !renewed {
                return RenewEnd::Lost;
            }
            tokio::select! {
                _ = tokio::time::sleep(cfg.retry_period) => {}
                _ = &mut *cancel => return RenewEnd::Cancelled,
            }
        }
    }

    /// Hands the lease back: empty holder, 1 s duration. Bounded by the
    /// renew deadline so that an unreachable apiserver cannot hold up
    /// shutdown.
    async fn release(&self) -> bool {
        if !self.is_leader() {
            return true;
        }
        match tokio::time::timeout(self.inner.config.renew_deadline, self.try_release()).await {
            Ok(released) => released,
            Err(_) => {
                tracing::error!(lock = %self.inner.lock.describe(), "timed out releasing lease");
                false
            }
        }
    }

    /// Writes the released record over the lock as last seen. A conflict
    /// usually means a renewal the cancel cut short landed after all and
    /// moved the resourceVersion on (client-go 1.37's `tryRelease`): read
    /// the lock again and retry while the lease is still ours, at most
    /// [`RELEASE_ATTEMPTS`] writes. Unlike client-go, a lease that has
    /// meanwhile passed to another candidate is left alone rather than
    /// overwritten: there is nothing of ours to release.
    async fn try_release(&self) -> bool {
        let lock = &self.inner.lock;
        let mut transitions = self.inner.state.lock().observed.leader_transitions;
        for attempt in 1..=RELEASE_ATTEMPTS {
            let now = jiff::Timestamp::now();
            let record = LeaderElectionRecord {
                holder_identity: String::new(),
                lease_duration_seconds: 1,
                acquire_time: Some(now),
                renew_time: Some(now),
                leader_transitions: transitions,
            };
            let error = match lock.update(&record).await {
                Ok(()) => {
                    self.set_observed(record);
                    self.maybe_report_transition();
                    return true;
                }
                Err(e) => e,
            };
            if !error.is_conflict() || attempt == RELEASE_ATTEMPTS {
                tracing::error!(lock = %lock.describe(), error = %crate::ErrorChain(&error), "failed to release lease");
                return false;
            }
            tracing::debug!(lock = %lock.describe(), attempt, "conflict releasing lease, re-reading lock");
            let current = match lock.get().await {
                Ok(current) => current,
                Err(e) => {
                    tracing::error!(lock = %lock.describe(), error = %crate::ErrorChain(&e), "error retrieving resource lock");
                    return false;
                }
            };
            if current.holder_identity != lock.identity() {
                // Taken over (the leader's work outlived the lease) or
                // already released: what is there now is what others see.
                self.set_observed(current);
                self.maybe_report_transition();
                return true;
            }
            transitions = current.leader_transitions;
        }
        false
    }

    fn set_observed(&self, record: LeaderElectionRecord) {
        let mut st = self.inner.state.lock();
        st.observed = record;
        st.observed_time = Some(Instant::now());
    }

    fn lease_valid(&self, st: &State, now: Instant) -> bool {
        let secs = u64::try_from(st.observed.lease_duration_seconds).unwrap_or(0);
        st.observed_time.is_some_and(|t| t + Duration::from_secs(secs) > now)
    }

    /// One attempt (client-go's `tryAcquireOrRenew`): renew directly while
    /// our lease is valid, else read the lock and take it if it is free,
    /// expired or ours.
    async fn try_acquire_or_renew(&self) -> bool {
        let lock = &self.inner.lock;
        let identity = lock.identity();
        let now = jiff::Timestamp::now();
        let duration_secs = i32::try_from(self.inner.config.lease_duration.as_secs()).unwrap_or(i32::MAX).max(1);
        let mut record = LeaderElectionRecord {
            holder_identity: identity.to_owned(),
            lease_duration_seconds: duration_secs,
            acquire_time: Some(now),
            renew_time: Some(now),
            leader_transitions: 0,
        };

        // Fast path: we lead and nobody can have taken over yet.
        let fast = {
            let st = self.inner.state.lock();
            (st.observed.holder_identity == identity && self.lease_valid(&st, Instant::now()))
                .then(|| (st.observed.acquire_time, st.observed.leader_transitions))
        };
        if let Some((acquire_time, transitions)) = fast {
            let renewal = LeaderElectionRecord { acquire_time, leader_transitions: transitions, ..record.clone() };
            match lock.update(&renewal).await {
                Ok(()) => {
                    self.set_observed(renewal);
                    return true;
                }
                Err(e) => {
                    tracing::debug!(lock = %lock.describe(), error = %crate::ErrorChain(&e), "renewal failed, re-reading lock")
                }
            }
        }

        let old = match lock.get().await {
            Ok(old) => old,
            Err(e) if e.is_not_found() => {
                let created = lock.create(&record).await;
                return self.wrote(created, record, "error initially creating leader election record");
            }
            Err(e) => {
                tracing::error!(lock = %lock.describe(), error = %crate::ErrorChain(&e), "error retrieving resource lock");
                return false;
            }
        };

        {
            let mut st = self.inner.state.lock();
            if st.observed != old {
                st.observed = old.clone();
                st.observed_time = Some(Instant::now());
            }
            let leading = st.observed.holder_identity == identity;
            if !old.holder_identity.is_empty() && self.lease_valid(&st, Instant::now()) && !leading {
                tracing::debug!(lock = %lock.describe(), holder = %old.holder_identity, "lock is held and has not yet expired");
                return false;
            }
            if leading {
                record.acquire_time = old.acquire_time;
                record.leader_transitions = old.leader_transitions;
            } else {
                record.leader_transitions = old.leader_transitions.saturating_add(1);
            }
        }

        let updated = lock.update(&record).await;
        self.wrote(updated, record, "failed to update lock")
    }

    /// Takes `record` as observed once the write of it succeeded, or logs
    /// `failure`; whether it succeeded.
    fn wrote(&self, result: Result<(), Error>, record: LeaderElectionRecord, failure: &str) -> bool {
        match result {
            Ok(()) => {
                self.set_observed(record);
                true
            }
            Err(e) => {
                tracing::error!(lock = %self.inner.lock.describe(), error = %crate::ErrorChain(&e), "{failure}");
                false
            }
        }
    }

    fn maybe_report_transition(&self) {
        let leader = {
            let mut st = self.inner.state.lock();
            if st.observed.holder_identity == st.reported_leader {
                return;
            }
            st.reported_leader = st.observed.holder_identity.clone();
            st.reported_leader.clone()
        };
        tracing::info!(election = %self.inner.config.name, lock = %self.inner.lock.describe(), leader = %leader, "new leader observed");
        if let Some(f) = &self.inner.config.callbacks.on_new_leader {
            f(&leader);
        }
    }
}
