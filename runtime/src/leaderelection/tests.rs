//! Election tests on an in-memory lock with tokio's paused clock.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, MutexGuard};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::*;
use crate::rest::{Error as RestError, Status};

#[derive(Debug, Default)]
struct Store {
    record: Option<LeaderElectionRecord>,
    rv: u64,
    /// Simulates an unreachable apiserver.
    down: bool,
    /// Updates still to be refused as conflicts, as if another write had
    /// just landed before each.
    conflicts: u32,
}

/// One candidate's view of a shared store, with client-go's optimistic
/// concurrency: `update` needs the resourceVersion last seen by this lock.
struct MemLock {
    identity: String,
    store: Arc<Mutex<Store>>,
    seen_rv: Mutex<Option<u64>>,
}

fn api_error(reason: &str, code: u16) -> Error {
    Error::Rest(RestError::Api(Box::new(Status { reason: reason.into(), code, ..Default::default() })))
}

impl MemLock {
    fn new(id: &str, store: &Arc<Mutex<Store>>) -> Self {
        MemLock { identity: id.into(), store: store.clone(), seen_rv: Mutex::new(None) }
    }

    /// The store, unless it is down.
    fn reach(&self) -> Result<MutexGuard<'_, Store>, Error> {
        let s = self.store.lock();
        if s.down {
            return Err(Error::Rest(RestError::Timeout(Duration::from_secs(1))));
        }
        Ok(s)
    }

    /// Stores `record` as a new version, which this lock has then seen.
    fn write(&self, s: &mut Store, record: &LeaderElectionRecord) -> Result<(), Error> {
        s.record = Some(record.clone());
        s.rv += 1;
        *self.seen_rv.lock() = Some(s.rv);
        Ok(())
    }
}

impl ResourceLock for MemLock {
    async fn get(&self) -> Result<LeaderElectionRecord, Error> {
        let s = self.reach()?;
        let r = s.record.clone().ok_or_else(|| api_error("NotFound", 404))?;
        *self.seen_rv.lock() = Some(s.rv);
        Ok(r)
    }
    async fn create(&self, record: &LeaderElectionRecord) -> Result<(), Error> {
        let mut s = self.reach()?;
        if s.record.is_some() {
            return Err(api_error("AlreadyExists", 409));
        }
        self.write(&mut s, record)
    }
    async fn update(&self, record: &LeaderElectionRecord) -> Result<(), Error> {
        let mut s = self.reach()?;
        let seen = self.seen_rv.lock().ok_or(Error::LockNotInitialized)?;
        if s.conflicts > 0 {
            s.conflicts -= 1;
            return Err(api_error("Conflict", 409));
        }
        if seen != s.rv {
            return Err(api_error("Conflict", 409));
        }
        self.write(&mut s, record)
    }
    fn identity(&self) -> &str {
        &self.identity
    }
    fn describe(&self) -> String {
        "ns/lock".into()
    }
}

type Log = Arc<Mutex<Vec<String>>>;

