//! kubeconfig files: parsing, kubectl's merge rules, and turning a context
//! into a [`Config`].

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize};

use super::proxy::redact_url;
use super::{Auth, CertificateFiles, Config, Error, Impersonate, Proxy, ProxyUrl, Secret};

/// A kubeconfig as written on disk (`clientcmdapi.Config`), possibly the
/// merge of several files. Relative paths are already absolute, resolved
/// against the directory of the file that held them.
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
    /// responses ([`Config::disable_compression`]).
    #[serde(default)]
    pub disable_compression: Option<bool>,
}

/// A `users` entry: credentials under a name contexts refer to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NamedAuthInfo {
    /// The name contexts refer to.
    pub name: String,
    /// `user`: the credentials.
    #[serde(default, rename = "user")]
    pub auth_info: Option<AuthInfo>,
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
    /// `Never`, `IfAvailable` or `Always`: whether the plugin needs a terminal;
    /// `Always` is refused since this client never has one to give.
    #[serde(default)]
    pub interactive_mode: Option<String>,
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
            .finish()
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

    fn parse(text: &str, path: &Path) -> Result<Kubeconfig, Error> {
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

    /// kubectl's merge: the first file to define a name wins, and the first
    /// non-empty `current-context` wins.
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
        if self.current_context.as_deref().is_none_or(str::is_empty) {
            self.current_context = next.current_context;
        }
        self.origin.extend(next.origin);
        self
    }

    fn resolve_paths(&mut self, dir: &Path) {
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

/// client-go's `DefaultServerURL`: a URL with scheme and host, or a
/// `host:port` pair (optionally ending in `/`) given `default_tls`'s scheme.
/// A path after a scheme-less `host:port` is refused, as there:
/// `anything.com:8080/foo/bar` reads as a URL of scheme `anything.com`
/// without host, and with `http://` in front it has a path. Only http and
/// https can be spoken to, and a port must be a number that fits (Go would
/// fail on dialing; `http::Uri` accepts any text there). Trailing slashes
/// of the path are dropped: requests append their own paths to it.
pub(super) fn server_url(host: &str, default_tls: bool) -> Result<http::Uri, String> {
    let refused = || format!("host must be a URL or a host:port pair: {host:?}");
    if host.is_empty() {
        return Err("host must be a URL or a host:port pair".into());
    }
    let full =
        host.parse::<http::Uri>().ok().filter(|u| u.scheme().is_some() && u.host().is_some_and(|h| !h.is_empty()));
    let url = match full {
        Some(url) => url,
        None => {
            let scheme = if default_tls { "https" } else { "http" };
            let url: http::Uri = format!("{scheme}://{host}").parse().map_err(|_| refused())?;
            if url.host().is_none_or(str::is_empty) || !matches!(url.path(), "" | "/") || url.query().is_some() {
                return Err(refused());
            }
            url
        }
    };
    match url.scheme_str() {
        Some("https" | "http") => {}
        other => {
            return Err(format!(
                "server URL {host:?}: unsupported scheme {:?}, must be https or http",
                other.unwrap_or_default()
            ));
        }
    }
    let authority = url.authority().map(|a| a.as_str()).unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    if let Some((_, port)) = host_port.rsplit_once(':').filter(|_| !host_port.ends_with(']'))
        && !port.is_empty()
        && port.parse::<u16>().is_err()
    {
        return Err(format!("server URL {host:?}: invalid port {port:?}"));
    }
    let path = url.path();
    if path.len() > 1 && path.ends_with('/') {
        let mut trimmed = match path.trim_end_matches('/') {
            "" => "/".to_owned(),
            kept => kept.to_owned(),
        };
        if let Some(query) = url.query() {
            trimmed = format!("{trimmed}?{query}");
        }
        let mut parts = url.into_parts();
        parts.path_and_query = Some(trimmed.parse().map_err(|_| refused())?);
        return http::Uri::from_parts(parts).map_err(|_| refused());
    }
    Ok(url)
}

/// The checks of client-go's `validateAuthInfo` that concern what a user
/// entry means (file existence is checked when the files are read).
fn validate_user(user: &AuthInfo) -> Result<(), String> {
    let has_token = user.token.as_ref().is_some_and(|t| !t.is_empty());
    let has_basic = user.username.as_deref().is_some_and(|u| !u.is_empty())
        || user.password.as_ref().is_some_and(|p| !p.is_empty());
    if has_token && has_basic {
        return Err("more than one authentication method found; found [token basicAuth], only one is allowed".into());
    }
    if let Some(exec) = &user.exec {
        if user.auth_provider.is_some() {
            return Err("authProvider cannot be provided in combination with an exec plugin".into());
        }
        if exec.command.is_empty() {
            return Err("exec plugin has no command (command must be specified)".into());
        }
        if exec.api_version.as_deref().is_none_or(str::is_empty) {
            return Err("apiVersion must be specified to use exec authentication plugin".into());
        }
        if exec.env.iter().any(|v| v.name.is_empty()) {
            return Err("env variable name must be specified to use exec authentication plugin".into());
        }
        // A missing mode is IfAvailable, as the v1 file format defaults it.
        if let Some(mode) =
            exec.interactive_mode.as_deref().filter(|m| !matches!(*m, "" | "Never" | "IfAvailable" | "Always"))
        {
            return Err(format!("invalid interactiveMode: {mode:?}"));
        }
    }
    let no_user = user.impersonate.as_deref().is_none_or(str::is_empty);
    if no_user
        && (user.impersonate_uid.as_deref().is_some_and(|u| !u.is_empty())
            || !user.impersonate_groups.is_empty()
            || !user.impersonate_user_extra.is_empty())
    {
        return Err("requesting uid, groups or user-extra without impersonating a user".into());
    }
    Ok(())
}

fn decode_b64(origin: &str, field: &'static str, data: &str) -> Result<Vec<u8>, Error> {
    let cleaned: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD.decode(cleaned).map_err(|source| Error::Base64 {
        origin: origin.to_owned(),
        field,
        source,
    })
}

fn read_file(what: &'static str, path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| Error::ReadFile { what, path: path.to_owned(), source })
}

impl Config {
    /// The configuration of a context of `kc` (`options.context`, else
    /// `current-context`).
    pub fn from_kubeconfig(kc: &Kubeconfig, options: &KubeconfigOptions) -> Result<Config, Error> {
        let origin = kc.origin_display();
        let context_name = options
            .context
            .as_deref()
            .or(kc.current_context.as_deref())
            .filter(|c| !c.is_empty())
            .ok_or_else(|| kc.invalid("no current-context is set and no context was given".into()))?;
        let context = kc
            .contexts
            .iter()
            .find(|c| c.name == context_name)
            .ok_or_else(|| kc.invalid(format!("context {context_name:?} not found")))?
            .context
            .clone()
            .unwrap_or_default();
        let cluster_name = options.cluster.as_deref().unwrap_or(&context.cluster);
        let cluster = kc
            .clusters
            .iter()
            .find(|c| c.name == cluster_name)
            .ok_or_else(|| kc.invalid(format!("cluster {cluster_name:?} of context {context_name:?} not found")))?
            .cluster
            .clone()
            .unwrap_or_default();
        let user_name = options.user.as_deref().unwrap_or(&context.user);
        let user = match kc.auth_infos.iter().find(|a| a.name == user_name) {
            Some(a) => a.auth_info.clone().unwrap_or_default(),
            None if user_name.is_empty() => AuthInfo::default(),
            None => return Err(kc.invalid(format!("user {user_name:?} of context {context_name:?} not found"))),
        };

        let server = cluster
            .server
            .as_deref()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| kc.invalid(format!("no server found for cluster {cluster_name:?}")))?;
        let has_ca = cluster.certificate_authority_data.as_deref().is_some_and(|d| !d.is_empty())
            || cluster.certificate_authority.is_some();
        // client-go's defaultServerUrlFor: a scheme-less `host:port` means
        // https when any TLS setting is present, http otherwise.
        let has_cert =
            user.client_certificate_data.as_deref().is_some_and(|d| !d.is_empty()) || user.client_certificate.is_some();
        let default_tls = has_ca || has_cert || cluster.insecure_skip_tls_verify == Some(true);
        let cluster_url =
            server_url(server, default_tls).map_err(|m| kc.invalid(format!("cluster {cluster_name:?}: {m}")))?;

        let mut config = Config::new(cluster_url);
        config.default_namespace = options
            .namespace
            .clone()
            .or(context.namespace)
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default".into());
        if let Some(proxy) = cluster.proxy_url.as_deref().filter(|p| !p.is_empty()) {
            // Set, it wins over the environment, as in kubectl.
            let url = ProxyUrl::parse(proxy).map_err(|m| {
                let shown = redact_url(proxy);
                kc.invalid(format!("invalid 'proxy-url' {shown:?} for cluster {cluster_name:?}: {m}"))
            })?;
            config.proxy = Proxy::Url(url);
        }
        if cluster.insecure_skip_tls_verify == Some(true) && has_ca {
            // kubectl refuses this combination too: one of them is a mistake.
            return Err(kc.invalid(format!(
                "cluster {cluster_name:?}: certificate-authority and insecure-skip-tls-verify cannot both be set"
            )));
        }
        config.tls_server_name = cluster.tls_server_name.filter(|n| !n.is_empty());
        config.insecure_skip_tls_verify = cluster.insecure_skip_tls_verify.unwrap_or(false);
        config.disable_compression = cluster.disable_compression.unwrap_or(false);
        config.root_ca_pem = match (&cluster.certificate_authority_data, &cluster.certificate_authority) {
            (Some(data), _) if !data.is_empty() => Some(decode_b64(&origin, "certificate-authority-data", data)?),
            (_, Some(path)) => Some(read_file("certificate-authority", path)?),
            _ => None,
        };
        config.client_cert_pem = match (&user.client_certificate_data, &user.client_certificate) {
            (Some(data), _) if !data.is_empty() => Some(decode_b64(&origin, "client-certificate-data", data)?),
            (_, Some(path)) => Some(read_file("client-certificate", path)?),
            _ => None,
        };
        let key = match (&user.client_key_data, &user.client_key) {
            (Some(data), _) if !data.is_empty() => Some(decode_b64(&origin, "client-key-data", data.expose())?),
            (_, Some(path)) => Some(read_file("client-key", path)?),
            _ => None,
        };
        // What was read from files is read again when it changes; inline
        // data wins over a file, as above.
        let from_file =
            |data: Option<&str>, path: &Option<PathBuf>| path.clone().filter(|_| data.is_none_or(str::is_empty));
        config.certificate_files = CertificateFiles {
            certificate_authority: from_file(
                cluster.certificate_authority_data.as_deref(),
                &cluster.certificate_authority,
            ),
            client_certificate: from_file(user.client_certificate_data.as_deref(), &user.client_certificate),
            client_key: from_file(user.client_key_data.as_ref().map(Secret::expose), &user.client_key),
        };
        config.client_key_pem = key
            .map(|k| String::from_utf8(k).map(Secret::new))
            .transpose()
            .map_err(|_| kc.invalid(format!("user {user_name:?}: client key is not PEM text")))?;
        if config.client_cert_pem.is_some() != config.client_key_pem.is_some() {
            return Err(kc.invalid(format!("user {user_name:?}: client certificate and key must be given together")));
        }

        validate_user(&user).map_err(|m| kc.invalid(format!("user {user_name:?}: {m}")))?;
        config.auth = if let Some(path) = user.token_file.clone().filter(|p| !p.as_os_str().is_empty()) {
            Auth::TokenFile(path)
        } else if let Some(token) = user.token.clone().filter(|t| !t.is_empty()) {
            Auth::Bearer(token)
        } else if let Some(username) = user.username.clone().filter(|u| !u.is_empty()) {
            Auth::Basic { username, password: user.password.clone().unwrap_or_default() }
        } else if let Some(exec) = user.exec.clone() {
            if exec.command.is_empty() {
                return Err(kc.invalid(format!("user {user_name:?}: exec plugin has no command")));
            }
            Auth::Exec(Box::new(exec))
        } else if user.auth_provider.is_some() {
            return Err(kc.invalid(format!(
                "user {user_name:?}: auth-provider plugins are not supported; use an exec credential plugin"
            )));
        } else {
            Auth::None
        };
        config.impersonate = Impersonate {
            user: user.impersonate.filter(|u| !u.is_empty()),
            uid: user.impersonate_uid.filter(|u| !u.is_empty()),
            groups: user.impersonate_groups,
            extra: user.impersonate_user_extra,
        };
        Ok(config)
    }
}

#[cfg(test)]
#[path = "kubeconfig_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "clientcmd_tests.rs"]
mod clientcmd_tests;
