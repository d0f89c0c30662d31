//! kubeconfig files: parsing and kubectl's merge rules. Turning a context
//! into a `Config` is in `kubeconfig_context.rs`; writing files back in
//! `kubeconfig_write.rs`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};

use super::proxy::redact_url;
use super::{Error, Secret};

/// A kubeconfig as written on disk (`clientcmdapi.Config`), possibly the
/// merge of several files. Read with [`Kubeconfig::read_from`] (or merged),
/// relative paths are already absolute, resolved against the directory of
/// the file that held them; [`Kubeconfig::from_yaml`] leaves them as
/// written. Extensions, preferences and keys this version does not know are
/// kept, so a file written back with [`Kubeconfig::write_to`] or
/// [`KubeconfigFiles::modify`](super::KubeconfigFiles::modify) loses nothing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Kubeconfig {
    /// `clusters`: the apiservers, by name.
    #[serde(default, deserialize_with = "nullable")]
    pub clusters: Vec<NamedCluster>,
    /// `users`: the credentials, by name.
    #[serde(default, rename = "users", deserialize_with = "nullable")]
    pub auth_infos: Vec<NamedAuthInfo>,
    /// `contexts`: cluster/user/namespace triples, by name.
    #[serde(default, deserialize_with = "nullable")]
    pub contexts: Vec<NamedContext>,
    /// `current-context`: the context used when none is asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_context: Option<String>,
    /// `preferences`: kubectl's (colors, extensions).
    #[serde(default, skip_serializing_if = "Preferences::is_empty", deserialize_with = "nullable")]
    pub preferences: Preferences,
    /// `extensions`: data other tools attach, kept as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    pub extensions: Vec<NamedExtension>,
    /// Keys this version does not know, kept so that writing the file back
    /// loses nothing.
    #[serde(flatten)]
    pub unknown: serde_json::Map<String, serde_json::Value>,
    /// The files this was read from, for error messages.
    #[serde(skip)]
    pub origin: Vec<PathBuf>,
}

/// A `clusters` entry: an apiserver under a name contexts refer to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NamedCluster {
    /// The name contexts refer to.
    pub name: String,
    /// How to reach the apiserver.
    #[serde(default)]
    pub cluster: Option<Cluster>,
    /// Keys this version does not know, kept so that writing the file back
    /// loses nothing.
    #[serde(flatten)]
    pub unknown: serde_json::Map<String, serde_json::Value>,
}

/// How to reach one apiserver (`clusters[].cluster`). `Debug` shows
/// `proxy_url` with its password redacted.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Cluster {
    /// `server`: the apiserver's URL, `https://host:port`.
    #[serde(default)]
    pub server: Option<String>,
    /// `tls-server-name`: the name to check the server certificate against
    /// instead of the URL's host.
    #[serde(default)]
    pub tls_server_name: Option<String>,
    /// `insecure-skip-tls-verify`: accept any server certificate; refused
    /// together with a CA.
    #[serde(default)]
    pub insecure_skip_tls_verify: Option<bool>,
    /// `certificate-authority`: file of PEM CA certificates to trust.
    #[serde(default)]
    pub certificate_authority: Option<PathBuf>,
    /// `certificate-authority-data`: base64 PEM CA certificates; wins over
    /// `certificate-authority`.
    #[serde(default)]
    pub certificate_authority_data: Option<String>,
    /// `proxy-url`: HTTP(S) or SOCKS5 proxy for this cluster; wins over the
    /// `*_PROXY` environment.
    #[serde(default)]
    pub proxy_url: Option<String>,
    /// `disable-compression`: do not ask this cluster for gzip-compressed
    /// responses ([`Config::disable_compression`](super::Config::disable_compression)).
    #[serde(default)]
    pub disable_compression: Option<bool>,
    /// `extensions`: data other tools attach, kept as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    pub extensions: Vec<NamedExtension>,
    /// Keys this version does not know, kept so that writing the file back
    /// loses nothing.
    #[serde(flatten)]
    pub unknown: serde_json::Map<String, serde_json::Value>,
}

/// A `users` entry: credentials under a name contexts refer to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NamedAuthInfo {
    /// The name contexts refer to.
    pub name: String,
    /// `user`: the credentials.
    #[serde(default, rename = "user")]
    pub auth_info: Option<AuthInfo>,
    /// Keys this version does not know, kept so that writing the file back
    /// loses nothing.
    #[serde(flatten)]
    pub unknown: serde_json::Map<String, serde_json::Value>,
}

