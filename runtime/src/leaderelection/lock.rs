//! The lock the election runs on: the [`ResourceLock`] trait, the
//! [`LeaderElectionRecord`] it stores, and its coordination.k8s.io/v1
//! `Lease` implementation [`LeaseLock`].

use std::future::Future;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use super::Error;
use crate::dynamic::DynamicMeta;
use crate::object::{Object, Resource, Scope};
use crate::record::{EventRecorder, EventType, ObjectReference};
use crate::rest::{Client, CreateOptions, GetOptions, ResourceClient, UpdateOptions};

/// What a lock stores about the current leader (client-go's
/// `LeaderElectionRecord`). Times are wall-clock and informational: the
/// elector judges expiry by when *it* saw the record change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeaderElectionRecord {
    /// Empty when nobody holds the lock (after a release).
    pub holder_identity: String,
    /// How long, in seconds, others must see the record unchanged before they
    /// may take the lock over.
    pub lease_duration_seconds: i32,
    /// When the current holder acquired the lock.
    pub acquire_time: Option<jiff::Timestamp>,
    /// When the holder last renewed the lock.
    pub renew_time: Option<jiff::Timestamp>,
    /// How many times the lock changed hands; bumped on every takeover.
    pub leader_transitions: i32,
}

/// Storage for the election (client-go's `resourcelock.Interface`).
///
/// A lock remembers the object it last read or wrote so that `update` can
/// use its `resourceVersion`: a concurrent change makes `update` fail with
/// a conflict, and the elector reads again.
///
/// # Cancel safety
/// The elector drops these futures at the renew deadline or on cancel;
/// implementations must tolerate that (a write may or may not have landed;
/// the next `get` tells).
pub trait ResourceLock: Send + Sync + 'static {
    /// The current record; an error that [`Error::is_not_found`] when the
    /// lock object does not exist yet.
    fn get(&self) -> impl Future<Output = Result<LeaderElectionRecord, Error>> + Send;
    /// Creates the lock object holding `record`.
    fn create(&self, record: &LeaderElectionRecord) -> impl Future<Output = Result<(), Error>> + Send;
    /// Replaces the record of the object last read or written.
    fn update(&self, record: &LeaderElectionRecord) -> impl Future<Output = Result<(), Error>> + Send;
    /// Who this candidate is; compared with [`LeaderElectionRecord::holder_identity`].
    fn identity(&self) -> &str;
    /// `namespace/name` of the lock, for logs.
    fn describe(&self) -> String;
    /// Reports a leadership change (`"became leader"`, `"stopped leading"`)
    /// as an event if the lock has a recorder.
    fn record_event(&self, _message: &str) {}
}

/// coordination.k8s.io/v1 `LeaseSpec`; fields this runtime does not model
/// (`strategy`, `preferredHolder`) are kept in `other`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseSpec {
    /// `holderIdentity`: the identity of the current leader; absent or empty
    /// when released.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder_identity: Option<String>,
    /// `leaseDurationSeconds`: how long candidates wait after the last observed
    /// renewal before they may take the lease over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_duration_seconds: Option<i32>,
    /// `metav1.MicroTime`: RFC 3339 with microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquire_time: Option<String>,
    /// `renewTime` (`metav1.MicroTime`): when the holder last renewed the
    /// lease.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_time: Option<String>,
    /// `leaseTransitions`: how many times the lease changed holders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_transitions: Option<i32>,
    /// Every other `spec` field, written back unchanged.
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

/// coordination.k8s.io/v1 `Lease`, the runtime's own type; it serializes to
/// the same JSON as the generated crate's `api::coordination::v1::Lease`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lease {
    /// `apiVersion`, `coordination.k8s.io/v1`; may be absent on list items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `kind`, `Lease`; may be absent on list items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The Lease's `metadata`; its `resourceVersion` makes updates of the lock
    /// conditional.
    #[serde(default)]
    pub metadata: DynamicMeta,
    /// The Lease's `spec`: the leader election record.
    #[serde(default)]
    pub spec: LeaseSpec,
}

