//! [`RestMapper`]: kinds, resource names and categories to the resources
//! that serve them (client-go's `restmapper.DeferredDiscoveryRESTMapper`
//! with its short-name and category expanders).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use super::mapping::{self, PartialResource};
use super::{ApiResource, Discovery, DiscoveryClient, Error};
use crate::object::{DynamicResource, Scope};

/// A lookup that found nothing, or too much.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MappingError {
    /// Nothing the server serves matches, even after discovering again
    /// (client-go's `NoKindMatchError` / `NoResourceMatchError`).
    #[error("no matches for {what}")]
    NoMatch {
        /// What was asked, e.g. `kind "Widget" in group "example.com"`.
        what: String,
    },
    /// More than one resource matches equally well (client-go's
    /// `AmbiguousResourceError`).
    #[error("{what} is ambiguous: it matches {}", candidates.join(", "))]
    Ambiguous {
        /// What was asked, e.g. `resource "widget"`.
        what: String,
        /// Every match, as `plural.version.group`.
        candidates: Vec<String>,
    },
    /// Discovery failed.
    #[error("discovering resources to map")]
    Discovery(#[from] Error),
}

impl MappingError {
    /// Whether nothing matched (as opposed to an ambiguity or a failed
    /// discovery): what makes the mapper discover again.
    pub fn is_no_match(&self) -> bool {
        matches!(self, MappingError::NoMatch { .. })
    }
}

/// What a kind or resource name maps to (client-go's `meta.RESTMapping`).
#[doc(alias = "RESTMapping")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestMapping {
    /// Group, version, plural and kind: the group/version/kind of the
    /// objects and where they are served; give it to the dynamic client or
    /// informers as it is.
    pub resource: DynamicResource,
    /// Whether the objects live in namespaces.
    pub scope: Scope,
}

impl From<&ApiResource> for RestMapping {
    fn from(r: &ApiResource) -> Self {
        let scope = if r.namespaced { Scope::Namespaced } else { Scope::Cluster };
        RestMapping { resource: r.to_dynamic(), scope }
    }
}

/// Maps kinds, resource names as kubectl reads them (plural, singular,
/// short name, `resource.group`, `resource.version.group`) and categories
/// to [`RestMapping`]s, from a [`DiscoveryClient`]'s results.
///
/// Where several group/versions serve a kind or resource, the best is the
/// one client-go picks: the core `v1` first, then groups in the server's
/// order, each group's preferred version before its others.
///
/// A lookup that finds nothing invalidates the discovery cache (memory and
/// disk) and looks again once, so a CRD installed after the first lookup is
/// found. Misses that arrive while a refresh runs share it, and after a
/// refresh none starts for [`refresh_interval`](Self::with_refresh_interval)
/// (1 s by default), so asking again and again for a kind that does not
/// exist does not re-discover every time.
///
/// Cheap to clone; clones share the discovery cache and refresh state.
#[doc(alias = "RESTMapper")]
#[doc(alias = "DeferredDiscoveryRESTMapper")]
#[derive(Clone, Debug)]
pub struct RestMapper {
    discovery: DiscoveryClient,
    refresh_interval: Duration,
    refreshes: Arc<Refreshes>,
}

#[derive(Debug, Default)]
struct Refreshes {
    /// Counts refreshes, so a miss that started before one finished uses
    /// its result instead of starting another.
    generation: AtomicU64,
    last: tokio::sync::Mutex<Option<Instant>>,
}

impl RestMapper {
    /// The default for [`with_refresh_interval`](Self::with_refresh_interval).
    pub const DEFAULT_REFRESH_INTERVAL: Duration = Duration::from_secs(1);

    /// A mapper over what `discovery` finds (and caches).
    pub fn new(discovery: DiscoveryClient) -> Self {
        RestMapper { discovery, refresh_interval: Self::DEFAULT_REFRESH_INTERVAL, refreshes: Arc::default() }
    }

    /// The least time between two refreshes caused by misses; zero lets
    /// every miss that does not share one refresh.
    #[must_use]
    pub fn with_refresh_interval(mut self, interval: Duration) -> Self {
        self.refresh_interval = interval;
        self
    }

    /// The discovery client underneath.
    pub fn discovery(&self) -> &DiscoveryClient {
        &self.discovery
    }

