//! Options of the typed verbs, turned into query parameters (or, for
//! delete, a JSON body) as the apiserver expects them.

use serde::Serialize;

use crate::apply::{Merge, MergeFields};
use crate::strategic::StrategicPatchError;

/// Query parameters in the order they are written.
pub type QueryPairs = Vec<(&'static str, String)>;

/// Which resourceVersion a list may be served at (`resourceVersionMatch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionMatch {
    /// Any version at least as new as `resource_version` (served from the
    /// apiserver's watch cache when it can); `resource_version` must be set.
    NotOlderThan,
    /// Exactly `resource_version`, which must be set and not yet compacted away
    /// (else 410 Gone).
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
    /// `labelSelector`: only objects whose labels match, e.g.
    /// `app=web,tier!=db` (see
    /// [`LabelSelector`](crate::selector::LabelSelector)).
    pub label_selector: Option<String>,
    /// `fieldSelector`: only objects whose fields match, e.g.
    /// `status.phase=Running`; each kind supports only a few fields.
    pub field_selector: Option<String>,
    /// Page size; the server returns a `continue` token when there is more.
    pub limit: Option<u32>,
    /// `continue`: the token of the previous page's `metadata.continue`, to
    /// fetch the next page of a paged list.
    pub continue_token: Option<String>,
    /// `resourceVersion`, the opaque version of the data asked for. For a
    /// list: unset means the latest data (a consistent read), `"0"` any data
    /// the apiserver has cached, anything else is read as
    /// `resource_version_match` says. For a watch: the version to stream
    /// changes after (unset or `"0"`: start with the current objects as
    /// `ADDED` events).
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`: how a list's `resource_version` is interpreted
    /// (like `metav1.ListOptions.resourceVersionMatch`).
    pub resource_version_match: Option<VersionMatch>,
    /// Server-side bound on a list or watch call.
    pub timeout_seconds: Option<u32>,
    /// `allowWatchBookmarks`: let the apiserver send `BOOKMARK` events carrying
    /// the current resourceVersion, so a resumed watch does not fall too far
    /// behind.
    pub allow_watch_bookmarks: bool,
    /// Watch only: start with synthetic ADDED events for the current state,
    /// ended by a bookmark annotated `k8s.io/initial-events-end`.
    pub send_initial_events: Option<bool>,
}

impl ListOptions {
    /// Sets `labelSelector`.
    #[must_use]
    pub fn labels(mut self, selector: impl Into<String>) -> Self {
        self.label_selector = Some(selector.into());
        self
    }
    /// Sets `fieldSelector`.
    #[must_use]
    pub fn fields(mut self, selector: impl Into<String>) -> Self {
        self.field_selector = Some(selector.into());
        self
    }
    /// Sets the page size `limit`.
    #[must_use]
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }
    /// Sets the `continue` token of the next page.
    #[must_use]
    pub fn continue_token(mut self, token: impl Into<String>) -> Self {
        self.continue_token = Some(token.into());
        self
    }
    /// Sets `resourceVersion`.
    #[must_use]
    pub fn resource_version(mut self, rv: impl Into<String>) -> Self {
        self.resource_version = Some(rv.into());
        self
    }
    /// Sets `timeoutSeconds`.
    #[must_use]
    pub fn timeout(mut self, seconds: u32) -> Self {
        self.timeout_seconds = Some(seconds);
        self
    }
    /// Sets `allowWatchBookmarks`.
    #[must_use]
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
    /// The query parameters of a get call.
    pub fn query_pairs(&self) -> QueryPairs {
        let mut q = QueryPairs::new();
        push_opt(&mut q, "resourceVersion", &self.resource_version);
        q
    }
}

/// How the server treats unknown or duplicate fields (`fieldValidation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldValidation {
    /// Silently drop unknown fields and keep the last of duplicated ones (the
    /// behaviour before validation existed).
    Ignore,
    /// Accept the object, but return a warning for each unknown or duplicated
    /// field.
    Warn,
    /// Refuse the request with 422 on any unknown or duplicated field.
    Strict,
}

/// Options shared by create, update and patch (metav1.CreateOptions & co.).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// `dryRun=All`: validate and admit, but persist nothing.
    pub dry_run: bool,
    /// `fieldManager`: the name recorded as owner of the written fields in
    /// `managedFields`; defaults to one derived from the user agent.
    pub field_manager: Option<String>,
    /// `fieldValidation`: what the apiserver does about unknown or duplicated
    /// fields; its own default is `Warn`.
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
    /// The query parameters of a create, update or patch call.
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
    /// `dryRun=All`: validate and admit, but persist nothing.
    pub dry_run: bool,
}

