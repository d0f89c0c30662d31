//! The OpenAPI v3 documents of a live cluster, read through the runtime's
//! own client (kubeconfig, contexts, auth, TLS and proxies as everywhere
//! else).
//!
//! `/openapi/v3` lists one document per group/version; the ones asked for
//! are fetched and labelled as the apiserver lays them out
//! (`api/v1.json`, `apis/<group>/<version>.json`), with
//! `kubernetes/<major>.<minor>` from `/version` as the source, so that the
//! built-in groups of a cluster give the same crate as its captured specs.

use std::collections::BTreeMap;
use std::path::PathBuf;

use k8s_client_runtime::ErrorChain;
use k8s_client_runtime::config::{Config, KubeconfigOptions};
use k8s_client_runtime::rest::{self, Client};
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::lower::is_builtin_schema;
use crate::spec::{self, Document};

/// Which cluster, and which of its groups.
#[derive(Debug, Clone, Default)]
pub struct Source {
    /// Kubeconfig file; `None`: as the runtime resolves it (KUBECONFIG,
    /// ~/.kube/config, in-cluster).
    pub kubeconfig: Option<PathBuf>,
    /// Context to use instead of the current one.
    pub context: Option<String>,
    /// API groups (`""` or `core` for the core group); empty: all.
    pub groups: Vec<String>,
}

/// What a cluster serves.
#[derive(Debug)]
pub struct Fetched {
    /// One document per group/version asked for, labelled as a specs
    /// directory lays it out (`apis/apps/v1.json`), in sorted order.
    pub documents: Vec<Document>,
    /// `kubernetes/<major>.<minor>`.
    pub label: String,
    /// The release `/version` names (`gitVersion`, e.g. `v1.37.2`).
    pub release: String,
    /// Whether a built-in group is among the documents: then the crate holds
    /// every type itself, else it takes Kubernetes' own from `k8s-client`.
    pub has_builtin_group: bool,
}

#[derive(Deserialize)]
struct Discovery {
    #[serde(default)]
    paths: BTreeMap<String, DiscoveryPath>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DiscoveryPath {
    #[serde(rename = "serverRelativeURL")]
    server_relative_url: String,
}

#[derive(Deserialize)]
struct Version {
    #[serde(default)]
    major: String,
    #[serde(default)]
    minor: String,
    #[serde(default, rename = "gitVersion")]
    git_version: String,
}

/// Fetches the documents of the groups `source` names.
pub fn fetch(source: &Source) -> Result<Fetched> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Cluster { url: String::new(), message: format!("cannot start an async runtime: {e}") })?;
    runtime.block_on(fetch_async(source))
}

async fn fetch_async(source: &Source) -> Result<Fetched> {
    let client = client(source)?;
    let base = client.base_url();
    // Every path is plain (no query): one GET, its errors naming the URL.
    let get = |path: String| {
        let request = client.get(path.clone());
        let url = format!("{base}{path}");
        async move { request.bytes().await.map_err(|e| Error::Cluster { url, message: request_failure(&e) }) }
    };
    let discovery: Discovery = decode(&base, "/openapi/v3", &get("/openapi/v3".into()).await?)?;
    let version: Version = decode(&base, "/version", &get("/version".into()).await?)?;
    let label =
        version_label(&version).map_err(|message| Error::Cluster { url: format!("{base}/version"), message })?;

    let wanted: Vec<String> =
        source.groups.iter().map(|g| if g == "core" { String::new() } else { g.clone() }).collect();
    let mut documents = Vec::new();
    let mut seen_groups = Vec::new();
    for (key, entry) in &discovery.paths {
        let listing = || format!("{base}/openapi/v3");
        let Some((group, rel_path)) = group_of(key).map_err(|message| Error::Cluster { url: listing(), message })?
        else {
            continue;
        };
        if !wanted.is_empty() && !wanted.contains(&group) {
            continue;
        }
        seen_groups.push(group);
        // Without the listing's `hash`, which only makes the answer
        // cacheable: a document republished since the listing (a CRD was
        // just added) is answered with a redirect to its new hash otherwise.
        let path = entry.server_relative_url.split('?').next().unwrap_or_default().to_owned();
        // Only the document listed, on this server: never a path elsewhere.
        if path != format!("/openapi/v3/{}", key.trim_matches('/')) {
            return Err(Error::Cluster {
                url: listing(),
                message: format!("the URL {path:?} of {key:?} is not /openapi/v3/{key}"),
            });
        }
        let bytes = get(path.clone()).await?;
        let url = format!("{base}{path}");
        documents.push(spec::parse_document(&bytes, &PathBuf::from(url), rel_path)?);
    }
    for g in &wanted {
        if !seen_groups.contains(g) {
            return Err(Error::Cluster {
                url: format!("{base}/openapi/v3"),
                message: format!("the cluster serves no group {:?}", if g.is_empty() { "core" } else { g }),
            });
        }
    }
    documents.sort_by(|a, b| a.rel_path.cmp(&b.rel_path));
    let has_builtin_group =
        documents.iter().any(|d| {
            d.openapi.components.schemas.iter().any(|(name, s)| {
                s.gvk.is_some() && is_builtin_schema(name) && !name.starts_with("io.k8s.apimachinery.")
            })
        });
    Ok(Fetched { documents, label, release: version.git_version, has_builtin_group })
}

