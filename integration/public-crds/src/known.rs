//! Failures already known and being fixed elsewhere in the generator: a
//! file of `<origin> <why>` lines (an origin as the report prints it, or
//! the start of one; `#` comments). A listed failure is reported as known
//! and does not fail the run; a line that no failure matches any more
//! does, so the list only ever shrinks.

use std::path::{Path, PathBuf};

/// Reading the list.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file cannot be read.
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        /// The list.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// A line has an origin but no reason.
    #[error("{}:{line}: expected '<origin> <why>'", path.display())]
    Line {
        /// The list.
        path: PathBuf,
        /// The line number.
        line: usize,
    },
}

/// The known failures.
#[derive(Debug, Default)]
pub struct Known {
    entries: Vec<(String, String)>,
}

impl Known {
    /// Reads the list at `path`.
    pub fn load(path: &Path) -> Result<Known, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Read { path: path.to_owned(), source })?;
        Known::parse(&text).map_err(|line| Error::Line { path: path.to_owned(), line })
    }

    /// Parses the list's text; `Err` holds the number of a bad line.
    fn parse(text: &str) -> Result<Known, usize> {
        let mut entries = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split_once('#').map_or(line, |(before, _)| before).trim();
            if line.is_empty() {
                continue;
            }
            let (origin, why) = line.split_once(char::is_whitespace).ok_or(i + 1)?;
            entries.push((origin.to_owned(), why.trim().to_owned()));
        }
        Ok(Known { entries })
    }

    /// Why the failure of the CRD at `origin` is known, if it is.
    pub fn why(&self, origin: &str) -> Option<&str> {
        self.entries.iter().find(|(o, _)| origin.starts_with(o.as_str())).map(|(_, why)| why.as_str())
    }

    /// The entries that none of `failing` (origins) matches.
    pub fn stale<'a>(&'a self, failing: &[&str]) -> Vec<&'a str> {
        self.entries
            .iter()
            .filter(|(o, _)| !failing.iter().any(|f| f.starts_with(o.as_str())))
            .map(|(o, _)| o.as_str())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_match_by_origin_prefix_and_go_stale() {
        let known = Known::parse("# why each fails\nop/a_ empty group   # trailing note\n\nop/b.yaml kind\n").unwrap();
        assert_eq!(known.why("op/a_x.yaml"), Some("empty group"));
        assert_eq!(known.why("op/b.yaml#2"), Some("kind"));
        assert_eq!(known.why("op/c.yaml"), None);
        assert_eq!(known.stale(&["op/a_x.yaml"]), ["op/b.yaml"]);
    }

    #[test]
    fn a_line_without_a_reason_is_named() {
        assert_eq!(Known::parse("ok/a reason\nop/only\n").unwrap_err(), 2);
    }
}
