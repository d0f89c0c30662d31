//! Where the apiserver is and how to authenticate to it.
//!
//! * [`Config::infer`]: what a program should normally use — the kubeconfig
//!   kubectl would use (`KUBECONFIG`, else `~/.kube/config`) if there is one,
//!   else the in-cluster service account.
//! * [`Config::from_kubeconfig`] with [`Kubeconfig`] and [`KubeconfigOptions`]:
//!   explicit files, contexts, users.
//! * [`Config::in_cluster`]: inside a pod only.
//! * [`KubeconfigFiles::modify`] (and `set_current_context`,
//!   `set_context_namespace`): change kubeconfig files as `kubectl config`
//!   does, each change in the file that holds it, in kubectl's own YAML form;
//!   [`Kubeconfig::write_to`] writes one whole file.
//!
//! A [`Config`] is plain data; [`Authenticator`] holds the run-time state of
//! credentials (token file re-reads, exec plugin cache) and is what the REST
//! client asks for a header before every request. Secrets are wrapped in
//! [`Secret`], whose `Debug` prints `<redacted>`; proxy URLs are shown with
//! their password as `xxxxx`, in errors and logs too.

mod auth;
mod exec;
mod incluster;
mod kubeconfig;
mod kubeconfig_write;
pub(crate) mod kubeconfig_yaml;
mod no_proxy;
mod proxy;
mod secret;
mod tls;
mod warnings;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

pub use auth::{Auth, Authenticator};
pub use exec::ExecCredentialStatus;
pub use incluster::{InClusterEnv, SERVICE_ACCOUNT_DIR};
pub use kubeconfig::{
    AuthInfo, Cluster, Context, ExecConfig, ExecEnvVar, Kubeconfig, KubeconfigOptions, NamedAuthInfo, NamedCluster,
    NamedContext, NamedExtension, Preferences,
};
pub use kubeconfig_write::{DEFAULT_LOCK_TIMEOUT, KubeconfigFiles};
pub(crate) use proxy::EnvProxies;
pub use proxy::{Proxy, ProxyEnv, ProxyScheme, ProxyUrl};
pub use secret::Secret;
pub(crate) use tls::TlsSource;
pub use tls::{DEFAULT_CERT_RELOAD_INTERVAL, build_tls_config};
pub(crate) use warnings::parse_warning_header;
pub use warnings::{LogWarnings, NoWarnings, WarningHandler};

