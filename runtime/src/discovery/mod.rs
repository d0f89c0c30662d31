//! What the apiserver serves: version, groups, resources.
//!
//! [`DiscoveryClient::discover`] asks `/api` and `/apis` for aggregated
//! discovery (one request each, Kubernetes ≥ 1.26) and falls back to the
//! legacy walk (`/api`, `/apis`, then one request per group/version) when
//! the server answers with the old types. Results are kept in memory until
//! [`DiscoveryClient::invalidate`], and optionally on disk in kubectl's own
//! cache (`~/.kube/cache/discovery/<host_port>`, one file per group/version,
//! each fresh for a TTL; see [`DiscoveryClient::with_disk_cache`]): kubectl
//! reads what this client writes and the other way round.
//! Only what succeeded is cached: group/versions that failed (or that
//! aggregated discovery marked stale) are asked again, one request each, on
//! every [`DiscoveryClient::discover`] until they answer, as client-go's
//! memory cache does for transient failures.
//!
//! Use [`RestMapper`] to map a kind, a plural, a short name or a category
//! to what the [`dynamic`](crate::dynamic) client and informers need (it
//! re-discovers when something is missing, e.g. a CRD just installed);
//! [`Discovery::find`] is a quick lookup in one snapshot without refresh.

mod disk;
mod mapping;
mod rest_mapper;
mod types;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::object::{DynamicResource, GroupVersion};
use crate::rest::{self, Client};

pub use disk::{DEFAULT_TTL, default_cache_dir, discovery_cache_dir};
pub use rest_mapper::{MappingError, RestMapper, RestMapping};
pub use types::{ApiGroup, ApiResource, ServerVersion};

const AGGREGATED_ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";

/// Errors of discovery.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A discovery request (`/api`, `/apis`, `/version`) failed.
    #[error("discovery request")]
    Rest(#[from] rest::Error),
    /// The server answered with a document that does not decode.
    #[error("discovery: decoding {what}")]
    Decode {
        /// The document, by the path it came from (e.g. `/apis`).
        what: String,
        /// What serde found wrong.
        #[source]
        source: serde_json::Error,
    },
}

/// Everything discovery found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Discovery {
    /// Core group first, then as the server ordered them.
    pub groups: Vec<ApiGroup>,
    /// Resources per `group/version` (`v1` for core).
    pub resources: BTreeMap<String, Vec<ApiResource>>,
    /// Group/versions that could not be discovered, with the reason
    /// (client-go's `ErrGroupDiscoveryFailed`); the rest is still usable.
    /// They have no entry in `resources` (a stale one's resources are not
    /// trusted either) and are asked again on the next
    /// [`DiscoveryClient::discover`].
    pub failed: BTreeMap<String, String>,
    /// Whether aggregated discovery answered.
    pub aggregated: bool,
}

impl Discovery {
    /// Each resource of each group once, without subresources: at the
    /// group's preferred version, or at the first version serving it when
    /// the preferred one does not (client-go's `ServerPreferredResources`,
    /// what `kubectl api-resources` lists).
    pub fn preferred_resources(&self) -> Vec<&ApiResource> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for g in &self.groups {
            let versions = g
                .preferred_version
                .iter()
                .chain(g.versions.iter().filter(|v| Some(*v) != g.preferred_version.as_ref()));
            for r in versions.filter_map(|v| self.resources.get(&g.group_version(v))).flatten() {
                if !r.is_subresource() && seen.insert((r.group.as_str(), r.name.as_str())) {
                    out.push(r);
                }
            }
        }
        out
    }

    /// Finds a resource by kind, plural, singular or short name
    /// (case-insensitive), in `group` if given, preferring preferred versions.
    pub fn find(&self, group: Option<&str>, name_or_kind: &str) -> Option<&ApiResource> {
        let matches = |r: &&ApiResource| {
            group.is_none_or(|g| g == r.group)
                && (r.kind.eq_ignore_ascii_case(name_or_kind)
                    || r.name.eq_ignore_ascii_case(name_or_kind)
                    || r.singular_name.eq_ignore_ascii_case(name_or_kind)
                    || r.short_names.iter().any(|s| s.eq_ignore_ascii_case(name_or_kind)))
        };
        self.preferred_resources()
            .into_iter()
            .find(matches)
            .or_else(|| self.resources.values().flatten().filter(|r| !r.is_subresource()).find(matches))
    }

    /// [`find`](Self::find) as something the dynamic client can use.
    pub fn resolve(&self, group: Option<&str>, name_or_kind: &str) -> Option<DynamicResource> {
        self.find(group, name_or_kind).map(ApiResource::to_dynamic)
    }
}

