//! The runtime's own view of a core/v1 `Event`, its `ObjectReference` and a
//! minimal `ObjectMeta`.
//!
//! The runtime must not depend on the generated crate, so it carries the
//! few fields it writes. They serialize to the same JSON as the generated
//! `api::core::v1::Event`; fields this struct does not model (`series`,
//! `related`, `eventTime`, ...) survive a read-modify-write through the
//! flattened `other` maps.

use crate::dynamic::DynamicMeta;

use serde::{Deserialize, Serialize};

use crate::object::{Metadata, Object, Resource, Scope};

/// core/v1 `ObjectReference`: which object an event is about.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// Kind of the object, e.g. `Pod`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Namespace of the object; empty for cluster-scoped objects.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name of the object.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// UID of the object, telling it apart from an earlier object of the same
    /// name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// `apiVersion` of the object, e.g. `apps/v1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// The object's resourceVersion when the reference was made: which version
    /// of the object the event is about.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    /// A part of the object, e.g. `spec.containers{app}`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field_path: String,
}

impl ObjectReference {
    /// The reference client-go's `reference.GetReference` makes: kind and
    /// apiVersion from the type, identity from the metadata.
    #[doc(alias = "GetReference")]
    pub fn from_object<K: Object + Resource>(obj: &K) -> ObjectReference {
        let m = obj.metadata();
        let s = |v: Option<&str>| v.unwrap_or_default().to_owned();
        ObjectReference {
            kind: K::KIND.to_owned(),
            namespace: s(m.namespace()),
            name: s(m.name()),
            uid: s(m.uid()),
            api_version: K::API_VERSION.to_owned(),
            resource_version: s(m.resource_version()),
            field_path: String::new(),
        }
    }

    /// The same reference pointing at a part of the object.
    #[must_use]
    pub fn with_field_path(mut self, field_path: impl Into<String>) -> Self {
        self.field_path = field_path.into();
        self
    }
}

/// Anything an event can be recorded about: every [`Object`], an
/// [`ObjectReference`] and a [`DynamicObject`](crate::dynamic::DynamicObject).
pub trait ToObjectReference {
    /// The reference events about `self` carry as `involvedObject`.
    fn object_reference(&self) -> ObjectReference;
}

impl<K: Object + Resource> ToObjectReference for K {
    fn object_reference(&self) -> ObjectReference {
        ObjectReference::from_object(self)
    }
}

impl ToObjectReference for ObjectReference {
    fn object_reference(&self) -> ObjectReference {
        self.clone()
    }
}

impl ToObjectReference for crate::dynamic::DynamicObject {
    fn object_reference(&self) -> ObjectReference {
        let m = &self.metadata;
        let s = |v: &Option<String>| v.clone().unwrap_or_default();
        ObjectReference {
            kind: self.kind.clone(),
            namespace: s(&m.namespace),
            name: s(&m.name),
            uid: s(&m.uid),
            api_version: self.api_version.clone(),
            resource_version: s(&m.resource_version),
            field_path: String::new(),
        }
    }
}

/// core/v1 `EventSource`: who reported the event.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EventSource {
    /// The component that reported, e.g. `deployment-controller`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub component: String,
    /// The node the reporter runs on, if it is tied to one (as the kubelet is).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
}

impl EventSource {
    /// A source naming `component`, without a host.
    pub fn new(component: impl Into<String>) -> Self {
        EventSource { component: component.into(), host: String::new() }
    }
    /// The same source, on node `host`.
    #[must_use]
    pub fn with_host(mut self, host: impl Into<String>) -> Self {
        self.host = host.into();
        self
    }
}

/// The two event types the apiserver accepts (`v1.EventTypeNormal`,
/// `v1.EventTypeWarning`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Expected behaviour, for information (`v1.EventTypeNormal`).
    #[doc(alias = "EventTypeNormal")]
    Normal,
    /// Something may be wrong and deserves attention (`v1.EventTypeWarning`).
    #[doc(alias = "EventTypeWarning")]
    Warning,
}