/// A `users` entry. Secret fields are [`Secret`], so `Debug` redacts them;
/// `Debug` also hides the `auth-provider` config (legacy oidc/gcp tokens).
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct AuthInfo {
    /// `client-certificate`: file of the PEM client certificate for TLS client
    /// authentication.
    #[serde(default)]
    pub client_certificate: Option<PathBuf>,
    /// `client-certificate-data`: base64 PEM client certificate; wins over
    /// `client-certificate`.
    #[serde(default)]
    pub client_certificate_data: Option<String>,
    /// `client-key`: file of the PEM private key of the client certificate.
    #[serde(default)]
    pub client_key: Option<PathBuf>,
    /// `client-key-data`: base64 PEM private key; wins over `client-key`.
    #[serde(default)]
    pub client_key_data: Option<Secret>,
    /// `token`: a bearer token.
    #[serde(default)]
    pub token: Option<Secret>,
    /// `tokenFile`: a file holding a bearer token, re-read periodically; wins
    /// over `token`.
    #[serde(default, rename = "tokenFile")]
    pub token_file: Option<PathBuf>,
    /// `as`: the user name to impersonate.
    #[serde(default, rename = "as")]
    pub impersonate: Option<String>,
    /// `as-uid`: the user UID to impersonate.
    #[serde(default, rename = "as-uid")]
    pub impersonate_uid: Option<String>,
    /// `as-groups`: the groups to impersonate.
    #[serde(default, rename = "as-groups", deserialize_with = "nullable")]
    pub impersonate_groups: Vec<String>,
    /// `as-user-extra`: extra user information to impersonate.
    #[serde(default, rename = "as-user-extra", deserialize_with = "nullable")]
    pub impersonate_user_extra: std::collections::BTreeMap<String, Vec<String>>,
    /// `username` for HTTP basic authentication.
    #[serde(default)]
    pub username: Option<String>,
    /// `password` for HTTP basic authentication.
    #[serde(default)]
    pub password: Option<Secret>,
    /// Legacy in-tree providers (gcp, azure, oidc) are not supported; kept
    /// so the error can say so.
    #[serde(default)]
    pub auth_provider: Option<serde_json::Value>,
    /// `exec`: a credential plugin to run for a token or client certificate.
    #[serde(default)]
    pub exec: Option<ExecConfig>,
    /// `extensions`: data other tools attach, kept as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    pub extensions: Vec<NamedExtension>,
    /// Keys this version does not know, kept so that writing the file back
    /// loses nothing.
    #[serde(flatten)]
    pub unknown: serde_json::Map<String, serde_json::Value>,
}

/// An exec credential plugin (`users[].user.exec`). `Debug` hides `args`,
/// which often carry client secrets (`--client-secret=...`).
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecConfig {
    /// The plugin to run, a path or a name looked up in `PATH`.
    pub command: String,
    /// Its arguments.
    #[serde(default, deserialize_with = "nullable")]
    pub args: Vec<String>,
    /// Extra environment variables for the plugin, added to this process's.
    #[serde(default, deserialize_with = "nullable")]
    pub env: Vec<ExecEnvVar>,
    /// The `client.authentication.k8s.io` version of `ExecCredential` the
    /// plugin speaks; `v1` when absent.
    #[serde(default)]
    pub api_version: Option<String>,
    /// Shown when the command is not found, e.g. how to install it.
    #[serde(default)]
    pub install_hint: Option<String>,
    /// Pass the cluster's details to the plugin in `KUBERNETES_EXEC_INFO`.
    #[serde(default)]
    pub provide_cluster_info: bool,
    /// `Never`, `IfAvailable` or `Always`: whether the plugin may use this
    /// process's terminal (its standard input) to ask the user; `Always`
    /// fails when standard input is not a terminal. Absent means
    /// `IfAvailable`.
    #[serde(default)]
    pub interactive_mode: Option<String>,
    /// Keys this version does not know, kept so that writing the file back
    /// loses nothing.
    #[serde(flatten)]
    pub unknown: serde_json::Map<String, serde_json::Value>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("server", &self.server)
            .field("tls_server_name", &self.tls_server_name)
            .field("insecure_skip_tls_verify", &self.insecure_skip_tls_verify)
            .field("certificate_authority", &self.certificate_authority)
            .field("certificate_authority_data", &self.certificate_authority_data)
            .field("proxy_url", &self.proxy_url.as_deref().map(redact_url))
            .field("disable_compression", &self.disable_compression)
            .field("extensions", &self.extensions)
            .field("unknown", &UnknownKeys(&self.unknown))
            .finish()
    }
}

