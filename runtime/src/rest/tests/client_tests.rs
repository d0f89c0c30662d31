use std::time::{Duration, Instant};

use serde_json::json;

use super::server::{Reply, TestServer};
use crate::config::{Auth, Config, Impersonate};
use crate::rest::{Client, Error};

fn status(code: u16, reason: &str) -> serde_json::Value {
    json!({"kind":"Status","apiVersion":"v1","status":"Failure","message":"m","reason":reason,"code":code})
}

#[tokio::test]
async fn retries_429_and_5xx_with_retry_after() {
    let server = TestServer::start(|_, i| match i {
        0 => Reply::json(429, status(429, "TooManyRequests")).with_header("Retry-After", "0"),
        1 => Reply::text(503, "busy").with_header("Retry-After", "0"),
        _ => Reply::json(200, json!({"ok": true})),
    })
    .await;
    let v: serde_json::Value = server.client().get("/x").json().await.unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn retry_after_is_waited_for() {
    let server = TestServer::start(|_, i| match i {
        0 => Reply::text(429, "").with_header("Retry-After", "1"),
        _ => Reply::json(200, json!({})),
    })
    .await;
    let start = Instant::now();
    server.client().get("/x").bytes().await.unwrap();
    assert!(start.elapsed() >= Duration::from_millis(950), "{:?}", start.elapsed());
}

#[tokio::test]
async fn gives_up_after_max_retries() {
    let server =
        TestServer::start(|_, _| Reply::json(429, status(429, "TooManyRequests")).with_header("Retry-After", "0"))
            .await;
    let err = server.client().post("/x").json_body(&json!({})).bytes().await.unwrap_err();
    assert!(err.is_too_many_requests(), "{err}");
    assert_eq!(server.requests().len(), 1 + crate::rest::MAX_RETRIES as usize);
}

#[tokio::test]
async fn no_retry_without_retry_after() {
    let server = TestServer::start(|_, _| Reply::json(500, status(500, "InternalError"))).await;
    let err = server.client().get("/x").bytes().await.unwrap_err();
    assert_eq!(err.code(), Some(500));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn get_is_retried_after_connection_reset_but_post_is_not() {
    let server = TestServer::start(|_, i| if i == 0 { Reply::Drop } else { Reply::json(200, json!({"n": i})) }).await;
    let v: serde_json::Value = server.client().get("/x").json().await.unwrap();
    assert_eq!(v["n"], 1);

    let server = TestServer::start(|_, i| if i == 0 { Reply::Drop } else { Reply::json(200, json!({})) }).await;
    let err = server.client().post("/x").bytes().await.unwrap_err();
    assert!(matches!(err, Error::Transport { .. }), "{err}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn status_bodies_and_synthesized_statuses() {
    let server = TestServer::start(|r, _| {
        if r.path.starts_with("/typed") {
            Reply::json(404, status(404, "NotFound"))
        } else if r.path.starts_with("/conflict") {
            Reply::json(409, json!({"kind":"Status","apiVersion":"v1","reason":"Conflict"}))
        } else {
            Reply::text(404, "404 page not found")
        }
    })
    .await;
    let c = server.client();
    let e = c.get("/typed").bytes().await.unwrap_err();
    assert!(e.is_not_found() && e.status().unwrap().message == "m");
    let e = c.get("/plain").bytes().await.unwrap_err();
    assert!(e.is_not_found());
    let causes = &e.status().unwrap().details.as_ref().unwrap().causes;
    assert_eq!(causes[0].message, "404 page not found");
    let e = c.get("/conflict").bytes().await.unwrap_err();
    assert!(e.is_conflict() && e.code() == Some(409), "code filled from HTTP when absent");
}

#[tokio::test]
async fn headers_auth_impersonation_and_warnings() {
    let server =
        TestServer::start(|_, _| Reply::json(200, json!({})).with_header("Warning", "299 - \"deprecated\"")).await;
    let mut config = Config::new(server.url.parse().unwrap());
    config.qps = 0.0;
    config.auth = Auth::Bearer("s3cret".into());
    config.impersonate = Impersonate {
        user: Some("jane".into()),
        uid: Some("42".into()),
        groups: vec!["g1".into(), "g2".into()],
        extra: [("scopes/x".to_owned(), vec!["a".to_owned(), "b".to_owned()])].into_iter().collect(),
    };
    let client = Client::new(config).unwrap();
    client
        .get("/api/v1")
        .namespace("ns")
        .resource("pods")
        .name("a b")
        .subresource("log")
        .param("follow", "true")
        .bytes()
        .await
        .unwrap();
    let r = &server.requests()[0];
    assert_eq!(r.path, "/api/v1/namespaces/ns/pods/a%20b/log?follow=true");
    assert_eq!(r.header("authorization"), Some("Bearer s3cret"));
    assert_eq!(r.header("impersonate-user"), Some("jane"));
    assert_eq!(r.header("impersonate-uid"), Some("42"));
    assert_eq!(r.headers_named("impersonate-group"), vec!["g1", "g2"]);
    assert_eq!(r.headers_named("impersonate-extra-scopes%2fx"), vec!["a", "b"]);
    // The program's name first, as client-go's default: the apiserver takes
    // it as the field manager of writes.
    let program = std::env::current_exe().unwrap().file_name().unwrap().to_string_lossy().into_owned();
    let agent = r.header("user-agent").unwrap();
    assert!(agent.starts_with(&format!("{program}/v{} (", env!("CARGO_PKG_VERSION"))), "{agent}");
    assert!(agent.ends_with(") k8s-client-rust"), "{agent}");
    assert_eq!(r.header("accept"), Some("application/json"));
    assert!(!format!("{client:?}").contains("s3cret"));
}

#[tokio::test]
async fn per_request_timeout() {
    let server = TestServer::start(|_, _| Reply::Hang).await;
    let err = server.client().get("/slow").timeout(Duration::from_millis(200)).bytes().await.unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err}");
    assert!(server.requests()[0].path.contains("timeout=1s"));
}

#[tokio::test]
async fn rate_limiter_spaces_requests() {
    let server = TestServer::start(|_, _| Reply::json(200, json!({}))).await;
    let mut config = Config::new(server.url.parse().unwrap());
    config.qps = 20.0;
    config.burst = 1;
    let client = Client::new(config).unwrap();
    let start = Instant::now();
    for _ in 0..5 {
        client.get("/x").bytes().await.unwrap();
    }
    assert!(start.elapsed() >= Duration::from_millis(190), "{:?}", start.elapsed());
}

/// client-go's `Watch` does not wait for the rate limiter; everything
/// else does.
#[tokio::test]
async fn watches_skip_the_rate_limiter() {
    let server = TestServer::start(|_, _| Reply::json(200, json!({}))).await;
    let mut config = Config::new(server.url.parse().unwrap());
    config.qps = 5.0;
    config.burst = 1;
    let client = Client::new(config).unwrap();
    let start = Instant::now();
    for _ in 0..4 {
        client.get("/x").param("watch", "true").bytes().await.unwrap();
    }
    let watches = start.elapsed();
    let start = Instant::now();
    for _ in 0..4 {
        client.get("/x").bytes().await.unwrap();
    }
    let gets = start.elapsed();
    assert!(watches < Duration::from_millis(300), "4 watches took {watches:?}");
    assert!(gets >= Duration::from_millis(550), "4 GETs at 5 QPS took only {gets:?}");
}

/// A refused connection (nothing listens) is told apart from other
/// transport failures: the reflector retries such a watch-list as one.
#[tokio::test]
async fn a_refused_connection_is_told_apart() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let mut config = Config::new(format!("http://127.0.0.1:{port}").parse().unwrap());
    config.proxy = crate::config::Proxy::None;
    let err = Client::new(config).unwrap().post("/x").bytes().await.unwrap_err();
    assert!(err.is_connection_refused(), "{}", crate::ErrorChain(&err));
    assert!(!err.is_probable_eof());

    let server = TestServer::start(|_, _| Reply::Drop).await;
    let err = server.client().post("/x").bytes().await.unwrap_err();
    assert!(matches!(err, Error::Transport { .. }) && !err.is_connection_refused(), "{err}");
}

/// client-go's request builder refuses these before sending: `..` would be
/// normalised into another path, `/` and `%` would address another object.
#[tokio::test]
async fn unsafe_path_segments_are_rejected_before_sending() {
    let server = TestServer::start(|_, _| Reply::json(200, json!({}))).await;
    let client = server.client();
    type Build = fn(crate::rest::Request) -> crate::rest::Request;
    let cases: [(&str, Build); 10] = [
        ("may not be empty", |r| r.name("")),
        ("may not be '.'", |r| r.name(".")),
        ("may not be '..'", |r| r.name("..")),
        ("may not contain '/'", |r| r.name("a/b")),
        ("may not contain '%'", |r| r.name("a%2Fb")),
        ("may not be '.'", |r| r.namespace(".")),
        ("may not be '..'", |r| r.namespace("..")),
        ("may not contain '/'", |r| r.namespace("kube-system/secrets")),
        ("may not contain '/'", |r| r.name("x").subresource("status/..")),
        ("may not be '..'", |r| r.resource("..")),
    ];
    for (want, build) in cases {
        let err = build(client.get("/api/v1").resource("pods")).bytes().await.unwrap_err();
        assert!(matches!(err, Error::InvalidRequest { .. }), "{err}");
        assert!(err.to_string().contains(want), "{err} should say {want}");
    }
    assert!(server.requests().is_empty(), "nothing was sent");
    // Names that merely contain dots are fine; an empty namespace means all.
    client.get("/api/v1").namespace("").resource("pods").name("a..b").bytes().await.unwrap();
    assert_eq!(server.requests()[0].path, "/api/v1/pods/a..b");
}

/// A server that accepts TCP but never answers the TLS handshake must not
/// hang the request: client-go bounds the handshake at 10 s.
#[tokio::test(start_paused = true)]
async fn tls_handshake_is_bounded() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut sockets = Vec::new();
        while let Ok((sock, _)) = listener.accept().await {
            sockets.push(sock);
        }
    });
    let mut config = Config::new(url.parse().unwrap());
    config.qps = 0.0;
    config.insecure_skip_tls_verify = true;
    config.proxy = crate::config::Proxy::None;
    config.deadline = None;
    let start = tokio::time::Instant::now();
    let err = Client::new(config).unwrap().get("/api").bytes().await.unwrap_err();
    let chain = std::iter::successors(Some(&err as &dyn std::error::Error), |e| e.source())
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(": ");
    assert!(chain.contains("TLS handshake timed out after 10s"), "{chain}");
    assert_eq!(start.elapsed().as_secs(), crate::rest::TLS_HANDSHAKE_TIMEOUT.as_secs());
    held.abort();
}

