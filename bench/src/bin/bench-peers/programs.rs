//! Running the three programs and collecting what they report; building the
//! minimal pod-informer programs of the build workload.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use k8s_client::api::core::v1::PodList;
use tokio::io::{AsyncBufReadExt, BufReader};

type Failure = Box<dyn std::error::Error>;

/// The three stacks, in the table's column order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Peer {
    Ours,
    ClientGo,
    KubeRs,
}

impl Peer {
    pub const ALL: [Peer; 3] = [Peer::Ours, Peer::ClientGo, Peer::KubeRs];

    pub fn name(self) -> &'static str {
        match self {
            Peer::Ours => "k8s-client",
            Peer::ClientGo => "client-go",
            Peer::KubeRs => "kube-rs",
        }
    }
}

/// The figures one run of a program printed.
pub struct Figures(serde_json::Map<String, serde_json::Value>);

impl Figures {
    fn parse(peer: Peer, stdout: &str) -> Result<Figures, Failure> {
        let last = stdout.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
        match serde_json::from_str(last) {
            Ok(serde_json::Value::Object(map)) => Ok(Figures(map)),
            _ => Err(format!("{}: the last line of its output is not a JSON object: {last:?}", peer.name()).into()),
        }
    }

    pub fn num(&self, key: &str) -> Result<f64, Failure> {
        self.0
            .get(key)
            .and_then(serde_json::Value::as_f64)
            .ok_or_else(|| format!("no figure {key:?} in {:?}", self.0).into())
    }
}

/// One of the three programs.
pub struct Program {
    pub peer: Peer,
    path: PathBuf,
}

impl Program {
    pub fn new(peer: Peer, path: &Path) -> Program {
        Program { peer, path: path.to_owned() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Fails unless the program is there, saying how to build it.
    pub fn check_built(&self, how: &str) -> Result<(), Failure> {
        if self.path.is_file() {
            return Ok(());
        }
        Err(format!("{}: no program at {} ({how})", self.peer.name(), self.path.display()).into())
    }

    /// Runs the program to its end and reads its figures.
    pub fn run(&self, args: &[&str]) -> Result<Figures, Failure> {
        let out = Command::new(&self.path)
            .args(args)
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("{}: running {}: {e}", self.peer.name(), self.path.display()))?;
        if !out.status.success() {
            return Err(format!("{} {} failed ({})", self.peer.name(), args.join(" "), out.status).into());
        }
        Figures::parse(self.peer, &String::from_utf8_lossy(&out.stdout))
    }

    /// Starts the program and returns once it says `ready` (churn).
    pub async fn start(&self, args: &[&str]) -> Result<Running, Failure> {
        let mut child = tokio::process::Command::new(&self.path)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("{}: starting {}: {e}", self.peer.name(), self.path.display()))?;
        let mut lines = BufReader::new(child.stdout.take().ok_or("stdout is piped")?).lines();
        let ready = tokio::time::timeout(Duration::from_secs(300), async {
            while let Some(line) = lines.next_line().await? {
                if line.trim() == "ready" {
                    return Ok(true);
                }
            }
            Ok::<_, std::io::Error>(false)
        });
        match ready.await {
            Ok(Ok(true)) => Ok(Running { peer: self.peer, child, lines }),
            Ok(Ok(false)) => {
                Err(format!("{} exited before it was ready ({:?})", self.peer.name(), child.wait().await).into())
            }
            Ok(Err(e)) => Err(format!("{}: reading its output: {e}", self.peer.name()).into()),
            Err(_) => Err(format!("{} was not ready within 300 s", self.peer.name()).into()),
        }
    }
}