/// Everything that can be wrong with a configuration or credentials.
///
/// The message names what failed; the cause, where there is one (an I/O or
/// YAML error, rustls), is the `source()`: print the error with
/// [`ErrorChain`](crate::ErrorChain) to say why as well.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A kubeconfig file exists but could not be read.
    #[error("reading kubeconfig {path}")]
    ReadKubeconfig {
        /// The file.
        path: PathBuf,
        /// Why reading failed.
        #[source]
        source: std::io::Error,
    },
    /// A kubeconfig file is not valid YAML, or does not have the shape of a
    /// kubeconfig.
    #[error("kubeconfig {path}: invalid YAML")]
    ParseKubeconfig {
        /// The file.
        path: PathBuf,
        /// Where and why parsing failed.
        #[source]
        source: serde_yaml_ng::Error,
    },
    /// A kubeconfig file named explicitly does not exist.
    #[error("kubeconfig {path}: file does not exist")]
    KubeconfigMissing {
        /// The file.
        path: PathBuf,
    },
    /// A kubeconfig file could not be written (or its directory created).
    #[error("writing kubeconfig {path}")]
    WriteKubeconfig {
        /// The file.
        path: PathBuf,
        /// Why writing failed.
        #[source]
        source: std::io::Error,
    },
    /// Another writer (kubectl, or a lock left behind by one that died)
    /// holds a kubeconfig's lock file.
    #[error("kubeconfig lock {lock} is still held after {waited:?}; remove it if no other writer is running")]
    KubeconfigLocked {
        /// The lock file, `<kubeconfig>.lock`.
        lock: PathBuf,
        /// How long this writer waited.
        waited: Duration,
    },
    /// `KUBECONFIG`, or the default location when it is unset, yields no
    /// kubeconfig.
    #[error("no kubeconfig found: {looked_at}")]
    NoKubeconfig {
        /// Where it was looked for: `KUBECONFIG=<its value> names no
        /// existing file`, or `<~/.kube/config expanded> does not exist`.
        looked_at: String,
    },
    /// A semantic problem: unknown context, missing server, bad field.
    #[error("kubeconfig {origin}: {message}")]
    InvalidKubeconfig {
        /// The kubeconfig file or files (`:`-separated) with the problem.
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// A `*-data` field of the kubeconfig is not valid base64.
    #[error("kubeconfig {origin}: {field}: invalid base64")]
    Base64 {
        /// The kubeconfig file or files (`:`-separated) the field came from.
        origin: String,
        /// The field, e.g. `certificate-authority-data`.
        field: &'static str,
        /// Why decoding failed.
        #[source]
        source: base64::DecodeError,
    },
    /// A file the configuration points to (CA bundle, client certificate or
    /// key, token file) could not be read.
    #[error("reading {what} {path}")]
    ReadFile {
        /// What the file holds, e.g. `"token file"`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why reading failed.
        #[source]
        source: std::io::Error,
    },
    /// Not running in a pod, or the pod's service environment or mounted
    /// service account is unusable.
    #[error("in-cluster configuration: {0}")]
    InCluster(String),
    /// A certificate or private key is not usable PEM.
    #[error("{what}: {message}")]
    Pem {
        /// What was being read, e.g. `"client key"`.
        what: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// rustls refused the TLS settings (a CA certificate, or a client
    /// certificate and key that do not match).
    #[error("TLS configuration")]
    Tls(#[source] rustls::Error),
    /// An exec credential plugin failed: it needs a terminal, exited with an
    /// error, or printed something that is not a usable `ExecCredential`.
    #[error("exec plugin {command:?}: {message}")]
    Exec {
        /// The plugin's command.
        command: String,
        /// What went wrong.
        message: String,
    },
    /// An exec credential plugin did not finish within
    /// [`Config::exec_timeout`]; it was killed. Only the command is named:
    /// its arguments and environment often hold secrets.
    #[error("exec plugin {command:?}: did not finish within {timeout:?}; killed it")]
    ExecTimeout {
        /// The plugin's command.
        command: String,
        /// How long it was given.
        timeout: Duration,
    },
    /// An exec credential plugin could not be started (not installed, not
    /// executable).
    #[error("exec plugin {command:?}: could not run")]
    ExecSpawn {
        /// The plugin's command.
        command: String,
        /// Why starting it failed.
        #[source]
        source: std::io::Error,
    },
    /// A value that cannot be used as given, e.g. a token that cannot go in
    /// a header, an empty token file, a malformed proxy URL.
    #[error("invalid {what}: {message}")]
    InvalidValue {
        /// Which value, e.g. `"bearer token"`.
        what: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// [`Config::infer`] found neither a kubeconfig nor an in-cluster
    /// environment. Having two causes, it has no `source()`: the message
    /// names both, each with its own causes.
    #[error(
        "no configuration found: kubeconfig: {}; in-cluster: {}",
        crate::ErrorChain(&**kubeconfig),
        crate::ErrorChain(&**in_cluster)
    )]
    Infer {
        /// Why no kubeconfig could be used.
        kubeconfig: Box<Error>,
        /// Why the in-cluster configuration failed.
        in_cluster: Box<Error>,
    },
}

/// Who to act as (`Impersonate-*` headers).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Impersonate {
    /// The user name to act as (`Impersonate-User`); the client's own user
    /// needs the RBAC `impersonate` verb on it.
    pub user: Option<String>,
    /// The user UID to act as (`Impersonate-Uid`).
    pub uid: Option<String>,
    /// Groups to act as a member of (`Impersonate-Group`, one header each).
    pub groups: Vec<String>,
    /// Extra user information (`Impersonate-Extra-<key>` headers), e.g.
    /// scopes.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl Impersonate {
    /// Whether nothing is impersonated, so no header is sent.
    pub fn is_empty(&self) -> bool {
        self.user.is_none() && self.uid.is_none() && self.groups.is_empty() && self.extra.is_empty()
    }
}

