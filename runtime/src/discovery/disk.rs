//! Discovery results on disk in kubectl's layout (client-go's
//! `discovery/cached/disk`), so that kubectl and this crate share one
//! cache: `servergroups.json` (an `APIGroupList`) and one
//! `<group>/<version>/serverresources.json` (an `APIResourceList`; the core
//! group's is `v1/serverresources.json`) per group/version, each fresh for
//! the TTL counted from its own modification time.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value, json};

use super::types::{self, ApiGroup, ApiResource};
use super::{Discovery, decode};
use crate::rest::Client;

/// kubectl's discovery cache lifetime.
pub const DEFAULT_TTL: Duration = Duration::from_secs(6 * 60 * 60);

const GROUPS_FILE: &str = "servergroups.json";
const RESOURCES_FILE: &str = "serverresources.json";

/// Why a group/version read from disk has no resources: the discovery that
/// follows asks the server for it alone.
pub(super) const NOT_CACHED: &str = "not in the disk cache (missing, expired or unreadable)";

/// kubectl's default discovery cache of `client`'s server:
/// `$KUBECACHEDIR/discovery/<host_port>`, or
/// `~/.kube/cache/discovery/<host_port>` when `KUBECACHEDIR` is unset; `None`
/// without either.
pub fn default_cache_dir(client: &Client) -> Option<PathBuf> {
    let root = match std::env::var_os("KUBECACHEDIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => home::home_dir()?.join(".kube").join("cache"),
    };
    Some(discovery_cache_dir(&root, client))
}

/// The discovery cache kubectl keeps for `client`'s server under
/// `cache_dir` (its `--cache-dir`): `<cache_dir>/discovery/<host_port>`.
///
/// The server URL loses its `https://` or `http://`, then every character
/// but ASCII letters, digits, `_`, `.`, `/`, `(` and `)` becomes `_`
/// (`127.0.0.1:6443` → `127.0.0.1_6443`); a path prefix of the URL makes
/// nested directories, as in kubectl. Unlike kubectl, `..` in the URL
/// never leads outside `cache_dir/discovery`.
pub fn discovery_cache_dir(cache_dir: &Path, client: &Client) -> PathBuf {
    let mut dir = cache_dir.join("discovery");
    let depth = dir.components().count();
    for part in safe_host(&client.base_url()).split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if dir.components().count() > depth {
                    dir.pop();
                }
            }
            part => dir.push(part),
        }
    }
    dir
}

/// cli-runtime's `computeDiscoverCacheDir` before the path join: the first
/// `https://`, then the first `http://`, removed wherever they are, and
/// each character outside `[(\w/.)]` replaced by `_`.
fn safe_host(url: &str) -> String {
    let url = url.replacen("https://", "", 1).replacen("http://", "", 1);
    url.chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '(' | ')') { c } else { '_' })
        .collect()
}

#[derive(Clone, Debug)]
pub(super) struct DiskCache {
    dir: PathBuf,
    ttl: Duration,
    /// Set by [`invalidate`](Self::invalidate): files already there are not
    /// trusted until this client has written fresh ones.
    invalidated: Arc<AtomicBool>,
}

impl DiskCache {
    pub fn new(dir: PathBuf, ttl: Duration) -> Self {
        DiskCache { dir, ttl, invalidated: Arc::default() }
    }

    /// Stops reading what is on disk until the next [`store`](Self::store),
    /// as client-go does; the files stay for other readers (kubectl) and
    /// are overwritten by the next discovery.
    pub fn invalidate(&self) {
        self.invalidated.store(true, Ordering::SeqCst);
    }

    /// What the cache holds, if its group list is present and fresh. A group
    /// version whose resource file is missing, expired or unreadable is in
    /// `failed` (so it alone is asked again); a cache must never make
    /// discovery fail.
    pub fn load(&self) -> Option<Discovery> {
        if self.invalidated.load(Ordering::SeqCst) {
            return None;
        }
        let groups: types::GroupList = self.read_fresh(&self.dir.join(GROUPS_FILE))?;
        let mut d = Discovery::default();
        for g in groups.groups {
            let group = ApiGroup::from(g);
            for version in &group.versions {
                let gv = group.group_version(version);
                let list = self
                    .resources_path(&gv)
                    .and_then(|path| self.read_fresh::<types::ResourceList>(&path))
                    .filter(|list| !list.resources.is_empty());
                match list {
                    Some(list) => {
                        let resources = list.resources.into_iter().map(|r| r.into_resource(&group.name, version));
                        d.resources.insert(gv, resources.collect());
                    }
                    None => {
                        d.failed.insert(gv, NOT_CACHED.to_owned());
                    }
                }
            }
            d.groups.push(group);
        }
        (!d.groups.is_empty()).then_some(d)
    }

