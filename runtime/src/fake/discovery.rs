//! Legacy discovery of the registered resources (`/api`, `/apis`,
//! `/api/v1`, `/apis/{group}/{version}`) and `/version`, so a
//! `DiscoveryClient` (and what builds on it) works on the fake. Resources
//! only learned from requests are not listed: their scope is not known.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::tracker::{ResourceInfo, Tracker};

/// The verbs every resource serves.
const VERBS: [&str; 8] = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

/// The answer to a discovery path, `None` for any other path.
pub(crate) fn answer(t: &Tracker, path: &str) -> Option<Value> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        ["version"] => Some(json!({
            "major": "1",
            "minor": "37",
            "gitVersion": "v1.37.0-fake",
            "gitTreeState": "clean",
            "goVersion": "",
            "compiler": "",
            "platform": "",
        })),
        ["api"] => Some(json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []})),
        ["apis"] => Some(group_list(t)),
        ["api", version] => Some(resource_list(t, "", version)),
        ["apis", group, version] => Some(resource_list(t, group, version)),
        _ => None,
    }
}

/// Registered resources by group, version and plural.
fn registered(t: &Tracker) -> BTreeMap<(&str, &str, &str), &ResourceInfo> {
    t.resources
        .iter()
        .filter(|(_, info)| info.namespaced.is_some())
        .map(|(gvr, info)| ((gvr.group.as_str(), gvr.version.as_str(), gvr.resource.as_str()), info))
        .collect()
}

fn group_list(t: &Tracker) -> Value {
    let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (group, version, _) in registered(t).keys() {
        if !group.is_empty() {
            let versions = groups.entry(group).or_default();
            if !versions.contains(version) {
                versions.push(version);
            }
        }
    }
    let groups: Vec<Value> = groups
        .into_iter()
        .map(|(group, versions)| {
            let entries: Vec<Value> =
                versions.iter().map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v})).collect();
            json!({"name": group, "versions": entries, "preferredVersion": entries[0]})
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

fn resource_list(t: &Tracker, group: &str, version: &str) -> Value {
    let mut resources = Vec::new();
    for ((g, v, plural), info) in registered(t) {
        if g != group || v != version {
            continue;
        }
        let namespaced = info.namespaced == Some(true);
        resources.push(json!({
            "name": plural, "singularName": info.kind.to_lowercase(), "namespaced": namespaced,
            "kind": info.kind, "verbs": VERBS,
        }));
        if info.status {
            resources.push(json!({
                "name": format!("{plural}/status"), "singularName": "", "namespaced": namespaced,
                "kind": info.kind, "verbs": ["get", "patch", "update"],
            }));
        }
        if info.scale {
            resources.push(json!({
                "name": format!("{plural}/scale"), "singularName": "", "namespaced": namespaced,
                "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"],
            }));
        }
    }
    let group_version = crate::object::GroupVersion::new(group, version).api_version();
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources})
}
