//! Test PKI made with the `openssl` CLI and loopback TLS servers, shared by
//! the TLS, proxy and certificate-rotation tests (each skips itself when
//! openssl is missing).
#![allow(dead_code)]

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::server::TlsStream;

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

/// A temporary directory holding [`make_pki`]'s files; `None`, once said,
/// when openssl is missing and the test skips itself.
pub fn pki() -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().unwrap();
    if !make_pki(dir.path()) {
        eprintln!("openssl not available; skipping");
        return None;
    }
    Some(dir)
}

/// The `ExecCredential` an exec plugin prints to hand over the client
/// certificate `client` (`client` or `client2`) of the PKI in `dir`.
pub fn credential(dir: &Path, client: &str) -> String {
    serde_json::json!({
        "apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
        "status": {
            "clientCertificateData": std::fs::read_to_string(dir.join(format!("{client}.crt"))).unwrap(),
            "clientKeyData": std::fs::read_to_string(dir.join(format!("{client}.key"))).unwrap(),
        }
    })
    .to_string()
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

/// Accepts TLS connections with `config` on a loopback port and hands each,
/// in a task of its own, to `serve`; returns the port's address.
pub async fn serve_tls<S, F>(config: rustls::ServerConfig, serve: S) -> SocketAddr
where
    S: Fn(TlsStream<TcpStream>) -> F + Send + Sync + 'static,
    F: Future<Output = ()> + Send + 'static,
{
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let serve = Arc::new(serve);
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let (acceptor, serve) = (acceptor.clone(), serve.clone());
            tokio::spawn(async move {
                if let Ok(tls) = acceptor.accept(sock).await {
                    serve(tls).await;
                }
            });
        }
    });
    addr
}

/// Serves HTTP/2 on one connection, answering every request with what
/// `respond` makes of it.
pub async fn serve_h2<R>(tls: TlsStream<TcpStream>, respond: R)
where
    R: Fn(&hyper::Request<hyper::body::Incoming>) -> hyper::Response<Full<Bytes>> + Send + 'static,
{
    let service = hyper::service::service_fn(move |req| {
        let response = respond(&req);
        async move { Ok::<_, Infallible>(response) }
    });
    let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
        .serve_connection(TokioIo::new(tls), service)
        .await;
}
