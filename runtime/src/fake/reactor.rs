//! What tests see of the traffic and how they steer it: every request is
//! recorded as an [`Action`] (client-go's `Fake.Actions()`), and reactors
//! (client-go's `PrependReactor`) may answer a request in the fake's place
//! or hold it up first.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::rest::Status;

/// One request the fake received (client-go's `testing.Action`).
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete` or
    /// `deletecollection`.
    pub verb: String,
    /// API group; empty for the core group.
    pub group: String,
    /// API version.
    pub version: String,
    /// The resource (plural), e.g. `pods`.
    pub resource: String,
    /// The subresource (`status`, `scale`, ...); empty for the resource itself.
    pub subresource: String,
    /// The namespace of the path; empty at cluster scope or across all
    /// namespaces.
    pub namespace: String,
    /// The object's name; empty for collection requests.
    pub name: String,
    /// The request body as JSON (an apply configuration sent as YAML is
    /// converted); `None` without a body or when it is not JSON.
    pub body: Option<Value>,
    /// The body's `Content-Type` for a patch (`application/merge-patch+json`,
    /// ...); `None` for other verbs.
    pub patch_type: Option<String>,
    /// The query parameters, in the order sent.
    pub query: Vec<(String, String)>,
}

impl Action {
    /// Whether the action is `verb` on `resource`, where either may be
    /// `"*"` and `resource` may name a subresource as `pods/status`
    /// (a plain `pods` matches the resource and all its subresources).
    pub fn matches(&self, verb: &str, resource: &str) -> bool {
        let verb_ok = verb == "*" || verb == self.verb;
        let resource_ok = match resource.split_once('/') {
            _ if resource == "*" => true,
            Some((plural, sub)) => plural == self.resource && sub == self.subresource,
            None => resource == self.resource,
        };
        verb_ok && resource_ok
    }

    /// The value of query parameter `key`, if sent.
    pub fn query_param(&self, key: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// What a reactor does with a request it handles.
// Not boxed: made once per reaction, and written as a literal in tests.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Reaction {
    /// Answer with this Status instead (its `code` is the HTTP status; 0
    /// is taken as 500): an injected apiserver error.
    Error(Status),
    /// Answer 200 with this JSON instead.
    Respond(Value),
    /// Wait this long, then go on to the next reactor and, if none answers,
    /// to the fake itself: an injected latency.
    Delay(Duration),
}

/// A reactor's function: `None` leaves the request to the next reactor.
pub(crate) type ReactorFn = dyn Fn(&Action) -> Option<Reaction> + Send + Sync;

/// A reactor and the requests it looks at.
pub(crate) struct Reactor {
    pub verb: String,
    pub resource: String,
    pub react: Arc<ReactorFn>,
}

impl Reactor {
    pub(crate) fn handles(&self, action: &Action) -> bool {
        action.matches(&self.verb, &self.resource)
    }
}