/// The files a configuration's certificates come from (kubeconfig
/// `certificate-authority`, `client-certificate`, `client-key`; the
/// in-cluster `ca.crt`), so a client can read them again when they are
/// rotated, as client-go does.
///
/// A client reads a file here at start unless the matching PEM field of
/// the [`Config`] holds its content already (the kubeconfig loader fills
/// both), then every [`Config::cert_reload_interval`] and before it opens
/// a connection. When the content changed, new connections use it and
/// requests go to them; connections already open finish what they carry
/// (a watch runs to its end). Content that does not parse (a file caught
/// half-written, a certificate whose new key is not there yet) is logged
/// and the previous material kept until the next look.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CertificateFiles {
    /// The CA bundle that verifies the server ([`Config::root_ca_pem`]).
    pub certificate_authority: Option<PathBuf>,
    /// The client certificate chain ([`Config::client_cert_pem`]).
    pub client_certificate: Option<PathBuf>,
    /// The client certificate's key ([`Config::client_key_pem`]).
    pub client_key: Option<PathBuf>,
}

impl CertificateFiles {
    /// Whether no file is named.
    pub fn is_empty(&self) -> bool {
        self.certificate_authority.is_none() && self.client_certificate.is_none() && self.client_key.is_none()
    }
}

/// Default client-side rate limit, as client-go's `rest.Config`.
pub const DEFAULT_QPS: f32 = 5.0;
/// Default burst of the client-side rate limit: requests that may go at
/// once before [`DEFAULT_QPS`] applies, as client-go's `rest.Config`.
pub const DEFAULT_BURST: u32 = 10;

/// Default client-side deadline of requests other than watches: the
/// apiserver ends a request after 60 s itself (`--request-timeout`), so
/// waiting longer than this only means the connection is dead.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(120);

/// Default of [`Config::max_watch_event_size`], the bound on one watch
/// event's encoded size (client-go has none; an unbounded buffer would let
/// a broken server exhaust memory).
pub const DEFAULT_MAX_EVENT_SIZE: usize = 64 * 1024 * 1024;

/// Default of [`Config::exec_timeout`]: generous, since a plugin may wait
/// for a browser login or a slow identity provider, yet finite, so a hung
/// plugin does not stop a controller for good.
pub const DEFAULT_EXEC_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The wire format typed clients ask the apiserver for (client-go's
/// `ContentConfig.ContentType`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ContentType {
    /// Kubernetes' protobuf (`application/vnd.kubernetes.protobuf`) for the
    /// kinds that speak it (those whose
    /// [`Resource::PROTOBUF`](crate::object::Resource::PROTOBUF) is
    /// `Some`: the built-in kinds), JSON for every other, as client-go's
    /// generated clientset does. Responses are decoded by their
    /// `Content-Type`, so a server answering JSON is still understood.
    #[default]
    Protobuf,
    /// JSON (`application/json`) for every request.
    Json,
}