impl std::fmt::Debug for AuthInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The provider's name says which plugin it was; its config holds
        // id/refresh tokens and client secrets.
        let provider = self.auth_provider.as_ref().map(|p| {
            let name = p.get("name").and_then(|n| n.as_str()).unwrap_or_default();
            Verbatim(format!("{{name: {name:?}, config: <redacted>}}"))
        });
        f.debug_struct("AuthInfo")
            .field("client_certificate", &self.client_certificate)
            .field("client_certificate_data", &self.client_certificate_data)
            .field("client_key", &self.client_key)
            .field("client_key_data", &self.client_key_data)
            .field("token", &self.token)
            .field("token_file", &self.token_file)
            .field("impersonate", &self.impersonate)
            .field("impersonate_uid", &self.impersonate_uid)
            .field("impersonate_groups", &self.impersonate_groups)
            .field("impersonate_user_extra", &self.impersonate_user_extra)
            .field("username", &self.username)
            .field("password", &self.password)
            .field("auth_provider", &provider)
            .field("exec", &self.exec)
            .field("extensions", &self.extensions)
            .field("unknown", &UnknownKeys(&self.unknown))
            .finish()
    }
}

/// Debug-prints the names of unknown keys only: in a user entry they may
/// well be credentials of a newer format.
struct UnknownKeys<'a>(&'a serde_json::Map<String, serde_json::Value>);

impl std::fmt::Debug for UnknownKeys<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

/// Debug-prints its text as is (no quotes).
struct Verbatim(String);

impl std::fmt::Debug for Verbatim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Debug for ExecConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecConfig")
            .field("command", &self.command)
            .field("args", &format_args!("<{} redacted>", self.args.len()))
            .field("env", &self.env)
            .field("api_version", &self.api_version)
            .field("install_hint", &self.install_hint)
            .field("provide_cluster_info", &self.provide_cluster_info)
            .field("interactive_mode", &self.interactive_mode)
            .field("unknown", &UnknownKeys(&self.unknown))
            .finish()
    }
}

/// An environment variable of an exec plugin.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExecEnvVar {
    /// The variable's name.
    pub name: String,
    /// Often a credential, hence redacted.
    pub value: Secret,
}

/// A `contexts` entry: a named cluster/user/namespace triple.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NamedContext {
    /// The name `current-context` and `--context` refer to.
    pub name: String,
    /// The cluster, user and namespace.
    #[serde(default)]
    pub context: Option<Context>,
    /// Keys this version does not know, kept so that writing the file back
    /// loses nothing.
    #[serde(flatten)]
    pub unknown: serde_json::Map<String, serde_json::Value>,
}

/// Which cluster to talk to as which user, in which namespace
/// (`contexts[].context`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Context {
    /// Name of the `clusters` entry.
    #[serde(default)]
    pub cluster: String,
    /// Name of the `users` entry; empty for no credentials.
    #[serde(default)]
    pub user: String,
    /// The default namespace; `default` when absent.
    #[serde(default)]
    pub namespace: Option<String>,
    /// `extensions`: data other tools attach, kept as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    pub extensions: Vec<NamedExtension>,
    /// Keys this version does not know, kept so that writing the file back
    /// loses nothing.
    #[serde(flatten)]
    pub unknown: serde_json::Map<String, serde_json::Value>,
}

/// An `extensions` entry: data a tool attaches to a kubeconfig, a cluster,
/// a user, a context or the preferences, under a name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NamedExtension {
    /// The name, unique in its list.
    #[serde(default)]
    pub name: String,
    /// The data, any JSON/YAML value.
    #[serde(default)]
    pub extension: serde_json::Value,
    /// Keys this version does not know, kept so that writing the file back
    /// loses nothing.
    #[serde(flatten)]
    pub unknown: serde_json::Map<String, serde_json::Value>,
}

