//! What discovery finds, and the wire formats it is read from: aggregated
//! discovery v2 (`apidiscovery.k8s.io/v2 APIGroupDiscoveryList`) and the
//! legacy `APIVersions` / `APIGroupList` / `APIResourceList`.

use serde::{Deserialize, Serialize};

use crate::object::{DynamicResource, GroupVersion};

/// `/version`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerVersion {
    /// Major version, e.g. `1`.
    pub major: String,
    /// Minor version, e.g. `31`; some distributions add a `+`.
    pub minor: String,
    /// Full release, e.g. `v1.31.2`, what `kubectl version` shows.
    pub git_version: String,
    /// Git commit the server was built from.
    pub git_commit: String,
    /// `clean` or `dirty`: whether the build tree had local changes.
    pub git_tree_state: String,
    /// When the server was built (RFC 3339).
    pub build_date: String,
    /// Go version the server was built with.
    pub go_version: String,
    /// Go compiler used, usually `gc`.
    pub compiler: String,
    /// `os/arch` of the server, e.g. `linux/amd64`.
    pub platform: String,
}

/// An API group and its versions, preferred first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiGroup {
    /// Empty for the core group.
    pub name: String,
    /// Versions served, preferred first, e.g. `["v1", "v1beta1"]`.
    pub versions: Vec<String>,
    /// The version clients should use when they do not need a specific one.
    pub preferred_version: Option<String>,
}

impl ApiGroup {
    /// The `group/version` of `version` in this group (just `version` for the
    /// core group).
    pub fn group_version(&self, version: &str) -> String {
        GroupVersion::new(&self.name, version).api_version()
    }
}

/// One resource of a group/version (`metav1.APIResource`). Subresources
/// appear as separate entries named `parent/sub` (`pods/log`), as in
/// legacy discovery.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiResource {
    /// Plural resource name used in URLs, e.g. `deployments`; `parent/sub` for
    /// a subresource.
    pub name: String,
    /// Lower-case singular name, e.g. `deployment`; kubectl accepts it too.
    pub singular_name: String,
    /// Whether objects live in namespaces rather than at cluster scope.
    pub namespaced: bool,
    /// API group; empty for the core group.
    pub group: String,
    /// API version within the group.
    pub version: String,
    /// Kind of the objects (for a subresource, of what it returns, e.g.
    /// `Scale`).
    pub kind: String,
    /// Verbs the resource supports, among `get`, `list`, `watch`, `create`,
    /// `update`, `patch`, `delete` and `deletecollection`.
    pub verbs: Vec<String>,
    /// Abbreviations kubectl accepts, e.g. `deploy`.
    pub short_names: Vec<String>,
    /// Groups the resource belongs to, e.g. `all` for `kubectl get all`.
    pub categories: Vec<String>,
}

impl ApiResource {
    /// Whether this is a subresource (`pods/log`, `deployments/scale`).
    pub fn is_subresource(&self) -> bool {
        self.name.contains('/')
    }
    /// Whether the resource supports `verb` (e.g. `watch`).
    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }
    /// What the dynamic client needs to address this resource.
    pub fn to_dynamic(&self) -> DynamicResource {
        DynamicResource {
            group: self.group.clone(),
            version: self.version.clone(),
            kind: self.kind.clone(),
            plural: self.name.clone(),
            namespaced: self.namespaced,
        }
    }
}

// ---- aggregated discovery v2 ----

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct AggregatedList {
    pub items: Vec<AggregatedGroup>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct NameOnly {
    pub name: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct AggregatedGroup {
    pub metadata: NameOnly,
    pub versions: Vec<AggregatedVersion>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct AggregatedVersion {
    pub version: String,
    #[serde(default)]
    pub resources: Vec<AggregatedResource>,
    /// `Stale` when an aggregated apiserver could not be reached.
    #[serde(default)]
    pub freshness: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct Gvk {
    pub group: String,
    pub version: String,
    pub kind: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct AggregatedResource {
    pub resource: String,
    #[serde(default)]
    pub response_kind: Option<Gvk>,
    #[serde(default)]
    pub scope: String,
    #[serde(default)]
    pub singular_resource: String,
    #[serde(default)]
    pub verbs: Vec<String>,
    #[serde(default)]
    pub short_names: Vec<String>,
    #[serde(default)]
    pub categories: Vec<String>,
    #[serde(default)]
    pub subresources: Vec<AggregatedSubresource>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct AggregatedSubresource {
    pub subresource: String,
    #[serde(default)]
    pub response_kind: Option<Gvk>,
    #[serde(default)]
    pub verbs: Vec<String>,
}

impl AggregatedVersion {
    pub fn to_resources(&self, group: &str) -> Vec<ApiResource> {
        let mut out = Vec::new();
        for r in &self.resources {
            let kind = r.response_kind.as_ref().map(|k| k.kind.clone()).unwrap_or_default();
            let parent = ApiResource {
                name: r.resource.clone(),
                singular_name: r.singular_resource.clone(),
                namespaced: r.scope == "Namespaced",
                group: group.to_owned(),
                version: self.version.clone(),
                kind,
                verbs: r.verbs.clone(),
                short_names: r.short_names.clone(),
                categories: r.categories.clone(),
            };
            for s in &r.subresources {
                out.push(ApiResource {
                    name: format!("{}/{}", r.resource, s.subresource),
                    singular_name: String::new(),
                    kind: s.response_kind.as_ref().map(|k| k.kind.clone()).unwrap_or_default(),
                    verbs: s.verbs.clone(),
                    short_names: Vec::new(),
                    categories: Vec::new(),
                    ..parent.clone()
                });
            }
            out.insert(out.len() - r.subresources.len(), parent);
        }
        out
    }
}

// ---- legacy discovery ----

#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct ApiVersions {
    pub versions: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct GroupList {
    pub groups: Vec<LegacyGroup>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct LegacyGroup {
    pub name: String,
    #[serde(default)]
    pub versions: Vec<GroupVersionForDiscovery>,
    #[serde(default)]
    pub preferred_version: Option<GroupVersionForDiscovery>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct GroupVersionForDiscovery {
    pub version: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct ResourceList {
    pub resources: Vec<LegacyResource>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct LegacyResource {
    pub name: String,
    #[serde(default)]
    pub singular_name: String,
    #[serde(default)]
    pub namespaced: bool,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub verbs: Vec<String>,
    #[serde(default)]
    pub short_names: Vec<String>,
    #[serde(default)]
    pub categories: Vec<String>,
}

impl From<LegacyGroup> for ApiGroup {
    fn from(g: LegacyGroup) -> Self {
        let versions: Vec<String> = g.versions.into_iter().map(|v| v.version).collect();
        let preferred_version = g.preferred_version.map(|v| v.version).or_else(|| versions.first().cloned());
        ApiGroup { name: g.name, versions, preferred_version }
    }
}

impl LegacyResource {
    /// The resource as served in `group`/`version`. The document's own
    /// `group`/`version` fields name where a subresource's kind lives
    /// (`autoscaling/v1` for `deployments/scale`), not where it is served,
    /// so they are not used: aggregated discovery gives the same result.
    pub fn into_resource(self, group: &str, version: &str) -> ApiResource {
        ApiResource {
            name: self.name,
            singular_name: self.singular_name,
            namespaced: self.namespaced,
            group: group.to_owned(),
            version: version.to_owned(),
            kind: self.kind,
            verbs: self.verbs,
            short_names: self.short_names,
            categories: self.categories,
        }
    }
}