/// Connection and credential settings for one apiserver.
///
/// Its `Debug` shows certificates as their size, never their bytes, and
/// secrets (keys, tokens, passwords) not at all.
#[derive(Clone)]
pub struct Config {
    /// `https://host:port` (a path prefix is kept and prepended to requests).
    pub cluster_url: http::Uri,
    /// Namespace of the context (or service account); `default` otherwise.
    pub default_namespace: String,
    /// PEM bundle of CAs to trust instead of none (there are no built-in roots:
    /// apiservers use private CAs).
    pub root_ca_pem: Option<Vec<u8>>,
    /// Name to verify the server certificate against instead of the URL host.
    pub tls_server_name: Option<String>,
    /// Accept any server certificate. Only set from `insecure-skip-tls-verify`.
    pub insecure_skip_tls_verify: bool,
    /// Client certificate chain (PEM) for mutual TLS.
    pub client_cert_pem: Option<Vec<u8>>,
    /// Private key (PEM) of `client_cert_pem`.
    pub client_key_pem: Option<Secret>,
    /// The files the CA bundle and the client certificate and key are read
    /// from, read again when they change ([`CertificateFiles`]).
    pub certificate_files: CertificateFiles,
    /// How often a client looks whether its [`certificate_files`](Self::certificate_files)
    /// changed (default [`DEFAULT_CERT_RELOAD_INTERVAL`]; zero: never reads
    /// them again).
    pub cert_reload_interval: Duration,
    /// How requests authenticate: token, token file, basic or exec plugin.
    pub auth: Auth,
    /// Who to act as instead of the authenticated user.
    pub impersonate: Impersonate,
    /// Requests per second of the client-side limiter; `<= 0` disables it.
    pub qps: f32,
    /// Requests that may go at once before `qps` limits them.
    pub burst: u32,
    /// Default per-request timeout, also sent to the server as `timeout`;
    /// `None` leaves it to `deadline`.
    pub timeout: Option<Duration>,
    /// Client-side bound on requests other than watches when no timeout is
    /// set: connecting, sending and the response headers, and reading the
    /// body for whole-body reads. Not sent to the server. Default
    /// [`DEFAULT_DEADLINE`]; `None` waits forever.
    pub deadline: Option<Duration>,
    /// How long an exec credential plugin may run before it is killed and
    /// the request that needed credentials fails (default
    /// [`DEFAULT_EXEC_TIMEOUT`]). Requests wait for a running plugin, so a
    /// hung one would otherwise hold every request and watch of the client.
    pub exec_timeout: Duration,
    /// Proxy for connections to the cluster: kubeconfig `proxy-url`, else
    /// the `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY` environment (the default).
    pub proxy: Proxy,
    /// The `User-Agent` header; the apiserver records it in audit logs and
    /// derives the default field manager of writes from it (the text before
    /// the first `/`). The default, [`default_user_agent`], starts with the
    /// program's name, as client-go's does, so what a controller writes is
    /// recorded under its own name.
    pub user_agent: String,
    /// Refuse watch events larger than this many bytes.
    pub max_watch_event_size: usize,
    /// The wire format typed requests ask for (default
    /// [`ContentType::Protobuf`] where the kind speaks it).
    pub content_type: ContentType,
    /// Do not ask for gzip-compressed responses (kubeconfig
    /// `disable-compression`). Compression is on by default, as in
    /// client-go: large lists cost a fraction of the bytes on the network
    /// for a little CPU on both ends; turn it off where the network is
    /// cheaper than the CPU (a client on the apiserver's host).
    pub disable_compression: bool,
    /// What the client does with the apiserver's warnings (default
    /// [`LogWarnings::deduplicated`]: each distinct one logged once).
    pub warning_handler: std::sync::Arc<dyn WarningHandler>,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        /// A PEM bundle as its size: the bytes say nothing to a reader.
        struct Pem<'a>(&'a Option<Vec<u8>>);
        impl fmt::Debug for Pem<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.0 {
                    Some(pem) => write!(f, "Some(<{} bytes of PEM>)", pem.len()),
                    None => f.write_str("None"),
                }
            }
        }
        f.debug_struct("Config")
            .field("cluster_url", &self.cluster_url)
            .field("default_namespace", &self.default_namespace)
            .field("root_ca_pem", &Pem(&self.root_ca_pem))
            .field("tls_server_name", &self.tls_server_name)
            .field("insecure_skip_tls_verify", &self.insecure_skip_tls_verify)
            .field("client_cert_pem", &Pem(&self.client_cert_pem))
            .field("client_key_pem", &self.client_key_pem)
            .field("certificate_files", &self.certificate_files)
            .field("cert_reload_interval", &self.cert_reload_interval)
            .field("auth", &self.auth)
            .field("impersonate", &self.impersonate)
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .field("timeout", &self.timeout)
            .field("deadline", &self.deadline)
            .field("exec_timeout", &self.exec_timeout)
            .field("proxy", &self.proxy)
            .field("user_agent", &self.user_agent)
            .field("max_watch_event_size", &self.max_watch_event_size)
            .field("content_type", &self.content_type)
            .field("disable_compression", &self.disable_compression)
            .finish_non_exhaustive()
    }
}

