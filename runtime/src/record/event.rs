//! What the recorder knows of a core/v1 `Event`.
//!
//! The runtime must not depend on the generated crate, so the correlator
//! and the broadcaster work on [`EventRecord`], the fields they manage,
//! and hand every event out as a [`DynamicObject`] (kind `Event`,
//! apiVersion `v1`) that decodes as the generated `api::core::v1::Event`.
//! Fields the record does not model (`series`, `related`, `eventTime`,
//! ...) survive a read-modify-write through its flattened `other` map.

use serde::{Deserialize, Serialize};

use crate::broadcast::{API_VERSION, InvolvedObject, KIND};
use crate::dynamic::{DynamicMeta, DynamicObject};

/// core/v1 `EventSource`: who reported the event.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct Source {
    /// The component that reported, e.g. `deployment-controller`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub component: String,
    /// The node the reporter runs on, if it is tied to one (as the kubelet is).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
}

/// A core/v1 `Event` as the correlator and broadcaster handle it: the
/// fields the legacy (`core/v1`) recorder writes, everything else in
/// `other`. It serializes to the event's fields beside `metadata`, that is
/// to a [`DynamicObject`]'s `data`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EventRecord {
    /// Named `<object name>.<unique suffix>`, in the object's namespace
    /// (`default` for cluster-scoped objects). Kept beside the fields: a
    /// [`DynamicObject`] holds it apart from its `data`.
    #[serde(skip)]
    pub metadata: DynamicMeta,
    #[serde(default)]
    pub involved_object: InvolvedObject,
    /// A short UpperCamelCase machine-readable cause; events are aggregated
    /// by it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(default)]
    pub source: Source,
    /// RFC 3339, second precision (`metav1.Time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_timestamp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_timestamp: Option<String>,
    /// Bumped instead of writing a new event for repeats.
    #[serde(default)]
    pub count: i32,
    /// `Normal` or `Warning` (see [`EventType`]).
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub type_: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reporting_component: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reporting_instance: String,
    /// `eventTime`, `series`, `action`, `related`, ...
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

impl EventRecord {
    /// The event as sinks and watchers see it: kind `Event`, apiVersion
    /// `v1`, the record's fields as data.
    pub(crate) fn to_object(&self) -> DynamicObject {
        let data = match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(data)) => data,
            // Strings, numbers and string maps always serialize, and a
            // struct to a JSON object.
            _ => serde_json::Map::new(),
        };
        DynamicObject {
            api_version: API_VERSION.to_owned(),
            kind: KIND.to_owned(),
            metadata: self.metadata.clone(),
            data,
        }
    }

    /// Reads an event back from `obj`, e.g. as the apiserver wrote it.
    /// Fails when one of the record's fields has the wrong JSON type.
    pub(crate) fn from_object(obj: &DynamicObject) -> Result<Self, serde_json::Error> {
        let mut record = EventRecord::deserialize(&obj.data)?;
        record.metadata = obj.metadata.clone();
        Ok(record)
    }
}

/// A time the recorder stamps, as client-go's recorder writes it: a
/// `metav1.Time`, in whole seconds (the fraction dropped, as Go drops it).
pub(crate) fn format_time(t: jiff::Timestamp) -> String {
    let whole = jiff::Timestamp::from_second(t.as_second()).unwrap_or(t);
    crate::codec::format_time(&whole)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broadcast::unique_event_name;
    use crate::object::DynamicResource;

    #[test]
    fn event_object_round_trips_unknown_fields() {
        let json = serde_json::json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "p.1", "namespace": "ns", "resourceVersion": "5", "creationTimestamp": "2024-01-01T00:00:00Z"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns", "uid": "u", "apiVersion": "v1"},
            "reason": "Started", "message": "m", "source": {"component": "c"},
            "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:00:00Z",
            "count": 2, "type": "Normal", "eventTime": null, "reportingComponent": "c", "reportingInstance": ""
        });
        let obj: DynamicObject = serde_json::from_value(json.clone()).unwrap();
        let ev = EventRecord::from_object(&obj).unwrap();
        assert_eq!(ev.count, 2);
        assert_eq!(ev.type_, "Normal");
        assert_eq!(ev.metadata.name.as_deref(), Some("p.1"));
        assert_eq!(ev.metadata.other.get("creationTimestamp"), json.pointer("/metadata/creationTimestamp"));
        let back = serde_json::to_value(ev.to_object()).unwrap();
        assert_eq!(back.get("eventTime"), Some(&serde_json::Value::Null));
        assert_eq!(back.pointer("/involvedObject/uid"), Some(&serde_json::json!("u")));
        assert_eq!(back.pointer("/metadata/resourceVersion"), Some(&serde_json::json!("5")));
        assert_eq!((&back["apiVersion"], &back["kind"]), (&serde_json::json!("v1"), &serde_json::json!("Event")));
        assert!(back.get("reportingInstance").is_none(), "empty strings are left out");

        let bad = obj.with_data(serde_json::json!({"count": "two"}));
        assert!(EventRecord::from_object(&bad).is_err());
    }

    #[test]
    fn reference_from_typed_object_and_time_format() {
        let mut pod = crate::testing::pod("ns", "x", "");
        pod.metadata.uid = Some("u1".into());
        pod.metadata.resource_version = Some("9".into());
        let r = InvolvedObject::of(&pod);
        assert_eq!((r.kind.as_str(), r.api_version.as_str(), r.name.as_str()), ("Pod", "v1", "x"));
        assert_eq!((r.namespace.as_str(), r.uid.as_str(), r.resource_version.as_str()), ("ns", "u1", "9"));
        assert_eq!(InvolvedObject::of(&std::sync::Arc::new(pod)), r, "an Arc refers to what it holds");
        let t = jiff::Timestamp::from_second(1_700_000_000).unwrap();
        assert_eq!(format_time(t), "2023-11-14T22:13:20Z");
        let t = jiff::Timestamp::new(1_700_000_000, 999_999_999).unwrap();
        assert_eq!(format_time(t), "2023-11-14T22:13:20Z", "whole seconds, as Go's recorder writes");
    }

    #[test]
    fn event_names_are_unique_hex_suffixed() {
        let t = jiff::Timestamp::from_second(1_700_000_000).unwrap();
        let a = unique_event_name("pod", t);
        let b = unique_event_name("pod", t);
        assert_ne!(a, b);
        let (prefix, hex) = a.split_once('.').unwrap();
        assert_eq!(prefix, "pod");
        assert!(u64::from_str_radix(hex, 16).unwrap() >= 1_700_000_000_000_000_000);
    }

    #[test]
    fn reference_from_dynamic_object() {
        let res = DynamicResource {
            group: "apps".into(),
            version: "v1".into(),
            kind: "Deployment".into(),
            plural: "deployments".into(),
            namespaced: true,
        };
        let mut obj = DynamicObject::new(&res, "web").within("ns");
        obj.metadata.uid = Some("u".into());
        let r = InvolvedObject::of(&obj);
        assert_eq!((r.kind.as_str(), r.api_version.as_str()), ("Deployment", "apps/v1"));
        assert_eq!((r.namespace.as_str(), r.name.as_str(), r.uid.as_str()), ("ns", "web", "u"));

        // Without type meta the reference still names the object.
        obj.kind.clear();
        obj.api_version.clear();
        let r = InvolvedObject::of(&obj);
        assert_eq!((r.kind.as_str(), r.api_version.as_str(), r.name.as_str()), ("", "", "web"));
    }
}
