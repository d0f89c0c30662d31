//! Test support: a real kube-apiserver (plus etcd) on loopback.
//!
//! [`TestEnv::shared`] starts one instance per test binary, or reuses a running
//! one (e.g. from `make apiserver`) when `K8S_TESTENV_KUBECONFIG` names its
//! kubeconfig. The instance is run by the Go binary built with
//! `make testenv-build`; see `testenv/README.md` for the layout and the control
//! API this crate talks to.
//!
//! No dependencies: the control endpoint is plain HTTP on 127.0.0.1, spoken
//! here over a `TcpStream`.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Names the kubeconfig of an already running testenv to reuse instead of
/// starting one (its directory must be the testenv state dir).
pub const KUBECONFIG_ENV: &str = "K8S_TESTENV_KUBECONFIG";
/// Overrides the path of the `kube-testenv` binary.
pub const BIN_ENV: &str = "K8S_TESTENV_BIN";
/// Overrides where [`TestEnv::kubectl`] finds kubectl.
pub const KUBECTL_ENV: &str = "K8S_KUBECTL_BIN";
/// How a child's log says that the port it was given had been taken.
const PORT_TAKEN: &str = "address already in use";

/// A running testenv: connection details plus control operations.
pub struct TestEnv {
    state_dir: PathBuf,
    info: HashMap<String, String>,
    ca_pem: String,
    startup: Duration,
    /// Present when this process started the supervisor. Keeping the stdin
    /// pipe open keeps the supervisor alive; when it closes (drop, or this
    /// process exiting for any reason) the supervisor stops its children.
    owned: Mutex<Option<(Child, ChildStdin)>>,
}