/// kubectl's `preferences`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Preferences {
    /// `colors`: whether kubectl may color its output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colors: Option<bool>,
    /// `extensions`: data other tools attach, kept as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    pub extensions: Vec<NamedExtension>,
    /// Keys this version does not know, kept so that writing the file back
    /// loses nothing.
    #[serde(flatten)]
    pub unknown: serde_json::Map<String, serde_json::Value>,
}

impl Preferences {
    /// Nothing set: kubectl does not write such preferences.
    pub fn is_empty(&self) -> bool {
        !self.colors.unwrap_or(false) && self.extensions.is_empty() && self.unknown.is_empty()
    }
}

/// Overrides, as kubectl's `--context`, `--cluster`, `--user`, `--namespace`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KubeconfigOptions {
    /// The context to use instead of `current-context` (`--context`).
    pub context: Option<String>,
    /// The cluster to use instead of the context's (`--cluster`).
    pub cluster: Option<String>,
    /// The user to use instead of the context's (`--user`).
    pub user: Option<String>,
    /// The namespace to use instead of the context's (`--namespace`).
    pub namespace: Option<String>,
}

fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

pub(super) fn default_path() -> Option<PathBuf> {
    home::home_dir().map(|h| h.join(".kube").join("config"))
}

/// Where [`Kubeconfig::from_env`] looked, given the value of `KUBECONFIG`:
/// only there when it is set (kubectl does not fall back then), else the
/// default location.
pub(super) fn looked_at(kubeconfig_env: Option<&std::ffi::OsStr>) -> String {
    match kubeconfig_env {
        Some(v) if !v.is_empty() => format!("KUBECONFIG={} names no existing file", v.to_string_lossy()),
        _ => {
            let default = default_path().map_or_else(|| "~/.kube/config".to_owned(), |p| p.display().to_string());
            format!("KUBECONFIG is not set and {default} does not exist")
        }
    }
}

impl Kubeconfig {
    /// Parses kubeconfig YAML. Relative paths stay relative.
    pub fn from_yaml(text: &str) -> Result<Kubeconfig, Error> {
        Self::parse(text, Path::new("<inline>"))
    }

    pub(super) fn parse(text: &str, path: &Path) -> Result<Kubeconfig, Error> {
        if text.trim().is_empty() {
            return Ok(Kubeconfig { origin: vec![path.to_owned()], ..Default::default() });
        }
        // A document of just `null` or comments is an empty kubeconfig.
        let mut kc: Kubeconfig = serde_yaml_ng::from_str::<Option<Kubeconfig>>(text)
            .map_err(|source| Error::ParseKubeconfig { path: path.to_owned(), source })?
            .unwrap_or_default();
        kc.origin = vec![path.to_owned()];
        kc.reject_duplicates()?;
        Ok(kc)
    }

