//! A new client certificate from an exec plugin must not be sent down a
//! connection that authenticated with the old one: after a 401 the retry
//! has to open a new connection, as client-go's connection-rotating dialer
//! makes it do.

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};

use common::{credential, pki, serve_h2, serve_tls, server_config};
use k8s_client_runtime::config::{Auth, Config, ExecConfig, Proxy};
use k8s_client_runtime::rest::Client;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

/// An HTTP/2 server (one connection carries every request) that answers
/// 401 unless the connection presented `client2.crt`, and records which
/// certificate each new connection presented.
async fn server(dir: &Path, seen: Arc<Mutex<Vec<String>>>) -> String {
    let names: Vec<(String, CertificateDer<'static>)> = ["client", "client2"]
        .iter()
        .map(|n| (n.to_string(), CertificateDer::from_pem_file(dir.join(format!("{n}.crt"))).unwrap()))
        .collect();
    let addr = serve_tls(server_config(dir, &[b"h2"]), move |tls| {
        let peer = tls.get_ref().1.peer_certificates().and_then(|c| c.first().cloned());
        let who = names.iter().find(|(_, c)| Some(c) == peer.as_ref()).map_or("none", |(n, _)| n.as_str());
        seen.lock().unwrap().push(who.to_owned());
        let ok = who == "client2";
        serve_h2(tls, move |_| {
            let mut resp = hyper::Response::new(http_body_util::Full::new(bytes::Bytes::from_static(b"{}")));
            if !ok {
                *resp.status_mut() = hyper::StatusCode::UNAUTHORIZED;
            }
            resp
        })
    })
    .await;
    format!("https://{addr}")
}

#[tokio::test]
async fn retry_after_401_uses_a_new_connection_with_the_new_certificate() {
    let Some(dir) = pki() else { return };
    let d = dir.path();
    std::fs::write(d.join("cred1.json"), credential(d, "client")).unwrap();
    std::fs::write(d.join("cred2.json"), credential(d, "client2")).unwrap();
    // First run: the certificate the server rejects; later runs: the new one.
    let script = format!(
        "n=$(cat {0}/count 2>/dev/null || echo 0); n=$((n+1)); echo $n > {0}/count\n\
         if [ $n -eq 1 ]; then cat {0}/cred1.json; else cat {0}/cred2.json; fi\n",
        d.display()
    );
    std::fs::write(d.join("plugin.sh"), script).unwrap();

    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = server(d, seen.clone()).await;
    let mut c = Config::new(url.parse().unwrap());
    c.qps = 0.0;
    c.proxy = Proxy::None;
    c.root_ca_pem = Some(std::fs::read(d.join("ca.crt")).unwrap());
    c.tls_server_name = Some("kubernetes.example".into());
    c.auth = Auth::Exec(Box::new(ExecConfig {
        command: "/bin/sh".into(),
        args: vec![d.join("plugin.sh").display().to_string()],
        api_version: Some("client.authentication.k8s.io/v1".into()),
        ..Default::default()
    }));
    let client = Client::new(c).unwrap();
    client.get("/version").bytes().await.expect("the retry presents the new certificate");
    assert_eq!(*seen.lock().unwrap(), ["client", "client2"], "one connection per certificate");
    assert_eq!(std::fs::read_to_string(d.join("count")).unwrap().trim(), "2");
    // The new connection is reused from then on.
    client.get("/version").bytes().await.unwrap();
    assert_eq!(seen.lock().unwrap().len(), 2);
}
