//! The operator workload: each stack's Greeting operator
//! (`examples/crds/greeting.yaml`) on a fresh namespace, while the harness
//! creates Greetings and watches them become Ready. Time, memory and CPU
//! come from outside the program (`/proc`); its API requests from the
//! apiserver's `/metrics`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use k8s_client::api::core::v1::Namespace;
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client::clientset::Clientset;
use k8s_client_runtime::ErrorChain;
use k8s_client_runtime::dynamic::{DynamicClient, DynamicObject};
use k8s_client_runtime::object::DynamicResource;
use k8s_client_runtime::rest::{Client, CreateOptions, DeleteOptions, ListOptions, Patch, PatchOptions, WatchEvent};
use serde_json::{Value, json};

use crate::programs::{Peer, Program};

type Failure = Box<dyn std::error::Error>;

/// The CRD the three operators serve, applied by the harness.
pub const CRD_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/crds/greeting.yaml");
const CRD_NAME: &str = "greetings.example.com";
/// ConfigMaps per Greeting.
pub const REPLICAS: u32 = 3;
/// Creates in flight.
const CONCURRENCY: usize = 32;

fn greetings() -> DynamicResource {
    DynamicResource {
        group: "example.com".into(),
        version: "v1".into(),
        kind: "Greeting".into(),
        plural: "greetings".into(),
        namespaced: true,
    }
}

/// What one run of an operator measured.
pub struct Figures {
    /// First create to every Greeting Ready for its generation.
    pub ready_s: f64,
    /// VmHWM of the operator when all were Ready.
    pub peak_rss_kib: f64,
    /// Its user + system CPU time from start to then.
    pub cpu_s: f64,
    /// Its API requests in between, watches aside, as the apiserver counted them.
    pub requests: f64,
}

/// What stays the same over the runs.
pub struct Workload<'a> {
    pub client: &'a Client,
    pub kubeconfig: &'a Path,
    pub greetings: usize,
    pub qps: f64,
    /// Where each run's operator log and request counts go.
    pub logs: &'a Path,
    /// Tells this harness invocation's namespaces from those of an earlier
    /// one on the same apiserver.
    pub tag: String,
}

