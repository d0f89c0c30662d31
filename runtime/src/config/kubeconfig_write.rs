//! Writing kubeconfigs back as kubectl does (client-go's `ModifyConfig`):
//! each change goes to the file that holds what changed, under kubectl's
//! `<file>.lock`, in kubectl's YAML form, and atomically.
//!
//! Use [`KubeconfigFiles::modify`] (or its shortcuts) to change the merged
//! configuration kubectl sees; use [`Kubeconfig::write_to`] to write one
//! whole file.

use std::io::Write as _;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::kubeconfig::default_path;
use super::{Error, Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext};

/// How long [`KubeconfigFiles`] waits for another writer's lock by default.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(5);

/// The kubeconfig files kubectl reads and writes (client-go's
/// `ClientConfigLoadingRules`): the `KUBECONFIG` list, or one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeconfigFiles {
    precedence: Vec<PathBuf>,
    explicit: bool,
    lock_timeout: Duration,
}

impl KubeconfigFiles {
    /// `KUBECONFIG`'s files when it is set and non-empty, else
    /// `~/.kube/config`.
    pub fn from_env() -> KubeconfigFiles {
        match std::env::var_os("KUBECONFIG") {
            Some(v) if !v.is_empty() => Self::precedence(std::env::split_paths(&v)),
            _ => Self::precedence(default_path()),
        }
    }

    /// A `KUBECONFIG`-style list: merged in order, the first to define a
    /// name wins; missing files are skipped.
    pub fn precedence(paths: impl IntoIterator<Item = PathBuf>) -> KubeconfigFiles {
        let mut precedence: Vec<PathBuf> = Vec::new();
        for path in paths {
            if !path.as_os_str().is_empty() && !precedence.contains(&path) {
                precedence.push(path);
            }
        }
        KubeconfigFiles { precedence, explicit: false, lock_timeout: DEFAULT_LOCK_TIMEOUT }
    }

    /// One file (`--kubeconfig`), which must exist; every change goes to it.
    pub fn explicit(path: impl Into<PathBuf>) -> KubeconfigFiles {
        KubeconfigFiles { precedence: vec![path.into()], explicit: true, lock_timeout: DEFAULT_LOCK_TIMEOUT }
    }

    /// How long to wait for another writer's `<file>.lock` before failing.
    #[must_use]
    pub fn with_lock_timeout(mut self, timeout: Duration) -> KubeconfigFiles {
        self.lock_timeout = timeout;
        self
    }

    /// The files, in precedence order.
    pub fn paths(&self) -> &[PathBuf] {
        &self.precedence
    }

    /// The merged configuration, relative paths resolved; empty when no
    /// file exists (an explicit file must).
    pub fn read(&self) -> Result<Kubeconfig, Error> {
        Ok(self.load()?.merged)
    }

    /// Applies `edit` to the merged configuration and writes what changed
    /// where kubectl would: the current context to the first existing file
    /// (when cleared, to the first file that sets one); preferences to the
    /// first file whose preferences differ; a changed or removed cluster,
    /// user or context to the file that defines it, a new one to the first
    /// existing file. Changed entries have their paths made relative to
    /// their file where that needs no `..`. Files nothing changed in are not
    /// written. Top-level extensions and unknown keys are not written, as in
    /// kubectl.
    pub fn modify(&self, edit: impl FnOnce(&mut Kubeconfig)) -> Result<(), Error> {
        let _locks = self.lock_all()?;
        let loaded = self.load()?;
        let mut new = loaded.merged.clone();
        edit(&mut new);
        if new == loaded.merged {
            return Ok(());
        }
        let mut plan = WritePlan { loaded: &loaded, pending: Vec::new() };
        plan.current_context(&new, self.explicit)?;
        plan.preferences(&new, self.explicit)?;
        plan.entries(&new)?;
        for (path, config) in plan.pending {
            write_file(&path, &config)?;
        }
        Ok(())
    }