impl Resource for Lease {
    const GROUP: &'static str = "coordination.k8s.io";
    const VERSION: &'static str = "v1";
    const API_VERSION: &'static str = "coordination.k8s.io/v1";
    const KIND: &'static str = "Lease";
    const PLURAL: &'static str = "leases";
    const SCOPE: Scope = Scope::Namespaced;
    const LIST_KIND: &'static str = "LeaseList";
}

impl Object for Lease {
    type Meta = DynamicMeta;
    fn metadata(&self) -> &DynamicMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut DynamicMeta {
        &mut self.metadata
    }
}

/// `metav1.MicroTime` as the apiserver parses it: exactly six fraction digits.
fn micro_time(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

fn parse_time(s: Option<&str>) -> Option<jiff::Timestamp> {
    // An unreadable time only loses information shown to humans; the
    // election does not depend on it.
    s.and_then(|s| s.parse().ok())
}

impl LeaseSpec {
    /// client-go's `LeaderElectionRecordToLeaseSpec`, keeping unmodelled fields.
    pub fn set_record(&mut self, r: &LeaderElectionRecord) {
        self.holder_identity = Some(r.holder_identity.clone());
        self.lease_duration_seconds = Some(r.lease_duration_seconds);
        self.acquire_time = r.acquire_time.map(micro_time);
        self.renew_time = r.renew_time.map(micro_time);
        self.lease_transitions = Some(r.leader_transitions);
    }

    /// client-go's `LeaseSpecToLeaderElectionRecord`.
    pub fn record(&self) -> LeaderElectionRecord {
        LeaderElectionRecord {
            holder_identity: self.holder_identity.clone().unwrap_or_default(),
            lease_duration_seconds: self.lease_duration_seconds.unwrap_or_default(),
            acquire_time: parse_time(self.acquire_time.as_deref()),
            renew_time: parse_time(self.renew_time.as_deref()),
            leader_transitions: self.lease_transitions.unwrap_or_default(),
        }
    }
}

/// A [`ResourceLock`] on a coordination.k8s.io/v1 `Lease` (client-go's
/// `LeaseLock`), the lock every Kubernetes component uses today.
#[derive(Debug)]
pub struct LeaseLock {
    leases: ResourceClient<Lease>,
    namespace: String,
    name: String,
    identity: String,
    /// The Lease as last read or written; its resourceVersion guards updates.
    lease: Mutex<Option<Lease>>,
    recorder: Option<EventRecorder>,
}

impl LeaseLock {
    /// The Lease `namespace/name`, contended for as `identity` (unique per
    /// candidate, e.g. the pod name plus a random suffix).
    pub fn new(client: Client, namespace: &str, name: &str, identity: impl Into<String>) -> Self {
        LeaseLock {
            leases: ResourceClient::namespaced(client, namespace),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            identity: identity.into(),
            lease: Mutex::new(None),
            recorder: None,
        }
    }

    /// Records `LeaderElection` events on the Lease when leadership changes.
    #[must_use]
    pub fn with_event_recorder(mut self, recorder: EventRecorder) -> Self {
        self.recorder = Some(recorder);
        self
    }

    /// The Lease as last read or written, if any.
    pub fn lease(&self) -> Option<Lease> {
        self.lease.lock().clone()
    }
}

impl ResourceLock for LeaseLock {
    /// # Cancel safety
    /// Like every method of this lock: dropping the future abandons the
    /// request, which may or may not have reached the server.
    async fn get(&self) -> Result<LeaderElectionRecord, Error> {
        let lease = self.leases.get(&self.name, &GetOptions::default()).await.map_err(Error::Rest)?;
        let record = lease.spec.record();
        *self.lease.lock() = Some(lease);
        Ok(record)
    }

    async fn create(&self, record: &LeaderElectionRecord) -> Result<(), Error> {
        let mut lease = Lease {
            api_version: Some(Lease::API_VERSION.to_owned()),
            kind: Some(Lease::KIND.to_owned()),
            ..Default::default()
        };
        lease.metadata.name = Some(self.name.clone());
        lease.metadata.namespace = Some(self.namespace.clone());
        lease.spec.set_record(record);
        let created = self.leases.create(&lease, &CreateOptions::default()).await.map_err(Error::Rest)?;
        *self.lease.lock() = Some(created);
        Ok(())
    }

    async fn update(&self, record: &LeaderElectionRecord) -> Result<(), Error> {
        let mut lease = self.lease.lock().clone().ok_or(Error::LockNotInitialized)?;
        lease.spec.set_record(record);
        let updated = self.leases.update(&lease, &UpdateOptions::default()).await.map_err(Error::Rest)?;
        *self.lease.lock() = Some(updated);
        Ok(())
    }

    fn identity(&self) -> &str {
        &self.identity
    }

    fn describe(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    fn record_event(&self, message: &str) {
        let Some(recorder) = &self.recorder else {
            return;
        };
        let reference = match self.lease.lock().as_ref() {
            Some(lease) => ObjectReference::from_object(lease),
            None => ObjectReference {
                kind: Lease::KIND.to_owned(),
                api_version: Lease::API_VERSION.to_owned(),
                namespace: self.namespace.clone(),
                name: self.name.clone(),
                ..Default::default()
            },
        };
        recorder.eventf(&reference, EventType::Normal, "LeaderElection", format_args!("{} {message}", self.identity));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rest::tests::server::{Reply, TestServer};

    #[test]
    fn record_round_trips_through_lease_spec_json() {
        let t = jiff::Timestamp::from_microsecond(1_700_000_000_123_456).unwrap();
        let r = LeaderElectionRecord {
            holder_identity: "a".into(),
            lease_duration_seconds: 15,
            acquire_time: Some(t),
            renew_time: Some(t),
            leader_transitions: 3,
        };
        let mut spec: LeaseSpec =
            serde_json::from_value(serde_json::json!({"strategy": "OldestEmulationVersion"})).unwrap();
        spec.set_record(&r);
        let json = serde_json::to_value(&spec).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"holderIdentity": "a", "leaseDurationSeconds": 15,
                "acquireTime": "2023-11-14T22:13:20.123456Z", "renewTime": "2023-11-14T22:13:20.123456Z",
                "leaseTransitions": 3, "strategy": "OldestEmulationVersion"})
        );
        assert_eq!(serde_json::from_value::<LeaseSpec>(json).unwrap().record(), r);
    }

    #[tokio::test]
    async fn lease_lock_creates_then_updates_with_resource_version() {
        let server = TestServer::start(|req, _| match req.method.as_str() {
            "GET" => Reply::json(
                404,
                serde_json::json!({"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404}),
            ),
            "POST" => {
                let mut b = req.json();
                b["metadata"]["resourceVersion"] = "1".into();
                Reply::json(201, b)
            }
            _ => {
                let mut b = req.json();
                b["metadata"]["resourceVersion"] = "2".into();
                Reply::json(200, b)
            }
        })
        .await;
        let lock = LeaseLock::new(server.client(), "kube-system", "ctrl", "me");
        assert!(matches!(lock.update(&LeaderElectionRecord::default()).await, Err(Error::LockNotInitialized)));
        assert!(lock.get().await.unwrap_err().is_not_found());
        let r = LeaderElectionRecord { holder_identity: "me".into(), lease_duration_seconds: 15, ..Default::default() };
        lock.create(&r).await.unwrap();
        lock.update(&LeaderElectionRecord { leader_transitions: 1, ..r }).await.unwrap();
        assert_eq!(lock.lease().unwrap().metadata.resource_version.as_deref(), Some("2"));
        let reqs = server.requests();
        assert_eq!(reqs[0].path, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/ctrl");
        assert_eq!(reqs[1].method, "POST");
        assert_eq!(reqs[1].path, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases");
        let body = reqs[1].json();
        assert_eq!(body["apiVersion"], "coordination.k8s.io/v1");
        assert_eq!(body["kind"], "Lease");
        assert_eq!(body["spec"]["holderIdentity"], "me");
        assert_eq!(reqs[2].method, "PUT");
        assert_eq!(reqs[2].json()["metadata"]["resourceVersion"], "1");
        assert_eq!(reqs[2].json()["spec"]["leaseTransitions"], 1);
        assert_eq!(lock.describe(), "kube-system/ctrl");
    }
}
