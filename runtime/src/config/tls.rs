//! rustls client configuration from a [`Config`]: the cluster CA, client
//! certificates, and — only when `insecure-skip-tls-verify` is set — a
//! verifier that accepts any server certificate.
//!
//! A client's [`TlsSource`] also reads the CA bundle and the client
//! certificate and key again when their files change
//! ([`Config::certificate_files`]): cert-manager, kubelet certificate
//! rotation and in-cluster CA rotation replace them under a running
//! process. New connections use the new material; connections already open
//! finish what they carry.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::sign::CertifiedKey;
use rustls::{DigitallySignedStruct, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};

use super::{Authenticator, CertificateFiles, Config, Error, Secret};

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn parse_certs(what: &'static str, pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, Error> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::Pem { what, message: e.to_string() })?;
    if certs.is_empty() {
        return Err(Error::Pem { what, message: "no PEM certificate found".into() });
    }
    Ok(certs)
}

fn parse_key(pem: &[u8]) -> Result<PrivateKeyDer<'static>, Error> {
    // The message of a PEM error never contains key material.
    PrivateKeyDer::from_pem_slice(pem).map_err(|e| Error::Pem { what: "client key", message: e.to_string() })
}

/// A certificate chain and key ready for the TLS handshake.
pub(super) fn certified_key(cert_pem: &[u8], key_pem: &[u8]) -> Result<CertifiedKey, Error> {
    let certs = parse_certs("client certificate", cert_pem)?;
    let key = parse_key(key_pem)?;
    CertifiedKey::from_der(certs, key, &provider()).map_err(Error::Tls)
}

/// The PEM contents the TLS settings are built from.
#[derive(Clone, PartialEq, Eq)]
struct Material {
    ca: Option<Vec<u8>>,
    cert: Option<Vec<u8>>,
    key: Option<Secret>,
}

impl Material {
    fn of(config: &Config) -> Material {
        Material {
            ca: config.root_ca_pem.clone(),
            cert: config.client_cert_pem.clone(),
            key: config.client_key_pem.clone(),
        }
    }

    /// `self` with every file of `files` read in place of its field; what
    /// `keep` already holds is kept where a field has no file.
    fn read(files: &CertificateFiles, keep: &Material) -> Result<Material, Error> {
        fn read(what: &'static str, path: &Path) -> Result<Vec<u8>, Error> {
            std::fs::read(path).map_err(|source| Error::ReadFile { what, path: path.to_owned(), source })
        }
        let ca = match &files.certificate_authority {
            Some(path) => Some(read("certificate authority", path)?),
            None => keep.ca.clone(),
        };
        let cert = match &files.client_certificate {
            Some(path) => Some(read("client certificate", path)?),
            None => keep.cert.clone(),
        };
        let key = match &files.client_key {
            Some(path) => {
                let bytes = read("client key", path)?;
                let text = String::from_utf8(bytes)
                    .map_err(|_| Error::Pem { what: "client key", message: "not PEM text".into() })?;
                Some(Secret::new(text))
            }
            None => keep.key.clone(),
        };
        Ok(Material { ca, cert, key })
    }
}

/// The rustls configuration for talking to the cluster of `config`. ALPN is
/// set by the connector (h2, then http/1.1).
pub fn build_tls_config(config: &Config, auth: &Authenticator) -> Result<rustls::ClientConfig, Error> {
    build(&Material::of(config), config.insecure_skip_tls_verify, auth)
}

fn build(material: &Material, insecure: bool, auth: &Authenticator) -> Result<rustls::ClientConfig, Error> {
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(Error::Tls)?;
    let builder = if insecure {
        builder.dangerous().with_custom_certificate_verifier(Arc::new(AcceptAnyServerCert(provider())))
    } else {
        let mut roots = rustls::RootCertStore::empty();
        match &material.ca {
            Some(pem) => {
                for cert in parse_certs("certificate authority", pem)? {
                    roots.add(cert).map_err(Error::Tls)?;
                }
            }
            // Like client-go: without a configured CA, trust the system's.
            None => {
                let native = rustls_native_certs::load_native_certs();
                if !native.errors.is_empty() {
                    tracing::debug!(errors = native.errors.len(), "some system CA certificates could not be loaded");
                }
                let (added, ignored) = roots.add_parsable_certificates(native.certs);
                tracing::debug!(added, ignored, "using system CA certificates");
            }
        }
        builder.with_root_certificates(roots)
    };
    let tls = match (&material.cert, &material.key) {
        (Some(cert), Some(key)) => builder
            .with_client_auth_cert(parse_certs("client certificate", cert)?, parse_key(key.expose().as_bytes())?)
            .map_err(Error::Tls)?,
        _ => match auth.exec_cert_resolver() {
            Some(resolver) => builder.with_client_cert_resolver(resolver),
            None => builder.with_no_client_auth(),
        },
    };
    Ok(tls)
}

/// The TLS settings of one material, in the three forms connections use.
#[derive(Debug)]
pub(crate) struct TlsConfigs {
    /// For pooled connections: h2 offered first, then HTTP/1.1.
    pub(crate) pooled: Arc<rustls::ClientConfig>,
    /// For protocol upgrades (WebSockets), which exist in HTTP/1.1 only.
    #[cfg(feature = "ws")]
    pub(crate) http1: Arc<rustls::ClientConfig>,
    /// For an `https` proxy, to which no protocol is offered.
    pub(crate) proxy: Arc<rustls::ClientConfig>,
}

