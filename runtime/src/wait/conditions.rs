//! Conditions on an object, for [`await_condition`](super::await_condition)
//! (kube-rs's `wait::conditions`): a [`Condition`] is any
//! `Fn(Option<&K>) -> bool`, `None` standing for an object that does not
//! exist, and conditions combine with [`Condition::and`], [`Condition::or`]
//! and [`Condition::not`].
//!
//! # Why the stock conditions read JSON
//! The runtime never depends on a generated crate, so it cannot name a
//! `Pod`'s `status.phase` or a `CustomResourceDefinition`'s condition
//! type; and the [`StatusCondition`](crate::object::StatusCondition) trait
//! covers only `metav1.Condition`, which pods, jobs and CRDs do not use
//! (they have condition types of their own). What every object type the
//! client handles has is `Serialize`: the stock conditions serialize the
//! object ([`serde_json::to_value`]) and read `status` from the JSON, so
//! they work alike on generated kinds, the
//! [`DynamicObject`](crate::dynamic::DynamicObject) and custom types,
//! taking the same field names `kubectl get -o json` shows. Serializing
//! costs some microseconds per check, once per change of the one object
//! waited for. With the kind's type at hand, a closure reading the typed
//! fields is a condition too:
//! ```
//! # use k8s_client_runtime::wait::Condition;
//! # #[derive(serde::Serialize)] struct Pod { status: Option<Status> }
//! # #[derive(serde::Serialize)] struct Status { phase: Option<String> }
//! let failed = |pod: Option<&Pod>| {
//!     pod.and_then(|p| p.status.as_ref()).and_then(|s| s.phase.as_deref()) == Some("Failed")
//! };
//! # assert!(!failed.matches_object(None));
//! ```

use serde::Serialize;
use serde_json::Value;

use crate::object::{Metadata as _, Object};

/// A state of an object: `matches_object(None)` asks about an object that
/// does not exist (it was deleted, or never created).
pub trait Condition<K> {
    /// Whether `obj` (or its absence) is in the state.
    fn matches_object(&self, obj: Option<&K>) -> bool;

    /// The opposite state.
    fn not(self) -> Not<Self>
    where
        Self: Sized,
    {
        Not(self)
    }

    /// Both this and `other`.
    fn and<O: Condition<K>>(self, other: O) -> And<Self, O>
    where
        Self: Sized,
    {
        And(self, other)
    }

    /// This or `other`.
    fn or<O: Condition<K>>(self, other: O) -> Or<Self, O>
    where
        Self: Sized,
    {
        Or(self, other)
    }
}

impl<K, F: Fn(Option<&K>) -> bool> Condition<K> for F {
    fn matches_object(&self, obj: Option<&K>) -> bool {
        self(obj)
    }
}

/// [`Condition::not`].
#[derive(Debug, Clone, Copy)]
pub struct Not<A>(A);

impl<K, A: Condition<K>> Condition<K> for Not<A> {
    fn matches_object(&self, obj: Option<&K>) -> bool {
        !self.0.matches_object(obj)
    }
}

/// [`Condition::and`].
#[derive(Debug, Clone, Copy)]
pub struct And<A, B>(A, B);

impl<K, A: Condition<K>, B: Condition<K>> Condition<K> for And<A, B> {
    fn matches_object(&self, obj: Option<&K>) -> bool {
        self.0.matches_object(obj) && self.1.matches_object(obj)
    }
}

/// [`Condition::or`].
#[derive(Debug, Clone, Copy)]
pub struct Or<A, B>(A, B);

impl<K, A: Condition<K>, B: Condition<K>> Condition<K> for Or<A, B> {
    fn matches_object(&self, obj: Option<&K>) -> bool {
        self.0.matches_object(obj) || self.1.matches_object(obj)
    }
}

/// The object with this `metadata.uid` is gone: no object has the name,
/// or one with another uid (re-created) does. Give the uid of the object
/// you deleted, so that a successor of the same name does not count as
/// it.
pub fn is_deleted<K: Object>(uid: &str) -> impl Condition<K> + Clone + Send + Sync + 'static {
    let uid = uid.to_owned();
    move |obj: Option<&K>| obj.is_none_or(|o| o.metadata().uid() != Some(uid.as_str()))
}

/// A CustomResourceDefinition is served: its `Established` condition is
/// `True`.
pub fn is_crd_established<K: Serialize>() -> impl Condition<K> + Copy + Send + Sync + 'static {
    |obj: Option<&K>| has_status_condition_in(obj, "Established", "True")
}