    /// Replaces the merged configuration with `new`, as client-go's
    /// `ModifyConfig(new)`.
    pub fn replace(&self, new: Kubeconfig) -> Result<(), Error> {
        self.modify(|kc| {
            let origin = std::mem::take(&mut kc.origin);
            *kc = Kubeconfig { origin, ..new };
        })
    }

    /// `kubectl config use-context <name>`; the context must exist.
    pub fn set_current_context(&self, name: &str) -> Result<(), Error> {
        let mut missing = false;
        self.modify(|kc| {
            missing = !kc.contexts.iter().any(|c| c.name == name);
            if !missing {
                kc.current_context = Some(name.to_owned());
            }
        })?;
        if missing {
            return Err(Error::InvalidKubeconfig {
                origin: self.origin_display(),
                message: format!("no context exists with the name {name:?}"),
            });
        }
        Ok(())
    }

    fn origin_display(&self) -> String {
        self.precedence.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(":")
    }

    /// `kubectl config set-context --current --namespace=<namespace>`.
    pub fn set_current_context_namespace(&self, namespace: &str) -> Result<(), Error> {
        let mut unset = false;
        self.modify(|kc| match kc.current_context.clone().filter(|c| !c.is_empty()) {
            Some(current) => set_namespace(kc, &current, namespace),
            None => unset = true,
        })?;
        if unset {
            return Err(Error::InvalidKubeconfig {
                origin: self.origin_display(),
                message: "current-context is not set".into(),
            });
        }
        Ok(())
    }

    /// `kubectl config set-context <context> --namespace=<namespace>`: the
    /// context is created when missing.
    pub fn set_context_namespace(&self, context: &str, namespace: &str) -> Result<(), Error> {
        self.modify(|kc| set_namespace(kc, context, namespace))
    }

    fn lock_all(&self) -> Result<Vec<FileLock>, Error> {
        // Always in the same order, so two writers cannot deadlock.
        let mut paths = self.precedence.clone();
        paths.sort();
        paths.iter().map(|p| FileLock::acquire(p, self.lock_timeout)).collect()
    }

    fn load(&self) -> Result<Loaded, Error> {
        let mut files = Vec::new();
        let mut merged: Option<Kubeconfig> = None;
        for path in &self.precedence {
            let as_written = match read_as_written(path)? {
                Some(kc) => kc,
                None if self.explicit => return Err(Error::KubeconfigMissing { path: path.clone() }),
                None => {
                    files.push((path.clone(), None));
                    continue;
                }
            };
            let mut resolved = as_written.clone();
            if let Some(dir) = path.parent() {
                resolved.resolve_paths(dir);
            }
            merged = Some(match merged {
                None => resolved.clone(),
                Some(m) => m.merge(resolved.clone()),
            });
            files.push((path.clone(), Some((as_written, resolved))));
        }
        let first_existing = files.iter().find(|(_, f)| f.is_some()).map(|(p, _)| p);
        let default_file = first_existing.or(self.precedence.first()).cloned().ok_or_else(|| {
            Error::InvalidKubeconfig { origin: "(no file)".into(), message: "no kubeconfig file to write to".into() }
        })?;
        Ok(Loaded { files, merged: merged.unwrap_or_default(), default_file })
    }
}

fn set_namespace(kc: &mut Kubeconfig, context: &str, namespace: &str) {
    let index = match kc.contexts.iter().position(|c| c.name == context) {
        Some(i) => i,
        None => {
            kc.contexts.push(NamedContext { name: context.to_owned(), ..Default::default() });
            kc.contexts.len() - 1
        }
    };
    let ctx = kc.contexts[index].context.get_or_insert_with(Default::default);
    ctx.namespace = Some(namespace.to_owned()).filter(|n| !n.is_empty());
}

