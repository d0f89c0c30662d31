//! What the two event recorders share ([`crate::record`] writes core/v1
//! Events, [`crate::events`] events.k8s.io/v1 ones): the fan-out of events
//! to watchers ([`fanout`]), where events are written ([`EventSink`]), the
//! event types, the reference to the object an event is about, event
//! names, and which write failures are worth retrying. Both stand on this
//! module; neither reaches into the other.

use serde::{Deserialize, Serialize};

use crate::object::{DynamicResource, Metadata as _, Object};
use crate::rest::Error as RestError;

pub(crate) mod fanout;
mod sink;

pub use fanout::WatcherHandle;
pub use sink::{EventSink, RestEventSink};

/// `apiVersion` of core/v1 Events.
pub(crate) const API_VERSION: &str = "v1";
/// `kind` of core/v1 Events.
pub(crate) const KIND: &str = "Event";

/// The core/v1 `events` resource the recorder writes to.
pub(crate) fn events_resource() -> DynamicResource {
    DynamicResource {
        group: String::new(),
        version: API_VERSION.to_owned(),
        kind: KIND.to_owned(),
        plural: "events".to_owned(),
        namespaced: true,
    }
}

/// core/v1 `ObjectReference`: which object an event is about.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InvolvedObject {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Empty for cluster-scoped objects.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// The object's resourceVersion when the reference was made.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    /// A part of the object, e.g. `spec.containers{app}`; the recorder
    /// never sets it, but events read back may carry it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field_path: String,
}

impl InvolvedObject {
    /// The reference client-go's `reference.GetReference` makes: kind and
    /// apiVersion from the object's [`Object::type_meta`], identity from its
    /// metadata. An object that does not know its type is referred to
    /// without kind and apiVersion, with a warning.
    pub(crate) fn of(obj: &impl Object) -> Self {
        let m = obj.metadata();
        let (api_version, kind) = obj.type_meta().map(|(a, k)| (a.into_owned(), k.into_owned())).unwrap_or_else(|| {
            tracing::warn!(
                namespace = m.namespace().unwrap_or_default(),
                name = m.name().unwrap_or_default(),
                "recording an event about an object without apiVersion and kind"
            );
            Default::default()
        });
        let s = |v: Option<&str>| v.unwrap_or_default().to_owned();
        InvolvedObject {
            kind,
            namespace: s(m.namespace()),
            name: s(m.name()),
            uid: s(m.uid()),
            api_version,
            resource_version: s(m.resource_version()),
            field_path: String::new(),
        }
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

/// Whether a failed write may succeed if tried again. client-go gives up
/// on anything the server answered and retries only failures to reach it.
pub(crate) fn is_retryable(err: &RestError) -> bool {
    !matches!(
        err,
        RestError::Api(_)
            | RestError::InvalidRequest { .. }
            | RestError::Encode { .. }
            | RestError::Decode { .. }
            | RestError::DecodeProtobuf { .. }
            | RestError::UnexpectedContentType { .. }
    )
}