/// Applies `examples/crds/greeting.yaml` (server-side apply takes the YAML
/// as it is), waits until the apiserver serves it, then creates, updates
/// and deletes one Greeting in `namespace` so that the apiserver's first use
/// of the kind is not in the first program's figures.
pub async fn install_crd(client: &Client, namespace: &str) -> Result<(), Failure> {
    let manifest = std::fs::read(CRD_FILE).map_err(|e| format!("{CRD_FILE}: {e}"))?;
    let crds = "/apis/apiextensions.k8s.io/v1";
    client
        .patch(crds)
        .resource("customresourcedefinitions")
        .name(CRD_NAME)
        .param("fieldManager", "bench-peers")
        .param("force", "true")
        .body(manifest, "application/apply-patch+yaml")
        .bytes()
        .await
        .map_err(|e| format!("applying {CRD_FILE}: {}", ErrorChain(&e)))?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let crd: Value = client.get(crds).resource("customresourcedefinitions").name(CRD_NAME).json().await?;
        let established = crd["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Established" && c["status"] == "True");
        if established {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("{CRD_NAME} not Established within 30 s").into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let api = DynamicClient::for_resource(client.clone(), &greetings(), Some(namespace));
    let warm_up = DynamicObject::new(&greetings(), "warm-up")
        .within(namespace)
        .with_data(json!({ "spec": { "message": "warm-up", "replicas": REPLICAS } }));
    api.create(&warm_up, &CreateOptions::default()).await?;
    let status = json!({ "status": { "observedGeneration": 1 } });
    api.patch_status("warm-up", &Patch::Merge(status), &PatchOptions::default()).await?;
    api.delete("warm-up", &DeleteOptions::default()).await?;
    Ok(())
}

impl Workload<'_> {
    /// One run of `program`'s operator: run `run` of the workload.
    pub async fn run(&self, clientset: &Clientset, program: &Program, run: usize) -> Result<Figures, Failure> {
        let name = stack(program.peer);
        let namespace = create_namespace(clientset, &format!("op-{name}-{run}-{}", self.tag)).await?;

        let watching = Metrics::scrape(self.client).await?.watches();
        let log = self.logs.join(format!("operator-{name}-{run}.log"));
        let log_file = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let mut child = tokio::process::Command::new(program.path())
            .args(["--namespace", &namespace, "--qps", &self.qps.to_string()])
            .env("KUBECONFIG", self.kubeconfig)
            .stdout(Stdio::from(log_file.try_clone()?))
            .stderr(Stdio::from(log_file))
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("{name}: starting {}: {e}", program.path().display()))?;
        let pid = child.id().ok_or("the operator has exited")?;
        let failed = |what: String| format!("{name}: {what} (its log: {})", log.display());

        // Greetings are created once it watches both kinds, so that its
        // start-up is not in the time.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let now = Metrics::scrape(self.client).await?.watches();
            if now.0 > watching.0 && now.1 > watching.1 {
                break;
            }
            if let Some(status) = child.try_wait()? {
                return Err(failed(format!("exited before it watched Greetings and ConfigMaps ({status})")).into());
            }
            if Instant::now() > deadline {
                return Err(failed("no watch of Greetings and ConfigMaps within 60 s".into()).into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }

        let api = DynamicClient::for_resource(self.client.clone(), &greetings(), Some(&namespace));
        let mut tracker = Tracker::new(self.greetings);
        // Opened before the first create, so it sees every change.
        let watch_opts = ListOptions { timeout_seconds: Some(3600), ..Default::default() };
        let mut events = api.watch(&watch_opts).await?;
        let before = Metrics::scrape(self.client).await?;

        let start = Instant::now();
        let created: Vec<Result<(), String>> = futures_util::stream::iter(0..self.greetings)
            .map(|i| {
                let api = &api;
                let greeting = DynamicObject::new(&greetings(), &format!("greeting-{i}"))
                    .within(&namespace)
                    .with_data(json!({ "spec": { "message": format!("hello {i}"), "replicas": REPLICAS } }));
                async move {
                    api.create(&greeting, &CreateOptions::default())
                        .await
                        .map(drop)
                        .map_err(|e| format!("creating greeting-{i}: {}", ErrorChain(&e)))
                }
            })
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        created.into_iter().collect::<Result<Vec<_>, _>>()?;

        let limit = Duration::from_secs_f64(120.0 + 20.0 * self.greetings as f64 / self.qps);
        let wait = async {
            while !tracker.all_ready() {
                match events.next().await {
                    Some(Ok(WatchEvent::Added(g) | WatchEvent::Modified(g))) => tracker.see(&g),
                    Some(Ok(WatchEvent::Deleted(g))) => {
                        return Err(format!("{} was deleted", g.name().unwrap_or_default()).into());
                    }
                    Some(Ok(WatchEvent::Bookmark(_))) => {}
                    Some(Err(e)) => return Err(Failure::from(e)),
                    // Closed by the apiserver: go on from the last event seen.
                    None => {
                        let opts =
                            ListOptions { resource_version: tracker.resource_version.clone(), ..watch_opts.clone() };
                        events = api.watch(&opts).await?;
                    }
                }
            }
            Ok(start.elapsed().as_secs_f64())
        };
        let ready_s = match tokio::time::timeout(limit, wait).await {
            Ok(ready) => ready.map_err(|e| failed(format!("watching Greetings: {}", ErrorChain(&*e))))?,
            Err(_) => {
                return Err(failed(format!(
                    "{} of {} Greetings Ready after {} s",
                    tracker.ready.len(),
                    self.greetings,
                    limit.as_secs()
                ))
                .into());
            }
        };
        if let Some(status) = child.try_wait()? {
            return Err(failed(format!("exited while running ({status})")).into());
        }
        let after = Metrics::scrape(self.client).await?;
        let peak_rss_kib = vm_hwm_kib(pid)?;
        let cpu_s = cpu_seconds(pid)?;
        let requests = after.requests() - before.requests() - self.greetings as f64;
        let counts = self.logs.join(format!("operator-{name}-{run}.requests"));
        std::fs::write(&counts, after.requests_since(&before)).map_err(|e| format!("{}: {e}", counts.display()))?;

        // Stopped as an orchestrator stops it; it must exit 0.
        let killed = tokio::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status().await?;
        if !killed.success() {
            return Err(failed("kill -TERM failed".into()).into());
        }
        match tokio::time::timeout(Duration::from_secs(60), child.wait()).await {
            Ok(status) if status.as_ref().is_ok_and(std::process::ExitStatus::success) => {}
            Ok(status) => return Err(failed(format!("exited with {status:?} on SIGTERM")).into()),
            Err(_) => return Err(failed("still running 60 s after SIGTERM".into()).into()),
        }
        drop(events);
        Ok(Figures { ready_s, peak_rss_kib, cpu_s, requests })
    }
}

