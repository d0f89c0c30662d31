//! TLS against a loopback rustls server with certificates made by the
//! `openssl` CLI (the test is skipped when it is not installed): CA
//! trust, `tls-server-name`, `insecure-skip-tls-verify`, client certificates.

mod common;

use std::path::Path;

use common::{credential, pki, serve_h2, serve_tls, server_config};
use k8s_client_runtime::config::{Auth, Config, ExecConfig};
use k8s_client_runtime::rest::Client;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Answers every request with `{"clientCert": <bool>}` over HTTP/1.1.
async fn tls_server(dir: &Path) -> String {
    let addr = serve_tls(server_config(dir, &[b"http/1.1"]), |mut tls| async move {
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
    })
    .await;
    format!("https://{addr}")
}

async fn client_cert_seen(config: Config) -> Result<bool, String> {
    let client = Client::new(config).map_err(|e| e.to_string())?;
    let v: serde_json::Value = client.get("/version").json().await.map_err(|e| e.to_string())?;
    Ok(v["clientCert"] == true)
}

#[tokio::test]
async fn tls_trust_server_name_insecure_and_client_certs() {
    let Some(dir) = pki() else { return };
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
    std::fs::write(dir.path().join("cred.json"), credential(dir.path(), "client")).unwrap();
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
    let addr = serve_tls(server_config(dir, &[b"h2", b"http/1.1"]), |tls| {
        serve_h2(tls, |req| {
            let body = format!("{{\"version\":\"{:?}\"}}", req.version());
            hyper::Response::new(http_body_util::Full::new(bytes::Bytes::from(body)))
        })
    })
    .await;
    format!("https://{addr}")
}

#[tokio::test]
async fn http2_is_used_when_offered() {
    let Some(dir) = pki() else { return };
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
