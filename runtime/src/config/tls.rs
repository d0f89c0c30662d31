//! rustls client configuration from a [`Config`]: the cluster CA, client
//! certificates, and — only when `insecure-skip-tls-verify` is set — a
//! verifier that accepts any server certificate.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::sign::CertifiedKey;
use rustls::{DigitallySignedStruct, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};

use super::{Authenticator, Config, Error};

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

/// The rustls configuration for talking to the cluster of `config`. ALPN is
/// set by the connector (h2, then http/1.1).
pub fn build_tls_config(config: &Config, auth: &Authenticator) -> Result<rustls::ClientConfig, Error> {
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(Error::Tls)?;
    let builder = if config.insecure_skip_tls_verify {
        builder.dangerous().with_custom_certificate_verifier(Arc::new(AcceptAnyServerCert(provider())))
    } else {
        let mut roots = rustls::RootCertStore::empty();
        match &config.root_ca_pem {
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
    let tls = match (&config.client_cert_pem, &config.client_key_pem) {
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
