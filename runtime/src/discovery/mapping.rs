//! The lookups of [`RestMapper`](super::RestMapper) in one discovery
//! snapshot, with client-go's rules: its `PriorityRESTMapper` order (the
//! core `v1` first, then each group in the server's order, its preferred
//! version before the others), `DefaultRESTMapper`'s matching, the short
//! names of `restmapper.shortcutExpander`, kubectl's reading of
//! `resource.version.group` arguments and the categories of
//! `restmapper.discoveryCategoryExpander`.

use std::collections::HashSet;

use super::rest_mapper::MappingError;
use super::{ApiResource, Discovery};

/// A resource as asked for: `resource`, with a group and version when given
/// (`deployments.v1.apps`, `deploy.apps`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PartialResource {
    pub group: Option<String>,
    pub version: Option<String>,
    pub resource: String,
}

impl PartialResource {
    fn describe(&self) -> String {
        let mut s = format!("resource {:?}", self.resource);
        match (&self.group, &self.version) {
            (Some(g), Some(v)) => s.push_str(&format!(" in version {:?}", format!("{g}/{v}"))),
            (Some(g), None) => s.push_str(&format!(" in group {g:?}")),
            (None, Some(v)) => s.push_str(&format!(" in version {v:?}")),
            (None, None) => {}
        }
        s
    }
}

/// `group/version` strings in client-go's priority order: `v1` of the
/// core group, then per group its preferred version and its other
/// versions, leaving out versions without resources.
fn ranked_group_versions(d: &Discovery) -> Vec<String> {
    let mut ranked: Vec<String> = Vec::new();
    let mut push = |gv: String| {
        if d.resources.contains_key(&gv) && !ranked.contains(&gv) {
            ranked.push(gv);
        }
    };
    push("v1".to_owned());
    for g in &d.groups {
        if let Some(preferred) = &g.preferred_version {
            push(g.group_version(preferred));
        }
        for v in &g.versions {
            push(g.group_version(v));
        }
    }
    // Resources of a version the group list does not name come last.
    for gv in d.resources.keys() {
        push(gv.clone());
    }
    ranked
}

/// Every resource but subresources, in priority order.
fn ranked_resources(d: &Discovery) -> Vec<&ApiResource> {
    ranked_group_versions(d)
        .iter()
        .filter_map(|gv| d.resources.get(gv))
        .flatten()
        .filter(|r| !r.is_subresource())
        .collect()
}

/// The singular name, or client-go's guess from the kind when the server
/// gave none.
fn singular(r: &ApiResource) -> String {
    if r.singular_name.is_empty() { r.kind.to_ascii_lowercase() } else { r.singular_name.clone() }
}

/// The mappings of a kind in `group`, best first: `kind` as served or
/// lower-cased, in `version` only when given; one per group/version.
pub(super) fn kind_mappings<'a>(
    d: &'a Discovery,
    group: &str,
    kind: &str,
    version: Option<&str>,
) -> Vec<&'a ApiResource> {
    let mut seen = HashSet::new();
    ranked_resources(d)
        .into_iter()
        .filter(|r| r.group == group && version.is_none_or(|v| v == r.version))
        .filter(|r| r.kind == kind || r.kind.to_ascii_lowercase() == kind)
        .filter(|r| seen.insert(r.version.clone()))
        .collect()
}

pub(super) fn no_kind_match(group: &str, kind: &str, version: Option<&str>) -> MappingError {
    let what = match version {
        Some(v) => format!("kind {kind:?} in version {:?}", crate::object::GroupVersion::new(group, v).api_version()),
        None => format!("kind {kind:?} in group {group:?}"),
    };
    MappingError::NoMatch { what }
}

/// A short name (`deploy`, `po`) replaced by its resource as the
/// shortcut expander does: not when some resource is named so already,
/// the first match in priority order otherwise (dropping the version); a
/// group that matches no group exactly may be the start of one
/// (`deploy.app`).
pub(super) fn expand_short_name(d: &Discovery, asked: &PartialResource) -> PartialResource {
    let all = ranked_resources(d);
    let in_group = |r: &&&ApiResource| asked.group.as_ref().is_none_or(|g| *g == r.group);
    if all.iter().filter(in_group).any(|r| r.name == asked.resource || singular(r) == asked.resource) {
        return asked.clone();
    }
    let has_short_name = |r: &&&ApiResource| r.short_names.contains(&asked.resource);
    let found = all.iter().filter(in_group).find(has_short_name).or_else(|| {
        let prefix = asked.group.as_deref()?;
        all.iter().filter(|r| r.group.starts_with(prefix)).find(has_short_name)
    });
    if let Some(r) = found
        && let Some(other) =
            all.iter().filter(in_group).filter(has_short_name).find(|o| (&o.group, &o.name) != (&r.group, &r.name))
    {
        // As client-go's warning: the user may have meant the other one.
        tracing::warn!(
            short_name = %asked.resource,
            chosen = %format!("{}.{}", r.name, r.group),
            also = %format!("{}.{}", other.name, other.group),
            "short name could also match a lower priority resource"
        );
    }
    match found {
        Some(r) => PartialResource { group: Some(r.group.clone()), version: None, resource: r.name.clone() },
        None => asked.clone(),
    }
}

