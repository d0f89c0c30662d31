//! YAML text as kubectl writes kubeconfigs: Go marshals the typed config
//! to JSON, and sigs.k8s.io/yaml re-encodes that JSON with go-yaml v2.
//! That gives sorted mapping keys (go-yaml's digit-aware order), 2-space
//! indentation, sequences not indented under their key, YAML 1.1 quoting
//! (`"yes"`, `"01"`, `""`), literal blocks for multi-line text and long
//! scalars folded at spaces past column 80. Writing the same way makes a
//! file kubectl wrote come back byte for byte.

use std::cmp::Ordering;

use serde_json::Value;

/// go-yaml v2 folds scalars at spaces once a line is past this column.
const BEST_WIDTH: usize = 80;

/// The YAML document kubectl would write for `value`.
pub(crate) fn to_yaml(value: &Value) -> String {
    let mut out = Emitter { text: String::new(), column: 0 };
    match value {
        Value::Object(map) if !map.is_empty() => out.block_mapping(map, 0),
        Value::Array(items) if !items.is_empty() => out.block_sequence(items, 0),
        scalar => out.value_inline(scalar, 0),
    }
    out.text.push('\n');
    out.text
}

struct Emitter {
    text: String,
    /// Characters on the current line, as go-yaml counts them.
    column: usize,
}

impl Emitter {
    fn put(&mut self, s: &str) {
        self.text.push_str(s);
        self.column += s.chars().count();
    }

    fn put_char(&mut self, c: char) {
        self.text.push(c);
        self.column += 1;
    }

    fn newline(&mut self, indent: usize) {
        self.text.push('\n');
        self.column = 0;
        self.pad(indent);
    }

    fn pad(&mut self, indent: usize) {
        while self.column < indent {
            self.put_char(' ');
        }
    }

    /// A mapping whose first key goes where the cursor is (after `- ` or at
    /// the start of the document); the others at `indent`.
    fn block_mapping(&mut self, map: &serde_json::Map<String, Value>, indent: usize) {
        let mut keys: Vec<&String> = map.keys().collect();
        keys.sort_by(|a, b| key_order(a, b));
        for (i, key) in keys.into_iter().enumerate() {
            if i > 0 {
                self.newline(indent);
            }
            // go-yaml writes a long or multi-line key as an explicit `? key`,
            // its value on the next line after `:`.
            if key.len() > 128 || key.chars().any(is_break) {
                self.put("? ");
                self.scalar(key, indent + 2, false);
                self.newline(indent);
                self.put_char(':');
                match &map[key] {
                    Value::Object(m) if !m.is_empty() => {
                        self.put_char(' ');
                        self.block_mapping(m, indent + 2);
                    }
                    Value::Array(items) if !items.is_empty() => {
                        self.put_char(' ');
                        self.block_sequence(items, indent + 2);
                    }
                    other => {
                        self.put_char(' ');
                        self.value_inline(other, indent + 2);
                    }
                }
                continue;
            }
            self.scalar(key, indent + 2, true);
            self.put_char(':');
            match &map[key] {
                Value::Object(m) if !m.is_empty() => {
                    self.newline(indent + 2);
                    self.block_mapping(m, indent + 2);
                }
                // Sequences under a key are not indented (go-yaml's
                // "indentless" sequences).
                Value::Array(items) if !items.is_empty() => {
                    self.newline(indent);
                    self.block_sequence(items, indent);
                }
                other => {
                    self.put_char(' ');
                    self.value_inline(other, indent + 2);
                }
            }
        }
    }

