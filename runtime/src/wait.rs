//! Waiting until an object reaches a state: kube-rs's `await_condition`,
//! client-go's `tools/watch.Until` and `UntilWithSync`, on the recovering
//! [`watcher`].
//!
//! - [`await_condition`]: until one object, by name, meets a
//!   [`Condition`]; [`conditions`] has the stock ones (deleted, a CRD
//!   established, a pod running, a job complete).
//! - [`until`]: until a watch event from a resourceVersion on meets a
//!   predicate (client-go `Until`; it ends on 410 Gone as client-go's
//!   does).
//! - [`until_with_sync`]: a precondition on the listed objects first, then
//!   a predicate on the events (client-go `UntilWithSync`); relists on
//!   410 and goes on.
//!
//! None of them has a deadline of its own: wrap the future in
//! [`tokio::time::timeout`], which drops it when time is up (they are
//! cancel safe: dropping one closes its watch and changes nothing).
//! ```no_run
//! # use std::time::Duration;
//! # use k8s_client_runtime::{ResourceClient, dynamic::DynamicObject};
//! # use k8s_client_runtime::wait::{await_condition, conditions};
//! # async fn run(crds: ResourceClient<DynamicObject>) -> Result<(), Box<dyn std::error::Error>> {
//! let established = await_condition(crds, "widgets.example.com", conditions::is_crd_established());
//! match tokio::time::timeout(Duration::from_secs(30), established).await {
//!     Ok(result) => println!("established: {:?}", result?.is_some()),
//!     Err(_elapsed) => println!("not established within 30 s"),
//! }
//! # Ok(()) }
//! ```
//!
//! Errors: the watcher retries what may heal (a broken connection, a 5xx,
//! a 429) and the waits go on through them; an error that will not heal
//! ([`watcher::Error::is_transient`] is false: a 403, a 404 for a kind
//! not served, an invalid selector) ends the wait with it.

pub mod conditions;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

use futures_util::StreamExt as _;

use crate::object::Metadata as _;
use crate::rest::{ListOptions, ResourceClient, WatchEvent, verbs};
use crate::watcher::{self, Event, OnExpired};

pub use self::conditions::Condition;

/// Waits until the object `name` of `client` meets `condition`, and
/// returns it as it was then: `None` when the condition held of its
/// absence (see [`conditions::is_deleted`]). The condition is checked on
/// the object as listed first, then after every change; with the watcher
/// relisting on 410, no state it passes through is judged twice out of
/// order (kube-rs `await_condition`).
///
/// # Cancel safety
/// Cancel safe: dropping the future closes the watch.
pub async fn await_condition<K>(
    client: ResourceClient<K>,
    name: &str,
    condition: impl Condition<K>,
) -> Result<Option<K>, watcher::Error>
where
    K: verbs::List + verbs::Watch,
{
    let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
    let mut events = std::pin::pin!(watcher::watcher(client, config));
    let mut listed: Option<K> = None;
    while let Some(item) = events.next().await {
        // The object as it is now.
        let current = match item {
            // Judged once the list is complete.
            Ok(Event::Init) => {
                listed = None;
                continue;
            }
            Ok(Event::InitApply(obj)) => {
                listed = Some(obj);
                continue;
            }
            Ok(Event::InitDone { .. }) => listed.take(),
            Ok(Event::Watch(WatchEvent::Added(obj) | WatchEvent::Modified(obj))) => Some(obj),
            Ok(Event::Watch(WatchEvent::Deleted(_))) => None,
            Ok(Event::Watch(WatchEvent::Bookmark(_))) => continue,
            Err(e) if e.is_transient() => {
                tracing::debug!(error = %crate::ErrorChain(&e), "await_condition: watch failed; retrying");
                continue;
            }
            Err(e) => return Err(e),
        };
        if condition.matches_object(current.as_ref()) {
            return Ok(current);
        }
    }
    unreachable!("a relisting watcher's stream does not end")
}