/// A discovery client with an in-memory (and optional disk) cache.
#[derive(Clone, Debug)]
pub struct DiscoveryClient {
    client: Client,
    memory: Arc<Mutex<Option<Arc<Discovery>>>>,
    /// Held while asking the server, so that concurrent callers (say, REST
    /// mapper misses right after an invalidation) share one discovery.
    fetching: Arc<tokio::sync::Mutex<()>>,
    disk: Option<disk::DiskCache>,
}

impl DiscoveryClient {
    /// A client discovering through `client`, caching in memory only.
    pub fn new(client: Client) -> Self {
        DiscoveryClient { client, memory: Arc::default(), fetching: Arc::default(), disk: None }
    }

    /// Also keep results in `dir`, a server's directory of kubectl's cache
    /// ([`default_cache_dir`], or [`discovery_cache_dir`] for kubectl's
    /// `--cache-dir`), each file fresh for `ttl` from when it was written
    /// (kubectl: [`DEFAULT_TTL`]). Group/versions whose file is missing or
    /// expired are asked for alone.
    #[must_use]
    pub fn with_disk_cache(mut self, dir: PathBuf, ttl: Duration) -> Self {
        self.disk = Some(disk::DiskCache::new(dir, ttl));
        self
    }

    /// kubectl's cache ([`default_cache_dir`]) with the default TTL, when
    /// `KUBECACHEDIR` or a home directory exists.
    #[must_use]
    pub fn with_default_disk_cache(self) -> Self {
        match default_cache_dir(&self.client) {
            Some(dir) => self.with_disk_cache(dir, DEFAULT_TTL),
            None => self,
        }
    }

    /// `/version`; never cached.
    ///
    /// # Cancel safety
    /// Cancel safe (read-only request).
    pub async fn server_version(&self) -> Result<ServerVersion, Error> {
        Ok(self.client.get("/version").json().await?)
    }

    /// Forgets cached results, e.g. after installing a CRD or on a "no
    /// matches for kind" error: the next discovery asks the server and
    /// overwrites the disk cache, whose files until then are not read (they
    /// stay for other readers, as with client-go).
    pub fn invalidate(&self) {
        *self.memory.lock().unwrap_or_else(|e| e.into_inner()) = None;
        if let Some(disk) = &self.disk {
            disk.invalidate();
        }
    }

    /// Everything the server serves, from cache when fresh. Group/versions
    /// that failed last time are asked again (cached results never include
    /// them).
    ///
    /// Concurrent calls share one discovery.
    ///
    /// # Cancel safety
    /// Cancel safe: results are cached only once complete.
    pub async fn discover(&self) -> Result<Arc<Discovery>, Error> {
        let complete = |m: &Option<Arc<Discovery>>| m.as_ref().filter(|d| d.failed.is_empty()).cloned();
        if let Some(d) = complete(&self.memory.lock().unwrap_or_else(|e| e.into_inner())) {
            return Ok(d);
        }
        let _one_at_a_time = self.fetching.lock().await;
        let memory = self.memory.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let cached = memory.or_else(|| self.disk.as_ref().and_then(disk::DiskCache::load).map(Arc::new));
        let found = match cached {
            Some(d) if d.failed.is_empty() => d,
            Some(d) => {
                let retried = self.retry_failed(&d).await;
                // Only what answered now is written: the other files keep
                // their age.
                if let Some(disk) = &self.disk {
                    for (gv, resources) in &retried.resources {
                        if d.failed.contains_key(gv) {
                            disk.store_resources(gv, resources);
                        }
                    }
                }
                Arc::new(retried)
            }
            None => {
                let d = self.fetch().await?;
                if let Some(disk) = &self.disk {
                    disk.store(&d);
                }
                Arc::new(d)
            }
        };
        *self.memory.lock().unwrap_or_else(|e| e.into_inner()) = Some(found.clone());
        Ok(found)
    }

    /// Asks each failed group/version of `d` again; those that answer get
    /// their resources (and their version back in the group's list).
    async fn retry_failed(&self, d: &Discovery) -> Discovery {
        let mut d = d.clone();
        let failed = std::mem::take(&mut d.failed);
        let requests = failed.into_keys().map(|gv| async move {
            let result = self.fetch_group_version(&gv).await;
            (gv, result)
        });
        for (gv, result) in futures_util::future::join_all(requests).await {
            match result {
                Ok(resources) => {
                    let GroupVersion { group, version } = GroupVersion::parse(&gv);
                    if let Some(g) = d.groups.iter_mut().find(|g| g.name == group)
                        && !g.versions.iter().any(|v| v == version)
                    {
                        g.versions.push(version.to_owned());
                        if g.preferred_version.is_none() {
                            g.preferred_version = Some(version.to_owned());
                        }
                    }
                    d.resources.insert(gv, resources);
                }
                Err(e) => {
                    tracing::debug!(group_version = %gv, error = %e, "discovery of group version failed again");
                    d.resources.remove(&gv);
                    d.failed.insert(gv, e);
                }
            }
        }
        d
    }

