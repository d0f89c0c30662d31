use std::path::Path;

use serde_json::json;

use super::*;
use crate::config::{Auth, Authenticator, Config, ExecEnvVar};
use crate::rest::tests::server::{Reply, TestServer};

const PLUGIN: &str = r#"
n=$(cat "$COUNTER" 2>/dev/null || echo 0)
n=$((n+1))
echo $n > "$COUNTER"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$INFO"
if [ -n "$FAIL" ]; then echo "plugin broke: $FAIL" >&2; exit 3; fi
printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"tok-%s"%s}}' "$API" "$n" "$EXTRA"
"#;

fn exec_config(dir: &Path, extra: &str, api: &str) -> ExecConfig {
    let script = dir.join("plugin.sh");
    std::fs::write(&script, PLUGIN).unwrap();
    let var = |name: &str, value: String| ExecEnvVar { name: name.into(), value: value.into() };
    ExecConfig {
        // Run through sh: executing a just-written file races with forks
        // of other test threads (ETXTBSY).
        command: "/bin/sh".into(),
        args: vec![script.display().to_string()],
        env: vec![
            var("COUNTER", dir.join("count").display().to_string()),
            var("INFO", dir.join("info").display().to_string()),
            var("EXTRA", extra.into()),
            var("API", api.into()),
        ],
        api_version: Some(api.into()),
        provide_cluster_info: true,
        // Whether the test runs in a terminal must not matter.
        interactive_mode: Some("Never".into()),
        ..Default::default()
    }
}

fn runs(dir: &Path) -> u32 {
    std::fs::read_to_string(dir.join("count")).map(|s| s.trim().parse().unwrap()).unwrap_or(0)
}

fn config_with(url: &str, exec: ExecConfig) -> Config {
    let mut c = Config::new(url.parse().unwrap());
    c.qps = 0.0;
    // Shows up in KUBERNETES_EXEC_INFO; plain-HTTP test servers never read it.
    c.root_ca_pem = url.starts_with("https").then(|| b"CA".to_vec());
    c.auth = Auth::Exec(Box::new(exec));
    c
}

#[tokio::test]
async fn token_is_cached_without_expiry() {
    let dir = tempfile::tempdir().unwrap();
    let c = config_with("https://k:6443", exec_config(dir.path(), "", V1));
    let a = Authenticator::new(&c).unwrap();
    assert_eq!(a.authorization().await.unwrap().unwrap(), "Bearer tok-1");
    assert_eq!(a.authorization().await.unwrap().unwrap(), "Bearer tok-1");
    assert_eq!(runs(dir.path()), 1);
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("info")).unwrap()).unwrap();
    assert_eq!(info["apiVersion"], V1);
    assert_eq!(info["spec"]["interactive"], false);
    assert_eq!(info["spec"]["cluster"]["server"], "https://k:6443");
    assert_eq!(info["spec"]["cluster"]["certificateAuthorityData"], "Q0E=");
}