/// Watches `client` from `resource_version` (`""`: from now) until
/// `condition` holds of an event, and returns that event (client-go
/// `watch.Until`, with one predicate: an `FnMut` can check several in
/// turn). Broken connections and ended watches are resumed without loss;
/// 410 Gone ends the wait with [`watcher::Error::Expired`].
///
/// # Cancel safety
/// Cancel safe: dropping the future closes the watch.
pub async fn until<K>(
    client: ResourceClient<K>,
    resource_version: &str,
    list_options: ListOptions,
    mut condition: impl FnMut(&WatchEvent<K>) -> bool,
) -> Result<WatchEvent<K>, watcher::Error>
where
    K: verbs::List + verbs::Watch,
{
    let mut events = std::pin::pin!(watcher::retry_watcher(client, resource_version, list_options));
    while let Some(item) = events.next().await {
        match item {
            Ok(event) if condition(&event) => return Ok(event),
            Ok(_) => {}
            Err(e) if e.is_transient() => {}
            Err(e) => return Err(e),
        }
    }
    unreachable!("a retry watcher's stream ends only with an error")
}

/// client-go's `UntilWithSync`: lists the objects of `client` (with
/// `list_options`' selectors), returns `Ok(None)` at once if
/// `precondition` holds of them, else watches until `condition` holds of
/// an event and returns it.
///
/// After a relist (410 Gone) the events are made up from the difference
/// with the objects known before, as an informer makes them: `Added` for
/// a new object, `Modified` for one whose resourceVersion moved, `Deleted`
/// for one gone. That takes a copy of every object; for one object,
/// [`await_condition`] is lighter.
///
/// # Cancel safety
/// Cancel safe: dropping the future closes the watch.
pub async fn until_with_sync<K>(
    client: ResourceClient<K>,
    list_options: ListOptions,
    precondition: impl FnOnce(&[&K]) -> bool,
    mut condition: impl FnMut(&WatchEvent<K>) -> bool,
) -> Result<Option<WatchEvent<K>>, watcher::Error>
where
    K: verbs::List + verbs::Watch,
{
    let config = watcher::Config { list_options, on_expired: OnExpired::Relist, ..watcher::Config::default() };
    let mut events = std::pin::pin!(watcher::watcher(client, config));
    let mut known: HashMap<(String, String), K> = HashMap::new();
    let mut listing: Option<HashMap<(String, String), K>> = None;
    let mut precondition = Some(precondition);
    while let Some(item) = events.next().await {
        let event = match item {
            Ok(Event::Init) => {
                listing = Some(HashMap::new());
                continue;
            }
            Ok(Event::InitApply(obj)) => {
                listing.get_or_insert_default().insert(key(&obj), obj);
                continue;
            }
            Ok(Event::InitDone { .. }) => {
                let listed = listing.take().unwrap_or_default();
                if let Some(precondition) = precondition.take() {
                    if precondition(&listed.values().collect::<Vec<_>>()) {
                        return Ok(None);
                    }
                    known = listed;
                    continue;
                }
                // A relist: tell what changed meanwhile.
                for event in diff(std::mem::replace(&mut known, listed.clone()), listed) {
                    if condition(&event) {
                        return Ok(Some(event));
                    }
                }
                continue;
            }
            Ok(Event::Watch(event)) => event,
            Err(e) if e.is_transient() => continue,
            Err(e) => return Err(e),
        };
        match &event {
            WatchEvent::Added(obj) | WatchEvent::Modified(obj) => {
                known.insert(key(obj), obj.clone());
            }
            WatchEvent::Deleted(obj) => {
                known.remove(&key(obj));
            }
            WatchEvent::Bookmark(_) => {}
        }
        if condition(&event) {
            return Ok(Some(event));
        }
    }
    unreachable!("a relisting watcher's stream does not end")
}

/// An object's namespace and name.
fn key<K: verbs::List>(obj: &K) -> (String, String) {
    let meta = obj.metadata();
    (meta.namespace().unwrap_or_default().to_owned(), meta.name().unwrap_or_default().to_owned())
}

/// The events that take `before` to `after`: deletions first, then
/// additions and changes.
fn diff<K: verbs::List>(
    mut before: HashMap<(String, String), K>,
    after: HashMap<(String, String), K>,
) -> Vec<WatchEvent<K>> {
    let mut changed = Vec::new();
    for (key, obj) in after {
        match before.remove(&key) {
            None => changed.push(WatchEvent::Added(obj)),
            Some(old) if old.metadata().resource_version() != obj.metadata().resource_version() => {
                changed.push(WatchEvent::Modified(obj));
            }
            Some(_) => {}
        }
    }
    let mut events: Vec<_> = before.into_values().map(WatchEvent::Deleted).collect();
    events.extend(changed);
    events
}