    /// The legacy per-group/version document (`/api/v1`, `/apis/apps/v1`),
    /// which aggregated servers serve too.
    async fn fetch_group_version(&self, gv: &str) -> Result<Vec<ApiResource>, String> {
        let gv = GroupVersion::parse(gv);
        match self.client.get(gv.api_prefix()).json::<types::ResourceList>().await {
            Ok(list) => Ok(list.resources.into_iter().map(|r| r.into_resource(gv.group, gv.version)).collect()),
            Err(e) => Err(crate::ErrorChain(&e).to_string()),
        }
    }

    /// The API groups the server serves, core group first; from cache when
    /// fresh.
    pub async fn groups(&self) -> Result<Vec<ApiGroup>, Error> {
        Ok(self.discover().await?.groups.clone())
    }

    /// Resources of one group/version (`v1`, `apps/v1`), empty if unknown.
    pub async fn resources_for(&self, group_version: &str) -> Result<Vec<ApiResource>, Error> {
        Ok(self.discover().await?.resources.get(group_version).cloned().unwrap_or_default())
    }

    /// Resources of each group's preferred version, without subresources:
    /// what `kubectl api-resources` lists.
    pub async fn preferred_resources(&self) -> Result<Vec<ApiResource>, Error> {
        Ok(self.discover().await?.preferred_resources().into_iter().cloned().collect())
    }

    async fn fetch(&self) -> Result<Discovery, Error> {
        let mut d = Discovery::default();
        let core = self.client.get("/api").accept(AGGREGATED_ACCEPT).bytes().await?;
        let apis = self.client.get("/apis").accept(AGGREGATED_ACCEPT).bytes().await?;
        let agg_core = parse_aggregated(&core, "/api")?;
        let agg_apis = parse_aggregated(&apis, "/apis")?;
        if let (Some(core), Some(apis)) = (agg_core, agg_apis) {
            d.aggregated = true;
            for g in core.items.iter().chain(&apis.items) {
                let mut group = ApiGroup { name: g.metadata.name.clone(), ..Default::default() };
                for v in &g.versions {
                    let gv = group.group_version(&v.version);
                    if v.freshness.as_deref() == Some("Stale") {
                        // As client-go: a stale version is a failure, neither
                        // listed nor preferred, and its resources are not used.
                        d.failed.insert(gv, "stale: the serving apiserver is unavailable".into());
                        continue;
                    }
                    group.versions.push(v.version.clone());
                    d.resources.insert(gv, v.to_resources(&group.name));
                }
                group.preferred_version = group.versions.first().cloned();
                d.groups.push(group);
            }
            return Ok(d);
        }
        self.fetch_legacy(&core, &apis, d).await
    }

    async fn fetch_legacy(&self, core: &[u8], apis: &[u8], mut d: Discovery) -> Result<Discovery, Error> {
        let versions: types::ApiVersions = decode(core, "/api")?;
        let group_list: types::GroupList = decode(apis, "/apis")?;
        if !versions.versions.is_empty() {
            d.groups.push(ApiGroup {
                name: String::new(),
                preferred_version: versions.versions.first().cloned(),
                versions: versions.versions,
            });
        }
        d.groups.extend(group_list.groups.into_iter().map(ApiGroup::from));
        let requests = d.groups.iter().flat_map(|g| {
            g.versions.iter().map(move |v| {
                let gv = g.group_version(v);
                async move {
                    let result = self.fetch_group_version(&gv).await;
                    (gv, result)
                }
            })
        });
        for (gv, result) in futures_util::future::join_all(requests).await {
            match result {
                Ok(resources) => {
                    d.resources.insert(gv, resources);
                }
                Err(e) => {
                    tracing::warn!(group_version = %gv, error = %e, "discovery of group version failed");
                    d.failed.insert(gv, e);
                }
            }
        }
        Ok(d)
    }
}

/// `apps/v1` → (`apps`, `v1`); `v1` → (``, `v1`).
fn decode<T: serde::de::DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, Error> {
    crate::codec::decode_json(bytes).map_err(|source| Error::Decode { what: what.to_owned(), source })
}

fn parse_aggregated(bytes: &[u8], what: &str) -> Result<Option<types::AggregatedList>, Error> {
    #[derive(Deserialize)]
    struct Kind {
        #[serde(default)]
        kind: String,
    }
    let kind: Kind = decode(bytes, what)?;
    if kind.kind != "APIGroupDiscoveryList" {
        return Ok(None);
    }
    let list: types::AggregatedList = decode(bytes, what)?;
    Ok(Some(list))
}

#[cfg(test)]
mod tests;