impl EventType {
    /// The value of the event's `type` field: `Normal` or `Warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

impl std::fmt::Display for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// core/v1 `Event`, the fields the legacy (`core/v1`) recorder writes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// `apiVersion`, `v1`; may be absent on list items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `kind`, `Event`; may be absent on list items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The event's `metadata`; the recorder names events `<object name>.<unique
    /// suffix>`, in the object's namespace (`default` for cluster-scoped
    /// objects).
    #[serde(default)]
    pub metadata: DynamicMeta,
    /// `involvedObject`: the object the event is about.
    #[serde(default)]
    pub involved_object: ObjectReference,
    /// `reason`: a short UpperCamelCase machine-readable cause, e.g.
    /// `FailedScheduling`; events are aggregated by it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// `message`: the human-readable description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// `source`: the component (and host) that reported the event.
    #[serde(default)]
    pub source: EventSource,
    /// RFC 3339, second precision (`metav1.Time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_timestamp: Option<String>,
    /// `lastTimestamp`: when the event last occurred, in the same format as
    /// `first_timestamp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_timestamp: Option<String>,
    /// `count`: how many times the event occurred; the recorder bumps it
    /// instead of writing a new event for repeats.
    #[serde(default)]
    pub count: i32,
    /// `type`: `Normal` or `Warning` (see [`EventType`]).
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub type_: String,
    /// `reportingComponent`: the controller that emitted the event, e.g.
    /// `kubernetes.io/deployment-controller`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reporting_component: String,
    /// `reportingInstance`: the instance of the reporting controller, e.g. the
    /// pod or host name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reporting_instance: String,
    /// `eventTime`, `series`, `action`, `related`, ...
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

impl Resource for Event {
    const GROUP: &'static str = "";
    const VERSION: &'static str = "v1";
    const API_VERSION: &'static str = "v1";
    const KIND: &'static str = "Event";
    const PLURAL: &'static str = "events";
    const SCOPE: Scope = Scope::Namespaced;
    const LIST_KIND: &'static str = "EventList";
}

impl Object for Event {
    type Meta = DynamicMeta;
    fn metadata(&self) -> &DynamicMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut DynamicMeta {
        &mut self.metadata
    }
}

/// `metav1.Time` as the apiserver writes it: UTC, whole seconds.
pub(crate) fn format_time(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// `<name>.<hex of Unix nanoseconds>`, client-go's event naming. The
/// nanoseconds are made strictly increasing within the process so two
/// events recorded in the same clock tick still get distinct names.
pub(crate) fn unique_event_name(object_name: &str, now: jiff::Timestamp) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST: AtomicU64 = AtomicU64::new(0);
    let wall = u64::try_from(now.as_nanosecond()).unwrap_or(0);
    let mut prev = LAST.load(Ordering::Relaxed);
    let nanos = loop {
        let next = wall.max(prev.saturating_add(1));
        match LAST.compare_exchange_weak(prev, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => break next,
            Err(actual) => prev = actual,
        }
    };
    format!("{object_name}.{nanos:x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_json_round_trips_unknown_fields() {
        let json = serde_json::json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "p.1", "namespace": "ns", "resourceVersion": "5", "creationTimestamp": "2024-01-01T00:00:00Z"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns", "uid": "u", "apiVersion": "v1"},
            "reason": "Started", "message": "m", "source": {"component": "c"},
            "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:00:00Z",
            "count": 2, "type": "Normal", "eventTime": null, "reportingComponent": "c", "reportingInstance": ""
        });
        let ev: Event = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(ev.count, 2);
        assert_eq!(ev.type_, "Normal");
        assert_eq!(ev.metadata.other.get("creationTimestamp"), json.pointer("/metadata/creationTimestamp"));
        let back = serde_json::to_value(&ev).unwrap();
        assert_eq!(back.get("eventTime"), Some(&serde_json::Value::Null));
        assert_eq!(back.pointer("/involvedObject/uid"), Some(&serde_json::json!("u")));
    }

    #[test]
    fn reference_from_object_and_time_format() {
        let mut ev = Event::default();
        ev.metadata.name = Some("x".into());
        ev.metadata.namespace = Some("ns".into());
        ev.metadata.uid = Some("u1".into());
        ev.metadata.resource_version = Some("9".into());
        let r = ev.object_reference();
        assert_eq!((r.kind.as_str(), r.api_version.as_str(), r.name.as_str()), ("Event", "v1", "x"));
        assert_eq!((r.namespace.as_str(), r.uid.as_str(), r.resource_version.as_str()), ("ns", "u1", "9"));
        let t = jiff::Timestamp::from_second(1_700_000_000).unwrap();
        assert_eq!(format_time(t), "2023-11-14T22:13:20Z");
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
        let res = crate::object::DynamicResource {
            group: "apps".into(),
            version: "v1".into(),
            kind: "Deployment".into(),
            plural: "deployments".into(),
            namespaced: true,
        };
        let mut obj = crate::dynamic::DynamicObject::new(&res, "web").within("ns");
        obj.metadata.uid = Some("u".into());
        let r = obj.object_reference();
        assert_eq!((r.kind.as_str(), r.api_version.as_str()), ("Deployment", "apps/v1"));
        assert_eq!((r.namespace.as_str(), r.name.as_str(), r.uid.as_str()), ("ns", "web", "u"));
    }
}
