//! Options of the typed verbs, turned into query parameters (or, for
//! delete, a JSON body) as the apiserver expects them.

use serde::Serialize;

/// Query parameters in the order they are written.
pub type QueryPairs = Vec<(&'static str, String)>;

/// Which resourceVersion a list may be served at (`resourceVersionMatch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionMatch {
    NotOlderThan,
    Exact,
}

impl VersionMatch {
    fn as_str(self) -> &'static str {
        match self {
            VersionMatch::NotOlderThan => "NotOlderThan",
            VersionMatch::Exact => "Exact",
        }
    }
}

/// Options of `list`, `watch` and `delete_collection` (metav1.ListOptions).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListOptions {
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
    /// Page size; the server returns a `continue` token when there is more.
    pub limit: Option<u32>,
    pub continue_token: Option<String>,
    pub resource_version: Option<String>,
    pub resource_version_match: Option<VersionMatch>,
    /// Server-side bound on a list or watch call.
    pub timeout_seconds: Option<u32>,
    pub allow_watch_bookmarks: bool,
    /// Watch only: start with synthetic ADDED events for the current state,
    /// ended by a bookmark annotated `k8s.io/initial-events-end`.
    pub send_initial_events: Option<bool>,
}

impl ListOptions {
    pub fn labels(mut self, selector: impl Into<String>) -> Self {
        self.label_selector = Some(selector.into());
        self
    }
    pub fn fields(mut self, selector: impl Into<String>) -> Self {
        self.field_selector = Some(selector.into());
        self
    }
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }
    pub fn continue_token(mut self, token: impl Into<String>) -> Self {
        self.continue_token = Some(token.into());
        self
    }
    pub fn resource_version(mut self, rv: impl Into<String>) -> Self {
        self.resource_version = Some(rv.into());
        self
    }
    pub fn timeout(mut self, seconds: u32) -> Self {
        self.timeout_seconds = Some(seconds);
        self
    }
    pub fn bookmarks(mut self, allow: bool) -> Self {
        self.allow_watch_bookmarks = allow;
        self
    }

    /// The query parameters of a list (`watch = false`) or watch call.
    pub fn query_pairs(&self, watch: bool) -> QueryPairs {
        let mut q = QueryPairs::new();
        if watch {
            q.push(("watch", "true".into()));
            if self.allow_watch_bookmarks {
                q.push(("allowWatchBookmarks", "true".into()));
            }
            if let Some(s) = self.send_initial_events {
                q.push(("sendInitialEvents", s.to_string()));
            }
        }
        push_opt(&mut q, "labelSelector", &self.label_selector);
        push_opt(&mut q, "fieldSelector", &self.field_selector);
        if !watch {
            if let Some(limit) = self.limit {
                q.push(("limit", limit.to_string()));
            }
            push_opt(&mut q, "continue", &self.continue_token);
        }
        push_opt(&mut q, "resourceVersion", &self.resource_version);
        if let Some(m) = self.resource_version_match {
            q.push(("resourceVersionMatch", m.as_str().into()));
        }
        if let Some(t) = self.timeout_seconds {
            q.push(("timeoutSeconds", t.to_string()));
        }
        q
    }
}

fn push_opt(q: &mut QueryPairs, key: &'static str, value: &Option<String>) {
    if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
        q.push((key, v.to_owned()));
    }
}

/// Watches take the same options as lists (`watch=true` is added).
pub type WatchOptions = ListOptions;

/// Options of `get` (metav1.GetOptions).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GetOptions {
    /// `Some("0")` lets the server answer from its cache.
    pub resource_version: Option<String>,
}

impl GetOptions {
    pub fn query_pairs(&self) -> QueryPairs {
        let mut q = QueryPairs::new();
        push_opt(&mut q, "resourceVersion", &self.resource_version);
        q
    }
}

/// How the server treats unknown or duplicate fields (`fieldValidation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldValidation {
    Ignore,
    Warn,
    Strict,
}

/// Options shared by create, update and patch (metav1.CreateOptions & co.).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// `dryRun=All`: validate and admit, but persist nothing.
    pub dry_run: bool,
    pub field_manager: Option<String>,
    pub field_validation: Option<FieldValidation>,
}

/// Options of `create`.
pub type CreateOptions = WriteOptions;
/// Options of `update`.
pub type UpdateOptions = WriteOptions;
/// Options of `patch` (the field manager is required for apply patches;
/// prefer [`ApplyOptions`] and `apply` for those).
pub type PatchOptions = WriteOptions;

impl WriteOptions {
    pub fn query_pairs(&self) -> QueryPairs {
        let mut q = QueryPairs::new();
        if self.dry_run {
            q.push(("dryRun", "All".into()));
        }
        push_opt(&mut q, "fieldManager", &self.field_manager);
        if let Some(v) = self.field_validation {
            let v = match v {
                FieldValidation::Ignore => "Ignore",
                FieldValidation::Warn => "Warn",
                FieldValidation::Strict => "Strict",
            };
            q.push(("fieldValidation", v.into()));
        }
        q
    }
}

/// Options of server-side apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyOptions {
    /// Required by the server: who owns the applied fields.
    pub field_manager: String,
    /// Take ownership of fields other managers own instead of failing
    /// with a conflict.
    pub force: bool,
    pub dry_run: bool,
}

