//! What the recorder knows of an events.k8s.io/v1 `Event`.
//!
//! As in [`crate::record`], the runtime does not depend on the generated
//! crate: the broadcaster works on [`EventV1`], the fields it manages, and
//! hands every event out as a [`DynamicObject`] (kind `Event`, apiVersion
//! `events.k8s.io/v1`) that decodes as the generated
//! `api::events::v1::Event`.

use serde::{Deserialize, Serialize};

use crate::dynamic::{DynamicMeta, DynamicObject};
use crate::object::DynamicResource;
use crate::broadcast::InvolvedObject;

/// API group of the Events this module writes.
const GROUP: &str = "events.k8s.io";
/// Version of the Events this module writes.
const VERSION: &str = "v1";
/// `kind` of events.k8s.io/v1 Events.
const KIND: &str = "Event";

/// The longest `note` the apiserver accepts, in bytes (its
/// `NoteLengthLimit`); the recorder cuts longer notes to it, ending them
/// with ` ...`.
pub const MAX_NOTE_LENGTH: usize = 1024;

/// What a cut note ends with, as the scheduler marks its cut messages.
const TRUNCATED_SUFFIX: &str = " ...";

/// The events.k8s.io/v1 `events` resource the recorder writes to.
pub(crate) fn events_resource() -> DynamicResource {
    DynamicResource {
        group: GROUP.to_owned(),
        version: VERSION.to_owned(),
        kind: KIND.to_owned(),
        plural: "events".to_owned(),
        namespaced: true,
    }
}

/// events.k8s.io/v1 `EventSeries`: how often an event was seen again.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Series {
    /// Occurrences so far, the first included; at least 2.
    pub count: i32,
    /// When the last occurrence was seen, a `metav1.MicroTime`.
    pub last_observed_time: String,
}

/// An events.k8s.io/v1 `Event` as the broadcaster handles it; fields it
/// does not model (`deprecatedCount`, ...) survive in `other`. It
/// serializes to the event's fields beside `metadata`, that is to a
/// [`DynamicObject`]'s `data`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EventV1 {
    /// Named `<regarding name>.<unique suffix>`, in the regarding object's
    /// namespace (`default` for cluster-scoped objects).
    #[serde(skip)]
    pub metadata: DynamicMeta,
    /// When the event was first observed, a `metav1.MicroTime` (six
    /// fraction digits: the apiserver refuses other lengths).
    #[serde(default)]
    pub event_time: String,
    /// Set once the event is seen again within the series window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<Series>,
    /// The controller that emitted the event, e.g. `kubernetes.io/kubelet`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reporting_controller: String,
    /// `<controller>-<hostname>`: which instance of the controller.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reporting_instance: String,
    /// What the controller did (or failed to do), UpperCamelCase.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub action: String,
    /// Why the action was taken, UpperCamelCase.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The object the action was taken on.
    #[serde(default)]
    pub regarding: InvolvedObject,
    /// A second object involved, e.g. the node a pod was scheduled to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related: Option<InvolvedObject>,
    /// Human-readable, at most [`MAX_NOTE_LENGTH`] bytes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// `Normal` or `Warning`.
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub type_: String,
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

impl EventV1 {
    /// The event as sinks and watchers see it.
    pub(crate) fn to_object(&self) -> DynamicObject {
        let data = match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(data)) => data,
            // Strings, numbers and string maps always serialize, and a
            // struct to a JSON object.
            _ => serde_json::Map::new(),
        };
        DynamicObject {
            api_version: format!("{GROUP}/{VERSION}"),
            kind: KIND.to_owned(),
            metadata: self.metadata.clone(),
            data,
        }
    }

    /// Reads an event back from `obj`. Fails when one of the modelled
    /// fields has the wrong JSON type.
    #[cfg(test)]
    pub(crate) fn from_object(obj: &DynamicObject) -> Result<Self, serde_json::Error> {
        let mut event = EventV1::deserialize(&obj.data)?;
        event.metadata = obj.metadata.clone();
        Ok(event)
    }

    /// The event's `namespace/name`, for logs.
    pub(crate) fn describe(&self) -> String {
        format!(
            "{}/{} ({})",
            self.metadata.namespace.as_deref().unwrap_or_default(),
            self.metadata.name.as_deref().unwrap_or_default(),
            self.reason
        )
    }

    /// What makes two events the same occurrence (client-go's `getKey`):
    /// everything the recorder was given except the note.
    pub(crate) fn key(&self) -> EventKey {
        EventKey {
            type_: self.type_.clone(),
            action: self.action.clone(),
            reason: self.reason.clone(),
            reporting_controller: self.reporting_controller.clone(),
            reporting_instance: self.reporting_instance.clone(),
            regarding: self.regarding.clone(),
            related: self.related.clone().unwrap_or_default(),
        }
    }

    /// The strategic merge patch from the event without its series to the
    /// event with it: just the `series` (client-go computes the same with
    /// `CreateTwoWayMergePatch`).
    pub(crate) fn series_patch(&self) -> serde_json::Value {
        serde_json::json!({ "series": self.series })
    }
}

