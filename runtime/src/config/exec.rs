//! Exec credential plugins (`client.authentication.k8s.io/v1` and
//! `v1beta1`): run the command, cache what it prints until it expires or
//! the server answers 401. A run that takes longer than
//! [`Config::exec_timeout`] is killed.
//!
//! `interactiveMode` as in client-go: `Never` gives the plugin no standard
//! input; `IfAvailable` (the default) and `Always` give it this process's
//! standard input when that is a terminal, so it can prompt the user, and
//! say so in `KUBERNETES_EXEC_INFO` (`spec.interactive`); `Always` fails
//! without a terminal. One interactive plugin runs at a time in the process,
//! so two prompts never share the terminal.

use std::io::IsTerminal as _;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use base64::Engine as _;
use http::HeaderValue;
use rustls::sign::CertifiedKey;
use serde::Deserialize;
use tokio::io::AsyncReadExt as _;

use super::{Config, Error, ExecConfig, Secret};

const V1: &str = "client.authentication.k8s.io/v1";
const V1BETA1: &str = "client.authentication.k8s.io/v1beta1";

/// The `status` of an `ExecCredential` a plugin prints.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecCredentialStatus {
    /// When the credential expires (RFC 3339); the plugin is run again
    /// then. Absent: used until the server answers 401.
    #[serde(default)]
    pub expiration_timestamp: Option<String>,
    /// A bearer token to send in `Authorization`.
    #[serde(default)]
    pub token: Option<Secret>,
    /// A PEM client certificate for TLS client authentication, paired with
    /// `client_key_data`.
    #[serde(default)]
    pub client_certificate_data: Option<String>,
    /// The PEM private key of `client_certificate_data`.
    #[serde(default)]
    pub client_key_data: Option<Secret>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredential {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    status: Option<ExecCredentialStatus>,
}

#[derive(Debug)]
struct Cached {
    header: Option<HeaderValue>,
    expires: Option<jiff::Timestamp>,
}

/// What the last plugin run left behind.
#[derive(Debug, Default)]
struct State {
    credentials: Option<Cached>,
    /// Whether the last run was killed for taking too long.
    timed_out: bool,
}

/// Held while an interactive plugin runs: the terminal is one.
static INTERACTIVE_RUN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[derive(Debug)]
pub(super) struct ExecAuth {
    config: ExecConfig,
    api_version: String,
    /// `KUBERNETES_EXEC_INFO` but for `spec.interactive`, set per run.
    exec_info: serde_json::Value,
    /// Whether this process's standard input is a terminal; replaced in
    /// tests, which cannot choose.
    stdin_is_terminal: fn() -> bool,
    timeout: Duration,
    /// Held across the plugin run so concurrent requests wait for one run.
    state: tokio::sync::Mutex<State>,
    /// Runs finished so far, so a request can tell whether a run ended
    /// while it waited for `state`.
    finished_runs: AtomicU64,
    /// Set by `invalidate` without waiting for a running refresh.
    stale: std::sync::atomic::AtomicBool,
    cert: Arc<ExecCertResolver>,
}

/// Hands the TLS layer the client certificate the plugin last returned.
#[derive(Debug, Default)]
pub(super) struct ExecCertResolver {
    current: RwLock<Option<Arc<CertifiedKey>>>,
    /// Bumped whenever the certificate changes, so the client can close
    /// connections made with the previous one.
    generation: std::sync::atomic::AtomicU64,
}