/// The files as read at the start of a change.
struct Loaded {
    /// Each file in precedence order: as written and resolved, `None` when
    /// it does not exist.
    files: Vec<(PathBuf, Option<(Kubeconfig, Kubeconfig)>)>,
    merged: Kubeconfig,
    /// client-go's `GetDefaultFilename`: the first existing file, else the
    /// first file.
    default_file: PathBuf,
}

impl Loaded {
    /// The file that defines a name first, as the merge took it from there.
    fn origin_of(&self, has: impl Fn(&Kubeconfig) -> bool) -> Option<&Path> {
        self.files.iter().find(|(_, f)| f.as_ref().is_some_and(|(_, r)| has(r))).map(|(p, _)| p.as_path())
    }
}

/// The new contents of the files a change touches, as written (relative
/// paths kept), in the order they were first touched.
struct WritePlan<'a> {
    loaded: &'a Loaded,
    pending: Vec<(PathBuf, Kubeconfig)>,
}

impl WritePlan<'_> {
    fn file(&mut self, path: &Path) -> &mut Kubeconfig {
        let index = match self.pending.iter().position(|(p, _)| p == path) {
            Some(i) => i,
            None => {
                let current = self
                    .loaded
                    .files
                    .iter()
                    .find(|(p, _)| p == path)
                    .and_then(|(_, f)| f.as_ref())
                    .map(|(written, _)| written.clone())
                    .unwrap_or_default();
                self.pending.push((path.to_owned(), current));
                self.pending.len() - 1
            }
        };
        &mut self.pending[index].1
    }

    fn current_context(&mut self, new: &Kubeconfig, explicit: bool) -> Result<(), Error> {
        let name = new.current_context.clone().unwrap_or_default();
        if self.loaded.merged.current_context.clone().unwrap_or_default() == name {
            return Ok(());
        }
        let target = if explicit || !name.is_empty() {
            self.loaded.default_file.clone()
        } else {
            self.loaded
                .origin_of(|kc| kc.current_context.as_deref().is_some_and(|c| !c.is_empty()))
                .map(Path::to_owned)
                .ok_or_else(|| Error::InvalidKubeconfig {
                    origin: self.loaded.default_file.display().to_string(),
                    message: "no file sets a current-context to clear".into(),
                })?
        };
        self.file(&target).current_context = Some(name);
        Ok(())
    }

    fn preferences(&mut self, new: &Kubeconfig, explicit: bool) -> Result<(), Error> {
        if self.loaded.merged.preferences == new.preferences {
            return Ok(());
        }
        let target = if explicit {
            Some(self.loaded.default_file.clone())
        } else {
            self.loaded
                .files
                .iter()
                .find(|(_, f)| f.as_ref().map(|(w, _)| &w.preferences) != Some(&new.preferences))
                .map(|(p, _)| p.clone())
        };
        let target = target.ok_or_else(|| Error::InvalidKubeconfig {
            origin: self.loaded.default_file.display().to_string(),
            message: "no file to write preferences to".into(),
        })?;
        self.file(&target).preferences = new.preferences.clone();
        Ok(())
    }

    fn entries(&mut self, new: &Kubeconfig) -> Result<(), Error> {
        let old = &self.loaded.merged;
        for entry in &new.clusters {
            if !old.clusters.contains(entry) {
                let target = self.target(|kc| kc.clusters.iter().any(|c| c.name == entry.name));
                let mut entry = entry.clone();
                relativize_cluster(&mut entry, &target, PathForm::Kubectl);
                upsert(&mut self.file(&target).clusters, entry, |c| &c.name);
            }
        }
        for entry in &new.contexts {
            if !old.contexts.contains(entry) {
                let target = self.target(|kc| kc.contexts.iter().any(|c| c.name == entry.name));
                upsert(&mut self.file(&target).contexts, entry.clone(), |c| &c.name);
            }
        }
        for entry in &new.auth_infos {
            if !old.auth_infos.contains(entry) {
                let target = self.target(|kc| kc.auth_infos.iter().any(|a| a.name == entry.name));
                let mut entry = entry.clone();
                relativize_user(&mut entry, &target, PathForm::Kubectl);
                upsert(&mut self.file(&target).auth_infos, entry, |a| &a.name);
            }
        }
        for gone in old.clusters.iter().filter(|o| !new.clusters.iter().any(|n| n.name == o.name)) {
            let target = self.target(|kc| kc.clusters.iter().any(|c| c.name == gone.name));
            self.file(&target).clusters.retain(|c| c.name != gone.name);
        }
        for gone in old.contexts.iter().filter(|o| !new.contexts.iter().any(|n| n.name == o.name)) {
            let target = self.target(|kc| kc.contexts.iter().any(|c| c.name == gone.name));
            self.file(&target).contexts.retain(|c| c.name != gone.name);
        }
        for gone in old.auth_infos.iter().filter(|o| !new.auth_infos.iter().any(|n| n.name == o.name)) {
            let target = self.target(|kc| kc.auth_infos.iter().any(|a| a.name == gone.name));
            self.file(&target).auth_infos.retain(|a| a.name != gone.name);
        }
        Ok(())
    }

    /// The file that defines an entry, else the default file.
    fn target(&self, has: impl Fn(&Kubeconfig) -> bool) -> PathBuf {
        self.loaded.origin_of(has).unwrap_or(&self.loaded.default_file).to_owned()
    }
}