/// A program started by [`Program::start`].
pub struct Running {
    peer: Peer,
    child: tokio::process::Child,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Running {
    /// Awaits `work` (the writer, returning its count), then the program's figures.
    pub async fn finish_after(mut self, work: impl Future<Output = usize>) -> Result<(Figures, usize), Failure> {
        let done = work.await;
        let mut rest = String::new();
        while let Some(line) = self.lines.next_line().await? {
            rest.push_str(&line);
            rest.push('\n');
        }
        let status = self.child.wait().await?;
        if !status.success() {
            return Err(format!("{} failed ({status})", self.peer.name()).into());
        }
        Ok((Figures::parse(self.peer, &rest)?, done))
    }
}

/// Every sample, by (workload, figure) in the order first added, then by peer.
#[derive(Default)]
pub struct Samples {
    pub order: Vec<(String, String)>,
    pub values: BTreeMap<(String, String), BTreeMap<Peer, Vec<f64>>>,
}

impl Samples {
    pub fn add(&mut self, workload: &str, figure: &str, peer: Peer, value: f64) {
        let key = (workload.to_owned(), figure.to_owned());
        if !self.values.contains_key(&key) {
            self.order.push(key.clone());
        }
        self.values.entry(key).or_default().entry(peer).or_default().push(value);
    }
}

/// The shared pod list (gzipped JSON), decoded.
pub fn read_pod_list(path: &Path) -> Result<PodList, Failure> {
    let json = k8s_client_bench::gunzip_file(path)?;
    serde_json::from_slice(&json).map_err(|e| format!("{}: {e}", path.display()).into())
}

/// Writes the first `pods` pods of `list` (cycled if there are fewer) as the
/// decode workload's input.
pub fn write_pod_list(list: &PodList, pods: usize, to: &Path) -> Result<(), Failure> {
    let mut subset = list.clone();
    subset.items = list.items.iter().cycle().take(pods).cloned().collect();
    std::fs::write(to, serde_json::to_vec(&subset)?)?;
    Ok(())
}

/// A program of the build workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Minimal {
    /// A pod informer synced once.
    Informer,
    /// One list of pods: the client alone.
    List,
}

impl Minimal {
    /// The row of its figures.
    pub fn workload(self) -> &'static str {
        match self {
            Minimal::Informer => "build of a minimal pod informer",
            Minimal::List => "build of a client-only program (list pods)",
        }
    }
}

/// The build workload: minimal programs per Rust stack
/// (`bench/peers/build/`), each its own workspace with its own target
/// directory under `out`.
pub struct MinimalBuilds {
    out: PathBuf,
    profile: String,
    clean: bool,
}

impl MinimalBuilds {
    pub fn new(out: &Path, profile: &str, clean: bool) -> MinimalBuilds {
        MinimalBuilds { out: out.to_owned(), profile: profile.to_owned(), clean }
    }

    /// Builds `peer`'s `program`: (seconds, binary bytes).
    pub fn build(&self, peer: Peer, program: Minimal) -> Result<(f64, f64), Failure> {
        let (dir, bin) = match (peer, program) {
            (Peer::Ours, Minimal::Informer) => ("k8s-client", "minimal-k8s-client"),
            (Peer::KubeRs, Minimal::Informer) => ("kube-rs", "minimal-kube-rs"),
            (Peer::Ours, Minimal::List) => ("k8s-client-list", "list-k8s-client"),
            (Peer::KubeRs, Minimal::List) => ("kube-rs-list", "list-kube-rs"),
            (Peer::ClientGo, _) => return Err("the build workload compares the Rust stacks".into()),
        };
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/build").join(dir);
        if peer == Peer::Ours {
            // Built with the versions the workspace has locked, as `make check-crds` does.
            let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
            std::fs::copy(&lock, source.join("Cargo.lock")).map_err(|e| format!("{}: {e}", lock.display()))?;
        }
        let target = self.out.join("build").join(dir);
        if self.clean && target.exists() {
            std::fs::remove_dir_all(&target)?;
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let start = Instant::now();
        let status = Command::new(cargo)
            .args(["build", "--quiet", "--profile", &self.profile, "--manifest-path"])
            .arg(source.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", &target)
            .status()?;
        let seconds = start.elapsed().as_secs_f64();
        if !status.success() {
            return Err(format!("building {} failed ({status})", source.display()).into());
        }
        let profile_dir = if self.profile == "dev" { "debug" } else { &self.profile };
        let binary = target.join(profile_dir).join(bin);
        let bytes = std::fs::metadata(&binary).map_err(|e| format!("{}: {e}", binary.display()))?.len();
        if self.clean {
            // The next clean build starts from nothing anyway; a dev build
            // of these programs leaves a few GB behind.
            std::fs::remove_dir_all(&target).map_err(|e| format!("{}: {e}", target.display()))?;
        }
        Ok((seconds, bytes as f64))
    }
}