impl ExecCertResolver {
    fn set(&self, key: CertifiedKey) {
        let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
        if current.as_ref().is_some_and(|c| c.cert == key.cert) {
            return;
        }
        *current = Some(Arc::new(key));
        self.generation.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    pub(super) fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl rustls::client::ResolvesClientCert for ExecCertResolver {
    fn resolve(&self, _hints: &[&[u8]], _schemes: &[rustls::SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        self.current.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
    fn has_certs(&self) -> bool {
        self.current.read().unwrap_or_else(|e| e.into_inner()).is_some()
    }
}

impl ExecAuth {
    pub(super) fn new(config: ExecConfig, cluster: &Config) -> ExecAuth {
        let api_version = config.api_version.clone().filter(|v| !v.is_empty()).unwrap_or_else(|| V1.to_owned());
        let mut spec = serde_json::json!({});
        if config.provide_cluster_info {
            let mut c = serde_json::json!({
                "server": cluster.cluster_url.to_string().trim_end_matches('/'),
                "insecureSkipTLSVerify": cluster.insecure_skip_tls_verify,
            });
            if let Some(name) = &cluster.tls_server_name {
                c["tlsServerName"] = name.clone().into();
            }
            if let Some(ca) = &cluster.root_ca_pem {
                c["certificateAuthorityData"] = base64::engine::general_purpose::STANDARD.encode(ca).into();
            }
            spec["cluster"] = c;
        }
        let exec_info = serde_json::json!({ "apiVersion": api_version, "kind": "ExecCredential", "spec": spec });
        ExecAuth {
            config,
            api_version,
            exec_info,
            stdin_is_terminal: || std::io::stdin().is_terminal(),
            timeout: cluster.exec_timeout,
            state: tokio::sync::Mutex::new(State::default()),
            finished_runs: AtomicU64::new(0),
            stale: std::sync::atomic::AtomicBool::new(false),
            cert: Arc::new(ExecCertResolver::default()),
        }
    }

    pub(super) fn cert_resolver(&self) -> Arc<dyn rustls::client::ResolvesClientCert> {
        self.cert.clone()
    }

    pub(super) fn cert_generation(&self) -> u64 {
        self.cert.generation()
    }

    fn error(&self, message: impl Into<String>) -> Error {
        Error::Exec { command: self.config.command.clone(), message: message.into() }
    }

    fn timeout_error(&self) -> Error {
        Error::ExecTimeout { command: self.config.command.clone(), timeout: self.timeout }
    }

    pub(super) async fn authorization(&self) -> Result<Option<HeaderValue>, Error> {
        let runs_before = self.finished_runs.load(Ordering::SeqCst);
        let mut state = self.state.lock().await;
        let stale = self.stale.swap(false, Ordering::SeqCst);
        if let Some(c) = state.credentials.as_ref().filter(|_| !stale)
            && c.expires.is_none_or(|exp| jiff::Timestamp::now() < exp)
        {
            return Ok(c.header.clone());
        }
        // Requests queued behind a run that hung share its failure rather
        // than each waiting out a run of its own.
        if state.timed_out && self.finished_runs.load(Ordering::SeqCst) != runs_before {
            return Err(self.timeout_error());
        }
        state.credentials = None;
        let result = self.run().await;
        state.timed_out = matches!(result, Err(Error::ExecTimeout { .. }));
        self.finished_runs.fetch_add(1, Ordering::SeqCst);
        let fresh = result?;
        let header = fresh.header.clone();
        state.credentials = Some(fresh);
        Ok(header)
    }

    /// After a 401: drop the credentials if they are the ones that failed.
    pub(super) fn invalidate(&self, used: Option<&HeaderValue>) -> bool {
        match self.state.try_lock() {
            Ok(mut state) => {
                if state.credentials.as_ref().is_some_and(|c| c.header.as_ref() == used) {
                    state.credentials = None;
                }
            }
            // A refresh is running right now: its result is what the retry
            // will use, unless it started before the failure; mark stale.
            Err(_) => self.stale.store(true, Ordering::SeqCst),
        }
        true
    }

    /// client-go's `isInteractive`: whether this run gets the terminal.
    fn interactive(&self) -> Result<bool, Error> {
        match self.config.interactive_mode.as_deref().unwrap_or_default() {
            "Never" => Ok(false),
            "" | "IfAvailable" => Ok((self.stdin_is_terminal)()),
            "Always" if (self.stdin_is_terminal)() => Ok(true),
            "Always" => Err(self.error(
                "the plugin needs an interactive terminal (interactiveMode: Always) and standard input is not a terminal",
            )),
            other => Err(self.error(format!("unknown interactiveMode {other:?}"))),
        }
    }

    async fn run(&self) -> Result<Cached, Error> {
        let interactive = self.interactive()?;
        let _terminal = if interactive { Some(INTERACTIVE_RUN.lock().await) } else { None };
        let mut exec_info = self.exec_info.clone();
        exec_info["spec"]["interactive"] = interactive.into();
        let mut cmd = tokio::process::Command::new(&self.config.command);
        cmd.args(&self.config.args)
            .env("KUBERNETES_EXEC_INFO", exec_info.to_string())
            .stdin(if interactive { Stdio::inherit() } else { Stdio::null() })
            .stdout(Stdio::piped())
            // As client-go: the plugin talks to the user on stderr (login
            // prompts, diagnostics that may echo secrets), so it goes to the
            // terminal and never into an error a controller logs.
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        for var in &self.config.env {
            cmd.env(&var.name, var.value.expose());
        }
        tracing::debug!(command = %self.config.command, "running exec credential plugin");
        let mut child = cmd.spawn().map_err(|source| {
            let mut command = self.config.command.clone();
            if let Some(hint) =
                self.config.install_hint.as_deref().filter(|_| source.kind() == std::io::ErrorKind::NotFound)
            {
                command = format!("{command} ({})", hint.trim());
            }
            Error::ExecSpawn { command, source }
        })?;
        let Some(mut stdout) = child.stdout.take() else {
            return Err(self.error("its standard output could not be captured"));
        };
        let finished = tokio::time::timeout(self.timeout, async {
            let mut out = Vec::new();
            stdout.read_to_end(&mut out).await?;
            Ok::<_, std::io::Error>((child.wait().await?, out))
        })
        .await;
        let (status, stdout) = match finished {
            Ok(Ok(done)) => done,
            Ok(Err(e)) => return Err(self.error(format!("reading its output: {e}"))),
            Err(_) => {
                // Killed and reaped here, not left to `kill_on_drop`, so no
                // plugin process outlives the error.
                if let Err(e) = child.kill().await {
                    tracing::debug!(command = %self.config.command, error = %crate::ErrorChain(&e), "killing the exec plugin failed");
                }
                return Err(self.timeout_error());
            }
        };
        if !status.success() {
            return Err(self.error(format!("exited with {status} (its stderr went to this process's stderr)")));
        }
        let cred: ExecCredential =
            serde_json::from_slice(&stdout).map_err(|e| self.error(format!("output is not an ExecCredential: {e}")))?;
        if cred.kind != "ExecCredential" {
            return Err(self.error(format!("output has kind {:?}, want ExecCredential", cred.kind)));
        }
        if cred.api_version != self.api_version || !(cred.api_version == V1 || cred.api_version == V1BETA1) {
            return Err(self.error(format!(
                "output has apiVersion {:?}, want {:?} (v1 or v1beta1)",
                cred.api_version, self.api_version
            )));
        }
        let status = cred.status.ok_or_else(|| self.error("output has no status"))?;
        let expires = match status.expiration_timestamp.as_deref().filter(|t| !t.is_empty()) {
            Some(t) => Some(
                crate::codec::parse_time(t)
                    .map_err(|e| self.error(format!("invalid expirationTimestamp {t:?}: {e}")))?,
            ),
            None => None,
        };
        let header = match status.token.as_ref().filter(|t| !t.is_empty()) {
            Some(t) => Some(super::secret::bearer_header(t.expose())?),
            None => None,
        };
        match (&status.client_certificate_data, &status.client_key_data) {
            (Some(cert), Some(key)) if !cert.is_empty() => {
                let ck = super::tls::certified_key(cert.as_bytes(), key.expose().as_bytes())
                    .map_err(|e| self.error(format!("client certificate: {e}")))?;
                self.cert.set(ck);
            }
            (Some(_), None) | (None, Some(_)) => {
                return Err(self.error("clientCertificateData and clientKeyData must be given together"));
            }
            _ if header.is_none() => return Err(self.error("status has neither a token nor a client certificate")),
            _ => {}
        }
        Ok(Cached { header, expires })
    }
}

#[cfg(test)]
#[path = "exec_tests.rs"]
mod tests;