impl TlsConfigs {
    fn new(mut base: rustls::ClientConfig) -> TlsConfigs {
        // A resumed session keeps the client identity of the session it
        // resumes, so a new certificate would never be presented. Go's
        // client does not resume sessions unless given a cache either.
        base.resumption = rustls::client::Resumption::disabled();
        #[cfg(feature = "ws")]
        let http1 = {
            let mut http1 = base.clone();
            http1.alpn_protocols = vec![b"http/1.1".to_vec()];
            Arc::new(http1)
        };
        let proxy = Arc::new(base.clone());
        base.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        TlsConfigs {
            pooled: Arc::new(base),
            #[cfg(feature = "ws")]
            http1,
            proxy,
        }
    }
}

/// Default of [`Config::cert_reload_interval`]: client-go looks at rotated
/// certificate and CA files every 5 minutes.
pub const DEFAULT_CERT_RELOAD_INTERVAL: Duration = Duration::from_secs(5 * 60);

/// A new connection reads the files again at most this often (client-go
/// caches a loaded client certificate for a second).
const DIAL_RECHECK: Duration = Duration::from_secs(1);

/// The TLS settings of a client, read again from the configuration's
/// certificate files when they change.
pub(crate) struct TlsSource {
    files: CertificateFiles,
    insecure: bool,
    auth: Authenticator,
    interval: Duration,
    state: Mutex<Loaded>,
    /// Bumped whenever the material changes.
    generation: AtomicU64,
}

struct Loaded {
    material: Material,
    configs: Arc<TlsConfigs>,
    checked: Instant,
}

impl std::fmt::Debug for TlsSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsSource").field("files", &self.files).finish_non_exhaustive()
    }
}

impl TlsSource {
    /// The settings of `config`, its files read now where it names files
    /// whose content it does not hold.
    pub(crate) fn new(config: &Config, auth: &Authenticator) -> Result<TlsSource, Error> {
        let given = Material::of(config);
        let files = &config.certificate_files;
        // The fields read from a file hold its content already; a file
        // alone is read now.
        let unread = CertificateFiles {
            certificate_authority: files.certificate_authority.clone().filter(|_| given.ca.is_none()),
            client_certificate: files.client_certificate.clone().filter(|_| given.cert.is_none()),
            client_key: files.client_key.clone().filter(|_| given.key.is_none()),
        };
        let material = Material::read(&unread, &given)?;
        if material.cert.is_some() != material.key.is_some() {
            return Err(Error::InvalidValue {
                what: "client certificate",
                message: "a client certificate and its key must be given together".into(),
            });
        }
        let configs = Arc::new(TlsConfigs::new(build(&material, config.insecure_skip_tls_verify, auth)?));
        Ok(TlsSource {
            files: files.clone(),
            insecure: config.insecure_skip_tls_verify,
            auth: auth.clone(),
            interval: config.cert_reload_interval,
            state: Mutex::new(Loaded { material, configs, checked: Instant::now() }),
            generation: AtomicU64::new(0),
        })
    }

    /// Changes whenever the files' content changed and was taken.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The settings for a new connection, the files read again first if a
    /// second has passed since they last were.
    pub(crate) fn for_new_connection(&self) -> Arc<TlsConfigs> {
        self.check_after(DIAL_RECHECK);
        Arc::clone(&self.state.lock().configs)
    }

    /// Reads the files again if [`Config::cert_reload_interval`] has
    /// passed since they last were (called on every request: a time
    /// comparison unless due).
    pub(crate) fn check_if_due(&self) {
        self.check_after(self.interval);
    }

    fn check_after(&self, period: Duration) {
        // A zero interval turns reloading off.
        if self.files.is_empty() || self.interval.is_zero() {
            return;
        }
        let mut state = self.state.lock();
        if state.checked.elapsed() < period {
            return;
        }
        state.checked = Instant::now();
        // Files rotated mid-write, or a certificate without its key yet:
        // keep what works and look again next time (client-go does too).
        let material = match Material::read(&self.files, &state.material) {
            Ok(m) if m == state.material => return,
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(error = %crate::ErrorChain(&e), "reading rotated certificates; keeping the previous ones");
                return;
            }
        };
        match build(&material, self.insecure, &self.auth) {
            Ok(config) => {
                tracing::info!(files = ?self.files, "certificate files changed; new connections use them");
                state.configs = Arc::new(TlsConfigs::new(config));
                state.material = material;
                self.generation.fetch_add(1, Ordering::AcqRel);
            }
            Err(e) => {
                tracing::warn!(error = %crate::ErrorChain(&e), "rotated certificates are not usable yet; keeping the previous ones");
            }
        }
    }
}

/// Used only for `insecure-skip-tls-verify: true`: the connection is
/// encrypted but the server is not authenticated. Signatures are still
/// checked so the handshake itself stays well-formed.
#[derive(Debug)]
struct AcceptAnyServerCert(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyServerCert {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_pem_is_an_error_not_a_panic() {
        let mut c = Config::new("https://h".parse().unwrap());
        c.root_ca_pem = Some(b"not pem".to_vec());
        let a = Authenticator::new(&c).unwrap();
        assert!(matches!(build_tls_config(&c, &a), Err(Error::Pem { .. })));
        c.root_ca_pem = None;
        c.client_cert_pem = Some(b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".to_vec());
        c.client_key_pem = Some("garbage".into());
        let err = build_tls_config(&c, &a).unwrap_err();
        let err = crate::ErrorChain(&err).to_string();
        assert!(!err.contains("garbage"), "{err}");
    }

    #[test]
    fn insecure_only_when_asked() {
        let mut c = Config::new("https://h".parse().unwrap());
        let a = Authenticator::new(&c).unwrap();
        assert!(build_tls_config(&c, &a).is_ok());
        c.insecure_skip_tls_verify = true;
        assert!(build_tls_config(&c, &a).is_ok());
    }
}