/// Creates namespace `name`; returns its name.
pub async fn create_namespace(clientset: &Clientset, name: &str) -> Result<String, Failure> {
    let ns = Namespace { metadata: ObjectMeta { name: Some(name.into()), ..Default::default() }, ..Default::default() };
    clientset.core_v1().namespaces().create(&ns, &CreateOptions::default()).await?;
    Ok(name.to_owned())
}

/// The operator's stack, in its log's and namespace's names.
fn stack(peer: Peer) -> &'static str {
    match peer {
        Peer::Ours => "k8s-client",
        Peer::ClientGo => "controller-runtime",
        Peer::KubeRs => "kube-rs",
    }
}

/// Which Greetings are Ready: condition `Ready` `True` and
/// `status.observedGeneration` equal to `metadata.generation`.
struct Tracker {
    ready: std::collections::HashSet<String>,
    expected: usize,
    resource_version: Option<String>,
}

impl Tracker {
    fn new(expected: usize) -> Tracker {
        Tracker { ready: Default::default(), expected, resource_version: None }
    }

    fn see(&mut self, g: &DynamicObject) {
        self.resource_version = g.resource_version().map(str::to_owned);
        let Some(name) = g.name() else { return };
        let status = &g.data.get("status").cloned().unwrap_or(Value::Null);
        let generation = g.metadata.generation;
        let observed = status["observedGeneration"].as_i64();
        let condition_ready = status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "True");
        if condition_ready && generation.is_some() && observed == generation {
            self.ready.insert(name.to_owned());
        } else {
            self.ready.remove(name);
        }
    }

    fn all_ready(&self) -> bool {
        self.ready.len() >= self.expected
    }
}

/// One scrape of the apiserver's `/metrics`.
struct Metrics(String);

impl Metrics {
    async fn scrape(client: &Client) -> Result<Metrics, Failure> {
        let body = client.get("/metrics").accept("text/plain").bytes().await?;
        Ok(Metrics(String::from_utf8(body.to_vec())?))
    }

    /// Requests the apiserver has answered, less watches and the test
    /// apiserver's background traffic. A watch is counted when it ends, so
    /// the operators' open ones are not, and those that end during a run are
    /// mostly the apiserver's own informers renewing theirs. The background,
    /// about one request a second that would count against whichever
    /// program ran then: its Lease and endpoint loops, the node's
    /// heartbeats, and OpenAPI fetches, which have no resource (the only
    /// requests without one it counts: not discovery, not `/metrics`).
    fn requests(&self) -> f64 {
        self.counted().map(|(_, v)| v).sum()
    }

    fn counted(&self) -> impl Iterator<Item = (Vec<(&str, &str)>, f64)> {
        samples(&self.0, "apiserver_request_total").filter(|(labels, _)| {
            label(labels, "verb") != Some("WATCH")
                && !matches!(label(labels, "resource"), Some("" | "leases" | "endpoints" | "endpointslices" | "nodes"))
        })
    }

