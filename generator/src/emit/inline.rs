//! A generated crate as one module of another crate: what a build script
//! writes to `OUT_DIR` for `include!` ([`crate::Builder`]).
//!
//! The crate's files become one file holding `pub mod <name> { … }`: every
//! `mod x;` is replaced by its file's contents in a block (an `include!`d
//! file cannot name other files: its `mod x;` would be looked up beside the
//! including file), `crate::` paths are rooted at the module's place in the
//! including crate, and the crate's feature gates are decided here, since
//! the including crate has no such features (`feature = "x"` becomes
//! `all()` when on and `any()` when off, so Cargo's check of `cfg` names
//! has nothing to report).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::Output;
use crate::error::{Error, Result};

/// The crate `output` as the single module `name`, placed at `root` in the
/// including crate (`crate::greetings`), with the features `enabled` on and
/// every other feature off.
pub fn inline_module(output: &Output, name: &str, root: &str, enabled: &BTreeSet<String>) -> Result<String> {
    let lib = PathBuf::from("src/lib.rs");
    let body = inline_file(output, &lib, root, enabled, 0)?;
    Ok(format!("pub mod {name} {{\n{body}}}\n"))
}

/// Nesting deeper than any generated crate goes: a guard against a cycle.
const MAX_DEPTH: usize = 16;

fn inline_file(output: &Output, path: &Path, root: &str, enabled: &BTreeSet<String>, depth: usize) -> Result<String> {
    if depth > MAX_DEPTH {
        return Err(Error::Check(format!("{}: modules nested deeper than {MAX_DEPTH}", path.display())));
    }
    let text =
        output.files.get(path).ok_or_else(|| Error::Check(format!("the generated crate has no {}", path.display())))?;
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if let Some((head, module)) = module_declaration(line) {
            let child = child_file(output, path, module)?;
            out.push_str(head);
            out.push_str(" {\n");
            out.push_str(&inline_file(output, &child, root, enabled, depth + 1)?);
            let indent = &line[..line.len() - line.trim_start().len()];
            out.push_str(indent);
            out.push_str("}\n");
            continue;
        }
        let line = if is_cfg_attribute(line) { decide_features(line, enabled) } else { line.to_owned() };
        out.push_str(&root_crate_paths(&line, root));
        out.push('\n');
    }
    Ok(out)
}

/// `pub mod name;` → (`pub mod name`, `name`).
fn module_declaration(line: &str) -> Option<(&str, &str)> {
    let trimmed = line.trim_end();
    let head = trimmed.strip_suffix(';')?;
    let start = head.trim_start();
    let rest = start.strip_prefix("pub ").unwrap_or(start);
    let rest = match rest.strip_prefix("pub(") {
        Some(r) => r.split_once(") ")?.1,
        None => rest,
    };
    let module = rest.strip_prefix("mod ")?;
    let plain = module.strip_prefix("r#").unwrap_or(module);
    let is_ident = !plain.is_empty() && plain.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    is_ident.then_some((head, module))
}

/// Where `mod module;` in `parent` is: `dir/module.rs` or
/// `dir/module/mod.rs`, `dir` being the parent's own directory for
/// `lib.rs` and `mod.rs` and `<parent without .rs>/` otherwise.
fn child_file(output: &Output, parent: &Path, module: &str) -> Result<PathBuf> {
    let file_name = parent.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let dir = if file_name == "lib.rs" || file_name == "mod.rs" {
        parent.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        parent.with_extension("")
    };
    let plain = module.strip_prefix("r#").unwrap_or(module);
    [dir.join(format!("{plain}.rs")), dir.join(plain).join("mod.rs")]
        .into_iter()
        .find(|candidate| output.files.contains_key(candidate))
        .ok_or_else(|| Error::Check(format!("{}: no file for `mod {module};`", parent.display())))
}

fn is_cfg_attribute(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("#[cfg(") || t.starts_with("#![cfg(") || t.starts_with("#[cfg_attr(")
}

/// Every `feature = "x"` of a `cfg` line: `all()` (true) when `x` is
/// enabled, `any()` (false) when not.
fn decide_features(line: &str, enabled: &BTreeSet<String>) -> String {
    const KEY: &str = "feature = \"";
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(KEY) {
        out.push_str(&rest[..at]);
        let after = &rest[at + KEY.len()..];
        let Some(end) = after.find('"') else {
            out.push_str(&rest[at..]);
            return out;
        };
        out.push_str(if enabled.contains(&after[..end]) { "all()" } else { "any()" });
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// `crate::x` → `<root>::x`; `$crate::` and identifiers ending in `crate`
/// are left alone.
fn root_crate_paths(line: &str, root: &str) -> String {
    const KEY: &str = "crate::";
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(KEY) {
        let before = rest[..at].chars().next_back();
        let part_of_word = before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
        out.push_str(&rest[..at]);
        if part_of_word {
            out.push_str(KEY);
        } else {
            out.push_str(root);
            out.push_str("::");
        }
        rest = &rest[at + KEY.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(files: &[(&str, &str)]) -> Output {
        Output { files: files.iter().map(|(p, t)| (PathBuf::from(p), (*t).to_owned())).collect() }
    }

    #[test]
    fn modules_are_inlined_from_both_layouts() {
        let out = output(&[
            ("src/lib.rs", "#![allow(clippy::all)]\npub mod a;\n#[cfg(feature = \"informers\")]\npub mod b;\n"),
            ("src/a/mod.rs", "mod c;\npub use c::*;\n"),
            ("src/a/c.rs", "pub struct C(crate::b::B);\n"),
            ("src/b.rs", "pub struct B;\n"),
        ]);
        let enabled = BTreeSet::from(["informers".to_owned()]);
        let text = inline_module(&out, "greetings", "crate::k8s::greetings", &enabled).unwrap();
        assert_eq!(
            text,
            "pub mod greetings {\n#![allow(clippy::all)]\npub mod a {\nmod c {\npub struct C(crate::k8s::greetings::b::B);\n}\npub use c::*;\n}\n#[cfg(all())]\npub mod b {\npub struct B;\n}\n}\n"
        );
        syn::parse_file(&text).expect("the module parses");
    }

    #[test]
    fn features_off_become_false_and_not_off_true() {
        let enabled = BTreeSet::from(["informers".to_owned()]);
        assert_eq!(decide_features("    #[cfg(not(feature = \"apply\"))]", &enabled), "    #[cfg(not(any()))]");
        assert_eq!(
            decide_features("#[cfg(any(feature = \"apply\", feature = \"informers\"))]", &enabled),
            "#[cfg(any(any(), all()))]"
        );
    }

    #[test]
    fn only_crate_paths_are_rooted() {
        assert_eq!(
            root_crate_paths("use crate::a; $crate::b; mycrate::c", "crate::m"),
            "use crate::m::a; $crate::b; mycrate::c"
        );
    }

    #[test]
    fn a_missing_module_file_is_an_error_naming_it() {
        let out = output(&[("src/lib.rs", "pub mod gone;\n")]);
        let e = inline_module(&out, "m", "crate::m", &BTreeSet::new()).unwrap_err().to_string();
        assert!(e.contains("src/lib.rs") && e.contains("mod gone;"), "{e}");
    }
}