/// Events with equal keys are folded into one event's series. The whole
/// references take part, `fieldPath` and `resourceVersion` included, as
/// in client-go.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct EventKey {
    type_: String,
    action: String,
    reason: String,
    reporting_controller: String,
    reporting_instance: String,
    regarding: InvolvedObject,
    /// The default reference when there is no related object.
    related: InvolvedObject,
}

/// `note` cut to at most [`MAX_NOTE_LENGTH`] bytes, on a character
/// boundary, ending with ` ...` when cut; the apiserver refuses longer
/// notes, and an event refused is an event lost.
pub(crate) fn truncate_note(mut note: String) -> String {
    if note.len() <= MAX_NOTE_LENGTH {
        return note;
    }
    let mut end = MAX_NOTE_LENGTH - TRUNCATED_SUFFIX.len();
    while !note.is_char_boundary(end) {
        end -= 1;
    }
    note.truncate(end);
    note.push_str(TRUNCATED_SUFFIX);
    note
}

/// `<controller>-<hostname>`, client-go's `reportingInstance`; just
/// `<controller>-` when the host name cannot be read, as in Go.
pub(crate) fn reporting_instance(controller: &str) -> String {
    format!("{controller}-{}", gethostname::gethostname().to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn short_notes_are_kept_whole() {
        assert_eq!(truncate_note("ok".into()), "ok");
        let exact = "a".repeat(MAX_NOTE_LENGTH);
        assert_eq!(truncate_note(exact.clone()), exact);
    }

    #[test]
    fn long_notes_are_cut_to_the_limit_with_a_marker() {
        let cut = truncate_note("a".repeat(MAX_NOTE_LENGTH + 1));
        assert_eq!(cut.len(), MAX_NOTE_LENGTH);
        assert!(cut.ends_with("a ..."));
        // A three-byte character straddling the cut is left out whole.
        let cut = truncate_note("€".repeat(MAX_NOTE_LENGTH));
        assert!(cut.len() <= MAX_NOTE_LENGTH);
        assert_eq!(cut.len(), 340 * 3 + TRUNCATED_SUFFIX.len());
    }

    proptest! {
        #[test]
        fn truncated_notes_fit_and_keep_a_prefix(note in ".{0,1200}") {
            let cut = truncate_note(note.clone());
            prop_assert!(cut.len() <= MAX_NOTE_LENGTH);
            if note.len() <= MAX_NOTE_LENGTH {
                prop_assert_eq!(&cut, &note);
            } else {
                let kept = cut.strip_suffix(TRUNCATED_SUFFIX).unwrap();
                prop_assert!(note.starts_with(kept));
            }
        }
    }

    #[test]
    fn object_form_is_events_v1_and_round_trips() {
        let mut event = EventV1 {
            event_time: "2024-01-01T00:00:00.000001Z".into(),
            reporting_controller: "ctrl".into(),
            reporting_instance: "ctrl-host".into(),
            action: "Sync".into(),
            reason: "Synced".into(),
            note: "n".into(),
            type_: "Normal".into(),
            ..Default::default()
        };
        event.metadata.name = Some("web.1".into());
        let obj = event.to_object();
        assert_eq!((obj.api_version.as_str(), obj.kind.as_str()), ("events.k8s.io/v1", "Event"));
        assert!(obj.data.get("series").is_none() && obj.data.get("related").is_none());
        assert_eq!(obj.data["eventTime"], "2024-01-01T00:00:00.000001Z");
        assert_eq!(EventV1::from_object(&obj).unwrap(), event);

        event.series = Some(Series { count: 3, last_observed_time: "2024-01-01T00:00:01.000000Z".into() });
        assert_eq!(
            event.series_patch(),
            serde_json::json!({"series": {"count": 3, "lastObservedTime": "2024-01-01T00:00:01.000000Z"}})
        );
    }

    #[test]
    fn keys_ignore_the_note_but_not_the_reason_or_related_object() {
        let a = EventV1 { reason: "A".into(), note: "one".into(), ..Default::default() };
        let b = EventV1 { note: "two".into(), ..a.clone() };
        assert_eq!(a.key(), b.key());
        assert_ne!(a.key(), EventV1 { reason: "B".into(), ..a.clone() }.key());
        let related = InvolvedObject { name: "node-1".into(), ..Default::default() };
        assert_ne!(a.key(), EventV1 { related: Some(related), ..a.clone() }.key());
    }

    #[test]
    fn reporting_instance_names_controller_and_host() {
        let host = gethostname::gethostname().to_string_lossy().into_owned();
        assert_eq!(reporting_instance("ctrl"), format!("ctrl-{host}"));
    }
}
