//! What a client does with the apiserver's warnings: the `Warning` headers
//! (RFC 7234, code 299) it sends about deprecated APIs, fields it ignored
//! or dropped, and admission webhooks' messages (client-go's
//! `WarningHandler`).
//!
//! The default, [`LogWarnings::deduplicated`], logs each distinct warning
//! once per client through `tracing` at `warn` (what kubectl does with
//! `NewWarningWriter{Deduplicate: true}`): a controller listing a
//! deprecated kind every resync would otherwise log the same line for ever.
//! [`NoWarnings`] drops them; a program that shows them its own way (a
//! CLI printing to stderr, a test collecting them) implements
//! [`WarningHandler`] and sets it on [`Config::warning_handler`](super::Config::warning_handler).

use std::collections::HashSet;
use std::fmt;

/// Receives every warning of every response, from whatever task sent the
/// request; keep it quick (client-go `WarningHandler`).
pub trait WarningHandler: Send + Sync {
    /// One warning: its code (299 for Kubernetes' own), the agent that
    /// sent it (`-` for the apiserver) and its text, unquoted.
    fn handle_warning(&self, code: u16, agent: &str, text: &str);
}

/// Logs warnings through `tracing` at `warn`: each distinct text once
/// ([`deduplicated`](Self::deduplicated), the default: a controller listing
/// a deprecated kind every resync would log the same line for ever), or
/// every one ([`every`](Self::every)).
pub struct LogWarnings {
    /// Texts already logged, when deduplicating.
    seen: Option<parking_lot::Mutex<HashSet<String>>>,
}

impl LogWarnings {
    /// Logs every warning, as client-go's default `WarningLogger`.
    pub fn every() -> Self {
        LogWarnings { seen: None }
    }

    /// Logs each distinct text once (the default).
    pub fn deduplicated() -> Self {
        LogWarnings { seen: Some(parking_lot::Mutex::new(HashSet::new())) }
    }
}

impl Default for LogWarnings {
    fn default() -> Self {
        LogWarnings::deduplicated()
    }
}

impl fmt::Debug for LogWarnings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogWarnings").field("deduplicate", &self.seen.is_some()).finish()
    }
}

impl WarningHandler for LogWarnings {
    fn handle_warning(&self, code: u16, agent: &str, text: &str) {
        if let Some(seen) = &self.seen
            && !seen.lock().insert(text.to_owned())
        {
            return;
        }
        tracing::warn!(warning = %text, code, agent, "apiserver warning");
    }
}

/// Drops every warning (client-go `NoWarnings`).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoWarnings;

impl WarningHandler for NoWarnings {
    fn handle_warning(&self, _code: u16, _agent: &str, _text: &str) {}
}

/// One warning of a `Warning` header value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Warning {
    pub(crate) code: u16,
    pub(crate) agent: String,
    pub(crate) text: String,
}

/// The warnings of one `Warning` header value: `299 - "text"`, several
/// separated by commas, a text's `\"` and `\\` unescaped, an optional date
/// after the text ignored (apimachinery's `ParseWarningHeader`). A value
/// that does not parse is one warning of code 0 with the whole value as
/// its text, so nothing the server said is lost.
pub(crate) fn parse_warning_header(value: &str) -> Vec<Warning> {
    let mut out = Vec::new();
    let mut rest = value.trim();
    while !rest.is_empty() {
        match parse_one(rest) {
            Some((warning, after)) => {
                out.push(warning);
                rest = after.trim_start();
                match rest.strip_prefix(',') {
                    Some(r) => rest = r.trim_start(),
                    None if rest.is_empty() => {}
                    None => {
                        out.push(Warning { code: 0, agent: String::new(), text: rest.to_owned() });
                        break;
                    }
                }
            }
            None => {
                out.push(Warning { code: 0, agent: String::new(), text: rest.to_owned() });
                break;
            }
        }
    }
    out
}

/// `code SP agent SP "text" [SP "date"]`, then what follows.
fn parse_one(s: &str) -> Option<(Warning, &str)> {
    let (code, s) = s.split_once(' ')?;
    if code.len() != 3 {
        return None;
    }
    let code: u16 = code.parse().ok()?;
    let (agent, s) = s.trim_start().split_once(' ')?;
    let (text, mut after) = quoted(s.trim_start())?;
    // An optional warn-date, itself quoted.
    if let Some(date) = after.strip_prefix(' ').map(str::trim_start).filter(|d| d.starts_with('"')) {
        after = quoted(date)?.1;
    }
    Some((Warning { code, agent: agent.to_owned(), text }, after))
}

/// A quoted string at the start of `s`, unescaped, and what follows it.
fn quoted(s: &str) -> Option<(String, &str)> {
    let mut chars = s.strip_prefix('"')?.char_indices();
    let mut text = String::new();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => text.push(chars.next()?.1),
            '"' => return Some((text, &s[i + 2..])),
            c => text.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn w(code: u16, agent: &str, text: &str) -> Warning {
        Warning { code, agent: agent.into(), text: text.into() }
    }

    #[test]
    fn headers_parse_as_apimachinery_parses_them() {
        assert_eq!(parse_warning_header(r#"299 - "simple""#), [w(299, "-", "simple")]);
        assert_eq!(
            parse_warning_header(
                r#"299 - "with \"quotes\" and \\", 299 other "second" "Sat, 25 Aug 2012 23:34:45 GMT""#
            ),
            [w(299, "-", r#"with "quotes" and \"#), w(299, "other", "second")]
        );
        assert_eq!(parse_warning_header("not a warning"), [w(0, "", "not a warning")]);
        assert_eq!(parse_warning_header(r#"299 - "unterminated"#), [w(0, "", r#"299 - "unterminated"#)]);
        assert_eq!(parse_warning_header(r#"299 - "a" junk"#), [w(299, "-", "a"), w(0, "", "junk")]);
        assert!(parse_warning_header("").is_empty());
    }

    #[derive(Default)]
    struct Collect(parking_lot::Mutex<Vec<String>>);
    impl WarningHandler for Collect {
        fn handle_warning(&self, _code: u16, _agent: &str, text: &str) {
            self.0.lock().push(text.to_owned());
        }
    }

    #[test]
    fn handlers_are_objects_that_see_every_warning() {
        let collect = Arc::new(Collect::default());
        let handler: Arc<dyn WarningHandler> = collect.clone();
        handler.handle_warning(299, "-", "a");
        handler.handle_warning(299, "-", "a");
        assert_eq!(*collect.0.lock(), ["a", "a"]);
    }

    #[test]
    fn the_default_logs_each_text_once() {
        let log = LogWarnings::deduplicated();
        log.handle_warning(299, "-", "a");
        log.handle_warning(299, "-", "b");
        log.handle_warning(299, "-", "a");
        assert_eq!(log.seen.as_ref().unwrap().lock().len(), 2);
        assert!(LogWarnings::every().seen.is_none());
    }
}
