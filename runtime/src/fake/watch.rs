//! Watches: changes after a resourceVersion, the initial events of a
//! watch-list ending in the `k8s.io/initial-events-end` bookmark, bookmarks
//! on request, and 410 `Expired` for a resourceVersion older than the
//! compaction, each event a JSON line as the apiserver streams them.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::route::Ctx;
use super::list::{self, Selection};
use super::shared::Shared;
use super::status;
use super::tracker::{Change, Event, Gvr};
use crate::rest::Status;

/// The annotation that ends a watch-list's initial events.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// What one watch streams.
struct Watch {
    gvr: Gvr,
    namespace: String,
    selection: Selection,
    kind: String,
    api_version: String,
    bookmarks: bool,
    timeout: Option<Duration>,
}

impl Watch {
    /// The event a change is to this watch: a modification moving an
    /// object into the selection is an addition, one moving it out a
    /// deletion, as the apiserver's watch cache reports them.
    fn sees(&self, event: &Event) -> Option<Change> {
        if *event.gvr != self.gvr || !list::in_namespace(&event.object, &self.namespace) {
            return None;
        }
        let now = self.selection.matches(&event.object);
        match event.change {
            Change::Added | Change::Deleted => now.then_some(event.change),
            Change::Modified => {
                let before = event.old.as_ref().is_some_and(|old| self.selection.matches(old));
                match (before, now) {
                    (true, true) => Some(Change::Modified),
                    (false, true) => Some(Change::Added),
                    (true, false) => Some(Change::Deleted),
                    (false, false) => None,
                }
            }
        }
    }

    fn bookmark(&self, rv: u64, initial_events_end: bool) -> Value {
        let mut metadata = json!({"resourceVersion": rv.to_string()});
        if initial_events_end {
            metadata["annotations"] = json!({ INITIAL_EVENTS_END: "true" });
        }
        json!({"kind": self.kind, "apiVersion": self.api_version, "metadata": metadata})
    }
}

fn line(out: &mut Vec<u8>, kind: &str, object: &Value) {
    let event = json!({"type": kind, "object": object});
    // Writing a Value to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, &event);
    out.push(b'\n');
}

/// Checks the watch options as the apiserver's validation does.
fn validate(ctx: &Ctx<'_>) -> Result<Option<bool>, Status> {
    let invalid = |field: &str, message: &str| {
        status::failure(422, "Invalid", format!("ListOptions.meta.k8s.io \"\" is invalid: {field}: {message}"), None)
    };
    let send_initial = match ctx.param("sendInitialEvents") {
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(other) => return Err(status::bad_request(format!("invalid sendInitialEvents {other:?}"))),
        None => None,
    };
    let version_match = ctx.param("resourceVersionMatch").filter(|m| !m.is_empty());
    match send_initial {
        Some(_) if version_match != Some("NotOlderThan") => Err(invalid(
            "resourceVersionMatch",
            "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        )),
        Some(true) if ctx.param("allowWatchBookmarks") != Some("true") => Err(invalid(
            "allowWatchBookmarks",
            "Required value: sendInitialEvents requires setting allowWatchBookmarks to true",
        )),
        None if version_match.is_some() => Err(invalid(
            "resourceVersionMatch",
            "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        )),
        _ => Ok(send_initial),
    }
}

/// Starts a watch: the receiver yields the stream's chunks until the
/// client goes away, `timeoutSeconds` pass, or the fake closes watches.
pub(crate) fn start(shared: &Arc<Shared>, ctx: &Ctx<'_>) -> Result<mpsc::Receiver<Bytes>, Status> {
    let send_initial_events = validate(ctx)?;
    let mut selection = Selection::from_query(ctx)?;
    if let Some(name) = &ctx.info.name {
        selection = selection.and_name(name);
    }
    let timeout = match ctx.param("timeoutSeconds") {
        Some(t) => Some(Duration::from_secs(
            t.parse().map_err(|_| status::bad_request(format!("invalid timeoutSeconds {t:?}")))?,
        )),
        None => None,
    };
    let rv = ctx.param("resourceVersion").filter(|rv| !rv.is_empty() && *rv != "0");
    let from_now = rv.is_none();
    let rv = match rv {
        Some(rv) => rv.parse::<u64>().map_err(|_| status::bad_request(format!("invalid resourceVersion {rv:?}")))?,
        None => 0,
    };
    let (tx, rx) = mpsc::channel(16);
    let mut signals = shared.signal.subscribe();
    let t = shared.tracker.lock();
    let resource = t.info(ctx.gvr());
    let watch = Watch {
        gvr: ctx.gvr().clone(),
        namespace: ctx.key_namespace(&resource),
        selection,
        kind: resource.kind.clone(),
        api_version: ctx.gvr().api_version(),
        bookmarks: ctx.param("allowWatchBookmarks") == Some("true"),
        timeout,
    };
    let mut first = Vec::new();
    let initial = send_initial_events.unwrap_or(from_now);
    let cursor = if initial || from_now {
        if initial {
            for object in list::matching(&t, ctx, &watch.selection) {
                line(&mut first, "ADDED", &object);
            }
        }
        if send_initial_events == Some(true) {
            line(&mut first, "BOOKMARK", &watch.bookmark(t.rv, true));
        }
        t.rv
    } else if rv < t.compacted {
        // The apiserver accepts the watch, then ends it with the error.
        let expired = status::expired(format!("too old resource version: {rv} ({})", t.compacted));
        line(&mut first, "ERROR", &serde_json::to_value(expired).unwrap_or(Value::Null));
        drop(t);
        let _ = tx.try_send(Bytes::from(first));
        return Ok(rx);
    } else {
        rv
    };
    drop(t);
    signals.mark_unchanged();
    let closes = signals.borrow().closes;
    let shared = shared.clone();
    tokio::spawn(async move {
        if !first.is_empty() && tx.send(Bytes::from(first)).await.is_err() {
            return;
        }
        let deadline = watch.timeout.map(|t| tokio::time::Instant::now() + t);
        let mut cursor = cursor;
        let mut bookmarks_seen = signals.borrow().bookmarks;
        loop {
            let mut out = Vec::new();
            let compacted = {
                let t = shared.tracker.lock();
                if cursor < t.compacted {
                    Some(t.compacted)
                } else {
                    for event in t.events_after(cursor) {
                        if let Some(change) = watch.sees(event) {
                            line(&mut out, change.as_str(), &event.object);
                        }
                    }
                    cursor = t.rv;
                    None
                }
            };
            if let Some(compacted) = compacted {
                let expired = status::expired(format!("too old resource version: {cursor} ({compacted})"));
                line(&mut out, "ERROR", &serde_json::to_value(expired).unwrap_or(Value::Null));
                let _ = tx.send(Bytes::from(out)).await;
                return;
            }
            let bookmarks = signals.borrow().bookmarks;
            if bookmarks != bookmarks_seen {
                bookmarks_seen = bookmarks;
                if watch.bookmarks {
                    line(&mut out, "BOOKMARK", &watch.bookmark(cursor, false));
                }
            }
            if !out.is_empty() && tx.send(Bytes::from(out)).await.is_err() {
                return;
            }
            let expired = async {
                match deadline {
                    Some(deadline) => tokio::time::sleep_until(deadline).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                changed = signals.changed() => {
                    if changed.is_err() || signals.borrow().closes != closes {
                        return;
                    }
                }
                () = tx.closed() => return,
                () = expired => return,
            }
        }
    });
    Ok(rx)
}