/// A pod runs: `status.phase` is `Running`.
pub fn is_pod_running<K: Serialize>() -> impl Condition<K> + Copy + Send + Sync + 'static {
    |obj: Option<&K>| status(obj).is_some_and(|s| s.get("phase").and_then(Value::as_str) == Some("Running"))
}

/// A job has completed: its `Complete` condition is `True` (a failed job
/// never gets there: combine with `has_status_condition("Failed", "True")`
/// through [`Condition::or`] to stop on either).
pub fn is_job_completed<K: Serialize>() -> impl Condition<K> + Copy + Send + Sync + 'static {
    |obj: Option<&K>| has_status_condition_in(obj, "Complete", "True")
}

/// The object has a `status.conditions` entry of `type` with this
/// `status` (`True`, `False`, `Unknown`), whatever the kind's condition
/// type: pods, deployments, CRDs, custom resources.
pub fn has_status_condition<K: Serialize>(
    condition_type: &str,
    status: &str,
) -> impl Condition<K> + Clone + Send + Sync + 'static {
    let (condition_type, status) = (condition_type.to_owned(), status.to_owned());
    move |obj: Option<&K>| has_status_condition_in(obj, &condition_type, &status)
}

/// `obj`'s `status`, as JSON.
fn status<K: Serialize>(obj: Option<&K>) -> Option<Value> {
    let mut json = serde_json::to_value(obj?).ok()?;
    Some(json.get_mut("status")?.take())
}

fn has_status_condition_in<K: Serialize>(obj: Option<&K>, condition_type: &str, want: &str) -> bool {
    let Some(status) = status(obj) else {
        return false;
    };
    let Some(conditions) = status.get("conditions").and_then(Value::as_array) else {
        return false;
    };
    conditions.iter().any(|c| {
        c.get("type").and_then(Value::as_str) == Some(condition_type)
            && c.get("status").and_then(Value::as_str) == Some(want)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::dynamic::DynamicObject;
    use crate::object::DynamicResource;

    fn object(data: Value) -> DynamicObject {
        let crd = DynamicResource {
            group: "apiextensions.k8s.io".into(),
            version: "v1".into(),
            kind: "CustomResourceDefinition".into(),
            plural: "customresourcedefinitions".into(),
            namespaced: false,
        };
        DynamicObject::new(&crd, "x").with_data(data)
    }

    #[test]
    fn established_reads_the_crd_condition() {
        let pending = object(json!({"status": {"conditions": [{"type": "Established", "status": "False"}]}}));
        let served = object(json!({"status": {"conditions": [
            {"type": "NamesAccepted", "status": "True"},
            {"type": "Established", "status": "True"},
        ]}}));
        let c = is_crd_established();
        assert!(!c.matches_object(None));
        assert!(!c.matches_object(Some(&object(json!({})))));
        assert!(!c.matches_object(Some(&pending)));
        assert!(c.matches_object(Some(&served)));
    }

    #[test]
    fn pod_running_and_job_completed() {
        let running = object(json!({"status": {"phase": "Running"}}));
        let pending = object(json!({"status": {"phase": "Pending"}}));
        assert!(is_pod_running().matches_object(Some(&running)));
        assert!(!is_pod_running().matches_object(Some(&pending)));
        let done = object(json!({"status": {"conditions": [{"type": "Complete", "status": "True"}]}}));
        let failed = object(json!({"status": {"conditions": [{"type": "Failed", "status": "True"}]}}));
        assert!(is_job_completed().matches_object(Some(&done)));
        assert!(!is_job_completed().matches_object(Some(&failed)));
        let finished = is_job_completed().or(has_status_condition("Failed", "True"));
        assert!(finished.matches_object(Some(&failed)) && finished.matches_object(Some(&done)));
        assert!(!finished.not().matches_object(Some(&done)));
    }

    #[test]
    fn deleted_means_absent_or_another_uid() {
        let mut obj = object(json!({}));
        obj.metadata.uid = Some("u1".into());
        let gone = is_deleted::<DynamicObject>("u1");
        assert!(gone.matches_object(None));
        assert!(!gone.matches_object(Some(&obj)));
        obj.metadata.uid = Some("u2".into());
        assert!(gone.matches_object(Some(&obj)));
        assert!(!gone.clone().and(is_pod_running()).matches_object(Some(&obj)));
    }
}
