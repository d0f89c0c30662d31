//! The lock the election runs on: the [`ResourceLock`] trait, the
//! [`LeaderElectionRecord`] it stores, and its coordination.k8s.io/v1
//! `Lease` implementation [`LeaseLock`].

use std::future::Future;

use parking_lot::Mutex;
use serde_json::{Map, Value};

use super::Error;
use crate::dynamic::DynamicObject;
use crate::object::DynamicResource;
#[cfg(feature = "events")]
use crate::record::{EventRecorder, EventType};
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
/// the next `get` tells). A dropped write that landed leaves the lock's
/// remembered object behind the stored one, so the next `update` must
/// fail as a conflict rather than write over it: the elector then reads
/// again (when renewing, and when releasing the lease on cancel).
pub trait ResourceLock: Send + Sync + 'static {
    /// The current record; an error that [`Error::is_not_found`] when the
    /// lock object does not exist yet.
    fn get(&self) -> impl Future<Output = Result<LeaderElectionRecord, Error>> + Send;
    /// Creates the lock object holding `record`.
    fn create(&self, record: &LeaderElectionRecord) -> impl Future<Output = Result<(), Error>> + Send;
    /// Replaces the record of the object last read or written; an error
    /// that [`Error::is_conflict`] when the stored object has changed since.
    fn update(&self, record: &LeaderElectionRecord) -> impl Future<Output = Result<(), Error>> + Send;
    /// Who this candidate is; compared with [`LeaderElectionRecord::holder_identity`].
    fn identity(&self) -> &str;
    /// `namespace/name` of the lock, for logs.
    fn describe(&self) -> String;
    /// Reports a leadership change (`"became leader"`, `"stopped leading"`)
    /// as an event if the lock has a recorder.
    fn record_event(&self, _message: &str) {}
}

/// The coordination.k8s.io/v1 `leases` resource.
fn leases_resource() -> DynamicResource {
    DynamicResource {
        group: "coordination.k8s.io".to_owned(),
        version: "v1".to_owned(),
        kind: "Lease".to_owned(),
        plural: "leases".to_owned(),
        namespaced: true,
    }
}

/// The record a Lease's `spec` holds (client-go's
/// `LeaseSpecToLeaderElectionRecord`): `holderIdentity`,
/// `leaseDurationSeconds`, `acquireTime`, `renewTime` and
/// `leaseTransitions`. Absent or unreadable fields read as empty; a `spec`
/// that is no JSON object reads as the empty record.
///
/// Works on the JSON of any representation of the Lease: the `spec` in a
/// [`DynamicObject`]'s `data`, or the generated
/// `api::coordination::v1::LeaseSpec` through `serde_json::to_value`.
#[doc(alias = "LeaseSpecToLeaderElectionRecord")]
pub fn lease_spec_to_record(spec: &Value) -> LeaderElectionRecord {
    let str_field = |name| spec.get(name).and_then(Value::as_str);
    let i32_field = |name| spec.get(name).and_then(Value::as_i64).and_then(|n| i32::try_from(n).ok()).unwrap_or(0);
    // An unreadable time only loses information shown to humans; the
    // election does not depend on it.
    let time_field = |name| str_field(name).and_then(|t| crate::codec::parse_time(t).ok());
    LeaderElectionRecord {
        holder_identity: str_field("holderIdentity").unwrap_or_default().to_owned(),
        lease_duration_seconds: i32_field("leaseDurationSeconds"),
        acquire_time: time_field("acquireTime"),
        renew_time: time_field("renewTime"),
        leader_transitions: i32_field("leaseTransitions"),
    }
}

