//! The apiserver's error answers, as `metav1.Status` objects with the
//! reason, code, message and details `k8s.io/apimachinery/pkg/api/errors`
//! gives them.

use crate::rest::{ApplyConflict, Status, StatusCause, StatusDetails};

use super::tracker::Gvr;

/// A `Failure` Status.
pub(crate) fn failure(code: u16, reason: &str, message: impl Into<String>, details: Option<StatusDetails>) -> Status {
    Status {
        api_version: Some("v1".into()),
        kind: Some("Status".into()),
        status: Some("Failure".into()),
        message: message.into(),
        reason: reason.into(),
        details,
        code,
    }
}

/// The `Success` Status of a delete that removed the object at once.
pub(crate) fn deleted(gvr: &Gvr, name: &str, uid: &str) -> Status {
    Status {
        api_version: Some("v1".into()),
        kind: Some("Status".into()),
        status: Some("Success".into()),
        details: Some(details(gvr, name, uid)),
        ..Status::default()
    }
}

fn details(gvr: &Gvr, name: &str, uid: &str) -> StatusDetails {
    StatusDetails {
        name: name.to_owned(),
        group: gvr.group.clone(),
        kind: gvr.resource.clone(),
        uid: uid.to_owned(),
        ..StatusDetails::default()
    }
}

/// `pods "web" not found`.
pub(crate) fn not_found(gvr: &Gvr, name: &str) -> Status {
    failure(404, "NotFound", format!("{} {name:?} not found", gvr.qualified()), Some(details(gvr, name, "")))
}

/// `pods "web" already exists`.
pub(crate) fn already_exists(gvr: &Gvr, name: &str) -> Status {
    failure(409, "AlreadyExists", format!("{} {name:?} already exists", gvr.qualified()), Some(details(gvr, name, "")))
}

/// `Operation cannot be fulfilled on pods "web": <why>`.
pub(crate) fn conflict(gvr: &Gvr, name: &str, why: &str) -> Status {
    failure(
        409,
        "Conflict",
        format!("Operation cannot be fulfilled on {} {name:?}: {why}", gvr.qualified()),
        Some(details(gvr, name, "")),
    )
}

/// What an update with a stale resourceVersion is told.
pub(crate) const MODIFIED: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

/// An apply that would take fields other managers own, written as
/// structured-merge-diff's conflict error is.
pub(crate) fn apply_conflicts(gvr: &Gvr, name: &str, conflicts: &[ApplyConflict]) -> Status {
    let causes = conflicts
        .iter()
        .map(|c| StatusCause {
            reason: "FieldManagerConflict".into(),
            message: if c.message.is_empty() { format!("conflict with {:?}", c.manager) } else { c.message.clone() },
            field: c.field.clone(),
        })
        .collect::<Vec<_>>();
    let listed = causes.iter().map(|c| format!("- {}: {}", c.message, c.field)).collect::<Vec<_>>().join("\n");
    let plural = if causes.len() == 1 { "conflict" } else { "conflicts" };
    failure(
        409,
        "Conflict",
        format!("Apply failed with {} {plural}: {listed}", causes.len()),
        Some(StatusDetails { causes, ..details(gvr, name, "") }),
    )
}

/// 410 `Expired`: a resourceVersion or continue token older than the
/// compaction.
pub(crate) fn expired(message: impl Into<String>) -> Status {
    failure(410, "Expired", message, None)
}

/// 422 `Invalid` with one cause.
pub(crate) fn invalid(gvr: &Gvr, kind: &str, name: &str, field: &str, cause: &str, message: &str) -> Status {
    let kind = if kind.is_empty() { gvr.resource.as_str() } else { kind };
    failure(
        422,
        "Invalid",
        format!("{kind}{} {name:?} is invalid: {field}: {message}", group_suffix(gvr)),
        Some(StatusDetails {
            name: name.to_owned(),
            group: gvr.group.clone(),
            kind: kind.to_owned(),
            causes: vec![StatusCause { reason: cause.into(), message: message.into(), field: field.into() }],
            ..StatusDetails::default()
        }),
    )
}

fn group_suffix(gvr: &Gvr) -> String {
    if gvr.group.is_empty() { String::new() } else { format!(".{}", gvr.group) }
}

/// 400 `BadRequest`.
pub(crate) fn bad_request(message: impl Into<String>) -> Status {
    failure(400, "BadRequest", message, None)
}

/// 405 `MethodNotAllowed`.
pub(crate) fn method_not_allowed(method: &str, path: &str) -> Status {
    failure(
        405,
        "MethodNotAllowed",
        format!("the server does not allow this method on the requested resource ({method} {path})"),
        None,
    )
}

/// 404 for a path that names no resource.
pub(crate) fn no_route(path: &str) -> Status {
    failure(404, "NotFound", format!("the server could not find the requested resource ({path})"), None)
}

/// 415 for a patch type the fake does not know.
pub(crate) fn unsupported_media_type(content_type: &str) -> Status {
    failure(
        415,
        "UnsupportedMediaType",
        format!(
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {content_type:?})"
        ),
        None,
    )
}