/// Why a request failed, with its causes, for an error that names the URL
/// itself: a transport error's message starts with the method and the URL
/// too, so only its causes are kept.
fn request_failure(e: &rest::Error) -> String {
    match e {
        rest::Error::Transport { error, .. } => {
            ErrorChain(std::error::Error::source(error).unwrap_or(error)).to_string()
        }
        e => ErrorChain(e).to_string(),
    }
}

/// The answer at `path` as a `T`, or an error naming its URL.
fn decode<T: serde::de::DeserializeOwned>(base: &str, path: &str, bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes)
        .map_err(|e| Error::Cluster { url: format!("{base}{path}"), message: format!("unexpected answer: {e}") })
}

fn client(source: &Source) -> Result<Client> {
    let options = KubeconfigOptions { context: source.context.clone(), ..KubeconfigOptions::default() };
    let config_error = |e: k8s_client_runtime::config::Error| Error::Cluster {
        url: String::new(),
        message: format!("kubeconfig: {}", ErrorChain(&e)),
    };
    let mut config = match (&source.kubeconfig, &source.context) {
        (Some(path), _) => Config::from_kubeconfig_file(path, &options).map_err(config_error)?,
        (None, Some(_)) => Config::from_default_kubeconfig(&options).map_err(config_error)?,
        (None, None) => Config::infer().map_err(config_error)?,
    };
    // One document per group/version, fetched once: discovery's budget
    // (kubectl allows discovery 50 requests per second), not a controller's.
    config.qps = config.qps.max(50.0);
    config.burst = config.burst.max(100);
    Client::new(config).map_err(|e| Error::Cluster { url: String::new(), message: ErrorChain(&e).to_string() })
}

/// `kubernetes/<major>.<minor>` for a server's `/version`; its `minor` may
/// carry a suffix (`35+`), its `major` must be a number.
fn version_label(version: &Version) -> std::result::Result<String, String> {
    let minor: String = version.minor.chars().take_while(char::is_ascii_digit).collect();
    let number = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    if !number(&version.major) || minor.is_empty() {
        return Err(format!(
            "unexpected answer: major {:?} and minor {:?} are not a version number",
            version.major, version.minor
        ));
    }
    Ok(format!("kubernetes/{}.{minor}", version.major))
}

/// `api/v1` → (`""`, `api/v1.json`); `apis/apps/v1` → (`apps`, `apis/apps/v1.json`);
/// anything else (`apis`, `version`, `openid/v1/jwks`) is not a group/version.
/// A group or version the apiserver would not serve is an error.
fn group_of(path: &str) -> std::result::Result<Option<(String, String)>, String> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rel_path) = match parts.as_slice() {
        ["api", v] => ("", *v, format!("api/{v}.json")),
        ["apis", g, v] => (*g, *v, format!("apis/{g}/{v}.json")),
        _ => return Ok(None),
    };
    spec::check_group_version(group, version).map_err(|e| format!("listed document {path:?}: {e}"))?;
    Ok(Some((group.to_owned(), rel_path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_paths_name_group_versions() {
        assert_eq!(group_of("api/v1"), Ok(Some((String::new(), "api/v1.json".into()))));
        assert_eq!(group_of("apis/apps/v1"), Ok(Some(("apps".into(), "apis/apps/v1.json".into()))));
        assert_eq!(group_of("apis/apps"), Ok(None));
        assert_eq!(group_of("openid/v1/jwks"), Ok(None));
        assert_eq!(group_of(".well-known/openid-configuration"), Ok(None));
    }

    #[test]
    fn discovery_keys_that_are_no_group_version_are_refused() {
        for key in ["apis/Apps/v1", "apis/apps/v1\npub fn x() {}", "apis/apps/V1", "api/1", "apis/-a/v1"] {
            let e = group_of(key).expect_err(key);
            assert!(e.contains(&format!("{key:?}")), "{e}");
        }
    }

    #[test]
    fn version_labels_are_numbers() {
        let v =
            |major: &str, minor: &str| Version { major: major.into(), minor: minor.into(), git_version: String::new() };
        assert_eq!(version_label(&v("1", "35+")), Ok("kubernetes/1.35".into()));
        for (major, minor) in [("1\n//", "35"), ("", "35"), ("1", "x"), ("1 */", "35")] {
            let e = version_label(&v(major, minor)).expect_err(major);
            assert!(e.contains("not a version number"), "{e}");
        }
    }
}
