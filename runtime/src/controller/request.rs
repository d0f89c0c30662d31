//! What a reconciler is given and what it answers.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::object::split_key;

/// One reconcile: the key of a primary object (`namespace/name`, or `name`
/// for a cluster-scoped kind) and the object as the cache held it when the
/// reconcile started; `None` when the object is gone (deleted, or not
/// created yet when another object's change enqueued its key).
pub struct Request<K> {
    key: String,
    object: Option<Arc<K>>,
}

impl<K> Request<K> {
    /// A request for `key` with the cached `object`.
    pub fn new(key: impl Into<String>, object: Option<Arc<K>>) -> Self {
        Request { key: key.into(), object }
    }

    /// `namespace/name`, or `name` for a cluster-scoped object.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The object's namespace; `None` for a cluster-scoped kind.
    pub fn namespace(&self) -> Option<&str> {
        split_key(&self.key).0
    }

    /// The object's name.
    pub fn name(&self) -> &str {
        split_key(&self.key).1
    }

    /// The object as cached; `None` when it is gone.
    pub fn object(&self) -> Option<&Arc<K>> {
        self.object.as_ref()
    }

    /// The object, taken out of the request.
    pub fn into_object(self) -> Option<Arc<K>> {
        self.object
    }
}

impl<K> Clone for Request<K> {
    fn clone(&self) -> Self {
        Request { key: self.key.clone(), object: self.object.clone() }
    }
}

impl<K> fmt::Debug for Request<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request").field("key", &self.key).field("gone", &self.object.is_none()).finish()
    }
}

impl<K> fmt::Display for Request<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key)
    }
}

/// What to do with a key after its reconcile (controller-runtime's
/// `Result`, kube-runtime's `Action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Action(pub(super) Next);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    Done,
    RequeueAfter(Duration),
    Backoff,
}

impl Action {
    /// Nothing more until the object (or one it owns or watches) changes;
    /// the key's failure count is reset.
    pub const fn done() -> Self {
        Action(Next::Done)
    }

    /// Reconcile the key again after `delay` (sooner if it changes), e.g.
    /// to look at something outside the cluster periodically; the key's
    /// failure count is reset.
    pub const fn requeue_after(delay: Duration) -> Self {
        Action(Next::RequeueAfter(delay))
    }

    /// Reconcile the key again after the controller's rate limiter's delay
    /// for it, which grows with each backoff in a row (what the default
    /// error policy answers).
    pub const fn backoff() -> Self {
        Action(Next::Backoff)
    }

    /// The delay of [`requeue_after`](Self::requeue_after), if that is what
    /// this is.
    pub fn requeue_delay(&self) -> Option<Duration> {
        match self.0 {
            Next::RequeueAfter(delay) => Some(delay),
            _ => None,
        }
    }
}
