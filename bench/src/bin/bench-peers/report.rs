//! The figures as a table (stdout, README), as JSON and as an SVG chart.

use std::path::Path;
use std::process::Command;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde_json::json;

use crate::programs::{Peer, Samples};

/// Where and with what the figures were measured.
pub struct RunInfo {
    pub date: String,
    pub cores: usize,
    pub memory_gib: f64,
    pub scale: f64,
    pub runs: usize,
    pub pods: usize,
    pub decode_pods: usize,
    /// Greetings created per run of an operator.
    pub greetings: usize,
    pub versions: Vec<(String, String)>,
}

/// `1.26.8` from `go version go1.26.8 linux/amd64`; the line as it is when
/// it has another form.
fn go_version(line: &str) -> String {
    line.split_whitespace().nth(2).and_then(|v| v.strip_prefix("go")).map_or_else(|| line.to_owned(), str::to_owned)
}

impl RunInfo {
    pub fn collect(
        scale: f64,
        runs: usize,
        apiserver: String,
        pods: usize,
        decode_pods: usize,
        greetings: usize,
    ) -> RunInfo {
        let first_line = |cmd: &str, args: &[&str]| {
            Command::new(cmd)
                .args(args)
                .output()
                .ok()
                .and_then(|o| String::from_utf8(o.stdout).ok())
                .and_then(|s| s.lines().next().map(str::to_owned))
                .unwrap_or_else(|| "unknown".into())
        };
        let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers");
        let go_mod = std::fs::read_to_string(peers.join("client-go/go.mod")).unwrap_or_default();
        let operator_go_mod = std::fs::read_to_string(peers.join("controller-runtime/go.mod")).unwrap_or_default();
        let kube_lock = std::fs::read_to_string(peers.join("kube-rs/Cargo.lock")).unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let mem_kib: f64 = meminfo
            .lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        RunInfo {
            date: first_line("date", &["-u", "+%Y-%m-%d"]),
            cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
            memory_gib: mem_kib / 1024.0 / 1024.0,
            scale,
            runs,
            pods,
            decode_pods,
            greetings,
            versions: [
                ("kube-apiserver", apiserver),
                ("client-go", go_module_version(&go_mod, "k8s.io/client-go")),
                ("controller-runtime", go_module_version(&operator_go_mod, "sigs.k8s.io/controller-runtime")),
                ("kube", lock_version(&kube_lock, "kube")),
                ("k8s-openapi", lock_version(&kube_lock, "k8s-openapi")),
                // `rustc 1.95.0 (…)` and `go version go1.26.8 linux/amd64`:
                // the version alone, after the tool's name.
                ("rustc", first_line("rustc", &["--version"]).trim_start_matches("rustc ").to_owned()),
                ("go", go_version(&first_line("go", &["version"]))),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
        }
    }

    /// What [`Table::to_json`] wrote of the run.
    pub fn from_json(v: &serde_json::Value) -> RunInfo {
        let num = |k: &str| v[k].as_f64().unwrap_or(0.0);
        RunInfo {
            date: v["date"].as_str().unwrap_or_default().to_owned(),
            cores: v["machine"]["cores"].as_u64().unwrap_or(0) as usize,
            memory_gib: v["machine"]["memory_gib"].as_f64().unwrap_or(0.0),
            scale: num("scale"),
            runs: num("runs") as usize,
            pods: num("pods") as usize,
            decode_pods: num("decode_pods") as usize,
            greetings: num("greetings") as usize,
            versions: v["versions"]
                .as_object()
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned())).collect())
                .unwrap_or_default(),
        }
    }

    fn summary(&self) -> String {
        let versions: Vec<String> = self.versions.iter().map(|(k, v)| format!("{k} {v}")).collect();
        format!(
            "{}; {} cores, {:.0} GiB; scale {} ({} pods on the apiserver, {} decoded, {} Greetings per operator run); {} runs each, alternating; {}",
            self.date,
            self.cores,
            self.memory_gib,
            self.scale,
            self.pods,
            self.decode_pods,
            self.greetings,
            self.runs,
            versions.join(", ")
        )
    }
}

fn go_module_version(go_mod: &str, module: &str) -> String {
    go_mod
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix(module).and_then(|rest| rest.split_whitespace().next()))
        .unwrap_or("unknown")
        .to_owned()
}

fn lock_version(lock: &str, package: &str) -> String {
    let header = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == header
            && let Some(v) = lines.next().and_then(|l| l.strip_prefix("version = \""))
        {
            return v.trim_end_matches('"').to_owned();
        }
    }
    "unknown".into()
}

/// Median, min and max of one peer's samples.
#[derive(Clone, Copy)]
struct Stat {
    median: f64,
    min: f64,
    max: f64,
}