impl ApplyOptions {
    /// Apply as `field_manager`, without forcing conflicts.
    pub fn new(field_manager: impl Into<String>) -> Self {
        ApplyOptions { field_manager: field_manager.into(), force: false, dry_run: false }
    }
    /// Takes ownership of conflicting fields (`force=true`), as a controller
    /// that is the authority on the fields it applies should.
    #[must_use]
    pub fn force(mut self) -> Self {
        self.force = true;
        self
    }
    /// The query parameters of an apply call.
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
    /// The `Content-Type` that tells the apiserver how to read the body.
    pub fn content_type(&self) -> &'static str {
        match self {
            Patch::Json(_) => "application/json-patch+json",
            Patch::Merge(_) => "application/merge-patch+json",
            Patch::Strategic(_) => "application/strategic-merge-patch+json",
            Patch::Apply(_) => "application/apply-patch+yaml",
        }
    }
    /// An RFC 6902 patch of typed operations (the `json-patch` crate's,
    /// re-exported as [`rest::json_patch`](crate::rest::json_patch)), e.g. a
    /// `test` of the resourceVersion before a `replace`, so the write fails
    /// if the object changed meanwhile.
    ///
    /// ```
    /// use k8s_client_runtime::rest::Patch;
    /// use k8s_client_runtime::rest::json_patch::{PatchOperation, ReplaceOperation, TestOperation};
    /// use serde_json::json;
    ///
    /// let patch = Patch::json_ops([
    ///     PatchOperation::Test(TestOperation { path: "/metadata/resourceVersion".parse()?, value: json!("42") }),
    ///     PatchOperation::Replace(ReplaceOperation { path: "/spec/replicas".parse()?, value: json!(3) }),
    /// ])?;
    /// assert_eq!(patch.body()[1], json!({"op": "replace", "path": "/spec/replicas", "value": 3}));
    /// # Ok::<_, Box<dyn std::error::Error>>(())
    /// ```
    pub fn json_ops(ops: impl IntoIterator<Item = json_patch::PatchOperation>) -> Result<Patch, serde_json::Error> {
        serde_json::to_value(json_patch::Patch(ops.into_iter().collect())).map(Patch::Json)
    }

    /// The strategic merge patch that turns `original` into `modified`, two
    /// objects of kind `K`, with `K`'s merge schema (its [`MergeFields`],
    /// which a generated kind has with the generated crate's `apply`
    /// feature): only what changed, lists such as containers, env and
    /// volumes patched element by element, `$retainKeys` where the schema
    /// asks for it. See [`strategic`](crate::strategic) for when to use it,
    /// [`strategic::two_way_patch`](crate::strategic::two_way_patch) for what
    /// the patch holds and
    /// [`strategic::two_way_patch_of`](crate::strategic::two_way_patch_of)
    /// for a type without a schema of its own.
    ///
    /// With a generated kind, `Patch::strategic_diff(&old, &new)?` is sent as
    /// `deployments.patch("web", &patch, &PatchOptions::default())`. Here a
    /// kind written out, its `strategy` with patch strategy `retainKeys` as
    /// a Deployment's, switched from `RollingUpdate` to `Recreate`: the patch
    /// keeps only `type`, so the apiserver drops `rollingUpdate` too.
    ///
    /// ```
    /// use k8s_client_runtime::apply::{Merge, MergeFields};
    /// use k8s_client_runtime::rest::Patch;
    /// use serde_json::{Value, json};
    ///
    /// #[derive(serde::Serialize)]
    /// struct Spec {
    ///     strategy: Value,
    /// }
    ///
    /// impl MergeFields for Spec {
    ///     fn merge_fields() -> &'static [(&'static str, Merge)] {
    ///         &[("strategy", Merge::RetainKeys(&Merge::Atomic))]
    ///     }
    /// }
    ///
    /// let old = Spec { strategy: json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}) };
    /// let new = Spec { strategy: json!({"type": "Recreate"}) };
    /// let patch = Patch::strategic_diff(&old, &new)?;
    /// assert_eq!(
    ///     patch.body(),
    ///     &json!({"strategy": {"$retainKeys": ["type"], "rollingUpdate": null, "type": "Recreate"}})
    /// );
    /// # Ok::<_, k8s_client_runtime::strategic::StrategicPatchError>(())
    /// ```
    pub fn strategic_diff<K: MergeFields + Serialize>(
        original: &K,
        modified: &K,
    ) -> Result<Patch, StrategicPatchError> {
        crate::strategic::two_way_patch_of(original, modified, Merge::Struct(K::merge_fields)).map(Patch::Strategic)
    }

    /// The patch document.
    pub fn body(&self) -> &serde_json::Value {
        match self {
            Patch::Json(v) | Patch::Merge(v) | Patch::Strategic(v) | Patch::Apply(v) => v,
        }
    }
}

