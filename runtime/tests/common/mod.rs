//! Test PKI made with the `openssl` CLI, shared by the TLS, proxy and
//! certificate-rotation tests (each skips itself when openssl is missing).
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

pub fn openssl(dir: &Path, args: &[&str]) -> bool {
    Command::new("openssl").current_dir(dir).args(args).output().is_ok_and(|o| o.status.success())
}

/// CA, a server certificate for `kubernetes.example` only (no IP SAN), a
/// proxy certificate for 127.0.0.1, and two client certificates (`client`,
/// `client2`), all signed by the CA.
pub fn make_pki(dir: &Path) -> bool {
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
    let mut ok = openssl(
        dir,
        &[&["req", "-x509"][..], &ec, &["-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=test-ca", "-days", "1"]]
            .concat(),
    );
    for (name, ext) in [
        ("server", "subjectAltName=DNS:kubernetes.example\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"),
        ("proxy", "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"),
        ("client", "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n"),
        ("client2", "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n"),
    ] {
        std::fs::write(dir.join(format!("{name}.ext")), ext).unwrap();
        let (key, csr, crt, extf) =
            (format!("{name}.key"), format!("{name}.csr"), format!("{name}.crt"), format!("{name}.ext"));
        ok =
            ok && openssl(
                dir,
                &[&["req"][..], &ec, &["-keyout", &key, "-out", &csr, "-subj", &format!("/CN={name}")]].concat(),
            ) && openssl(
                dir,
                &[
                    "x509",
                    "-req",
                    "-in",
                    &csr,
                    "-CA",
                    "ca.crt",
                    "-CAkey",
                    "ca.key",
                    "-CAcreateserial",
                    "-out",
                    &crt,
                    "-days",
                    "1",
                    "-extfile",
                    &extf,
                ],
            );
    }
    ok
}

pub fn server_config(dir: &Path, alpn: &[&[u8]]) -> rustls::ServerConfig {
    server_config_for(dir, "server", alpn)
}

/// A server configuration presenting the certificate `name` (`server` or
/// `proxy`); client certificates signed by the CA are asked for, not required.
pub fn server_config_for(dir: &Path, name: &str, alpn: &[&[u8]]) -> rustls::ServerConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(dir.join(format!("{name}.crt"))).unwrap().collect::<Result<_, _>>().unwrap();
    let key = PrivateKeyDer::from_pem_file(dir.join(format!("{name}.key"))).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(dir.join("ca.crt")).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .allow_unauthenticated()
        .build()
        .unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .unwrap();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    config
}