    fn block_sequence(&mut self, items: &[Value], indent: usize) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.newline(indent);
            }
            self.put("- ");
            match item {
                Value::Object(m) if !m.is_empty() => self.block_mapping(m, indent + 2),
                Value::Array(inner) if !inner.is_empty() => self.block_sequence(inner, indent + 2),
                other => self.value_inline(other, indent + 2),
            }
        }
    }

    /// A value that fits after `key: ` or `- `: a scalar or an empty
    /// collection. `indent` is where folded and block lines continue.
    fn value_inline(&mut self, value: &Value, indent: usize) {
        match value {
            Value::Null => self.put("null"),
            Value::Bool(b) => self.put(if *b { "true" } else { "false" }),
            Value::Number(n) => self.put(&go_number(n)),
            Value::String(s) => self.scalar(s, indent, false),
            Value::Array(_) => self.put("[]"),
            Value::Object(_) => self.put("{}"),
        }
    }

    /// A string in the style go-yaml picks: plain unless it would read back
    /// as something else or holds indicators, then single quotes, then
    /// double quotes; literal blocks for multi-line values.
    fn scalar(&mut self, s: &str, indent: usize, simple_key: bool) {
        let analysis = analyze(s);
        let can_use_plain = !resolves_to_non_string(s) && !is_base60_float(s);
        let mut style = if s.contains('\n') {
            Style::Literal
        } else if can_use_plain {
            Style::Plain
        } else {
            Style::DoubleQuoted
        };
        if simple_key && analysis.multiline {
            style = Style::DoubleQuoted;
        }
        if style == Style::Plain && (!analysis.block_plain_allowed || (s.is_empty() && simple_key)) {
            style = Style::SingleQuoted;
        }
        if style == Style::SingleQuoted && !analysis.single_quoted_allowed {
            style = Style::DoubleQuoted;
        }
        if style == Style::Literal && (!analysis.block_allowed || simple_key) {
            style = Style::DoubleQuoted;
        }
        let allow_breaks = !simple_key;
        match style {
            Style::Plain => self.folded(s, indent, allow_breaks, Quote::None),
            Style::SingleQuoted => self.folded(s, indent, allow_breaks, Quote::Single),
            Style::DoubleQuoted => self.double_quoted(s, indent, allow_breaks),
            Style::Literal => self.literal(s, indent),
        }
    }

    /// Plain and single-quoted scalars: a space past the width becomes a
    /// line break. Neither holds line breaks here (those go to literal or
    /// double-quoted style).
    fn folded(&mut self, s: &str, indent: usize, allow_breaks: bool, quote: Quote) {
        if quote == Quote::Single {
            self.put_char('\'');
        }
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_is_space = chars.get(i + 1) == Some(&' ');
                let inside = quote == Quote::None || (i > 0 && i + 1 < chars.len());
                if allow_breaks && !spaces && self.column > BEST_WIDTH && inside && !next_is_space {
                    self.newline(indent);
                } else {
                    self.put_char(' ');
                }
                spaces = true;
            } else {
                if c == '\'' && quote == Quote::Single {
                    self.put_char('\'');
                }
                self.put_char(c);
                spaces = false;
            }
        }
        if quote == Quote::Single {
            self.put_char('\'');
        }
    }

    fn double_quoted(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        self.put_char('"');
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !is_printable(c) || c == '\u{feff}' || is_break(c) || c == '"' || c == '\\' {
                self.put(&escape(c));
                spaces = false;
            } else if c == ' ' {
                if allow_breaks && !spaces && self.column > BEST_WIDTH && i > 0 && i + 1 < chars.len() {
                    self.newline(indent);
                    if chars.get(i + 1) == Some(&' ') {
                        self.put_char('\\');
                    }
                } else {
                    self.put_char(' ');
                }
                spaces = true;
            } else {
                self.put_char(c);
                spaces = false;
            }
        }
        self.put_char('"');
    }

    fn literal(&mut self, s: &str, indent: usize) {
        self.put_char('|');
        if s.starts_with([' ', '\n']) {
            self.put("2");
        }
        let mut rev = s.chars().rev();
        match (rev.next(), rev.next()) {
            (Some(last), _) if !is_break(last) => self.put_char('-'),
            (Some(_), None) => self.put_char('+'),
            (Some(_), Some(before)) if is_break(before) => self.put_char('+'),
            _ => {}
        }
        self.text.push('\n');
        self.column = 0;
        let mut breaks = true;
        for c in s.chars() {
            if is_break(c) {
                self.text.push('\n');
                self.column = 0;
                breaks = true;
            } else {
                if breaks {
                    self.pad(indent);
                }
                self.put_char(c);
                breaks = false;
            }
        }
        // The document's final newline comes from the caller; a value that
        // ended in a break already ended its line.
        if s.ends_with('\n') {
            self.text.pop();
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    None,
    Single,
}

/// What go-yaml's scalar analysis allows for a value (block context only:
/// JSON-born documents have no flow collections but `{}` and `[]`).
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let chars: Vec<char> = s.chars().collect();
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let (mut line_breaks, mut special) = (false, false);
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) = (false, false, false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;
    for (i, &c) in chars.iter().enumerate() {
        let followed_by_whitespace = chars.get(i + 1).is_none_or(|&n| n == ' ' || n == '\t');
        let last = i + 1 == chars.len();
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%' | '@' | '`' => {
                    block_indicators = true;
                }
                '?' | ':' | '-' if followed_by_whitespace => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_whitespace => block_indicators = true,
                '#' if preceded_by_whitespace => block_indicators = true,
                _ => {}
            }
        }
        if !is_printable(c) {
            special = true;
        }
        if c == ' ' {
            leading_space |= i == 0;
            trailing_space |= last;
            break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            leading_break |= i == 0;
            trailing_break |= last;
            space_break |= previous_space;
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = c == ' ' || c == '\t' || is_break(c);
    }
    let mut a = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break || line_breaks || block_indicators {
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    a
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// libyaml's printable set (tab and characters beyond the BMP are not).
fn is_printable(c: char) -> bool {
    matches!(c, '\n' | ' '..='~' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}') && c != '\u{feff}'
}

fn escape(c: char) -> String {
    let short = match c {
        '\0' => "0",
        '\u{7}' => "a",
        '\u{8}' => "b",
        '\t' => "t",
        '\n' => "n",
        '\u{b}' => "v",
        '\u{c}' => "f",
        '\r' => "r",
        '\u{1b}' => "e",
        '"' => "\"",
        '\\' => "\\",
        '\u{85}' => "N",
        '\u{a0}' => "_",
        '\u{2028}' => "L",
        '\u{2029}' => "P",
        _ => "",
    };
    if !short.is_empty() {
        return format!("\\{short}");
    }
    let v = u32::from(c);
    if v <= 0xff {
        format!("\\x{v:02X}")
    } else if v <= 0xffff {
        format!("\\u{v:04X}")
    } else {
        format!("\\U{v:08X}")
    }
}

/// go-yaml's key order: letters by code point; runs of digits by value;
/// a non-letter before a letter; a prefix before what extends it.
fn key_order(a: &str, b: &str) -> Ordering {
    let (ar, br): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    for i in 0..ar.len().min(br.len()) {
        if ar[i] == br[i] {
            continue;
        }
        let (al, bl) = (ar[i].is_alphabetic(), br[i].is_alphabetic());
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return if bl { Ordering::Less } else { Ordering::Greater };
        }
        let (mut an, mut bn) = (0u128, 0u128);
        if ar[i] == '0' || br[i] == '0' {
            // A zero inside a longer number compares by that number.
            if ar[..i].iter().rev().take_while(|c| c.is_ascii_digit()).any(|&c| c != '0') {
                an = 1;
                bn = 1;
            }
        }
        let digits = |r: &[char], n: &mut u128| {
            let mut end = i;
            while let Some(d) = r.get(end).and_then(|c| c.to_digit(10)) {
                *n = n.saturating_mul(10).saturating_add(u128::from(d));
                end += 1;
            }
            end
        };
        let (ai, bi) = (digits(&ar, &mut an), digits(&br, &mut bn));
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

/// Numbers as go-yaml writes what it decoded from JSON: integers as such,
/// other values with Go's shortest `%g` and YAML's names for infinities.
fn go_number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let f = n.as_f64().unwrap_or_default();
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf".into() } else { "-.inf".into() };
    }
    // Go's shortest 'g' uses an exponent below 1e-4 and from 1e6.
    let exp = if f == 0.0 { 0 } else { f.abs().log10().floor() as i32 };
    if (-4..6).contains(&exp) {
        format!("{f}")
    } else {
        let s = format!("{f:e}");
        let (mantissa, e) = s.split_once('e').unwrap_or((&s, "0"));
        let (sign, digits) = e.strip_prefix('-').map_or(("+", e), |d| ("-", d));
        format!("{mantissa}e{sign}{digits:0>2}")
    }
}

/// Whether go-yaml would read `s`, unquoted, as something else than a
/// string (YAML 1.1: `yes`, `on`, `~`, `0x1F`, `1_000`, `2001-01-01`...).
fn resolves_to_non_string(s: &str) -> bool {
    const SPECIAL: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "n", "N", "no", "No", "NO", "false",
        "False", "FALSE", "off", "Off", "OFF", "", "~", "null", "Null", "NULL", ".nan", ".NaN", ".NAN", ".inf", ".Inf",
        ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
    ];
    if SPECIAL.contains(&s) {
        return true;
    }
    match s.as_bytes()[0] {
        b'.' => s.parse::<f64>().is_ok(),
        b'+' | b'-' | b'0'..=b'9' => {
            if is_timestamp(s) {
                return true;
            }
            let plain = s.replace('_', "");
            is_go_int(&plain) || is_yaml_float(&plain) || is_binary_int(&plain)
        }
        _ => false,
    }
}

/// Go's `strconv.ParseInt(s, 0, 64)` or `ParseUint` would accept it.
fn is_go_int(s: &str) -> bool {
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (digits, radix) = if let Some(d) = unsigned.strip_prefix("0x").or_else(|| unsigned.strip_prefix("0X")) {
        (d, 16)
    } else if let Some(d) = unsigned.strip_prefix("0o").or_else(|| unsigned.strip_prefix("0O")) {
        (d, 8)
    } else if let Some(d) = unsigned.strip_prefix("0b").or_else(|| unsigned.strip_prefix("0B")) {
        (d, 2)
    } else if unsigned.len() > 1 && unsigned.starts_with('0') {
        (&unsigned[1..], 8)
    } else {
        (unsigned, 10)
    };
    !digits.is_empty() && u64::from_str_radix(digits, radix).is_ok()
}

fn is_binary_int(s: &str) -> bool {
    let digits = s.strip_prefix("0b").or_else(|| s.strip_prefix("-0b"));
    digits.is_some_and(|d| !d.is_empty() && u64::from_str_radix(d, 2).is_ok())
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn is_yaml_float(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(at) => (&s[..at], Some(&s[at + 1..])),
        None => (s, None),
    };
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => !frac.is_empty() && digits(frac),
        Some((int, frac)) => !int.is_empty() && digits(int) && digits(frac),
        None => !mantissa.is_empty() && digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exponent_ok
}

/// `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`, YAML 1.1's
/// sexagesimal numbers such as `1:20`.
fn is_base60_float(s: &str) -> bool {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    if !body.starts_with(|c: char| c.is_ascii_digit()) || !body.contains(':') {
        return false;
    }
    let (main, frac) = match body.split_once('.') {
        Some((m, f)) => (m, Some(f)),
        None => (body, None),
    };
    if frac.is_some_and(|f| !f.bytes().all(|b| b.is_ascii_digit() || b == b'_')) {
        return false;
    }
    let mut parts = main.split(':');
    let head_ok = parts.next().is_some_and(|h| h.bytes().all(|b| b.is_ascii_digit() || b == b'_'));
    head_ok
        && parts.all(|p| match p.as_bytes() {
            [d] => d.is_ascii_digit(),
            [t, d] => (b'0'..=b'5').contains(t) && d.is_ascii_digit(),
            _ => false,
        })
}

/// The timestamp forms go-yaml v2 recognises: `2006-1-2`, optionally with
/// `T`/`t` and a time ending in `Z` or an offset, or a space and a time.
fn is_timestamp(s: &str) -> bool {
    fn number(s: &str, min: usize, max: usize) -> Option<(u32, &str)> {
        let len = s.bytes().take_while(u8::is_ascii_digit).count();
        if len < min || len > max {
            return None;
        }
        Some((s[..len].parse().ok()?, &s[len..]))
    }
    fn time(s: &str) -> Option<&str> {
        let (h, rest) = number(s, 1, 2)?;
        let (m, rest) = number(rest.strip_prefix(':')?, 1, 2)?;
        let (sec, mut rest) = number(rest.strip_prefix(':')?, 1, 2)?;
        if h > 23 || m > 59 || sec > 59 {
            return None;
        }
        if let Some(frac) = rest.strip_prefix('.') {
            let len = frac.bytes().take_while(u8::is_ascii_digit).count();
            if len == 0 || len > 9 {
                return None;
            }
            rest = &frac[len..];
        }
        Some(rest)
    }
    let Some((year, rest)) = number(s, 4, 4) else { return false };
    let _ = year;
    let Some((month, rest)) = rest.strip_prefix('-').and_then(|r| number(r, 1, 2)) else { return false };
    let Some((day, rest)) = rest.strip_prefix('-').and_then(|r| number(r, 1, 2)) else { return false };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return false;
    }
    if rest.is_empty() {
        return true;
    }
    if let Some(t) = rest.strip_prefix(['T', 't']) {
        let Some(zone) = time(t) else { return false };
        if zone == "Z" {
            return true;
        }
        let Some(offset) = zone.strip_prefix(['+', '-']) else { return false };
        return matches!(offset.as_bytes(), [a, b, b':', c, d] if [a, b, c, d].iter().all(|x| x.is_ascii_digit()));
    }
    rest.strip_prefix(' ').and_then(time).is_some_and(str::is_empty)
}

#[cfg(test)]
#[path = "kubeconfig_yaml_tests.rs"]
mod tests;