/// What happens to dependents of a deleted object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PropagationPolicy {
    /// Delete the object but keep its dependents; the garbage collector
    /// first removes their `ownerReferences` to it.
    Orphan,
    /// Delete the object at once and let the garbage collector delete the
    /// dependents afterwards (the apiserver's default for most kinds).
    Background,
    /// Keep the object (with the `foregroundDeletion` finalizer) until the
    /// garbage collector has deleted every dependent that blocks owner
    /// deletion.
    Foreground,
}

/// Conditions the object must still meet for a delete to happen.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preconditions {
    /// The object's `metadata.uid` must be this, so a recreated object of the
    /// same name is not deleted by mistake.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The object's `metadata.resourceVersion` must be this: it must not have
    /// changed since it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
}

/// Options of `delete` and `delete_collection`, sent as a
/// `meta.k8s.io/v1 DeleteOptions` JSON body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    /// `propagationPolicy`: what happens to the dependents; the kind's default
    /// when unset.
    pub propagation_policy: Option<PropagationPolicy>,
    /// `gracePeriodSeconds`: how long the object may take to terminate (pods);
    /// `0` deletes at once, unset uses the object's default.
    pub grace_period_seconds: Option<i64>,
    /// `preconditions`: checked by the apiserver before deleting.
    pub preconditions: Option<Preconditions>,
    /// `dryRun=All`: check the deletion without performing it.
    pub dry_run: bool,
}

impl DeleteOptions {
    /// Deletes dependents in the background (`propagationPolicy: Background`).
    pub fn background() -> Self {
        DeleteOptions { propagation_policy: Some(PropagationPolicy::Background), ..Default::default() }
    }
    /// Deletes dependents first (`propagationPolicy: Foreground`).
    pub fn foreground() -> Self {
        DeleteOptions { propagation_policy: Some(PropagationPolicy::Foreground), ..Default::default() }
    }
    /// Leaves dependents behind (`propagationPolicy: Orphan`).
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

    /// A kind and its apply configuration, whose `items` merge by `name`;
    /// the kind merges as its apply configuration, as generated kinds do.
    #[derive(Serialize)]
    struct Kind {
        items: Vec<serde_json::Value>,
    }

    struct KindApply;

    impl MergeFields for KindApply {
        fn merge_fields() -> &'static [(&'static str, Merge)] {
            use crate::apply::{ListMerge, ListType, PatchStrategy};
            const ITEMS: ListMerge = ListMerge {
                apply: ListType::Map(&["name"]),
                patch: PatchStrategy::MergeByKey("name"),
                element: Merge::Atomic,
            };
            &[("items", Merge::List(&ITEMS))]
        }
    }

    impl MergeFields for Kind {
        fn merge_fields() -> &'static [(&'static str, Merge)] {
            KindApply::merge_fields()
        }
    }

    #[test]
    fn strategic_diff_uses_the_kinds_schema() {
        use serde_json::json;
        let old = Kind { items: vec![json!({"name": "a", "v": 1}), json!({"name": "b"})] };
        let new = Kind { items: vec![json!({"name": "a", "v": 2})] };
        let patch = Patch::strategic_diff(&old, &new).unwrap();
        assert_eq!(patch.content_type(), "application/strategic-merge-patch+json");
        assert_eq!(
            patch.body(),
            &json!({
                "$setElementOrder/items": [{"name": "a"}],
                "items": [{"name": "a", "v": 2}, {"name": "b", "$patch": "delete"}],
            })
        );
    }
}