/// Writes `record` into a Lease's `spec` (client-go's
/// `LeaderElectionRecordToLeaseSpec`), keeping the fields the record does
/// not cover (`strategy`, `preferredHolder`, ...). Times are written as
/// `metav1.MicroTime`; an absent time removes the field. A `spec` that is
/// no JSON object is replaced by one.
#[doc(alias = "LeaderElectionRecordToLeaseSpec")]
pub fn record_to_lease_spec(record: &LeaderElectionRecord, spec: &mut Value) {
    if !spec.is_object() {
        *spec = Value::Object(Map::new());
    }
    let Some(fields) = spec.as_object_mut() else {
        return;
    };
    fields.insert("holderIdentity".to_owned(), record.holder_identity.clone().into());
    fields.insert("leaseDurationSeconds".to_owned(), record.lease_duration_seconds.into());
    for (name, time) in [("acquireTime", record.acquire_time), ("renewTime", record.renew_time)] {
        match time {
            Some(t) => fields.insert(name.to_owned(), crate::codec::format_micro_time(&t).into()),
            None => fields.remove(name),
        };
    }
    fields.insert("leaseTransitions".to_owned(), record.leader_transitions.into());
}

/// The record in `lease`'s `spec`.
fn lease_record(lease: &DynamicObject) -> LeaderElectionRecord {
    lease.data.get("spec").map(lease_spec_to_record).unwrap_or_default()
}

/// `record` written into `lease`'s `spec`.
fn set_lease_record(lease: &mut DynamicObject, record: &LeaderElectionRecord) {
    record_to_lease_spec(record, lease.data.entry("spec").or_insert(Value::Null));
}

/// A [`ResourceLock`] on a coordination.k8s.io/v1 `Lease` (client-go's
/// `LeaseLock`), the lock every Kubernetes component uses today.
///
/// The lock talks to `leases` with the dynamic client and holds the Lease
/// as a [`DynamicObject`]; for the generated kind, convert it with
/// [`DynamicObject::try_into_typed`]
/// (`k8s_client::api::coordination::v1::Lease`).
#[derive(Debug)]
pub struct LeaseLock {
    leases: ResourceClient<DynamicObject>,
    namespace: String,
    name: String,
    identity: String,
    /// The Lease as last read or written; its resourceVersion guards updates.
    lease: Mutex<Option<DynamicObject>>,
    #[cfg(feature = "events")]
    recorder: Option<EventRecorder>,
}

impl LeaseLock {
    /// The Lease `namespace/name`, contended for as `identity` (unique per
    /// candidate, e.g. the pod name plus a random suffix).
    pub fn new(client: Client, namespace: &str, name: &str, identity: impl Into<String>) -> Self {
        LeaseLock {
            leases: ResourceClient::namespaced_with(client, namespace, &leases_resource()),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            identity: identity.into(),
            lease: Mutex::new(None),
            #[cfg(feature = "events")]
            recorder: None,
        }
    }

    /// Records `LeaderElection` events on the Lease when leadership changes.
    #[cfg(feature = "events")]
    #[cfg_attr(docsrs, doc(cfg(feature = "events")))]
    #[must_use]
    pub fn with_event_recorder(mut self, recorder: EventRecorder) -> Self {
        self.recorder = Some(recorder);
        self
    }

    /// The Lease as last read or written, if any.
    pub fn lease(&self) -> Option<DynamicObject> {
        self.lease.lock().clone()
    }

    /// A Lease named as this lock's, without spec.
    fn new_lease(&self) -> DynamicObject {
        DynamicObject::new(self.leases.resource(), &self.name).within(&self.namespace)
    }
}

impl ResourceLock for LeaseLock {
    /// # Cancel safety
    /// Like every method of this lock: dropping the future abandons the
    /// request, which may or may not have reached the server.
    async fn get(&self) -> Result<LeaderElectionRecord, Error> {
        let lease = self.leases.get(&self.name, &GetOptions::default()).await.map_err(Error::Rest)?;
        let record = lease_record(&lease);
        *self.lease.lock() = Some(lease);
        Ok(record)
    }

    async fn create(&self, record: &LeaderElectionRecord) -> Result<(), Error> {
        let mut lease = self.new_lease();
        set_lease_record(&mut lease, record);
        let created = self.leases.create(&lease, &CreateOptions::default()).await.map_err(Error::Rest)?;
        *self.lease.lock() = Some(created);
        Ok(())
    }