fn upsert<T>(list: &mut Vec<T>, entry: T, name: impl Fn(&T) -> &str) {
    match list.iter_mut().find(|e| name(e) == name(&entry)) {
        Some(slot) => *slot = entry,
        None => list.push(entry),
    }
}

/// Reads a file without resolving its paths; `None` when it does not exist.
fn read_as_written(path: &Path) -> Result<Option<Kubeconfig>, Error> {
    match std::fs::read_to_string(path) {
        Ok(text) => Kubeconfig::parse(&text, path).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::ReadKubeconfig { path: path.to_owned(), source }),
    }
}

/// The directory paths of `file` were resolved against, as
/// `Kubeconfig::resolve_paths` made it absolute.
fn base_dir(file: &Path) -> PathBuf {
    let dir = file.parent().unwrap_or(Path::new(""));
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned())
}

/// How a path resolved against a file's directory is written back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathForm {
    /// Exactly as the file had it (`./bin/plugin`, `../ca.crt`).
    AsWritten,
    /// As kubectl writes an entry it changed: cleaned, relative when that
    /// needs no `..`, else absolute.
    Kubectl,
}

fn relativize_cluster(entry: &mut NamedCluster, file: &Path, form: PathForm) {
    let base = base_dir(file);
    if let Some(cluster) = entry.cluster.as_mut() {
        relativize(&mut cluster.certificate_authority, &base, form);
    }
}

fn relativize_user(entry: &mut NamedAuthInfo, file: &Path, form: PathForm) {
    let base = base_dir(file);
    if let Some(user) = entry.auth_info.as_mut() {
        relativize(&mut user.client_certificate, &base, form);
        relativize(&mut user.client_key, &base, form);
        relativize(&mut user.token_file, &base, form);
        if let Some(exec) = user.exec.as_mut().filter(|e| e.command.contains('/')) {
            let mut command = Some(PathBuf::from(&exec.command));
            relativize(&mut command, &base, form);
            if let Some(command) = command {
                exec.command = command.to_string_lossy().into_owned();
            }
        }
    }
}

