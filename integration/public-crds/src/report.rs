//! The summary printed at the end, and the details written beside it:
//! `report.md` (per operator, every refusal with the apiserver's reason and
//! the generator's error, every failure, the duplicate CRDs left out of the
//! many-operator crate) and `results.tsv`
//! (one line per CRD).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::apiserver::Verdict;
use crate::bigcrate::{Build, Duplicate};
use crate::corpus::Operator;
use crate::known::Known;
use crate::{Checked, ManyOperatorCrate};

/// Everything one run found.
pub struct Report<'a> {
    /// The corpus.
    pub operators: &'a [Operator],
    /// Each CRD's verdicts.
    pub checked: &'a [Checked<'a>],
    /// Operators whose CRDs generate alone but not together.
    pub operator_failures: &'a [String],
    /// Failures known and being fixed elsewhere.
    pub known: &'a Known,
    /// The many-operator crate.
    pub many: &'a ManyOperatorCrate,
    /// Time spent asking the apiserver (its start included).
    pub apiserver_time: Duration,
    /// Time spent generating.
    pub generate_time: Duration,
    /// Time of the whole run.
    pub total_time: Duration,
}

impl Report<'_> {
    fn accepted(&self) -> impl Iterator<Item = &Checked<'_>> {
        self.checked.iter().filter(|c| c.verdict == Verdict::Accepted)
    }

    fn refused(&self) -> impl Iterator<Item = &Checked<'_>> {
        self.checked.iter().filter(|c| c.verdict != Verdict::Accepted)
    }

    fn failing(&self) -> impl Iterator<Item = (&Checked<'_>, &String)> {
        self.checked.iter().filter_map(|c| c.generator.as_ref().err().map(|e| (c, e)))
    }

    /// The failures the known list names, with why, one line each.
    pub fn known_failures(&self) -> Vec<String> {
        self.failing()
            .filter_map(|(c, e)| {
                self.known.why(&c.crd.origin).map(|why| format!("{} ({}): {e} [{why}]", c.crd.origin, c.crd.name))
            })
            .collect()
    }

    /// Every failure not known, and every known one that passes now, one line each.
    pub fn failures(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .failing()
            .filter(|(c, _)| self.known.why(&c.crd.origin).is_none())
            .map(|(c, e)| format!("{} ({}): {e}", c.crd.origin, c.crd.name))
            .collect();
        let failing: Vec<&str> = self.failing().map(|(c, _)| c.crd.origin.as_str()).collect();
        for origin in self.known.stale(&failing) {
            out.push(format!("{origin}: listed as a known failure, but nothing there fails now: remove the line"));
        }
        out.extend(self.operator_failures.iter().cloned());
        if let Some(f) = &self.many.failure {
            out.push(format!("many-operator crate: the generator fails on the whole set: {f}"));
        }
        if let Some(b) = self.many.build.as_ref().filter(|b| !b.ok) {
            out.push(format!("many-operator crate: cargo build fails:{}", indented(&b.errors)));
        }
        let side = self.many.side_by_side.as_ref();
        if let Some(b) = side.and_then(|s| s.build.as_ref()).filter(|b| !b.ok) {
            out.push(format!("beside the built-in crate: cargo build fails:{}", indented(&b.errors)));
        }
        out
    }

    /// Whether everything held.
    pub fn passed(&self) -> bool {
        self.failures().is_empty()
    }

    /// The lines printed at the end of a run.
    pub fn summary(&self) -> String {
        let accepted = self.accepted().count();
        let generated = self.accepted().filter(|c| c.generator.is_ok()).count();
        let refused = self.refused().count();
        let both = self.refused().filter(|c| c.generator.is_ok()).count();
        let failures = self.failures();
        let mut s = String::new();
        let _ = writeln!(s, "public CRDs: {} operators, {} CRDs", self.operators.len(), self.checked.len());
        let _ = writeln!(
            s,
            "  apiserver (dry-run create): {accepted} accepted, {refused} refused ({})",
            secs(self.apiserver_time)
        );
        let _ = writeln!(
            s,
            "  generator: {generated} of {accepted} accepted generate; {both} of {refused} refused are errors naming file and pointer (refused by both) ({})",
            secs(self.generate_time)
        );
        let m = self.many;
        let _ = writeln!(
            s,
            "  many-operator crate: {} operators, {} CRDs, {} types; {}",
            m.members.len(),
            m.crds,
            m.types,
            build_text(m.build.as_ref(), m.failure.is_some())
        );
        if !m.not_generating.is_empty() {
            let _ = writeln!(s, "    not in it (their own CRDs do not generate): {}", m.not_generating.join(", "));
        }
        let _ = writeln!(s, "    duplicate CRDs left out (an earlier operator's copy is in): {}", m.duplicates.len());
        for d in &m.duplicates {
            let _ = writeln!(s, "      {}", duplicate_text(d));
        }
        if let Some(side) = &m.side_by_side {
            let p = &side.program;
            let built = if m.build.as_ref().is_some_and(|b| !b.ok) {
                "not built".to_owned()
            } else {
                build_text(side.build.as_ref(), false)
            };
            let _ = writeln!(
                s,
                "  beside the built-in crate: {} group/versions, {} of them beside a built-in group of their first label; {built}",
                p.pairs.len() + p.alone.len(),
                p.pairs.len(),
            );
            let pairs: Vec<String> = p.pairs.iter().map(|p| format!("{} + {}", p.custom.accessor, p.builtin)).collect();
            if !pairs.is_empty() {
                let _ = writeln!(s, "    {}", pairs.join(", "));
            }
        }
        let known = self.known_failures();
        let _ = writeln!(s, "  known failures (fixed elsewhere, listed in known-failures.txt): {}", known.len());
        for f in &known {
            let _ = writeln!(s, "    {f}");
        }
        let _ = writeln!(s, "  failures: {}", failures.len());
        for f in &failures {
            let _ = writeln!(s, "    {f}");
        }
        let _ = writeln!(s, "  total: {}", secs(self.total_time));
        s
    }

    /// Writes `report.md` and `results.tsv` into `dir`; returns the report's path.
    pub fn write(&self, dir: &Path) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("results.tsv"), self.tsv())?;
        let path = dir.join("report.md");
        std::fs::write(&path, self.markdown())?;
        Ok(path)
    }

    fn tsv(&self) -> String {
        let mut s = "operator\torigin\tcrd\tapiserver\tgenerator\tdetail\n".to_owned();
        for c in self.checked {
            let (apiserver, reason) = match &c.verdict {
                Verdict::Accepted => ("accepted", String::new()),
                Verdict::Refused(r) => ("refused", r.clone()),
            };
            let failed = if self.known.why(&c.crd.origin).is_some() { "FAILED(known)" } else { "FAILED" };
            let (generator, detail) = match (&c.generator, &c.generator_error) {
                (Err(e), _) if reason.is_empty() => (failed, e.clone()),
                (Err(e), _) => (failed, format!("{e} | apiserver: {reason}")),
                (Ok(()), Some(f)) => ("error", format!("{reason} | generator: {}", f.message)),
                (Ok(()), None) => ("generated", reason),
            };
            let detail = detail.replace(['\t', '\n'], " ");
            let _ =
                writeln!(s, "{}\t{}\t{}\t{apiserver}\t{generator}\t{detail}", c.crd.operator, c.crd.origin, c.crd.name);
        }
        s
    }

    fn markdown(&self) -> String {
        let mut s = String::from("# Public CRDs: apiserver, generator, one crate\n\n");
        s.push_str(&self.summary().lines().map(|l| format!("    {l}\n")).collect::<String>());
        s.push_str("\n## Operators\n\n| operator | module | CRDs | accepted | generated | in the crate |\n|---|---|---|---|---|---|\n");
        for o in self.operators {
            let mine: Vec<&Checked> = self.checked.iter().filter(|c| c.crd.operator == o.name).collect();
            let accepted = mine.iter().filter(|c| c.verdict == Verdict::Accepted).count();
            let generated = mine.iter().filter(|c| c.verdict == Verdict::Accepted && c.generator.is_ok()).count();
            let member = if self.many.members.contains(&o.name) { "yes" } else { "no" };
            let _ = writeln!(s, "| {} | {} | {} | {accepted} | {generated} | {member} |", o.name, o.source, mine.len());
        }
        s.push_str("\n## Refused by the apiserver\n\n");
        for c in self.refused() {
            let Verdict::Refused(reason) = &c.verdict else { continue };
            let _ = writeln!(s, "- `{}` ({})\n  - apiserver: {reason}", c.crd.origin, c.crd.name);
            match (&c.generator, &c.generator_error) {
                (Err(e), _) => {
                    let _ = writeln!(s, "  - generator: FAILED: {e}");
                }
                (Ok(()), Some(f)) => {
                    let _ = writeln!(s, "  - generator: {}", f.message);
                }
                (Ok(()), None) => {}
            }
        }
        s.push_str("\n## Failures\n\n");
        for f in self.failures() {
            let _ = writeln!(s, "- {f}");
        }
        s.push_str("\n## Known failures\n\n");
        for f in self.known_failures() {
            let _ = writeln!(s, "- {f}");
        }
        let _ = writeln!(
            s,
            "\n## The many-operator crate\n\n`{}`: {}\n\nDuplicate CRDs left out:\n",
            self.many.dir.display(),
            self.many.members.join(", ")
        );
        for d in &self.many.duplicates {
            let _ = writeln!(s, "- {}", duplicate_text(d));
        }
        if self.many.duplicates.is_empty() {
            s.push_str("- none\n");
        }
        if let Some(side) = &self.many.side_by_side {
            let _ = writeln!(s, "\n## Beside the built-in crate\n\n`{}`:\n", side.dir.display());
            for p in &side.program.pairs {
                let _ = writeln!(s, "- `{}()` ({}) beside `{}()`", p.custom.accessor, p.custom.api_version, p.builtin);
            }
        }
        s
    }
}