    async fn update(&self, record: &LeaderElectionRecord) -> Result<(), Error> {
        let mut lease = self.lease.lock().clone().ok_or(Error::LockNotInitialized)?;
        set_lease_record(&mut lease, record);
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

    #[cfg(feature = "events")]
    fn record_event(&self, message: &str) {
        let Some(recorder) = &self.recorder else {
            return;
        };
        let lease = self.lease().unwrap_or_else(|| self.new_lease());
        recorder.eventf(&lease, EventType::Normal, "LeaderElection", format_args!("{} {message}", self.identity));
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
        let mut spec = serde_json::json!({"strategy": "OldestEmulationVersion", "acquireTime": "stale"});
        record_to_lease_spec(&LeaderElectionRecord { acquire_time: None, ..r.clone() }, &mut spec);
        assert!(spec.get("acquireTime").is_none(), "an absent time removes the field");
        record_to_lease_spec(&r, &mut spec);
        assert_eq!(
            spec,
            serde_json::json!({"holderIdentity": "a", "leaseDurationSeconds": 15,
                "acquireTime": "2023-11-14T22:13:20.123456Z", "renewTime": "2023-11-14T22:13:20.123456Z",
                "leaseTransitions": 3, "strategy": "OldestEmulationVersion"})
        );
        assert_eq!(lease_spec_to_record(&spec), r);

        assert_eq!(lease_spec_to_record(&serde_json::Value::Null), LeaderElectionRecord::default());
        let odd = serde_json::json!({"holderIdentity": 5, "leaseDurationSeconds": 1e12, "renewTime": "yesterday"});
        assert_eq!(lease_spec_to_record(&odd), LeaderElectionRecord::default(), "unreadable fields read as empty");
        let mut not_an_object = serde_json::json!("x");
        record_to_lease_spec(&r, &mut not_an_object);
        assert_eq!(lease_spec_to_record(&not_an_object), r);
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
                b["spec"]["strategy"] = "OldestEmulationVersion".into();
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
        let lease = lock.lease().unwrap();
        assert_eq!(lease.resource_version(), Some("2"));
        assert_eq!(lease_record(&lease).leader_transitions, 1);
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
        assert_eq!(reqs[2].json()["spec"]["strategy"], "OldestEmulationVersion", "unknown spec fields are kept");
        assert_eq!(lock.describe(), "kube-system/ctrl");
    }

    #[tokio::test]
    async fn lease_lock_update_conflicts_on_a_stale_version_until_read_again() {
        // The first read is from before a write the lock did not see land
        // (resourceVersion 4); the apiserver now has 5.
        let server = TestServer::start(|req, index| {
            let lease = |rv: &str| {
                serde_json::json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": "ctrl", "namespace": "ns", "resourceVersion": rv},
                    "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}})
            };
            match req.method.as_str() {
                "GET" => Reply::json(200, lease(if index == 0 { "4" } else { "5" })),
                _ if req.json()["metadata"]["resourceVersion"] == "5" => {
                    let mut b = req.json();
                    b["metadata"]["resourceVersion"] = "6".into();
                    Reply::json(200, b)
                }
                _ => Reply::json(
                    409,
                    serde_json::json!({"kind": "Status", "status": "Failure", "reason": "Conflict", "code": 409}),
                ),
            }
        })
        .await;
        let lock = LeaseLock::new(server.client(), "ns", "ctrl", "me");
        let released = LeaderElectionRecord { lease_duration_seconds: 1, ..Default::default() };
        assert_eq!(lock.get().await.unwrap().holder_identity, "me");
        let err = lock.update(&released).await.unwrap_err();
        assert!(err.is_conflict(), "{err:?}");
        assert_eq!(lock.lease().unwrap().resource_version(), Some("4"), "a refused write changes nothing");
        assert_eq!(lock.get().await.unwrap().holder_identity, "me");
        lock.update(&released).await.unwrap();
        assert_eq!(lock.lease().unwrap().resource_version(), Some("6"));
        let methods: Vec<_> = server.requests().into_iter().map(|r| r.method).collect();
        assert_eq!(methods, ["GET", "PUT", "GET", "PUT"]);
    }
}