    /// client-go refuses a file that defines a name twice (its list-to-map
    /// conversion fails) rather than letting one entry silently win.
    fn reject_duplicates(&self) -> Result<(), Error> {
        fn check<'a>(kc: &Kubeconfig, list: &'static str, names: impl Iterator<Item = &'a str>) -> Result<(), Error> {
            let mut seen = std::collections::HashSet::new();
            for name in names {
                if !seen.insert(name) {
                    return Err(kc.invalid(format!("duplicate name {name:?} in {list}")));
                }
            }
            Ok(())
        }
        check(self, "clusters", self.clusters.iter().map(|c| c.name.as_str()))?;
        check(self, "users", self.auth_infos.iter().map(|a| a.name.as_str()))?;
        check(self, "contexts", self.contexts.iter().map(|c| c.name.as_str()))
    }

    /// Reads one file, which must exist, resolving its relative paths.
    pub fn read_from(path: &Path) -> Result<Kubeconfig, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                Error::KubeconfigMissing { path: path.to_owned() }
            } else {
                Error::ReadKubeconfig { path: path.to_owned(), source }
            }
        })?;
        let mut kc = Self::parse(&text, path)?;
        if let Some(dir) = path.parent() {
            kc.resolve_paths(dir);
        }
        Ok(kc)
    }

    /// Reads and merges files in order, skipping those that do not exist
    /// (kubectl's `KUBECONFIG` rule). `None` if none exists.
    pub fn read_merged(paths: &[PathBuf]) -> Result<Option<Kubeconfig>, Error> {
        let mut merged: Option<Kubeconfig> = None;
        let mut seen = std::collections::HashSet::new();
        for path in paths {
            // A file listed twice is read once (client-go's `deduplicate`).
            if path.as_os_str().is_empty() || !seen.insert(path) {
                continue;
            }
            let kc = match Self::read_from(path) {
                Ok(kc) => kc,
                Err(Error::KubeconfigMissing { .. }) => continue,
                Err(e) => return Err(e),
            };
            merged = Some(match merged {
                None => kc,
                Some(m) => m.merge(kc),
            });
        }
        Ok(merged)
    }

    /// `KUBECONFIG` if set and non-empty, else `~/.kube/config`; `None`
    /// when no file exists.
    pub fn from_env() -> Result<Option<Kubeconfig>, Error> {
        match std::env::var_os("KUBECONFIG") {
            Some(v) if !v.is_empty() => Self::read_merged(&std::env::split_paths(&v).collect::<Vec<_>>()),
            _ => match default_path() {
                Some(p) => Self::read_merged(&[p]),
                None => Ok(None),
            },
        }
    }

    /// kubectl's merge: the first file to define a name (of a cluster, user,
    /// context or extension) wins, and the first non-empty
    /// `current-context`; preferences and unknown keys merge field by field,
    /// the first file setting one winning.
    #[must_use]
    pub fn merge(mut self, next: Kubeconfig) -> Kubeconfig {
        fn add<T>(into: &mut Vec<T>, from: Vec<T>, name: impl Fn(&T) -> &str) {
            for item in from {
                if !into.iter().any(|i| name(i) == name(&item)) {
                    into.push(item);
                }
            }
        }
        add(&mut self.clusters, next.clusters, |c| &c.name);
        add(&mut self.auth_infos, next.auth_infos, |c| &c.name);
        add(&mut self.contexts, next.contexts, |c| &c.name);
        add(&mut self.extensions, next.extensions, |e| &e.name);
        if self.current_context.as_deref().is_none_or(str::is_empty) {
            self.current_context = next.current_context;
        }
        // Field by field, the first file that sets one wins.
        let prefs = &mut self.preferences;
        if !prefs.colors.unwrap_or(false) && next.preferences.colors.is_some() {
            prefs.colors = next.preferences.colors;
        }
        add(&mut prefs.extensions, next.preferences.extensions, |e| &e.name);
        for (key, value) in next.preferences.unknown {
            prefs.unknown.entry(key).or_insert(value);
        }
        for (key, value) in next.unknown {
            self.unknown.entry(key).or_insert(value);
        }
        self.origin.extend(next.origin);
        self
    }

    /// Makes relative paths absolute against `dir`. They are not cleaned
    /// (Go's `filepath.Join` would), so that writing back can strip `dir`
    /// again and put back exactly what the file had.
    pub(super) fn resolve_paths(&mut self, dir: &Path) {
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
        let dir = dir.as_path();
        let fix = |p: &mut Option<PathBuf>| {
            if let Some(path) = p.as_mut().filter(|p| p.is_relative() && !p.as_os_str().is_empty()) {
                *path = dir.join(&*path);
            }
        };
        for c in self.clusters.iter_mut().filter_map(|c| c.cluster.as_mut()) {
            fix(&mut c.certificate_authority);
        }
        for a in self.auth_infos.iter_mut().filter_map(|a| a.auth_info.as_mut()) {
            fix(&mut a.client_certificate);
            fix(&mut a.client_key);
            fix(&mut a.token_file);
            if let Some(exec) = a.exec.as_mut() {
                // A bare command name is looked up in PATH; only a relative
                // path is anchored to the kubeconfig's directory.
                let cmd = Path::new(&exec.command);
                if cmd.is_relative() && exec.command.contains('/') {
                    exec.command = dir.join(cmd).to_string_lossy().into_owned();
                }
            }
        }
    }

    fn origin_display(&self) -> String {
        if self.origin.is_empty() {
            return "<inline>".into();
        }
        self.origin.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(":")
    }

    fn invalid(&self, message: String) -> Error {
        Error::InvalidKubeconfig { origin: self.origin_display(), message }
    }
}

#[path = "kubeconfig_context.rs"]
mod context;
#[cfg(test)]
use context::server_url;

#[cfg(test)]
#[path = "kubeconfig_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "clientcmd_tests.rs"]
mod clientcmd_tests;