/// Requests other than watches get a default deadline that the
/// configuration can change; a server that never answers ends in
/// Error::Timeout instead of a hang.
#[tokio::test(start_paused = true)]
async fn requests_have_a_default_deadline() {
    let server = TestServer::start(|_, _| Reply::Hang).await;
    let err = server.client().get("/x").bytes().await.unwrap_err();
    assert!(matches!(err, Error::Timeout(d) if d == crate::config::DEFAULT_DEADLINE), "{err}");
    let mut config = Config::new(server.url.parse().unwrap());
    config.qps = 0.0;
    config.deadline = Some(Duration::from_secs(5));
    let start = tokio::time::Instant::now();
    let err = Client::new(config).unwrap().get("/x").json::<serde_json::Value>().await.unwrap_err();
    assert!(matches!(err, Error::Timeout(d) if d == Duration::from_secs(5)), "{err}");
    assert_eq!(start.elapsed().as_secs(), 5);
    // The deadline is the client's own: it is not sent as `timeout`.
    assert!(server.requests().iter().all(|r| !r.path.contains("timeout")), "{:?}", server.requests());
}

/// A proxy variable that cannot be parsed is ignored as Go ignores it, and
/// said once, when the client is built, not on every request; the log line
/// names the variable without its password.
#[tokio::test]
async fn unparsable_environment_proxy_is_warned_about_once() {
    let server = TestServer::start(|_, _| Reply::json(200, json!({}))).await;
    let logs = crate::testing::LogCapture::start();
    let mut config = Config::new(server.url.parse().unwrap());
    config.qps = 0.0;
    config.proxy = crate::config::Proxy::Environment(crate::config::ProxyEnv {
        http_proxy: "http://user:s3cr3t@proxy/%zz".into(),
        ..Default::default()
    });
    let client = Client::new(config).unwrap();
    for _ in 0..3 {
        client.get("/x").bytes().await.unwrap();
    }
    let text = logs.text();
    let warnings: Vec<_> = text.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(warnings.len(), 1, "{text}");
    assert!(warnings[0].contains("HTTP_PROXY") && warnings[0].contains("user:xxxxx@proxy"), "{text}");
    assert!(!text.contains("s3cr3t"), "{text}");
}