#[tokio::test]
async fn expired_credentials_are_refreshed() {
    let dir = tempfile::tempdir().unwrap();
    let exec = exec_config(dir.path(), r#","expirationTimestamp":"2001-01-01T00:00:00Z""#, V1BETA1);
    let a = Authenticator::new(&config_with("https://k", exec)).unwrap();
    assert_eq!(a.authorization().await.unwrap().unwrap(), "Bearer tok-1");
    assert_eq!(a.authorization().await.unwrap().unwrap(), "Bearer tok-2");
    let dir2 = tempfile::tempdir().unwrap();
    let exec = exec_config(dir2.path(), r#","expirationTimestamp":"2999-01-01T00:00:00Z""#, V1);
    let a = Authenticator::new(&config_with("https://k", exec)).unwrap();
    a.authorization().await.unwrap();
    a.authorization().await.unwrap();
    assert_eq!(runs(dir2.path()), 1);
}

#[tokio::test]
async fn unauthorized_answer_refreshes_once_and_retries() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(|r, _| {
        if r.header("authorization") == Some("Bearer tok-1") {
            Reply::json(401, json!({"kind":"Status","apiVersion":"v1","reason":"Unauthorized","code":401}))
        } else {
            Reply::json(200, json!({"who": r.header("authorization")}))
        }
    })
    .await;
    let client = crate::rest::Client::new(config_with(&server.url, exec_config(dir.path(), "", V1))).unwrap();
    let v: serde_json::Value = client.get("/x").json().await.unwrap();
    assert_eq!(v["who"], "Bearer tok-2");
    assert_eq!(runs(dir.path()), 2);
    let _: serde_json::Value = client.get("/x").json().await.unwrap();
    assert_eq!(runs(dir.path()), 2, "new token cached");
    assert_eq!(server.requests().len(), 3);

    // A server that always says 401: one refresh, then the error.
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(|_, _| Reply::text(401, "no")).await;
    let client = crate::rest::Client::new(config_with(&server.url, exec_config(dir.path(), "", V1))).unwrap();
    let err = client.get("/x").bytes().await.unwrap_err();
    assert!(err.is_unauthorized(), "{err}");
    assert_eq!(runs(dir.path()), 2);
}

#[tokio::test]
async fn plugin_failures_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut exec = exec_config(dir.path(), "", V1);
    exec.env.push(ExecEnvVar { name: "FAIL".into(), value: "badly".into() });
    let err = Authenticator::new(&config_with("https://k", exec)).unwrap().authorization().await.unwrap_err();
    // stderr goes to the terminal, not into the error a controller logs.
    let text = crate::ErrorChain(&err).to_string();
    assert!(text.contains("exit status: 3"), "{text}");
    assert!(!text.contains("plugin broke"), "{text}");

    let exec = exec_config(dir.path(), "", "client.authentication.k8s.io/v1alpha1");
    let err = Authenticator::new(&config_with("https://k", exec)).unwrap().authorization().await.unwrap_err();
    assert!(err.to_string().contains("apiVersion"), "{err}");

    let exec = ExecConfig {
        command: dir.path().join("does-not-exist").display().to_string(),
        install_hint: Some("install it from example.com".into()),
        ..Default::default()
    };
    let err = Authenticator::new(&config_with("https://k", exec)).unwrap().authorization().await.unwrap_err();
    assert!(err.to_string().contains("install it from example.com"), "{err}");
}

/// An authenticator for `mode` in a process whose standard input is a
/// terminal or not, as `terminal` says.
fn with_terminal(dir: &Path, mode: &str, terminal: bool) -> ExecAuth {
    let mut exec = exec_config(dir, "", V1);
    exec.interactive_mode = Some(mode.into()).filter(|m: &String| !m.is_empty());
    let mut auth = ExecAuth::new(exec, &config_with("https://k", ExecConfig::default()));
    auth.stdin_is_terminal = if terminal { || true } else { || false };
    auth
}

fn exec_info(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("info")).unwrap()).unwrap()
}

#[tokio::test]
async fn interactive_mode_follows_whether_stdin_is_a_terminal() {
    // (mode, terminal, interactive): client-go's isInteractive.
    let cases = [
        ("Never", false, false),
        ("Never", true, false),
        ("IfAvailable", false, false),
        ("IfAvailable", true, true),
        ("", false, false),
        ("", true, true),
        ("Always", true, true),
    ];
    for (mode, terminal, interactive) in cases {
        let dir = tempfile::tempdir().unwrap();
        let auth = with_terminal(dir.path(), mode, terminal);
        assert_eq!(auth.authorization().await.unwrap().unwrap(), "Bearer tok-1", "{mode} {terminal}");
        let info = exec_info(dir.path());
        assert_eq!(info["spec"]["interactive"], interactive, "{mode:?}, terminal: {terminal}");
        assert_eq!(info["spec"]["cluster"]["server"], "https://k", "cluster info is still given");
    }
}