/// client-go's `RelativizePathWithNoBacksteps`: an absolute path under
/// `base` becomes relative to it; one that would need `..` stays absolute.
/// With [`PathForm::AsWritten`] a path resolved from the file's own
/// relative path gets exactly that back. A relative path is taken as
/// already relative to the file (client-go fails on it).
fn relativize(path: &mut Option<PathBuf>, base: &Path, form: PathForm) {
    let Some(p) = path.as_mut().filter(|p| p.is_absolute()) else { return };
    // By text, not components, which would drop a leading `./`.
    let as_written = p
        .to_str()
        .zip(base.to_str())
        .and_then(|(p, b)| p.strip_prefix(b.trim_end_matches('/'))?.strip_prefix('/'))
        .map(PathBuf::from)
        .filter(|_| form == PathForm::AsWritten);
    let rest = match as_written {
        Some(rest) => rest,
        None => match clean_path(p).strip_prefix(clean_path(base)) {
            Ok(rest) => rest.to_owned(),
            Err(_) => {
                if form == PathForm::Kubectl {
                    *p = clean_path(p);
                }
                return;
            }
        },
    };
    *p = if rest.as_os_str().is_empty() { PathBuf::from(".") } else { rest };
}

/// Go's `filepath.Clean`, lexically: no `.`, no `name/..`, no `..` above
/// the root.
pub(super) fn clean_path(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    let mut normal = 0usize;
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir if normal > 0 => {
                out.pop();
                normal -= 1;
            }
            Component::ParentDir if out.has_root() => {}
            Component::Normal(part) => {
                out.push(part);
                normal += 1;
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() { PathBuf::from(".") } else { out }
}

impl Kubeconfig {
    /// This configuration as kubectl writes a kubeconfig file: Go's field
    /// set (`apiVersion: v1`, `kind: Config`, `current-context: ""`, empty
    /// lists as `null`, empty optional fields left out), entries and
    /// extensions sorted by name, go-yaml's layout and quoting. Paths are
    /// written as they are; unknown keys are kept.
    pub fn to_kubectl_yaml(&self) -> Result<String, Error> {
        let mut sorted = self.clone();
        sorted.sort_entries();
        let mut value = serde_json::to_value(&sorted).map_err(|e| Error::InvalidKubeconfig {
            origin: self.origin.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(":"),
            message: format!("cannot be written: {e}"),
        })?;
        go_shape(&mut value);
        Ok(super::kubeconfig_yaml::to_yaml(&value))
    }

    /// Writes this configuration to `path` as kubectl would (see
    /// [`Kubeconfig::to_kubectl_yaml`]), absolute paths under the file's
    /// directory made relative again, holding kubectl's `<path>.lock` and
    /// replacing the file atomically with its permissions kept.
    pub fn write_to(&self, path: &Path) -> Result<(), Error> {
        let _lock = FileLock::acquire(path, DEFAULT_LOCK_TIMEOUT)?;
        let mut relative = self.clone();
        for cluster in &mut relative.clusters {
            relativize_cluster(cluster, path, PathForm::AsWritten);
        }
        for user in &mut relative.auth_infos {
            relativize_user(user, path, PathForm::AsWritten);
        }
        write_file(path, &relative)
    }

    fn sort_entries(&mut self) {
        fn by_name<T>(list: &mut [T], name: impl Fn(&T) -> &str) {
            list.sort_by(|a, b| name(a).cmp(name(b)));
        }
        by_name(&mut self.clusters, |c| &c.name);
        by_name(&mut self.auth_infos, |a| &a.name);
        by_name(&mut self.contexts, |c| &c.name);
        by_name(&mut self.extensions, |e| &e.name);
        by_name(&mut self.preferences.extensions, |e| &e.name);
        for c in self.clusters.iter_mut().filter_map(|c| c.cluster.as_mut()) {
            by_name(&mut c.extensions, |e| &e.name);
        }
        for a in self.auth_infos.iter_mut().filter_map(|a| a.auth_info.as_mut()) {
            by_name(&mut a.extensions, |e| &e.name);
        }
        for c in self.contexts.iter_mut().filter_map(|c| c.context.as_mut()) {
            by_name(&mut c.extensions, |e| &e.name);
        }
    }
}

/// Go's JSON for `clientcmd/api/v1.Config`: fields without `omitempty`
/// always present (`null` or `""` when empty), those with it left out when
/// empty.
fn go_shape(value: &mut Value) {
    let Value::Object(top) = value else { return };
    top.insert("apiVersion".into(), "v1".into());
    top.insert("kind".into(), "Config".into());
    for list in ["clusters", "users", "contexts"] {
        always_list(top, list);
    }
    always(top, "current-context", Value::from(""));
    omit_empty(top, &["extensions"]);
    if let Some(Value::Object(prefs)) = top.get_mut("preferences") {
        omit_empty(prefs, &["colors", "extensions"]);
        extensions(prefs);
    }
    omit_empty(top, &["preferences"]);
    extensions(top);
    let entries = [("clusters", "cluster"), ("users", "user"), ("contexts", "context")];
    for (list, field) in entries {
        let Some(Value::Array(items)) = top.get_mut(list) else { continue };
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            always(item, "name", Value::from(""));
            let body = item.entry(field).or_insert(Value::Null);
            if body.is_null() {
                *body = Value::Object(Default::default());
            }
            let Value::Object(body) = body else { continue };
            extensions(body);
            match field {
                "cluster" => {
                    canonical_base64(body, "certificate-authority-data");
                    always(body, "server", Value::from(""));
                    omit_empty(
                        body,
                        &[
                            "tls-server-name",
                            "insecure-skip-tls-verify",
                            "certificate-authority",
                            "certificate-authority-data",
                            "proxy-url",
                            "disable-compression",
                            "extensions",
                        ],
                    );
                }
                "user" => {
                    omit_empty(
                        body,
                        &[
                            "client-certificate",
                            "client-certificate-data",
                            "client-key",
                            "client-key-data",
                            "token",
                            "tokenFile",
                            "as",
                            "as-uid",
                            "as-groups",
                            "as-user-extra",
                            "username",
                            "password",
                            "extensions",
                        ],
                    );
                    for pointer in ["auth-provider", "exec"] {
                        if body.get(pointer).is_some_and(Value::is_null) {
                            body.remove(pointer);
                        }
                    }
                    for data in ["client-certificate-data", "client-key-data"] {
                        canonical_base64(body, data);
                    }
                    if let Some(Value::Object(exec)) = body.get_mut("exec") {
                        // client-go's v1 defaulting, applied when it reads.
                        let old_api = exec.get("apiVersion").and_then(Value::as_str).is_some_and(|v| {
                            matches!(
                                v,
                                "client.authentication.k8s.io/v1beta1" | "client.authentication.k8s.io/v1alpha1"
                            )
                        });
                        if old_api && exec.get("interactiveMode").and_then(Value::as_str).is_none_or(str::is_empty) {
                            exec.insert("interactiveMode".into(), "IfAvailable".into());
                        }
                        always(exec, "command", Value::from(""));
                        always_list(exec, "args");
                        always_list(exec, "env");
                        always(exec, "provideClusterInfo", Value::from(false));
                        omit_empty(exec, &["apiVersion", "installHint", "interactiveMode"]);
                    }
                }
                _ => {
                    always(body, "cluster", Value::from(""));
                    always(body, "user", Value::from(""));
                    omit_empty(body, &["namespace", "extensions"]);
                }
            }
        }
    }
}