    /// The mapping of `kind` in `group` (`""` for the core group): in
    /// `version` when given, else at the best version serving it (client-go
    /// `RESTMapping`). The kind is as served (`Deployment`) or lower-cased.
    ///
    /// # Cancel safety
    /// Cancel safe: discovery caches only complete results.
    pub async fn mapping(&self, group: &str, kind: &str, version: Option<&str>) -> Result<RestMapping, MappingError> {
        self.lookup(|d| {
            mapping::kind_mappings(d, group, kind, version)
                .first()
                .map(|r| RestMapping::from(*r))
                .ok_or_else(|| mapping::no_kind_match(group, kind, version))
        })
        .await
    }

    /// Every mapping of `kind` in `group`, one per version serving it,
    /// best first (client-go `RESTMappings`).
    ///
    /// # Cancel safety
    /// Cancel safe.
    pub async fn mappings(&self, group: &str, kind: &str) -> Result<Vec<RestMapping>, MappingError> {
        self.lookup(|d| {
            let found: Vec<RestMapping> =
                mapping::kind_mappings(d, group, kind, None).into_iter().map(RestMapping::from).collect();
            if found.is_empty() { Err(mapping::no_kind_match(group, kind, None)) } else { Ok(found) }
        })
        .await
    }

    /// The mapping of a resource as kubectl reads its arguments: plural,
    /// singular or short name (`deployments`, `deployment`, `deploy`),
    /// optionally qualified as `resource.group` (a group may be cut short:
    /// `deploy.apps`, `storageclasses.storage`) or `resource.version.group`,
    /// and failing that a kind (`Deployment`, `Deployment.apps`,
    /// `Deployment.v1.apps`).
    ///
    /// # Cancel safety
    /// Cancel safe.
    pub async fn resource(&self, name: &str) -> Result<RestMapping, MappingError> {
        self.lookup(|d| mapping::resource_for_arg(d, name).map(RestMapping::from)).await
    }

    /// The mapping of resource `name` (plural, singular or short name),
    /// limited to `group` and `version` when given (client-go
    /// `ResourceFor` behind its short-name expander).
    ///
    /// # Cancel safety
    /// Cancel safe.
    pub async fn resource_in(
        &self,
        group: Option<&str>,
        version: Option<&str>,
        name: &str,
    ) -> Result<RestMapping, MappingError> {
        let asked = PartialResource {
            group: group.map(str::to_owned),
            version: version.map(str::to_owned),
            resource: name.to_owned(),
        };
        self.lookup(|d| mapping::resource_for(d, &asked).map(RestMapping::from)).await
    }

    /// The resources in `category` (`all` is what `kubectl get all` shows),
    /// each once at its best version; empty when none is, even after
    /// discovering again.
    ///
    /// # Cancel safety
    /// Cancel safe.
    pub async fn expand_category(&self, category: &str) -> Result<Vec<RestMapping>, MappingError> {
        self.lookup(|d| {
            let found: Vec<RestMapping> = mapping::category(d, category).into_iter().map(RestMapping::from).collect();
            if found.is_empty() {
                Err(MappingError::NoMatch { what: format!("category {category:?}") })
            } else {
                Ok(found)
            }
        })
        .await
        .or_else(|e| if e.is_no_match() { Ok(Vec::new()) } else { Err(e) })
    }

    /// Runs `find` on the current discovery and, if it matches nothing,
    /// once more after a refresh.
    async fn lookup<T>(&self, find: impl Fn(&Discovery) -> Result<T, MappingError>) -> Result<T, MappingError> {
        let generation = self.refreshes.generation.load(Ordering::SeqCst);
        let d = self.discovery.discover().await?;
        match find(&d) {
            Err(e) if e.is_no_match() => {}
            found => return found,
        }
        let d = self.refresh(generation).await?;
        find(&d)
    }

    /// Discovers again unless a refresh finished since `seen_generation`
    /// was read or one finished less than the refresh interval ago; either
    /// way returns the newest discovery.
    async fn refresh(&self, seen_generation: u64) -> Result<Arc<Discovery>, MappingError> {
        let mut last = self.refreshes.last.lock().await;
        let shared = self.refreshes.generation.load(Ordering::SeqCst) != seen_generation;
        let recent = last.is_some_and(|t| t.elapsed() < self.refresh_interval);
        if shared || recent {
            tracing::trace!(shared, "REST mapper miss without refresh");
            return Ok(self.discovery.discover().await?);
        }
        tracing::debug!("REST mapper miss: discovering again");
        self.discovery.invalidate();
        let d = self.discovery.discover().await?;
        *last = Some(Instant::now());
        self.refreshes.generation.fetch_add(1, Ordering::SeqCst);
        Ok(d)
    }
}

#[cfg(test)]
#[path = "rest_mapper_tests.rs"]
mod tests;