impl TestEnv {
    /// The instance shared by all tests of this test binary. Started on first
    /// use; stopped when the test binary exits.
    ///
    /// Tests on the shared instance must not restart or compact it (other
    /// tests run concurrently); use [`TestEnv::start`] for that.
    pub fn shared() -> &'static TestEnv {
        static SHARED: OnceLock<TestEnv> = OnceLock::new();
        SHARED.get_or_init(|| match std::env::var_os(KUBECONFIG_ENV) {
            Some(kc) if !kc.is_empty() => TestEnv::attach(Path::new(&kc)),
            _ => TestEnv::start(),
        })
    }

    /// Starts a private instance in a fresh temporary state dir; it is stopped
    /// (and the state dir removed) when the value is dropped.
    pub fn start() -> TestEnv {
        TestEnv::start_with_args::<&str>(&[])
    }

    /// [`start`](TestEnv::start) with extra flags of `kube-testenv start`
    /// (listed in `testenv/README.md`), for an instance configured unlike
    /// the shared one: e.g. `--runtime-config=api/all=true,<group>/<version>=false`
    /// to leave a group/version unserved, `--apiserver-arg=--flag=value`,
    /// `--no-node`. `--state-dir`, `--exit-on-stdin-eof` and `--cleanup` are
    /// this crate's own (a `--state-dir` given here is overridden);
    /// `--detach` would return before the instance is ready and must not be
    /// given.
    pub fn start_with_args<S: AsRef<OsStr>>(args: &[S]) -> TestEnv {
        // The supervisor picks free loopback ports by binding and releasing
        // them; another process (a test starting its own instance at the
        // same moment) can take one before etcd or the apiserver binds it.
        // Such a start is tried again with new ports; any other failure, or
        // a third lost port, fails the test.
        const ATTEMPTS: u32 = 3;
        for attempt in 1..=ATTEMPTS {
            match TestEnv::try_start(args) {
                Ok(env) => return env,
                Err(failure) if failure.contains(PORT_TAKEN) && attempt < ATTEMPTS => {
                    eprintln!("testenv: a port was taken while starting (attempt {attempt}); starting again");
                }
                Err(failure) => panic!("{failure}"),
            }
        }
        unreachable!("the last attempt returns or panics")
    }

    /// One start of [`start_with_args`](TestEnv::start_with_args): the
    /// instance, or why the supervisor exited before it was ready.
    fn try_start<S: AsRef<OsStr>>(args: &[S]) -> Result<TestEnv, String> {
        let bin = binary_path();
        let state_dir = unique_temp_dir();
        fs::create_dir_all(&state_dir).unwrap_or_else(|e| panic!("testenv: creating {}: {e}", state_dir.display()));
        let sup_log = state_dir.join("supervisor.log");
        let log = fs::File::create(&sup_log).unwrap_or_else(|e| panic!("testenv: creating {}: {e}", sup_log.display()));
        let t0 = Instant::now();
        let mut child = Command::new(&bin)
            .arg("start")
            // Go's flag package keeps the last value of a repeated flag, so
            // the caller's flags go first and the state dir stays ours.
            .args(args)
            .arg("--exit-on-stdin-eof")
            .arg("--cleanup")
            .arg("--state-dir")
            .arg(&state_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap_or_else(|e| panic!("testenv: spawning {}: {e}", bin.display()));
        let stdin = child.stdin.take().expect("stdin is piped");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        // The supervisor prints exactly one "ready" line, or exits with the
        // reason in supervisor.log. Its own --ready-timeout bounds the wait.
        let mut line = String::new();
        loop {
            line.clear();
            match stdout.read_line(&mut line) {
                Ok(0) | Err(_) => {
                    let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
                    return Err(format!(
                        "testenv: kube-testenv failed to start ({status}).\n{}\nlogs: {}/{{supervisor,apiserver,etcd,node}}.log",
                        fs::read_to_string(&sup_log).unwrap_or_default().trim_end(),
                        state_dir.display()
                    ));
                }
                Ok(_) if line.starts_with("kube-testenv: ready") => break,
                Ok(_) => {}
            }
        }
        // Nothing else is expected on stdout, but never let a full pipe block it.
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut stdout, &mut std::io::sink());
        });
        let mut env = TestEnv::from_state_dir(&state_dir);
        env.startup = t0.elapsed();
        env.owned = Mutex::new(Some((child, stdin)));
        Ok(env)
    }

    /// Uses the running instance whose kubeconfig is `kubeconfig`.
    pub fn attach(kubeconfig: &Path) -> TestEnv {
        let dir = kubeconfig.parent().unwrap_or(Path::new("."));
        let env = TestEnv::from_state_dir(dir);
        if let Err(e) = env.control("GET", "/healthz") {
            panic!(
                "testenv: {KUBECONFIG_ENV}={} names a testenv that is not running ({e}); run `make apiserver` or unset {KUBECONFIG_ENV}",
                kubeconfig.display()
            );
        }
        env
    }

    fn from_state_dir(dir: &Path) -> TestEnv {
        let env_file = dir.join("testenv.env");
        let text = fs::read_to_string(&env_file).unwrap_or_else(|e| {
            panic!(
                "testenv: reading {}: {e} (is a testenv running there? `make apiserver` starts one)",
                env_file.display()
            )
        });
        let info: HashMap<String, String> =
            text.lines().filter_map(|l| l.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let ca_file = info.get("ca_file").cloned().unwrap_or_default();
        let ca_pem = fs::read_to_string(&ca_file).unwrap_or_else(|e| panic!("testenv: reading CA {ca_file}: {e}"));
        TestEnv { state_dir: dir.to_path_buf(), info, ca_pem, startup: Duration::ZERO, owned: Mutex::new(None) }
    }

    fn field(&self, key: &str) -> &str {
        self.info
            .get(key)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("testenv: {key} missing from {}/testenv.env", self.state_dir.display()))
    }

    /// Kubeconfig with contexts `admin` (current) and `unprivileged`.
    pub fn kubeconfig_path(&self) -> PathBuf {
        PathBuf::from(self.field("kubeconfig"))
    }
    /// `https://127.0.0.1:<port>`.
    pub fn server_url(&self) -> &str {
        self.field("server")
    }
    /// PEM of the CA that signed the serving certificate.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }
    /// The same CA as a file in the state dir's `pki/`, for clients that
    /// take a path (a kubeconfig's `certificate-authority`, `--cacert`).
    pub fn ca_file(&self) -> PathBuf {
        PathBuf::from(self.field("ca_file"))
    }
    /// Bearer token of `admin` (group `system:masters`).
    pub fn admin_token(&self) -> &str {
        self.field("admin_token")
    }
    /// Bearer token of a user with no RBAC bindings.
    pub fn unprivileged_token(&self) -> &str {
        self.field("unprivileged_token")
    }
    /// Name of the user that [`TestEnv::unprivileged_token`] authenticates
    /// (only in `system:authenticated`): what RBAC subjects and 403 messages
    /// name.
    pub fn unprivileged_user(&self) -> &str {
        self.field("unprivileged_user")
    }
    /// The gitVersion the apiserver reports, e.g. `v1.37.2`.
    pub fn version(&self) -> &str {
        self.field("version")
    }
    /// Directory of this instance's kubeconfig, PKI and logs (layout in
    /// `testenv/README.md`). An instance this process started removes it when
    /// it stops cleanly; after a crash it stays for the logs.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }
    /// The kube-apiserver's log in the state dir, the first thing to read
    /// when a test sees the apiserver misbehave.
    pub fn apiserver_log(&self) -> PathBuf {
        self.state_dir.join("apiserver.log")
    }
    /// Name of the fake node (`testenv-node`) that runs the containers of
    /// pods bound to it as local processes and serves exec, attach,
    /// port-forward and logs through the apiserver; `None` when the testenv
    /// was started with `--no-node`.
    pub fn node_name(&self) -> Option<&str> {
        self.info.get("node_name").map(String::as_str)
    }
    /// The fake node's log in the state dir (`None` without a node).
    pub fn node_log(&self) -> Option<PathBuf> {
        self.info.get("node_log").map(PathBuf::from)
    }
    /// The `kube-testenv` binary. Pods on the node run local commands, and
    /// this binary is always there: `kube-testenv serve-http --port N --body
    /// TEXT` answers HTTP GETs on `127.0.0.1:N`, a target for port-forwarding.
    pub fn binary(&self) -> PathBuf {
        binary_path()
    }
    /// kubectl of the same Kubernetes release: `$K8S_KUBECTL_BIN`, or
    /// `kubectl` beside the kube-testenv binary (`make testenv-build` builds
    /// both).
    ///
    /// # Panics
    /// When it is not there, saying how to build it: a test that needs
    /// kubectl fails without it.
    pub fn kubectl(&self) -> PathBuf {
        let bin = match std::env::var_os(KUBECTL_ENV) {
            Some(p) => PathBuf::from(p),
            None => binary_path().with_file_name("kubectl"),
        };
        if !bin.is_file() {
            panic!(
                "testenv: kubectl not found at {}: `make testenv-build` builds it beside kube-testenv (or set {KUBECTL_ENV})",
                bin.display()
            );
        }
        bin
    }
    /// Time from spawning the supervisor to ready (zero when attached).
    pub fn startup_time(&self) -> Duration {
        self.startup
    }

    /// Stops the apiserver and starts it again on the same etcd data and
    /// port; returns once `/readyz` is OK. Resource versions continue.
    pub fn restart_apiserver(&self) {
        self.control_ok("POST", "/restart-apiserver");
    }

    /// Compacts etcd to its current revision and returns that revision.
    /// Watches/lists that reach etcd with an older resourceVersion then get
    /// 410 Gone (the apiserver's watch cache may still serve recent history;
    /// restart the apiserver after compacting to drop it).
    pub fn compact(&self) -> i64 {
        let body = self.control_ok("POST", "/compact");
        json_string(&body, "revision")
            .and_then(|r| r.parse().ok())
            .unwrap_or_else(|| panic!("testenv: unexpected /compact reply {body}"))
    }

    /// Creates a namespace named `<prefix>-<random>` and returns its name.
    pub fn create_namespace(&self, prefix: &str) -> String {
        let mut p: String = prefix
            .to_ascii_lowercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .take(40)
            .collect();
        p = p.trim_matches('-').to_string();
        if p.is_empty() {
            p.push_str("test");
        }
        let body = self.control_ok("POST", &format!("/namespaces?generateName={p}-"));
        json_string(&body, "name").unwrap_or_else(|| panic!("testenv: unexpected /namespaces reply {body}"))
    }

    fn control_ok(&self, method: &str, path: &str) -> String {
        match self.control(method, path) {
            Ok(body) => body,
            Err(e) => panic!(
                "testenv: {method} {path} failed: {e}\nlogs: {}/{{supervisor,apiserver,etcd,node}}.log",
                self.state_dir.display()
            ),
        }
    }

    /// One request to the control endpoint; Ok(body) on 200.
    pub fn control(&self, method: &str, path: &str) -> Result<String, String> {
        let addr = self.field("control");
        let mut s = TcpStream::connect(addr).map_err(|e| format!("connect {addr}: {e}"))?;
        s.set_read_timeout(Some(Duration::from_secs(180))).ok();
        write!(s, "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .map_err(|e| e.to_string())?;
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).map_err(|e| format!("reading reply: {e}"))?;
        let (status, body) = parse_response(&raw)?;
        if status == 200 { Ok(body) } else { Err(format!("HTTP {status}: {}", body.trim())) }
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        let owned = self.owned.get_mut().map(Option::take).unwrap_or(None);
        if let Some((mut child, stdin)) = owned {
            drop(stdin); // EOF: the supervisor stops etcd and the apiserver
            let _ = child.wait();
        }
    }
}