struct Running {
    cancel: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

fn start(e: &LeaderElector<MemLock>) -> Running {
    let (tx, rx) = oneshot::channel::<()>();
    let e = e.clone();
    let task = tokio::spawn(async move {
        e.run(async move {
            let _ = rx.await;
        })
        .await
    });
    Running { cancel: Some(tx), task }
}

impl Running {
    async fn stop(mut self) {
        if let Some(tx) = self.cancel.take() {
            let _ = tx.send(());
        }
        self.task.await.unwrap();
    }
}

/// Candidate `id` on `store`, running, with a log of its callbacks.
fn started(store: &Arc<Mutex<Store>>, id: &str, release_on_cancel: bool) -> (LeaderElector<MemLock>, Log, Running) {
    let log = Log::default();
    let (l1, l2, l3) = (log.clone(), log.clone(), log.clone());
    let me = id.to_owned();
    let me2 = id.to_owned();
    let callbacks = LeaderCallbacks::new()
        .on_started_leading(move |token: LeadershipToken| {
            let log = l1.clone();
            let me = me.clone();
            async move {
                log.lock().push(format!("started:{me}"));
                token.cancelled().await;
                log.lock().push(format!("token-cancelled:{me}"));
            }
        })
        .on_stopped_leading(move || l2.lock().push(format!("stopped:{me2}")))
        .on_new_leader(move |leader| l3.lock().push(format!("new:{leader}")));
    let config = LeaderElectionConfig { release_on_cancel, callbacks, ..Default::default() };
    let elector = LeaderElector::new(config, MemLock::new(id, store)).unwrap();
    let run = start(&elector);
    (elector, log, run)
}

/// A store holding `record` at resourceVersion `rv`.
fn store_with(record: Option<LeaderElectionRecord>, rv: u64) -> Arc<Mutex<Store>> {
    Arc::new(Mutex::new(Store { record, rv, ..Default::default() }))
}

/// Candidate `id` alone on an empty store, started at `t0` (now).
fn alone(id: &str, release_on_cancel: bool) -> (Instant, Arc<Mutex<Store>>, LeaderElector<MemLock>, Log, Running) {
    let t0 = Instant::now();
    let store = store_with(None, 0);
    let (elector, log, run) = started(&store, id, release_on_cancel);
    (t0, store, elector, log, run)
}

/// Candidates a and b on an empty store: a started at `t0` (now), b half
/// a second later.
async fn a_then_b(
    release_on_cancel: bool,
) -> (Instant, Arc<Mutex<Store>>, [(LeaderElector<MemLock>, Log, Running); 2]) {
    let t0 = Instant::now();
    let store = store_with(None, 0);
    let a = started(&store, "a", release_on_cancel);
    at(t0, 0.5).await;
    let b = started(&store, "b", release_on_cancel);
    (t0, store, [a, b])
}

/// Sleeps until `secs` after the test's start `t0` on the paused clock.
async fn at(t0: Instant, secs: f64) {
    tokio::time::sleep_until(t0 + Duration::from_secs_f64(secs)).await;
}

fn record(store: &Arc<Mutex<Store>>) -> LeaderElectionRecord {
    store.lock().record.clone().unwrap_or_default()
}

/// The elector's own callbacks in order; the work task's exit is a
/// separate task, so its place among them is not fixed.
fn entries(log: &Log) -> Vec<String> {
    log.lock().iter().filter(|e| !e.starts_with("token-cancelled")).cloned().collect()
}

async fn work_stopped(log: &Log, id: &str) -> bool {
    // Let the spawned work task observe its token.
    tokio::time::sleep(Duration::from_millis(1)).await;
    log.lock().contains(&format!("token-cancelled:{id}"))
}

#[tokio::test(start_paused = true)]
async fn acquires_by_creating_and_renews_every_retry_period() {
    let (t0, store, a, log, run) = alone("a", false);
    // The election task has not run yet.
    assert!(!a.is_leader());
    at(t0, 0.5).await;
    assert!(a.is_leader());
    assert_eq!(a.get_leader(), "a");
    let first = record(&store);
    assert_eq!((first.holder_identity.as_str(), first.lease_duration_seconds, first.leader_transitions), ("a", 15, 0));
    at(t0, 20.5).await;
    // One create plus a renewal at 0, 2, 4, ..., 20.
    assert_eq!(store.lock().rv, 12);
    assert_eq!(record(&store).acquire_time, first.acquire_time, "renewals keep the acquire time");
    assert_eq!(entries(&log), ["new:a", "started:a"]);
    run.stop().await;
    assert_eq!(entries(&log), ["new:a", "started:a", "stopped:a"]);
    assert!(work_stopped(&log, "a").await);
    assert_eq!(record(&store).holder_identity, "a", "no release unless configured");
}

#[tokio::test(start_paused = true)]
async fn takes_over_only_after_lease_duration_on_the_local_clock() {
    let t0 = Instant::now();
    // Written long ago by wall-clock time, but this candidate has only just
    // seen it: it must still wait a full lease duration.
    let stale = LeaderElectionRecord {
        holder_identity: "old".into(),
        lease_duration_seconds: 15,
        renew_time: Some(jiff::Timestamp::UNIX_EPOCH),
        acquire_time: Some(jiff::Timestamp::UNIX_EPOCH),
        leader_transitions: 4,
    };
    let store = store_with(Some(stale), 7);
    let (b, log, run) = started(&store, "b", false);
    at(t0, 14.9).await;
    assert!(!b.is_leader());
    assert_eq!(b.get_leader(), "old");
    assert_eq!(record(&store).holder_identity, "old");
    // Expired at 15 s; the next jittered attempt comes within 2.2 retry periods.
    at(t0, 15.0 + 4.5).await;
    assert!(b.is_leader());
    assert_eq!(record(&store).leader_transitions, 5);
    assert_eq!(entries(&log), ["new:old", "new:b", "started:b"]);
    run.stop().await;
}

#[tokio::test(start_paused = true)]
async fn gives_up_when_renewal_fails_past_the_deadline() {
    let logs = crate::testing::LogCapture::start();
    let (t0, store, a, log, run) = alone("a", false);
    at(t0, 1.0).await;
    assert!(a.is_leader());
    store.lock().down = true;
    // Last renewal at 0 s; the next try at 2 s fails and retries until the
    // 10 s renew deadline ends at 12 s.
    at(t0, 11.9).await;
    assert!(!run.task.is_finished());
    assert!(!work_stopped(&log, "a").await);
    at(t0, 12.1).await;
    assert!(run.task.is_finished());
    assert_eq!(entries(&log), ["new:a", "started:a", "stopped:a"]);
    assert!(work_stopped(&log, "a").await);
    // The last observation still names a: the health check catches the
    // stale belief once the lease must have expired (last renewal at 0 s).
    assert!(a.is_leader());
    at(t0, 16.9).await;
    assert!(a.check(Duration::from_secs(2)).is_ok());
    at(t0, 17.1).await;
    assert!(matches!(a.check(Duration::from_secs(2)), Err(Error::RenewalOverdue { .. })));
    run.stop().await;
    // The failures are logged with their cause, not only the lock's layer.
    let text = logs.text();
    assert!(text.contains("error=leader election lock: request timed out after 1s"), "{text}");
}

#[tokio::test(start_paused = true)]
async fn loses_to_a_conflicting_writer() {
    let (t0, store, a, log, run) = alone("a", false);
    at(t0, 1.0).await;
    {
        let mut s = store.lock();
        s.record = Some(LeaderElectionRecord {
            holder_identity: "x".into(),
            lease_duration_seconds: 15,
            ..Default::default()
        });
        s.rv += 1;
    }
    at(t0, 12.1).await;
    assert!(run.task.is_finished(), "conflict, then a valid foreign lease until the deadline");
    assert!(!a.is_leader());
    assert_eq!(a.get_leader(), "x");
    assert_eq!(record(&store).holder_identity, "x", "the other writer's record stands");
    assert_eq!(entries(&log), ["new:a", "started:a", "new:x", "stopped:a"]);
    assert!(work_stopped(&log, "a").await);
    run.stop().await;
}

#[tokio::test(start_paused = true)]
async fn release_on_cancel_hands_over_at_once() {
    let (t0, store, [(a, log_a, run_a), (b, log_b, run_b)]) = a_then_b(true).await;
    at(t0, 3.0).await;
    assert!(a.is_leader() && !b.is_leader());
    run_a.stop().await;
    let released = record(&store);
    assert_eq!((released.holder_identity.as_str(), released.lease_duration_seconds), ("", 1));
    assert!(!a.is_leader());
    assert_eq!(entries(&log_a), ["new:a", "started:a", "new:", "stopped:a"]);
    assert!(work_stopped(&log_a, "a").await);
    // Far sooner than the 15 s lease: b's next attempt (within 4.4 s) wins.
    at(t0, 3.0 + 4.5).await;
    assert!(b.is_leader());
    assert_eq!(record(&store).leader_transitions, 1);
    assert_eq!(entries(&log_b), ["new:a", "new:b", "started:b"]);
    run_b.stop().await;
    assert_eq!(record(&store).holder_identity, "");
}

/// Rewrites the stored record behind the candidates' backs with `change`,
/// as another write would, moving the resourceVersion on.
fn write_behind(store: &Arc<Mutex<Store>>, change: impl FnOnce(&mut LeaderElectionRecord)) {
    let mut s = store.lock();
    let mut record = s.record.clone().unwrap_or_default();
    change(&mut record);
    s.record = Some(record);
    s.rv += 1;
}

#[tokio::test(start_paused = true)]
async fn release_retries_when_a_cancelled_renewal_landed_after_all() {
    let (t0, store, a, log, run) = alone("a", true);
    at(t0, 1.0).await;
    assert!(a.is_leader());
    // A renewal cut short by the cancel that reached the apiserver anyway:
    // same holder, newer resourceVersion than the one the lock saw last.
    write_behind(&store, |r| r.renew_time = Some(jiff::Timestamp::now()));
    let bumped = store.lock().rv;
    run.stop().await;
    let released = record(&store);
    assert_eq!((released.holder_identity.as_str(), released.lease_duration_seconds), ("", 1));
    assert_eq!(store.lock().rv, bumped + 1, "one write after the conflict");
    assert!(!a.is_leader());
    assert_eq!(entries(&log), ["new:a", "started:a", "new:", "stopped:a"]);
}

#[tokio::test(start_paused = true)]
async fn release_leaves_a_lease_taken_over_meanwhile_alone() {
    let (t0, store, a, log, run) = alone("a", true);
    at(t0, 1.0).await;
    write_behind(&store, |r| {
        r.holder_identity = "x".into();
        r.leader_transitions += 1;
    });
    run.stop().await;
    let stored = record(&store);
    assert_eq!((stored.holder_identity.as_str(), stored.leader_transitions), ("x", 1), "x's lease stands");
    assert_eq!(a.get_leader(), "x", "the re-read record is what a observes");
    assert_eq!(entries(&log), ["new:a", "started:a", "new:x", "stopped:a"]);
}

#[tokio::test(start_paused = true)]
async fn release_retries_conflicts_a_bounded_number_of_times() {
    // Four conflicts in a row still end in a release, on the fifth write.
    let (t0, store, a, _, run) = alone("a", true);
    at(t0, 1.0).await;
    store.lock().conflicts = 4;
    run.stop().await;
    assert_eq!(record(&store).holder_identity, "");
    assert!(!a.is_leader());

    // A lock that conflicts every time is given up on after five writes,
    // long before the renew deadline; the lease then expires.
    let (t0, store, a, _, run) = alone("a", true);
    at(t0, 1.0).await;
    store.lock().conflicts = 100;
    let stopped_at = Instant::now();
    run.stop().await;
    assert_eq!(store.lock().conflicts, 95);
    assert_eq!(record(&store).holder_identity, "a");
    assert!(a.is_leader(), "the last observation still names a");
    assert_eq!(Instant::now(), stopped_at, "no waiting between attempts");
}

#[tokio::test(start_paused = true)]
async fn without_release_the_successor_waits_for_expiry() {
    let (t0, store, [(a, _, run_a), (b, _, run_b)]) = a_then_b(false).await;
    // Each renewal by a is a change b observes, restarting b's wait.
    at(t0, 21.0).await;
    assert!(a.is_leader() && !b.is_leader(), "no takeover while the leader renews");
    run_a.stop().await;
    // a's last renewal was at 20 s; b sees it by 20 + 4.4 s and must then
    // wait 15 s from that observation.
    at(t0, 34.9).await;
    assert!(!b.is_leader());
    at(t0, 20.0 + 4.4 + 15.0 + 4.5).await;
    assert!(b.is_leader());
    assert_eq!(record(&store).leader_transitions, 1);
    run_b.stop().await;
}

#[tokio::test(start_paused = true)]
async fn cancel_before_acquiring_still_reports_stopped() {
    let t0 = Instant::now();
    let held = LeaderElectionRecord { holder_identity: "x".into(), lease_duration_seconds: 15, ..Default::default() };
    let store = store_with(Some(held), 1);
    let (_b, log, run) = started(&store, "b", true);
    at(t0, 5.0).await;
    run.stop().await;
    assert_eq!(entries(&log), ["new:x", "stopped:b"], "as client-go, OnStoppedLeading runs on every return");
    assert_eq!(record(&store).holder_identity, "x", "a non-leader releases nothing");
}

#[test]
fn config_is_validated() {
    let store = store_with(None, 0);
    let lock = |id: &str| MemLock::new(id, &store);
    assert!(LeaderElector::new(LeaderElectionConfig::default(), lock("a")).is_ok());
    let bad = [
        LeaderElectionConfig { lease_duration: Duration::from_secs(10), ..Default::default() },
        LeaderElectionConfig { retry_period: Duration::from_secs(9), ..Default::default() },
        LeaderElectionConfig {
            retry_period: Duration::ZERO,
            renew_deadline: Duration::from_secs(1),
            ..Default::default()
        },
    ];
    for config in bad {
        assert!(matches!(LeaderElector::new(config, lock("a")), Err(Error::InvalidConfig(_))));
    }
    assert!(matches!(LeaderElector::new(LeaderElectionConfig::default(), lock("")), Err(Error::InvalidConfig(_))));
}

#[tokio::test]
async fn lease_lock_records_leadership_events() {
    let broadcaster = crate::record::EventBroadcaster::new();
    let mut events = broadcaster.watch();
    let client = crate::rest::Client::new(crate::config::Config::new("http://127.0.0.1:1".parse().unwrap())).unwrap();
    let lock = LeaseLock::new(client, "ns", "ctrl", "pod-1").with_event_recorder(broadcaster.new_recorder("ctrl"));
    lock.record_event("became leader");
    let e = events.recv().await.unwrap();
    assert_eq!((&e.data["reason"], &e.data["message"]), (&"LeaderElection".into(), &"pod-1 became leader".into()));
    let involved = &e.data["involvedObject"];
    assert_eq!((&involved["kind"], &involved["name"]), (&"Lease".into(), &"ctrl".into()));
    assert_eq!(involved["apiVersion"], "coordination.k8s.io/v1");
    assert_eq!(involved["namespace"], "ns");
    assert_eq!(e.namespace(), Some("ns"));
}

#[tokio::test(start_paused = true)]
async fn dropping_run_cancels_the_token_without_release() {
    let (t0, store, _a, log, run) = alone("a", true);
    at(t0, 1.0).await;
    run.task.abort();
    assert!(work_stopped(&log, "a").await);
    assert_eq!(entries(&log), ["new:a", "started:a"], "no on_stopped_leading when dropped");
    assert_eq!(record(&store).holder_identity, "a", "no release when dropped");
}

#[tokio::test(start_paused = true)]
async fn release_waits_until_the_leaders_work_has_stopped() {
    let store = store_with(None, 0);
    let log = Log::default();
    let work_log = log.clone();
    let callbacks = LeaderCallbacks::new().on_started_leading(move |token: LeadershipToken| {
        let log = work_log.clone();
        async move {
            token.cancelled().await;
            // Finishing a write takes a while after the token fires.
            tokio::time::sleep(Duration::from_secs(5)).await;
            log.lock().push("work-done".to_owned());
        }
    });
    let config = LeaderElectionConfig { release_on_cancel: true, callbacks, ..Default::default() };
    let a = LeaderElector::new(config, MemLock::new("a", &store)).unwrap();
    let run = start(&a);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(a.is_leader());
    let t0 = Instant::now();
    let stopping = tokio::spawn(run.stop());
    at(t0, 4.0).await;
    // Still working: the lease is still held, so nobody else acts.
    assert_eq!(record(&store).holder_identity, "a");
    assert!(log.lock().is_empty());
    stopping.await.unwrap();
    assert_eq!(*log.lock(), ["work-done"]);
    assert_eq!(record(&store).holder_identity, "", "released once the work stopped");
    assert!(Instant::now() >= t0 + Duration::from_secs(5));
}

/// The same race on a real [`LeaseLock`] against the fake apiserver.
#[cfg(feature = "fake")]
mod on_the_fake {
    use super::*;
    use crate::DynamicResource;
    use crate::dynamic::DynamicObject;
    use crate::fake::FakeCluster;
    use crate::rest::{GetOptions, ResourceClient, UpdateOptions};