impl Stat {
    fn of(samples: &[f64]) -> Option<Stat> {
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let median = match n {
            0 => return None,
            n if n % 2 == 1 => s[n / 2],
            n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
        };
        Some(Stat { median, min: s[0], max: s[n - 1] })
    }
}

struct Row {
    workload: String,
    figure: String,
    stats: Vec<(Peer, Stat, usize)>,
}

impl Row {
    fn stat(&self, peer: Peer) -> Option<Stat> {
        self.stats.iter().find(|(p, ..)| *p == peer).map(|(_, s, _)| *s)
    }

    /// This project's median ÷ the peer's.
    fn ratio(&self, peer: Peer) -> Option<f64> {
        let (ours, theirs) = (self.stat(Peer::Ours)?, self.stat(peer)?);
        (theirs.median != 0.0).then(|| ours.median / theirs.median)
    }

    /// The goal the project set itself for this figure, against client-go and kube-rs.
    fn goals(&self) -> (Option<&'static str>, Option<&'static str>) {
        match (self.workload.as_str(), self.figure.as_str()) {
            ("decode", "throughput, MB/s") => (Some("≥ 3"), Some("≥ 1.5")),
            // kube-rs has no protobuf decoder.
            ("decode, protobuf", "throughput, MB/s") => (Some("≥ 3"), None),
            ("sync, default", "time to synced, s") => (Some("≤ 0.8"), Some("≤ 1.0")),
            ("sync, managedFields dropped", "RSS per cached pod, bytes") => (Some("≤ 0.5"), Some("≤ 0.5")),
            // And at most 1 KB a pod.
            ("sync, metadata only", "RSS per cached pod, bytes") => (None, Some("< 1")),
            ("churn", "latency p99, ms") => (Some("≤ 1.0"), None),
            // Never behind client-go's queue; the earlier ≥ 2 measured the
            // scheduler's phase on two cores (docs/peers.md).
            (w, "ops/s") if w.starts_with("workqueue") => (Some("≥ 1"), None),
            ("operator", "time to all Ready, s") => (Some("≤ 0.8"), Some("≤ 0.8")),
            ("operator", "peak RSS, MiB") => (Some("≤ 0.5"), Some("≤ 0.5")),
            ("operator", "API requests") => (Some("≤ 1"), Some("≤ 1")),
            ("build of a minimal pod informer", "clean build, s") => (None, Some("≤ 0.5")),
            ("build of a minimal pod informer", "binary size, MB") => (None, Some("≤ 0.6")),
            ("build of a client-only program (list pods)", "clean build, s") => (None, Some("≤ 0.4")),
            _ => (None, None),
        }
    }
}

/// The figures, one row per (workload, figure).
pub struct Table {
    rows: Vec<Row>,
}

impl Table {
    pub fn new(samples: &Samples) -> Table {
        let rows = samples
            .order
            .iter()
            .map(|key| {
                let by_peer = &samples.values[key];
                let stats = by_peer.iter().filter_map(|(p, v)| Some((*p, Stat::of(v)?, v.len()))).collect();
                Row { workload: key.0.clone(), figure: key.1.clone(), stats }
            })
            .collect();
        Table { rows }
    }