#[tokio::test]
async fn a_refused_connection_says_so_in_the_message() {
    // A port that was just free: nothing listens on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut config = Config::new(format!("http://127.0.0.1:{port}").parse().unwrap());
    config.qps = 0.0;
    let err = Client::new(config).unwrap().get("/api").bytes().await.unwrap_err();
    assert!(matches!(err, Error::Transport { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.starts_with(&format!("GET http://127.0.0.1:{port}/api: ")), "{message}");
    assert!(message.to_lowercase().contains("connection refused"), "{message}");
    // Printed with its causes, the root cause is not repeated.
    let chain = crate::ErrorChain(&err).to_string();
    assert_eq!(chain.matches("onnection refused").count(), 1, "{chain}");
}

/// Every warning of every header reaches the configured handler, parsed.
#[tokio::test]
async fn warnings_go_to_the_configured_handler() {
    use std::sync::Arc;

    use crate::config::WarningHandler;

    #[derive(Default)]
    struct Collect(parking_lot::Mutex<Vec<(u16, String, String)>>);
    impl WarningHandler for Collect {
        fn handle_warning(&self, code: u16, agent: &str, text: &str) {
            self.0.lock().push((code, agent.to_owned(), text.to_owned()));
        }
    }

    let server = TestServer::start(|_, _| {
        Reply::json(200, json!({}))
            .with_header("Warning", r#"299 - "v1beta1 Thing is deprecated", 299 - "unknown field \"x\"""#)
            .with_header("Warning", r#"299 webhook "from a webhook""#)
    })
    .await;
    let collect = Arc::new(Collect::default());
    let mut config = Config::new(server.url.parse().unwrap());
    config.qps = 0.0;
    config.warning_handler = collect.clone();
    let client = Client::new(config).unwrap();
    client.get("/x").bytes().await.unwrap();
    client.get("/x").bytes().await.unwrap();
    let seen = collect.0.lock().clone();
    let one = [
        (299, "-".to_owned(), "v1beta1 Thing is deprecated".to_owned()),
        (299, "-".to_owned(), r#"unknown field "x""#.to_owned()),
        (299, "webhook".to_owned(), "from a webhook".to_owned()),
    ];
    assert_eq!(seen, [one.clone(), one].concat());
}

fn gzipped(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// As client-go: responses are asked for gzip-compressed and decoded,
/// unless the kubeconfig's `disable-compression` says not to; the body's
/// wire bytes are the compressed ones.
#[tokio::test]
async fn responses_are_asked_for_compressed_and_decoded() {
    let items: Vec<_> = (0..2000).map(|i| json!({"metadata": {"name": format!("item-{i}")}})).collect();
    let list = json!({"kind": "List", "apiVersion": "v1", "metadata": {}, "items": items});
    let plain = list.to_string().into_bytes();
    let compressed = gzipped(&plain);
    let server = {
        let compressed = compressed.clone();
        TestServer::start(move |req, _| {
            let mut reply = Reply::json(200, json!(null));
            if req.header("Accept-Encoding") == Some("gzip")
                && let Reply::Respond { body, .. } = &mut reply
            {
                *body = compressed.clone();
                return reply.with_header("Content-Encoding", "gzip");
            }
            reply
        })
    };
    let server = server.await;
    let response = server.client().get("/x").send().await.unwrap();
    assert_eq!(response.headers().get(http::header::CONTENT_ENCODING), None, "the decoded body's headers");
    let mut body = response.into_body();
    let mut decoded = Vec::new();
    while let Some(frame) = http_body_util::BodyExt::frame(&mut body).await {
        decoded.extend_from_slice(frame.unwrap().data_ref().unwrap());
    }
    assert_eq!(decoded, plain);
    assert_eq!(body.wire_bytes(), compressed.len() as u64);
    assert!(compressed.len() * 10 < plain.len(), "{} of {}", compressed.len(), plain.len());
    let v: serde_json::Value = server.client().get("/x").json().await.unwrap();
    assert_eq!(v["items"][1999]["metadata"]["name"], "item-1999");

    let mut config = Config::new(server.url.parse().unwrap());
    config.qps = 0.0;
    config.disable_compression = true;
    let v: serde_json::Value = Client::new(config).unwrap().get("/x").json().await.unwrap();
    assert_eq!(v, serde_json::Value::Null, "no compression asked for, none given");
    assert_eq!(server.requests().last().unwrap().header("Accept-Encoding"), None);
}

/// A watch compressed as it streams (the apiserver compresses watch-lists)
/// yields its events as their bytes come, and a corrupt body is an error.
#[tokio::test]
async fn compressed_streams_decode_as_they_come_and_corruption_is_an_error() {
    use futures_util::StreamExt;
    let events = b"{\"type\":\"ADDED\",\"object\":{\"a\":1}}\n{\"type\":\"ADDED\",\"object\":{\"a\":2}}\n".repeat(50);
    let compressed = gzipped(&events);
    let chunks: Vec<Vec<u8>> = compressed.chunks(13).map(<[u8]>::to_vec).collect();
    let mut corrupt = compressed.clone();
    let at = corrupt.len() / 2;
    corrupt[at] ^= 0x55;
    let server = TestServer::start(move |_, i| {
        let chunks = if i == 0 { chunks.clone() } else { vec![corrupt.clone()] };
        Reply::EncodedChunks { content_encoding: "gzip".into(), chunks }
    })
    .await;
    let mut stream = server.client().get("/watch").watch::<serde_json::Value>().await.unwrap();
    let mut seen = 0;
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            crate::rest::WatchEvent::Added(v) => assert_eq!(v["a"], 1 + seen % 2),
            other => panic!("{other:?}"),
        }
        seen += 1;
    }
    assert_eq!(seen, 100);
    let err = server.client().get("/x").bytes().await.unwrap_err();
    assert!(matches!(err, Error::Decompress(_)), "{err:?}");
}
