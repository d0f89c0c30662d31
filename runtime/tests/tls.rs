//! TLS against a loopback rustls server with certificates made by the
//! `openssl` CLI (the test is skipped when it is not installed): CA
//! trust, `tls-server-name`, `insecure-skip-tls-verify`, client certificates.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use k8s_client_runtime::config::{Auth, Config, ExecConfig};
use k8s_client_runtime::rest::Client;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn openssl(dir: &Path, args: &[&str]) -> bool {
    Command::new("openssl").current_dir(dir).args(args).output().is_ok_and(|o| o.status.success())
}

/// CA, a server certificate for `kubernetes.example` only (no IP SAN) and
/// a client certificate, all signed by the CA.
fn make_pki(dir: &Path) -> bool {
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
    let mut ok = openssl(dir, &[&["req", "-x509"][..], &ec, &["-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=test-ca", "-days", "1"]].concat());
    for (name, ext) in [
        ("server", "subjectAltName=DNS:kubernetes.example\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"),
        ("client", "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n"),
    ] {
        std::fs::write(dir.join(format!("{name}.ext")), ext).unwrap();
        let (key, csr, crt, extf) = (format!("{name}.key"), format!("{name}.csr"), format!("{name}.crt"), format!("{name}.ext"));
        ok = ok
            && openssl(dir, &[&["req"][..], &ec, &["-keyout", &key, "-out", &csr, "-subj", &format!("/CN={name}")]].concat())
            && openssl(dir, &["x509", "-req", "-in", &csr, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", &crt, "-days", "1", "-extfile", &extf]);
    }
    ok
}

fn server_config(dir: &Path, alpn: &[&[u8]]) -> rustls::ServerConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(dir.join("server.crt")).unwrap().collect::<Result<_, _>>().unwrap();
    let key = PrivateKeyDer::from_pem_file(dir.join("server.key")).unwrap();
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

/// Answers every request with `{"clientCert": <bool>}` over HTTP/1.1.
async fn tls_server(dir: &Path) -> String {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server_config(dir, &[b"http/1.1"])));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(sock).await else { return };
                let mut buf = Vec::new();
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    let mut tmp = [0u8; 1024];
                    match tls.read(&mut tmp).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&tmp[..n]),
                    }
                }
                let has_cert = tls.get_ref().1.peer_certificates().is_some_and(|c| !c.is_empty());
                let body = format!("{{\"clientCert\":{has_cert}}}");
                let resp = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
                let _ = tls.write_all(resp.as_bytes()).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    url
}

async fn client_cert_seen(config: Config) -> Result<bool, String> {
    let client = Client::new(config).map_err(|e| e.to_string())?;
    let v: serde_json::Value = client.get("/version").json().await.map_err(|e| e.to_string())?;
    Ok(v["clientCert"] == true)
}

#[tokio::test]
async fn tls_trust_server_name_insecure_and_client_certs() {
    let dir = tempfile::tempdir().unwrap();
    if !make_pki(dir.path()) {
        eprintln!("openssl not available; skipping");
        return;
    }
    let url = tls_server(dir.path()).await;
    let ca = std::fs::read(dir.path().join("ca.crt")).unwrap();
    let base = || {
        let mut c = Config::new(url.parse().unwrap());
        c.qps = 0.0;
        c
    };

    // Untrusted: no CA given.
    assert!(client_cert_seen(base()).await.is_err());
    // Trusted CA, but the certificate is not for 127.0.0.1.
    let mut c = base();
    c.root_ca_pem = Some(ca.clone());
    let err = client_cert_seen(c.clone()).await.unwrap_err();
    assert!(!err.is_empty());
    // tls-server-name makes the name match.
    c.tls_server_name = Some("kubernetes.example".into());
    assert_eq!(client_cert_seen(c.clone()).await, Ok(false));
    // Client certificate presented.
    c.client_cert_pem = Some(std::fs::read(dir.path().join("client.crt")).unwrap());
    c.client_key_pem = Some(std::fs::read_to_string(dir.path().join("client.key")).unwrap().into());
    assert_eq!(client_cert_seen(c).await, Ok(true));
    // Client certificate from an exec plugin, fed to the handshake.
    let cred = serde_json::json!({
        "apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
        "status": {
            "clientCertificateData": std::fs::read_to_string(dir.path().join("client.crt")).unwrap(),
            "clientKeyData": std::fs::read_to_string(dir.path().join("client.key")).unwrap(),
        }
    });
    std::fs::write(dir.path().join("cred.json"), cred.to_string()).unwrap();
    let mut c = base();
    c.root_ca_pem = Some(ca.clone());
    c.tls_server_name = Some("kubernetes.example".into());
    c.auth = Auth::Exec(Box::new(ExecConfig {
        command: "/bin/cat".into(),
        args: vec![dir.path().join("cred.json").display().to_string()],
        api_version: Some("client.authentication.k8s.io/v1".into()),
        ..Default::default()
    }));
    assert_eq!(client_cert_seen(c).await, Ok(true));
    // insecure-skip-tls-verify accepts the wrong name and unknown CA.
    let mut c = base();
    c.insecure_skip_tls_verify = true;
    assert_eq!(client_cert_seen(c).await, Ok(false));
}

/// A hyper server offering h2 and http/1.1 that reports the HTTP version
/// each request arrived with.
async fn h2_server(dir: &Path) -> String {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server_config(dir, &[b"h2", b"http/1.1"])));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(sock).await else { return };
                let service = hyper::service::service_fn(|req: hyper::Request<hyper::body::Incoming>| async move {
                    let body = format!("{{\"version\":\"{:?}\"}}", req.version());
                    Ok::<_, std::convert::Infallible>(hyper::Response::new(http_body_util::Full::new(bytes::Bytes::from(body))))
                });
                let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    url
}

#[tokio::test]
async fn http2_is_used_when_offered() {
    let dir = tempfile::tempdir().unwrap();
    if !make_pki(dir.path()) {
        eprintln!("openssl not available; skipping");
        return;
    }
    let url = h2_server(dir.path()).await;
    let mut c = Config::new(url.parse().unwrap());
    c.qps = 0.0;
    c.root_ca_pem = Some(std::fs::read(dir.path().join("ca.crt")).unwrap());
    c.tls_server_name = Some("kubernetes.example".into());
    let client = Client::new(c).unwrap();
    for _ in 0..3 {
        let v: serde_json::Value = client.get("/version").json().await.unwrap();
        assert_eq!(v["version"], "HTTP/2.0");
    }
}