fn always(map: &mut serde_json::Map<String, Value>, key: &str, empty: Value) {
    let slot = map.entry(key).or_insert(Value::Null);
    if slot.is_null() {
        *slot = empty;
    }
}

/// A Go slice without `omitempty`: `null` when empty.
fn always_list(map: &mut serde_json::Map<String, Value>, key: &str) {
    let slot = map.entry(key).or_insert(Value::Null);
    if slot.as_array().is_some_and(Vec::is_empty) {
        *slot = Value::Null;
    }
}

fn omit_empty(map: &mut serde_json::Map<String, Value>, keys: &[&str]) {
    for key in keys {
        let empty = match map.get(*key) {
            Some(Value::Null) => true,
            Some(Value::Bool(b)) => !b,
            Some(Value::String(s)) => s.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            Some(Value::Object(o)) => o.is_empty(),
            Some(Value::Number(n)) => n.as_f64() == Some(0.0),
            None => false,
        };
        if empty {
            map.remove(*key);
        }
    }
}

/// Go holds `*-data` fields as bytes: line breaks in the base64 are dropped
/// on reading, and writing encodes it again in one line.
fn canonical_base64(map: &mut serde_json::Map<String, Value>, key: &str) {
    use base64::Engine as _;
    let Some(Value::String(text)) = map.get_mut(key) else { return };
    let joined: String = text.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
    if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(&joined) {
        *text = base64::engine::general_purpose::STANDARD.encode(bytes);
    }
}