impl ApplyOptions {
    pub fn new(field_manager: impl Into<String>) -> Self {
        ApplyOptions { field_manager: field_manager.into(), force: false, dry_run: false }
    }
    pub fn force(mut self) -> Self {
        self.force = true;
        self
    }
    pub fn query_pairs(&self) -> QueryPairs {
        let mut q = QueryPairs::new();
        if self.dry_run {
            q.push(("dryRun", "All".into()));
        }
        q.push(("fieldManager", self.field_manager.clone()));
        if self.force {
            q.push(("force", "true".into()));
        }
        q
    }
}

/// A patch body; the variant picks the `Content-Type`.
#[derive(Debug, Clone, PartialEq)]
pub enum Patch {
    /// RFC 6902 operations (`[{"op":"replace","path":...,"value":...}]`).
    Json(serde_json::Value),
    /// RFC 7386 merge patch.
    Merge(serde_json::Value),
    /// Kubernetes strategic merge patch (built-in kinds only).
    Strategic(serde_json::Value),
    /// Server-side apply configuration (sent as JSON, which is valid YAML).
    Apply(serde_json::Value),
}

impl Patch {
    pub fn content_type(&self) -> &'static str {
        match self {
            Patch::Json(_) => "application/json-patch+json",
            Patch::Merge(_) => "application/merge-patch+json",
            Patch::Strategic(_) => "application/strategic-merge-patch+json",
            Patch::Apply(_) => "application/apply-patch+yaml",
        }
    }
    pub fn body(&self) -> &serde_json::Value {
        match self {
            Patch::Json(v) | Patch::Merge(v) | Patch::Strategic(v) | Patch::Apply(v) => v,
        }
    }
}

/// What happens to dependents of a deleted object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PropagationPolicy {
    Orphan,
    Background,
    Foreground,
}

/// Conditions the object must still meet for a delete to happen.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preconditions {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
}

/// Options of `delete` and `delete_collection`, sent as a
/// `meta.k8s.io/v1 DeleteOptions` JSON body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    pub propagation_policy: Option<PropagationPolicy>,
    pub grace_period_seconds: Option<i64>,
    pub preconditions: Option<Preconditions>,
    pub dry_run: bool,
}

impl DeleteOptions {
    pub fn background() -> Self {
        DeleteOptions { propagation_policy: Some(PropagationPolicy::Background), ..Default::default() }
    }
    pub fn foreground() -> Self {
        DeleteOptions { propagation_policy: Some(PropagationPolicy::Foreground), ..Default::default() }
    }
    pub fn orphan() -> Self {
        DeleteOptions { propagation_policy: Some(PropagationPolicy::Orphan), ..Default::default() }
    }

    /// The JSON body the apiserver expects.
    pub fn to_body(&self) -> serde_json::Value {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body<'a> {
            api_version: &'static str,
            kind: &'static str,
            #[serde(skip_serializing_if = "Option::is_none")]
            propagation_policy: Option<PropagationPolicy>,
            #[serde(skip_serializing_if = "Option::is_none")]
            grace_period_seconds: Option<i64>,
            #[serde(skip_serializing_if = "Option::is_none")]
            preconditions: Option<&'a Preconditions>,
            #[serde(skip_serializing_if = "Vec::is_empty")]
            dry_run: Vec<&'static str>,
        }
        let body = Body {
            api_version: "v1",
            kind: "DeleteOptions",
            propagation_policy: self.propagation_policy,
            grace_period_seconds: self.grace_period_seconds,
            preconditions: self.preconditions.as_ref(),
            dry_run: if self.dry_run { vec!["All"] } else { Vec::new() },
        };
        serde_json::to_value(body).unwrap_or(serde_json::Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_and_watch_params() {
        let o = ListOptions {
            label_selector: Some("app=x".into()),
            limit: Some(10),
            continue_token: Some("c".into()),
            resource_version: Some("5".into()),
            resource_version_match: Some(VersionMatch::NotOlderThan),
            allow_watch_bookmarks: true,
            send_initial_events: Some(true),
            ..Default::default()
        };
        let list = o.query_pairs(false);
        assert!(list.contains(&("limit", "10".into())) && list.contains(&("continue", "c".into())));
        assert!(!list.iter().any(|(k, _)| *k == "watch" || *k == "allowWatchBookmarks"));
        let watch = o.query_pairs(true);
        assert_eq!(watch[0], ("watch", "true".into()));
        assert!(watch.contains(&("allowWatchBookmarks", "true".into())));
        assert!(watch.contains(&("sendInitialEvents", "true".into())));
        assert!(!watch.iter().any(|(k, _)| *k == "limit"));
    }

    #[test]
    fn delete_body() {
        let o = DeleteOptions {
            propagation_policy: Some(PropagationPolicy::Foreground),
            grace_period_seconds: Some(0),
            preconditions: Some(Preconditions { uid: Some("u".into()), resource_version: None }),
            dry_run: true,
        };
        assert_eq!(
            o.to_body(),
            serde_json::json!({"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Foreground",
                "gracePeriodSeconds":0,"preconditions":{"uid":"u"},"dryRun":["All"]})
        );
    }

    #[test]
    fn apply_params_and_patch_types() {
        let q = ApplyOptions::new("me").force().query_pairs();
        assert_eq!(q, vec![("fieldManager", "me".into()), ("force", "true".into())]);
        assert_eq!(Patch::Apply(serde_json::json!({})).content_type(), "application/apply-patch+yaml");
        assert_eq!(Patch::Strategic(serde_json::json!({})).content_type(), "application/strategic-merge-patch+json");
    }
}