fn indented(lines: &str) -> String {
    lines.lines().map(|l| format!("\n      {l}")).collect()
}

fn build_text(build: Option<&Build>, not_generated: bool) -> String {
    match build {
        Some(b) if b.ok => format!("cargo build {}", secs(b.time)),
        Some(b) => format!("cargo build FAILED after {}", secs(b.time)),
        None if not_generated => "not generated".into(),
        None => "not built".into(),
    }
}

fn duplicate_text(d: &Duplicate) -> String {
    let how = if d.same_spec { "the same spec as" } else { "a different spec from" };
    format!("{} ({}): {how} {}", d.origin, d.name, d.kept)
}

fn secs(d: Duration) -> String {
    let total = d.as_secs_f64();
    if total >= 60.0 {
        format!("{}m{:02}s", (total / 60.0) as u64, (total % 60.0) as u64)
    } else {
        format!("{total:.1}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_minutes_past_one() {
        assert_eq!(secs(Duration::from_millis(4_250)), "4.2s");
        assert_eq!(secs(Duration::from_secs(125)), "2m05s");
    }

    #[test]
    fn a_program_beside_the_builtin_crate_that_does_not_build_fails_the_run() {
        let failed =
            || Build { ok: false, time: Duration::ZERO, errors: "error[E0034]: multiple applicable items".into() };
        let program = crate::side_by_side::Program::new(Vec::new(), &Default::default());
        let many = ManyOperatorCrate {
            build: Some(Build { ok: true, time: Duration::ZERO, errors: String::new() }),
            side_by_side: Some(crate::SideBySide { program, dir: "side-by-side".into(), build: Some(failed()) }),
            ..ManyOperatorCrate::default()
        };
        let known = Known::default();
        let report = Report {
            operators: &[],
            checked: &[],
            operator_failures: &[],
            known: &known,
            many: &many,
            apiserver_time: Duration::ZERO,
            generate_time: Duration::ZERO,
            total_time: Duration::ZERO,
        };
        assert_eq!(
            report.failures(),
            ["beside the built-in crate: cargo build fails:\n      error[E0034]: multiple applicable items"]
        );
        assert!(!report.passed());
        assert!(report.summary().contains("cargo build FAILED after 0.0s\n"), "{}", report.summary());
    }

    #[test]
    fn a_duplicate_names_both_copies_and_whether_they_differ() {
        let d = Duplicate {
            name: "gateways.gateway.networking.k8s.io".into(),
            origin: "istio/gateway.yaml".into(),
            kept: "gateway-api/gateway.yaml".into(),
            same_spec: false,
        };
        assert_eq!(
            duplicate_text(&d),
            "istio/gateway.yaml (gateways.gateway.networking.k8s.io): a different spec from gateway-api/gateway.yaml"
        );
    }
}