impl Config {
    /// A configuration for `cluster_url` with no credentials and defaults
    /// for everything else.
    pub fn new(cluster_url: http::Uri) -> Config {
        Config {
            cluster_url,
            default_namespace: "default".into(),
            root_ca_pem: None,
            tls_server_name: None,
            insecure_skip_tls_verify: false,
            client_cert_pem: None,
            client_key_pem: None,
            certificate_files: CertificateFiles::default(),
            cert_reload_interval: DEFAULT_CERT_RELOAD_INTERVAL,
            auth: Auth::None,
            impersonate: Impersonate::default(),
            qps: DEFAULT_QPS,
            burst: DEFAULT_BURST,
            timeout: None,
            deadline: Some(DEFAULT_DEADLINE),
            exec_timeout: DEFAULT_EXEC_TIMEOUT,
            proxy: Proxy::FromEnvironment,
            user_agent: default_user_agent(),
            max_watch_event_size: DEFAULT_MAX_EVENT_SIZE,
            content_type: ContentType::default(),
            disable_compression: false,
            warning_handler: std::sync::Arc::new(LogWarnings::deduplicated()),
        }
    }

    /// The kubeconfig kubectl would use if there is one, else the in-cluster
    /// service account.
    pub fn infer() -> Result<Config, Error> {
        match Kubeconfig::from_env() {
            Ok(Some(kc)) => Config::from_kubeconfig(&kc, &KubeconfigOptions::default()),
            Ok(None) => Config::in_cluster().map_err(|in_cluster| Error::Infer {
                kubeconfig: Box::new(Error::NoKubeconfig {
                    looked_at: kubeconfig::looked_at(std::env::var_os("KUBECONFIG").as_deref()),
                }),
                in_cluster: Box::new(in_cluster),
            }),
            Err(e) => Err(e),
        }
    }

    /// The kubeconfig from `KUBECONFIG` or `~/.kube/config`; an error if
    /// there is none.
    pub fn from_default_kubeconfig(options: &KubeconfigOptions) -> Result<Config, Error> {
        let kc = Kubeconfig::from_env()?.ok_or_else(|| Error::NoKubeconfig {
            looked_at: kubeconfig::looked_at(std::env::var_os("KUBECONFIG").as_deref()),
        })?;
        Config::from_kubeconfig(&kc, options)
    }

    /// A kubeconfig file given explicitly (it must exist).
    pub fn from_kubeconfig_file(path: impl Into<PathBuf>, options: &KubeconfigOptions) -> Result<Config, Error> {
        let kc = Kubeconfig::read_from(&path.into())?;
        Config::from_kubeconfig(&kc, options)
    }

    /// The service account of the pod this runs in.
    pub fn in_cluster() -> Result<Config, Error> {
        incluster::config(&InClusterEnv::from_process())
    }

    /// In-cluster configuration from explicit values (tests, sidecars with
    /// the service account mounted elsewhere).
    pub fn in_cluster_with(env: &InClusterEnv) -> Result<Config, Error> {
        incluster::config(env)
    }

    /// The cluster URL's `host:port` (for cache directories and logs).
    pub fn host_port(&self) -> String {
        let host = self.cluster_url.host().unwrap_or("localhost");
        let port = self.cluster_url.port_u16().unwrap_or(match self.cluster_url.scheme_str() {
            Some("http") => 80,
            _ => 443,
        });
        format!("{host}:{port}")
    }
}

/// `<program>/v<version> (<os>/<arch>) k8s-client-rust`, as client-go's
/// `DefaultKubernetesUserAgent` is: the program's file name (`unknown` if
/// the process has none), this crate's version, the platform. The apiserver
/// takes the program's name as the field manager of writes that name none.
/// Characters a header cannot hold become `_`.
pub fn default_user_agent() -> String {
    let program = std::env::args_os()
        .next()
        .and_then(|arg0| std::path::Path::new(&arg0).file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown".to_owned());
    // `/` ends the field manager's name; a header holds visible ASCII.
    let program: String = program.chars().map(|c| if c.is_ascii_graphic() && c != '/' { c } else { '_' }).collect();
    format!(
        "{program}/v{} ({}/{}) k8s-client-rust",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}
