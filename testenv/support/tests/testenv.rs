//! End-to-end checks of the testenv itself against the real apiserver.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

use k8s_client_testenv::TestEnv;
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};

/// One HTTPS request with a bearer token; returns (status, raw body).
/// Bodies are searched as text, so chunked framing doesn't matter here.
fn https(env: &TestEnv, method: &str, path: &str, token: &str, body: &str) -> (u16, String) {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(env.ca_pem().as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let host = env.server_url().trim_start_matches("https://");
    let conn = rustls::ClientConnection::new(Arc::new(config), ServerName::try_from("127.0.0.1").unwrap()).unwrap();
    let tcp = TcpStream::connect(host).unwrap();
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(30))).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    write!(
        tls,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    // The apiserver may close without close_notify; what was read counts.
    let _ = tls.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

/// First string value of `key` in a JSON text, compact or pretty-printed.
fn field<'a>(body: &'a str, key: &str) -> &'a str {
    let pat = format!("\"{key}\":");
    let after = body.find(&pat).unwrap_or_else(|| panic!("{key} not in {body}")) + pat.len();
    let start = after + body[after..].find('"').unwrap() + 1;
    &body[start..start + body[start..].find('"').unwrap()]
}

#[test]
fn shared_env_serves_the_real_version_with_rbac() {
    let env = TestEnv::shared();
    eprintln!("testenv ready in {:?} at {}", env.startup_time(), env.server_url());
    assert!(env.version().starts_with("v1.37."), "version {}", env.version());

    let (status, body) = https(env, "GET", "/version", env.admin_token(), "");
    assert_eq!(status, 200, "{body}");
    assert_eq!(field(&body, "gitVersion"), env.version());
    assert_eq!(field(&body, "minor"), "37");

    let ns = env.create_namespace("Shared_Test");
    assert!(ns.starts_with("shared-test-"), "{ns}");
    assert_ne!(ns, env.create_namespace("shared-test"));

    let path = format!("/api/v1/namespaces/{ns}/configmaps");
    let (status, body) = https(env, "GET", &path, env.unprivileged_token(), "");
    assert_eq!(status, 403, "unprivileged user must be denied: {body}");
    let (status, _) = https(env, "GET", &path, "not-a-token", "");
    assert_eq!(status, 401);
    let (status, body) = https(env, "GET", &path, env.admin_token(), "");
    assert_eq!(status, 200, "{body}");

    // An alpha group must be served (runtime-config api/all=true + AllAlpha).
    let (status, body) = https(env, "GET", "/apis/admissionregistration.k8s.io/v1alpha1", env.admin_token(), "");
    assert_eq!(status, 200, "{body}");

    // Pods can be created without a service-account controller.
    let pod = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}"#;
    let (status, body) = https(env, "POST", &format!("/api/v1/namespaces/{ns}/pods"), env.admin_token(), pod);
    assert_eq!(status, 201, "{body}");
}

#[test]
fn shared_env_has_a_ready_node_that_only_admin_may_exec_on() {
    let env = TestEnv::shared();
    let node = env.node_name().expect("the testenv starts its node by default");
    assert_eq!(node, "testenv-node");
    assert!(env.binary().is_file(), "{}", env.binary().display());

    let (status, body) = https(env, "GET", &format!("/api/v1/nodes/{node}"), env.admin_token(), "");
    assert_eq!(status, 200, "{body}");
    let compact: String = body.split_whitespace().collect();
    assert!(compact.contains(r#""type":"Ready","status":"True""#), "node not Ready: {body}");
    assert!(compact.contains(r#"{"type":"InternalIP","address":"127.0.0.1"}"#), "{body}");
    assert!(!compact.contains(r#""taints""#), "node keeps a taint: {body}");

    // RBAC denies the unprivileged user pods/exec before any pod lookup.
    let ns = env.create_namespace("node-exec");
    let exec = format!("/api/v1/namespaces/{ns}/pods/p/exec?command=true&stdout=true");
    let (status, body) = https(env, "POST", &exec, env.unprivileged_token(), "");
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("pods/exec"), "{body}");
}

#[test]
fn private_env_restarts_and_compacts() {
    let env = TestEnv::start();
    eprintln!("private testenv ready in {:?}", env.startup_time());
    let ns = env.create_namespace("restart");
    let cm = |name: &str| {
        format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}},"data":{{"k":"v"}}}}"#)
    };
    let path = format!("/api/v1/namespaces/{ns}/configmaps");
    let (status, body) = https(&env, "POST", &path, env.admin_token(), &cm("a"));
    assert_eq!(status, 201, "{body}");
    let rv1: i64 = field(&body, "resourceVersion").parse().unwrap();
    for i in 0..3 {
        let (status, _) = https(&env, "POST", &path, env.admin_token(), &cm(&format!("b{i}")));
        assert_eq!(status, 201);
    }

    let t = std::time::Instant::now();
    env.restart_apiserver();
    eprintln!("apiserver restarted in {:?}", t.elapsed());
    let (status, body) = https(&env, "GET", &format!("{path}/a"), env.admin_token(), "");
    assert_eq!(status, 200, "data must survive a restart: {body}");
    let (status, body) = https(&env, "POST", &path, env.admin_token(), &cm("c"));
    assert_eq!(status, 201, "{body}");
    let rv2: i64 = field(&body, "resourceVersion").parse().unwrap();
    assert!(rv2 > rv1, "resource versions continue across restarts: {rv1} -> {rv2}");

    let rev = env.compact();
    assert!(rev >= rv2, "compacted to {rev}, last write {rv2}");
    // Compaction alone doesn't purge the apiserver's watch cache; a restart
    // does, so the old resourceVersion must now be rejected with 410 Gone,
    // either as the HTTP status or as an ERROR event in the watch stream.
    env.restart_apiserver();
    let (status, body) =
        https(&env, "GET", &format!("{path}?watch=1&resourceVersion={rv1}&timeoutSeconds=2"), env.admin_token(), "");
    assert!(status == 410 || body.contains("\"code\":410"), "expected 410 Gone, got {status}: {body}");
}

#[test]
fn private_env_takes_start_flags() {
    let env =
        TestEnv::start_with_args(&["--runtime-config=api/all=true,coordination.k8s.io/v1alpha2=false", "--no-node"]);
    assert_eq!(env.node_name(), None, "--no-node");
    let (status, body) = https(&env, "GET", "/apis/coordination.k8s.io/v1alpha2", env.admin_token(), "");
    assert_eq!(status, 404, "the group/version turned off is not served: {body}");
    let (status, body) = https(&env, "GET", "/apis/coordination.k8s.io/v1beta1", env.admin_token(), "");
    assert_eq!(status, 200, "the rest of api/all=true is: {body}");
}
