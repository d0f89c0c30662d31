//! TLS against a loopback rustls server with certificates made by the
//! `openssl` CLI (the test is skipped when it is not installed): CA
//! trust, `tls-server-name`, `insecure-skip-tls-verify`, client certificates.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{make_pki, server_config};
use k8s_client_runtime::config::{Auth, Config, ExecConfig};
use k8s_client_runtime::rest::Client;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

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
                let resp =
                    format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
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
                    Ok::<_, std::convert::Infallible>(hyper::Response::new(http_body_util::Full::new(
                        bytes::Bytes::from(body),
                    )))
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