fn extensions(map: &mut serde_json::Map<String, Value>) {
    if let Some(Value::Array(items)) = map.get_mut("extensions") {
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            always(item, "name", Value::from(""));
            item.entry("extension").or_insert(Value::Null);
        }
    }
}

/// Writes `config` in kubectl's form to `path`, atomically: a temporary
/// file in the same directory renamed over it, so a reader never sees half
/// a file. A symbolic link is written through, and the file's permissions
/// are kept (`0600` for a new file, as kubectl).
fn write_file(path: &Path, config: &Kubeconfig) -> Result<(), Error> {
    let text = config.to_kubectl_yaml()?;
    let failed = |source: std::io::Error| Error::WriteKubeconfig { path: path.to_owned(), source };
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path).map_err(failed)?,
        _ => path.to_owned(),
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(failed)?;
    let permissions = match std::fs::metadata(&target) {
        Ok(m) => Some(m.permissions()),
        Err(_) => new_file_permissions(),
    };
    let mut temp = tempfile::Builder::new().prefix(".kubeconfig-").tempfile_in(&dir).map_err(failed)?;
    temp.write_all(text.as_bytes()).map_err(failed)?;
    if let Some(permissions) = permissions {
        temp.as_file().set_permissions(permissions).map_err(failed)?;
    }
    temp.as_file().sync_all().map_err(failed)?;
    temp.persist(&target).map_err(|e| failed(e.error))?;
    Ok(())
}

#[cfg(unix)]
fn new_file_permissions() -> Option<std::fs::Permissions> {
    Some(std::os::unix::fs::PermissionsExt::from_mode(0o600))
}

/// Elsewhere the temporary file's own permissions are the platform's default.
#[cfg(not(unix))]
fn new_file_permissions() -> Option<std::fs::Permissions> {
    None
}

/// kubectl's lock on a kubeconfig: `<file>.lock`, created exclusively and
/// removed when done.
#[derive(Debug)]
struct FileLock {
    path: PathBuf,
}

impl FileLock {
    /// Takes the lock, retrying while another writer holds it, up to
    /// `timeout`.
    fn acquire(file: &Path, timeout: Duration) -> Result<FileLock, Error> {
        let mut lock = file.as_os_str().to_owned();
        lock.push(".lock");
        let path = PathBuf::from(lock);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| Error::WriteKubeconfig { path: file.to_owned(), source })?;
        }
        let started = Instant::now();
        let mut pause = Duration::from_millis(5);
        loop {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(_) => return Ok(FileLock { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let waited = started.elapsed();
                    if waited >= timeout {
                        return Err(Error::KubeconfigLocked { lock: path, waited });
                    }
                    // Another process holds it: nothing to wait on but time.
                    std::thread::sleep(pause.min(timeout - waited));
                    pause = (pause * 2).min(Duration::from_millis(100));
                }
                Err(source) => return Err(Error::WriteKubeconfig { path: path.clone(), source }),
            }
        }
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.path) {
            tracing::warn!(lock = %self.path.display(), error = %e, "removing the kubeconfig lock failed");
        }
    }
}

#[cfg(test)]
#[path = "kubeconfig_write_tests.rs"]
mod tests;