    /// A Markdown table: median (min–max) per peer, then the ratios and their goals.
    pub fn render(&self, info: &RunInfo) -> String {
        let mut out = format!(
            "Measured {}.\n\n| workload | figure | k8s-client | client-go | kube-rs | ÷ client-go (goal) | ÷ kube-rs (goal) |\n|---|---|---|---|---|---|---|\n",
            info.summary()
        );
        for row in &self.rows {
            let cell = |p: Peer| {
                row.stat(p)
                    .map_or_else(|| "—".to_owned(), |s| format!("{} ({}–{})", num(s.median), num(s.min), num(s.max)))
            };
            let (goal_cg, goal_kr) = row.goals();
            let ratio = |p: Peer, goal: Option<&str>| match (row.ratio(p), goal) {
                (None, _) => "—".to_owned(),
                (Some(r), None) => format!("{r:.2}"),
                (Some(r), Some(g)) => format!("**{r:.2}** ({g})"),
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                row.workload,
                row.figure,
                cell(Peer::Ours),
                cell(Peer::ClientGo),
                cell(Peer::KubeRs),
                ratio(Peer::ClientGo, goal_cg),
                ratio(Peer::KubeRs, goal_kr)
            ));
        }
        if self.rows.iter().any(|r| r.workload == "operator") {
            out.push_str(
                "\nOperator rows: this project's `greeting_operator` example; controller-runtime \
                 (on client-go) in client-go's column; `kube::runtime::Controller` in kube-rs's.\n",
            );
        }
        out
    }

    /// The table [`Table::to_json`] wrote (to redraw its chart).
    pub fn from_json(v: &serde_json::Value) -> Table {
        let rows = v["rows"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|row| {
                let stats = Peer::ALL
                    .into_iter()
                    .filter_map(|p| {
                        let s = &row["peers"][p.name()];
                        let stat =
                            Stat { median: s["median"].as_f64()?, min: s["min"].as_f64()?, max: s["max"].as_f64()? };
                        Some((p, stat, s["runs"].as_u64().unwrap_or(0) as usize))
                    })
                    .collect();
                let text = |k: &str| row[k].as_str().unwrap_or_default().to_owned();
                Row { workload: text("workload"), figure: text("figure"), stats }
            })
            .collect();
        Table { rows }
    }

    pub fn to_json(&self, info: &RunInfo) -> serde_json::Value {
        let rows: Vec<_> = self
            .rows
            .iter()
            .map(|row| {
                let peers: serde_json::Map<_, _> = row
                    .stats
                    .iter()
                    .map(|(p, s, n)| {
                        (p.name().to_owned(), json!({"median": s.median, "min": s.min, "max": s.max, "runs": n}))
                    })
                    .collect();
                let (goal_cg, goal_kr) = row.goals();
                json!({
                    "workload": row.workload,
                    "figure": row.figure,
                    "peers": peers,
                    "ratio_client_go": row.ratio(Peer::ClientGo),
                    "ratio_kube_rs": row.ratio(Peer::KubeRs),
                    "goal_client_go": goal_cg,
                    "goal_kube_rs": goal_kr,
                })
            })
            .collect();
        let versions: serde_json::Map<_, _> = info.versions.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
        json!({
            "date": info.date,
            "machine": {"cores": info.cores, "memory_gib": info.memory_gib},
            "scale": info.scale,
            "runs": info.runs,
            "pods": info.pods,
            "decode_pods": info.decode_pods,
            "greetings": info.greetings,
            "versions": versions,
            "rows": rows,
        })
    }
}

fn num(v: f64) -> String {
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        _ => format!("{v:.3}"),
    }
}

/// A bar chart of this project's figures divided by each peer's, on a log
/// scale (1 = the same; above 1 is more of the figure).
pub fn chart(table: &Table, info: &RunInfo, to: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let bars: Vec<(String, Option<f64>, Option<f64>)> = table
        .rows
        .iter()
        .filter_map(|r| {
            let (cg, kr) = (r.ratio(Peer::ClientGo).filter(|v| *v > 0.0), r.ratio(Peer::KubeRs).filter(|v| *v > 0.0));
            (cg.is_some() || kr.is_some()).then(|| (format!("{}: {}", r.workload, r.figure), cg, kr))
        })
        .collect();
    let all = bars.iter().flat_map(|(_, a, b)| [*a, *b]).flatten();
    let (lo, hi) = all.fold((1.0f64, 1.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let height = 160 + 28 * bars.len() as u32;
    let root = SVGBackend::new(to, (1100, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("k8s-client ÷ peer, median of {} runs ({})", info.runs, info.date), ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(430)
        .build_cartesian_2d((lo / 1.5..hi * 1.5).log_scale(), 0.0..bars.len() as f64)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc("ratio (log scale): above 1, more of the figure than the peer")
        .draw()?;
    // One label per row, centred on its bars, left of the plot.
    for (i, (label, ..)) in bars.iter().enumerate() {
        let y = (bars.len() - 1 - i) as f64 + 0.5;
        let (px, py) = chart.backend_coord(&(lo / 1.5, y));
        let style = ("sans-serif", 13).into_text_style(&root).pos(Pos::new(HPos::Right, VPos::Center));
        root.draw(&Text::new(label.clone(), (px - 8, py), style))?;
    }
    let colors = [(Peer::ClientGo, RGBColor(0, 125, 156)), (Peer::KubeRs, RGBColor(222, 120, 31))];
    for (k, (peer, color)) in colors.into_iter().enumerate() {
        let rects = bars.iter().enumerate().filter_map(|(i, (_, cg, kr))| {
            let v = if k == 0 { *cg } else { *kr }?;
            // Row i from the top; client-go's bar above kube-rs's.
            let y = (bars.len() - 1 - i) as f64;
            let (bottom, top) = if k == 0 { (y + 0.5, y + 0.9) } else { (y + 0.1, y + 0.5) };
            Some(Rectangle::new([(1.0, top), (v, bottom)], color.filled()))
        });
        chart
            .draw_series(rects)?
            .label(format!("÷ {}", peer.name()))
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart.draw_series(std::iter::once(PathElement::new(vec![(1.0, 0.0), (1.0, bars.len() as f64)], BLACK)))?;
    chart.configure_series_labels().border_style(BLACK).background_style(WHITE).draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::go_version;

    #[test]
    fn go_version_is_the_number_alone() {
        assert_eq!(go_version("go version go1.26.8 linux/amd64"), "1.26.8");
        assert_eq!(go_version("unknown"), "unknown");
    }
}