#[tokio::test]
async fn always_without_a_terminal_fails_naming_the_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let auth = with_terminal(dir.path(), "Always", false);
    let err = auth.authorization().await.unwrap_err();
    assert!(matches!(&err, Error::Exec { command, .. } if command == "/bin/sh"), "{err:?}");
    assert!(err.to_string().contains("not a terminal"), "{err}");
    assert_eq!(runs(dir.path()), 0, "the plugin is not run");

    let auth = with_terminal(dir.path(), "Sometimes", true);
    assert!(auth.authorization().await.unwrap_err().to_string().contains("\"Sometimes\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interactive_plugins_run_one_at_a_time() {
    // Each run logs its start and end around a pause; interleaved runs
    // would log two starts in a row.
    let log = tempfile::NamedTempFile::new().unwrap();
    let plugin = format!(
        r#"echo start >> "{log}"; sleep 0.2; echo end >> "{log}"
printf '{{"apiVersion":"{V1}","kind":"ExecCredential","status":{{"token":"t"}}}}'"#,
        log = log.path().display()
    );
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let auths: Vec<ExecAuth> = dirs
        .iter()
        .map(|dir| {
            let mut auth = with_terminal(dir.path(), "IfAvailable", true);
            auth.config.args = vec!["-c".into(), plugin.clone()];
            auth
        })
        .collect();
    let runs = auths.iter().map(|a| a.authorization());
    for result in futures_util::future::join_all(runs).await {
        result.unwrap();
    }
    let lines = std::fs::read_to_string(log.path()).unwrap();
    assert_eq!(lines, "start\nend\n".repeat(3));
}

/// A plugin that counts its runs, writes its pid, then hangs (`exec`, so
/// the pid is the hanging process).
const HANGING_PLUGIN: &str = r#"
n=$(cat "$COUNTER" 2>/dev/null || echo 0)
echo $((n+1)) > "$COUNTER"
echo $$ > "$PIDFILE"
exec sleep 60
"#;

fn hanging_plugin(dir: &Path) -> ExecConfig {
    std::fs::write(dir.join("hang.sh"), HANGING_PLUGIN).unwrap();
    let var = |name: &str, value: String| ExecEnvVar { name: name.into(), value: value.into() };
    ExecConfig {
        command: "/bin/sh".into(),
        args: vec![dir.join("hang.sh").display().to_string(), "--client-secret=arg-secret".into()],
        env: vec![
            var("COUNTER", dir.join("count").display().to_string()),
            var("PIDFILE", dir.join("pid").display().to_string()),
            var("TOKEN", "env-secret".into()),
        ],
        api_version: Some(V1.into()),
        ..Default::default()
    }
}

/// Whether process `pid` still exists and has not exited (a zombie has).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
}

#[test]
fn exec_timeout_defaults_to_five_minutes() {
    let c = Config::new("https://k".parse().unwrap());
    assert_eq!(c.exec_timeout, std::time::Duration::from_secs(300));
    assert_eq!(crate::config::DEFAULT_EXEC_TIMEOUT, c.exec_timeout);
}

#[tokio::test]
async fn hung_plugin_is_killed_after_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config_with("https://k", hanging_plugin(dir.path()));
    // Long enough for sh to start and write its pid on a loaded machine;
    // far below the plugin's 60 s.
    c.exec_timeout = std::time::Duration::from_secs(2);
    let a = Authenticator::new(&c).unwrap();
    let started = std::time::Instant::now();
    let err = a.authorization().await.unwrap_err();
    let waited = started.elapsed();
    assert!(matches!(&err, Error::ExecTimeout { command, .. } if command == "/bin/sh"), "{err:?}");
    let text = format!("{} {err:?}", crate::ErrorChain(&err));
    assert!(text.contains("\"/bin/sh\"") && text.contains("2s"), "{text}");
    assert!(!text.contains("secret") && !text.contains("hang.sh"), "arguments or environment shown: {text}");
    assert!(waited < std::time::Duration::from_secs(30), "waited {waited:?}");
    let pid = std::fs::read_to_string(dir.path().join("pid")).unwrap();
    assert!(!alive(pid.trim()), "plugin process {} still running", pid.trim());
}

#[tokio::test]
async fn requests_queued_behind_a_hung_plugin_share_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config_with("https://k", hanging_plugin(dir.path()));
    c.exec_timeout = std::time::Duration::from_secs(2);
    let a = Authenticator::new(&c).unwrap();
    let (first, second, third) = tokio::join!(a.authorization(), a.authorization(), a.authorization());
    for result in [first, second, third] {
        assert!(matches!(result, Err(Error::ExecTimeout { .. })), "{result:?}");
    }
    assert_eq!(runs(dir.path()), 1, "one run for the three waiting requests");
    // A request after the failure tries again.
    assert!(matches!(a.authorization().await, Err(Error::ExecTimeout { .. })));
    assert_eq!(runs(dir.path()), 2);
}