    /// The counted requests since `earlier`, one line per verb, resource and
    /// code (the harness's own among them), to see what a figure is made of.
    fn requests_since(&self, earlier: &Metrics) -> String {
        let key = |labels: &[(&str, &str)]| {
            let l = |k| label(labels, k).unwrap_or_default();
            let sub = if l("subresource").is_empty() { String::new() } else { format!("/{}", l("subresource")) };
            format!("{} {}{sub} {}", l("verb"), l("resource"), l("code"))
        };
        let mut counts = std::collections::BTreeMap::<String, f64>::new();
        for (labels, v) in self.counted() {
            *counts.entry(key(&labels)).or_default() += v;
        }
        for (labels, v) in earlier.counted() {
            *counts.entry(key(&labels)).or_default() -= v;
        }
        counts.into_iter().filter(|(_, n)| *n != 0.0).map(|(k, n)| format!("{n} {k}\n")).collect()
    }

    /// Watches open now: (of Greetings, of ConfigMaps).
    fn watches(&self) -> (f64, f64) {
        let mut open = (0.0, 0.0);
        for (labels, v) in samples(&self.0, "apiserver_longrunning_requests") {
            match (label(&labels, "verb"), label(&labels, "resource")) {
                (Some("WATCH"), Some("greetings")) => open.0 += v,
                (Some("WATCH"), Some("configmaps")) => open.1 += v,
                _ => {}
            }
        }
        open
    }
}

/// The samples of metric `name` in Prometheus' text format: labels and value.
fn samples<'a>(text: &'a str, name: &'a str) -> impl Iterator<Item = (Vec<(&'a str, &'a str)>, f64)> + 'a {
    text.lines().filter_map(move |line| {
        let rest = line.strip_prefix(name)?;
        let (labels, value) = match rest.strip_prefix('{') {
            Some(rest) => rest.rsplit_once('}')?,
            None if rest.starts_with(' ') => ("", rest),
            None => return None,
        };
        let value = value.split_whitespace().next()?.parse().ok()?;
        Some((parse_labels(labels), value))
    })
}

/// `a="x",b="y"`: the label values the apiserver writes hold no quotes or
/// commas.
fn parse_labels(text: &str) -> Vec<(&str, &str)> {
    text.split(',')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            Some((k.trim(), v.trim().strip_prefix('"')?.strip_suffix('"')?))
        })
        .collect()
}

fn label<'a>(labels: &[(&'a str, &'a str)], key: &str) -> Option<&'a str> {
    labels.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// VmHWM of process `pid`, in KiB.
fn vm_hwm_kib(pid: u32) -> Result<f64, Failure> {
    let path = PathBuf::from(format!("/proc/{pid}/status"));
    let status = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB")?.trim().parse().ok())
        .ok_or_else(|| format!("no VmHWM in {}", path.display()).into())
}

/// User + system CPU time of process `pid` (`utime` and `stime` of
/// `/proc/<pid>/stat`, in clock ticks).
fn cpu_seconds(pid: u32) -> Result<f64, Failure> {
    let path = PathBuf::from(format!("/proc/{pid}/stat"));
    let stat = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    // Fields from the third on follow the command name's closing parenthesis.
    let fields: Vec<&str> =
        stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
    let tick = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok());
    match (tick(11), tick(12)) {
        (Some(utime), Some(stime)) => Ok((utime + stime) / clock_ticks_per_second()),
        _ => Err(format!("no utime/stime in {}", path.display()).into()),
    }
}

/// `sysconf(_SC_CLK_TCK)`, through `getconf` (this crate keeps libc calls to
/// its library); 100, Linux's USER_HZ, if that fails.
fn clock_ticks_per_second() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .filter(|t: &f64| *t > 0.0)
            .unwrap_or(100.0)
    })
}

#[cfg(test)]
mod tests {
    use super::{label, samples};

    #[test]
    fn samples_and_labels_of_one_metric() {
        let text = "# TYPE apiserver_request_total counter\n\
            apiserver_request_total{code=\"201\",resource=\"greetings\",verb=\"POST\"} 12\n\
            apiserver_request_total_other{resource=\"x\"} 3\n\
            apiserver_request_total{code=\"200\",resource=\"\",verb=\"GET\"} 2\n";
        let got: Vec<_> = samples(text, "apiserver_request_total").collect();
        assert_eq!(got.len(), 2);
        assert_eq!(label(&got[0].0, "resource"), Some("greetings"));
        assert_eq!(got[0].1, 12.0);
        assert_eq!(label(&got[1].0, "resource"), Some(""));
    }
}