fn binary_path() -> PathBuf {
    let bin = match std::env::var_os(BIN_ENV) {
        Some(p) => PathBuf::from(p),
        // testenv/support -> repository root
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.testenv/bin/kube-testenv"),
    };
    if !bin.is_file() {
        panic!(
            "testenv: kube-testenv binary not found at {}: run `make testenv-build` (or set {BIN_ENV})",
            bin.display()
        );
    }
    bin
}

fn unique_temp_dir() -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    std::env::temp_dir().join(format!(
        "k8s-testenv-{}-{}-{nanos:x}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

fn parse_response(raw: &[u8]) -> Result<(u16, String), String> {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n").ok_or("malformed HTTP reply")?;
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).ok_or("malformed status line")?;
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase().starts_with("transfer-encoding:") && l.to_ascii_lowercase().contains("chunked")
    });
    Ok((status, if chunked { dechunk(body) } else { body.to_string() }))
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// Extracts a string value from the control API's flat JSON objects.
fn json_string(body: &str, key: &str) -> Option<String> {
    let pat = format!("\"{key}\":\"");
    let start = body.find(&pat)? + pat.len();
    let end = body[start..].find('"')?;
    Some(body[start..start + end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_replies() {
        let (s, b) = parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 14\r\n\r\n{\"name\":\"x-1\"}\n").unwrap();
        assert_eq!((s, json_string(&b, "name").as_deref()), (200, Some("x-1")));
        let (s, b) =
            parse_response(b"HTTP/1.1 500 X\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
                .unwrap();
        assert_eq!((s, b.as_str()), (500, "abcde"));
    }
}
