//! The service-account configuration every pod gets.

use std::path::PathBuf;

use super::{Auth, Config, Error};

/// Where the service account is mounted in a pod.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The inputs of the in-cluster configuration, explicit so tests can point
/// them at a temporary directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InClusterEnv {
    /// `KUBERNETES_SERVICE_HOST`.
    pub host: Option<String>,
    /// `KUBERNETES_SERVICE_PORT`.
    pub port: Option<String>,
    /// Holds `token`, `ca.crt` and `namespace`.
    pub service_account_dir: PathBuf,
}

impl InClusterEnv {
    /// The real inputs: the service environment variables the kubelet sets in
    /// every container and [`SERVICE_ACCOUNT_DIR`].
    pub fn from_process() -> Self {
        InClusterEnv {
            host: std::env::var("KUBERNETES_SERVICE_HOST").ok(),
            port: std::env::var("KUBERNETES_SERVICE_PORT").ok(),
            service_account_dir: PathBuf::from(SERVICE_ACCOUNT_DIR),
        }
    }
}

pub(super) fn config(env: &InClusterEnv) -> Result<Config, Error> {
    let (Some(host), Some(port)) =
        (env.host.as_deref().filter(|h| !h.is_empty()), env.port.as_deref().filter(|p| !p.is_empty()))
    else {
        return Err(Error::InCluster(
            "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set (not running in a pod?)".into(),
        ));
    };
    let host = if host.contains(':') && !host.starts_with('[') { format!("[{host}]") } else { host.to_owned() };
    let url = format!("https://{host}:{port}");
    let cluster_url = url.parse().map_err(|e| Error::InCluster(format!("invalid service address {url:?}: {e}")))?;

    let token_path = env.service_account_dir.join("token");
    // Read once so a missing token is reported now rather than on the
    // first request; the authenticator re-reads it as it rotates.
    std::fs::metadata(&token_path).map_err(|source| Error::ReadFile {
        what: "service account token",
        path: token_path.clone(),
        source,
    })?;

    let mut config = Config::new(cluster_url);
    config.auth = Auth::TokenFile(token_path);
    let ca_path = env.service_account_dir.join("ca.crt");
    config.root_ca_pem = Some(std::fs::read(&ca_path).map_err(|source| Error::ReadFile {
        what: "service account CA",
        path: ca_path.clone(),
        source,
    })?);
    // The CA is rotated in place (kube-controller-manager republishes the
    // kube-root-ca.crt ConfigMap the volume projects): read it again.
    config.certificate_files.certificate_authority = Some(ca_path);
    if let Ok(ns) = std::fs::read_to_string(env.service_account_dir.join("namespace")) {
        let ns = ns.trim();
        if !ns.is_empty() {
            config.default_namespace = ns.to_owned();
        }
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_service_account_dir() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("token"), "tok").unwrap();
        std::fs::write(dir.path().join("ca.crt"), "pem").unwrap();
        std::fs::write(dir.path().join("namespace"), "kube-system\n").unwrap();
        let env = InClusterEnv {
            host: Some("fd00::1".into()),
            port: Some("443".into()),
            service_account_dir: dir.path().to_owned(),
        };
        let c = config(&env).unwrap();
        assert_eq!(c.cluster_url.to_string(), "https://[fd00::1]:443/");
        assert_eq!(c.default_namespace, "kube-system");
        assert!(matches!(c.auth, Auth::TokenFile(ref p) if p.ends_with("token")));
        assert_eq!(c.root_ca_pem.as_deref(), Some(&b"pem"[..]));
        assert_eq!(
            c.certificate_files.certificate_authority,
            Some(dir.path().join("ca.crt")),
            "read again when rotated"
        );
    }

    #[test]
    fn missing_env_or_token_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut env = InClusterEnv { host: None, port: None, service_account_dir: dir.path().to_owned() };
        assert!(matches!(config(&env), Err(Error::InCluster(_))));
        env.host = Some("10.0.0.1".into());
        env.port = Some("443".into());
        let err = config(&env).unwrap_err().to_string();
        assert!(err.contains("token"), "{err}");
    }
}
