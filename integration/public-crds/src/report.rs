//! The summary printed at the end, and the details written beside it:
//! `report.md` (per operator, every refusal with the apiserver's reason and
//! the generator's error, every failure, the clashes) and `results.tsv`
//! (one line per CRD).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::apiserver::Verdict;
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
            let errors: String = b.errors.lines().map(|l| format!("\n      {l}")).collect();
            out.push(format!("many-operator crate: cargo build fails:{errors}"));
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
        let build = match &m.build {
            Some(b) if b.ok => format!("cargo build {}", secs(b.time)),
            Some(b) => format!("cargo build FAILED after {}", secs(b.time)),
            None if m.failure.is_some() => "not generated".into(),
            None => "not built".into(),
        };
        let _ = writeln!(
            s,
            "  many-operator crate: {} operators, {} CRDs, {} types; {build}",
            m.members.len(),
            m.crds,
            m.types
        );
        for e in &m.excluded {
            let _ = writeln!(s, "    left out {}: {}", e.operator, e.reason);
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
        s.push_str("\n## Group/version clashes (left for the generator's naming)\n\n");
        for c in &self.many.clashes {
            let _ = writeln!(s, "- {c}");
        }
        let _ = writeln!(
            s,
            "\n## The many-operator crate\n\n`{}`: {}\n",
            self.many.dir.display(),
            self.many.members.join(", ")
        );
        for e in &self.many.excluded {
            let _ = writeln!(s, "- left out {}: {}", e.operator, e.reason);
        }
        s
    }
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
    use super::secs;
    use std::time::Duration;

    #[test]
    fn durations_read_as_minutes_past_one() {
        assert_eq!(secs(Duration::from_millis(4_250)), "4.2s");
        assert_eq!(secs(Duration::from_secs(125)), "2m05s");
    }
}