    fn leases() -> DynamicResource {
        DynamicResource {
            group: "coordination.k8s.io".into(),
            version: "v1".into(),
            kind: "Lease".into(),
            plural: "leases".into(),
            namespaced: true,
        }
    }

    #[tokio::test]
    async fn a_lease_renewed_behind_the_electors_back_is_still_released() {
        let fake = FakeCluster::new();
        // Renewals only every 8 s: none comes between the steps below.
        let config = LeaderElectionConfig {
            release_on_cancel: true,
            retry_period: Duration::from_secs(8),
            ..Default::default()
        };
        let a = LeaderElector::new(config, LeaseLock::new(fake.client(), "ns", "ctrl", "a")).unwrap();
        let (cancel, cancelled) = oneshot::channel::<()>();
        let run = tokio::spawn({
            let a = a.clone();
            async move {
                a.run(async move {
                    let _ = cancelled.await;
                })
                .await
            }
        });
        tokio::time::timeout(Duration::from_secs(5), async {
            while !a.is_leader() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("a leads");

        // What a renewal cut short by the cancel writes when it lands anyway.
        let client = ResourceClient::<DynamicObject>::namespaced_with(fake.client(), "ns", &leases());
        let mut lease = client.get("ctrl", &GetOptions::default()).await.unwrap();
        lease.data["spec"]["renewTime"] = "2030-01-01T00:00:00.000000Z".into();
        client.update(&lease, &UpdateOptions::default()).await.unwrap();
        fake.clear_actions();

        cancel.send(()).unwrap();
        run.await.unwrap();
        let stored = fake.object_dynamic(&leases(), "ns", "ctrl").unwrap();
        assert_eq!(stored["spec"]["holderIdentity"], "");
        assert_eq!(stored["spec"]["leaseDurationSeconds"], 1);
        let verbs: Vec<_> = fake.actions().into_iter().map(|action| action.verb).collect();
        assert_eq!(verbs, ["update", "get", "update"], "refused on the stale version, read again, released");
        assert!(!a.is_leader());
    }
}