/// Every resource `asked` names by plural or singular (lower-cased), best
/// first. A group without a version also matches groups it is the start
/// of (`storageclasses.storage`), as client-go's mapper does.
fn resource_matches<'a>(d: &'a Discovery, asked: &PartialResource) -> Vec<&'a ApiResource> {
    let name = asked.resource.to_ascii_lowercase();
    ranked_resources(d)
        .into_iter()
        .filter(|r| match (&asked.group, &asked.version) {
            (Some(g), Some(v)) => *g == r.group && *v == r.version,
            (Some(g), None) => r.group.starts_with(g.as_str()),
            (None, Some(v)) => *v == r.version,
            (None, None) => true,
        })
        .filter(|r| r.name == name || singular(r) == name)
        .collect()
}

/// The resource `asked` names after short-name expansion: the match of the
/// best group/version; more than one there is ambiguous.
pub(super) fn resource_for<'a>(d: &'a Discovery, asked: &PartialResource) -> Result<&'a ApiResource, MappingError> {
    let expanded = expand_short_name(d, asked);
    let matches = resource_matches(d, &expanded);
    let Some(best) = matches.first() else {
        return Err(MappingError::NoMatch { what: asked.describe() });
    };
    let in_best = matches.iter().filter(|r| r.group == best.group && r.version == best.version).count();
    if in_best > 1 {
        let candidates = matches.iter().map(|r| qualified_name(r)).collect();
        return Err(MappingError::Ambiguous { what: asked.describe(), candidates });
    }
    Ok(best)
}

/// `deployments.v1.apps`, `pods.v1.` for the core group: kubectl's
/// fully-qualified form.
fn qualified_name(r: &ApiResource) -> String {
    format!("{}.{}.{}", r.name, r.version, r.group)
}

/// kubectl's reading of a command-line resource (`mappingFor`): as
/// `resource.version.group` when it has two dots, then as `resource.group`
/// or `resource`, then as `Kind.version.group`, `Kind.group` or `Kind`.
/// Unlike kubectl, an ambiguous resource is reported as such rather than
/// as not found.
pub(super) fn resource_for_arg<'a>(d: &'a Discovery, arg: &str) -> Result<&'a ApiResource, MappingError> {
    let parts: Vec<&str> = arg.splitn(3, '.').collect();
    let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    if let [resource, version, group] = parts[..] {
        let full =
            PartialResource { group: Some(group.into()), version: Some(version.into()), resource: resource.into() };
        if let Ok(r) = resource_for(d, &full) {
            return Ok(r);
        }
    }
    let (head, group) = arg.split_once('.').unwrap_or((arg, ""));
    let grouped = PartialResource { group: non_empty(group), version: None, resource: head.to_owned() };
    match resource_for(d, &grouped) {
        Ok(r) => return Ok(r),
        Err(e @ MappingError::Ambiguous { .. }) => return Err(e),
        Err(_) => {}
    }
    if let [kind, version, group] = parts[..]
        && let Some(r) = kind_mappings(d, group, kind, Some(version)).first()
    {
        return Ok(r);
    }
    kind_mappings(d, group, head, None)
        .first()
        .copied()
        .ok_or_else(|| MappingError::NoMatch { what: format!("resource type {arg:?}") })
}

/// The resources in `category` (`all`), each once at its best version, in
/// priority order.
pub(super) fn category<'a>(d: &'a Discovery, category: &str) -> Vec<&'a ApiResource> {
    let mut seen = HashSet::new();
    ranked_resources(d)
        .into_iter()
        .filter(|r| r.categories.iter().any(|c| c == category))
        .filter(|r| seen.insert((r.group.clone(), r.name.clone())))
        .collect()
}