    /// Writes the group list and every group/version that succeeded and has
    /// resources (kubectl writes neither failures nor empty lists).
    pub fn store(&self, d: &Discovery) {
        if !d.groups.is_empty() {
            self.write(&self.dir.join(GROUPS_FILE), &group_list(&d.groups));
        }
        for (gv, resources) in &d.resources {
            if !d.failed.contains_key(gv) {
                self.store_resources(gv, resources);
            }
        }
        self.invalidated.store(false, Ordering::SeqCst);
    }

    /// Writes one group/version's resources.
    pub fn store_resources(&self, gv: &str, resources: &[ApiResource]) {
        if resources.is_empty() {
            return;
        }
        match self.resources_path(gv) {
            Some(path) => self.write(&path, &resource_list(gv, resources)),
            None => tracing::debug!(group_version = gv, "not caching a group/version that is no safe path"),
        }
    }

    /// `<dir>/<group>/<version>/serverresources.json`; `None` for a name
    /// that would leave the directory.
    fn resources_path(&self, gv: &str) -> Option<PathBuf> {
        let mut path = self.dir.clone();
        for part in gv.split('/') {
            if matches!(part, "" | "." | "..") || part.contains('\\') {
                return None;
            }
            path.push(part);
        }
        Some(path.join(RESOURCES_FILE))
    }

    fn read_fresh<T: serde::de::DeserializeOwned>(&self, path: &Path) -> Option<T> {
        let modified = std::fs::metadata(path).ok()?.modified().ok()?;
        let age = SystemTime::now().duration_since(modified).unwrap_or(Duration::ZERO);
        if age >= self.ttl {
            return None;
        }
        let bytes = std::fs::read(path).ok()?;
        match decode(&bytes, &path.display().to_string()) {
            Ok(value) => Some(value),
            Err(e) => {
                tracing::debug!(error = %crate::ErrorChain(&e), "ignoring unreadable discovery cache file");
                None
            }
        }
    }

    /// Through a temporary file in the same directory and a rename, so
    /// readers never see half a file; directories `0750` and files `0660`
    /// as kubectl makes them. Failure is logged only: the cache is an
    /// optimisation.
    fn write(&self, path: &Path, value: &Value) {
        let result = (|| -> std::io::Result<()> {
            let dir = path.parent().unwrap_or(&self.dir);
            create_private_dir(dir)?;
            let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or(RESOURCES_FILE);
            let mut tmp = tempfile::Builder::new().prefix(&format!("{file_name}.")).tempfile_in(dir)?;
            tmp.write_all(&serde_json::to_vec(value).map_err(std::io::Error::other)?)?;
            set_mode(tmp.as_file(), 0o660)?;
            tmp.persist(path).map_err(|e| e.error)?;
            Ok(())
        })();
        if let Err(e) = result {
            tracing::warn!(path = %path.display(), error = %crate::ErrorChain(&e), "could not write discovery cache");
        }
    }
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new().recursive(true).mode(0o750).create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

#[cfg(unix)]
fn set_mode(file: &std::fs::File, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    file.set_permissions(std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_file: &std::fs::File, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

/// `metav1.APIGroupList` as client-go encodes it; the core group is the
/// one named `""`.
fn group_list(groups: &[ApiGroup]) -> Value {
    let version = |g: &ApiGroup, v: &str| json!({"groupVersion": g.group_version(v), "version": v});
    let groups: Vec<Value> = groups
        .iter()
        .map(|g| {
            let mut group = Map::new();
            group.insert("name".into(), json!(g.name));
            group.insert("versions".into(), g.versions.iter().map(|v| version(g, v)).collect());
            if let Some(preferred) = &g.preferred_version {
                group.insert("preferredVersion".into(), version(g, preferred));
            }
            Value::Object(group)
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `metav1.APIResourceList` as client-go encodes it, empty optional fields
/// left out. A subresource's kind is written as if it lived in the list's
/// group/version (`ApiResource` does not keep where it lives).
fn resource_list(gv: &str, resources: &[ApiResource]) -> Value {
    let resources: Vec<Value> = resources
        .iter()
        .map(|r| {
            let mut out = Map::new();
            out.insert("name".into(), json!(r.name));
            out.insert("singularName".into(), json!(r.singular_name));
            out.insert("namespaced".into(), json!(r.namespaced));
            out.insert("kind".into(), json!(r.kind));
            out.insert("verbs".into(), json!(r.verbs));
            if !r.short_names.is_empty() {
                out.insert("shortNames".into(), json!(r.short_names));
            }
            if !r.categories.is_empty() {
                out.insert("categories".into(), json!(r.categories));
            }
            Value::Object(out)
        })
        .collect();
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources})
}
