//! Input text written into generated files other than as a Rust token:
//! comment lines (the `@generated ... from <label>` headers), doc comments,
//! and TOML strings.
//!
//! Names are checked where they are read ([`crate::naming`]), but labels
//! (file names, a server's version) and descriptions are free text, so
//! every writer of such text goes through one of these helpers, and no
//! text, valid or not, can end a comment or a string early:
//! - [`comment`] for a label in a one-line comment of any syntax (`//`,
//!   `#`, `<!-- -->`): line breaks and other control characters are
//!   written as `\u{..}`, and `*/` and `-->` are broken up.
//! - [`doc`] and [`inner_doc`] for every doc comment: one `#[doc]`
//!   attribute per line, with `\r\n` and a lone `\r` as line breaks and
//!   what rustc refuses in a comment written as `\u{..}`.
//! - [`toml_string`] for a value in Cargo.toml, quoted and escaped by
//!   `toml_edit`.

use proc_macro2::TokenStream;
use quote::quote;

/// Characters that rustc refuses in comments (bidirectional overrides and
/// isolates: the `text_direction_codepoint_in_comment` lint, denied by
/// default) or that end a line in some editor (line and paragraph
/// separators).
fn is_unsafe_in_comment(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
}

/// Writes `c` as `\u{..}` when it may not stand in a comment as itself.
fn push_visible(out: &mut String, c: char) {
    if is_unsafe_in_comment(c) {
        out.push_str(&format!("\\u{{{:x}}}", c as u32));
    } else {
        out.push(c);
    }
}

/// `label` as text that stays inside a one-line comment of Rust, TOML or
/// HTML: one line, no control character, no `*/` or `-->`. Plain labels
/// (`kubernetes/1.35`, `crds/things.yaml (document 0, v1)`) are unchanged.
pub fn comment(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    for c in label.chars() {
        // `*/` ends a block comment, `-->` an HTML one: a backslash between.
        if (c == '/' && out.ends_with('*')) || (c == '>' && out.ends_with("--")) {
            out.push('\\');
        }
        push_visible(&mut out, c);
    }
    out
}

/// The lines of a doc comment: `\r\n` and a lone `\r` break lines as `\n`
/// does (rustc refuses a bare CR in a doc comment), and characters rustc
/// refuses in a comment are written as `\u{..}`.
pub fn doc_lines(text: &str) -> Vec<String> {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    text.split('\n')
        .map(|line| {
            let mut out = String::with_capacity(line.len());
            for c in line.chars() {
                // A tab is fine in a comment and common in descriptions.
                if c == '\t' { out.push(c) } else { push_visible(&mut out, c) }
            }
            out
        })
        .collect()
}

/// Outer doc attributes (`///`) for `text`, one per line, each line after a
/// space; nothing for blank text.
pub fn doc(text: &str) -> TokenStream {
    let lines = attr_lines(text);
    quote!(#(#[doc = #lines])*)
}

/// Inner doc attributes (`//!`) for `text`, as [`doc`].
pub fn inner_doc(text: &str) -> TokenStream {
    let lines = attr_lines(text);
    quote!(#(#![doc = #lines])*)
}

fn attr_lines(text: &str) -> Vec<String> {
    if text.trim().is_empty() {
        return Vec::new();
    }
    // `str::lines` drops a final line break, and so do these.
    let text = text.strip_suffix("\r\n").or_else(|| text.strip_suffix(['\n', '\r'])).unwrap_or(text);
    doc_lines(text).into_iter().map(|l| format!(" {l}")).collect()
}

/// `value` as a quoted TOML string, escaped as TOML requires.
#[cfg(feature = "cli")]
pub fn toml_string(value: &str) -> String {
    toml_edit::Value::from(value).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_labels_are_kept() {
        for label in ["kubernetes/1.35", "crds/things.yaml (document 0, v1)", "a*b/c-d>e", "größe"] {
            assert_eq!(comment(label), label);
        }
    }

    #[test]
    fn labels_stay_on_their_line_and_inside_their_comment() {
        assert_eq!(
            comment("v1). DO NOT EDIT.\npub fn injected() {}\n//"),
            "v1). DO NOT EDIT.\\u{a}pub fn injected() {}\\u{a}//"
        );
        assert_eq!(comment("a\r\nb\u{2028}c\u{202e}d\0"), "a\\u{d}\\u{a}b\\u{2028}c\\u{202e}d\\u{0}");
        assert_eq!(comment("x */ y --> z"), "x *\\/ y --\\> z");
        assert_eq!(comment("**/"), "**\\/");
    }

    #[test]
    fn doc_lines_break_at_every_line_break() {
        assert_eq!(doc_lines("a\r\nb\rc\nd"), ["a", "b", "c", "d"]);
        assert_eq!(doc_lines("tab\there \u{202e}rtl\u{7}"), ["tab\there \\u{202e}rtl\\u{7}"]);
        assert_eq!(attr_lines("one\ntwo\n"), [" one", " two"]);
        assert_eq!(attr_lines("one\r"), [" one"]);
        assert!(attr_lines(" \n ").is_empty());
    }

    #[test]
    fn doc_comments_parse_and_format_as_comments() {
        let tokens = doc("first\rsecond\r\n*/ third\u{202e}");
        let item: syn::File = syn::parse2(quote!(#tokens pub struct S;)).unwrap();
        let text = prettyplease::unparse(&item);
        assert_eq!(text, "/// first\n/// second\n/// */ third\\u{202e}\npub struct S;\n");
        // What prettyplease writes is what rustc reads back.
        assert!(syn::parse_file(&text).is_ok());
    }

    proptest::proptest! {
        #[test]
        fn no_label_leaves_its_comment(label in "\\PC*|[\\x00-\\x7f\u{2028}\u{202e}]*") {
            let text = comment(&label);
            proptest::prop_assert!(!text.contains("*/") && !text.contains("-->"), "{:?} -> {:?}", label, text);
            proptest::prop_assert!(!text.chars().any(is_unsafe_in_comment), "{:?} -> {:?}", label, text);
        }

        #[test]
        fn every_doc_comment_is_one_comment_per_line(text in "\\PC*|[\\x00-\\x7f\u{2028}\u{202e}]*") {
            let tokens = doc(&text);
            let item: syn::File = syn::parse2(quote!(#tokens pub struct S;)).unwrap();
            let out = prettyplease::unparse(&item);
            proptest::prop_assert!(out.ends_with("pub struct S;\n"), "{:?}", out);
            for line in out.lines().filter(|l| *l != "pub struct S;") {
                proptest::prop_assert!(line.starts_with("///"), "{:?} in {:?}", line, out);
                proptest::prop_assert!(!line.chars().any(|c| c != '\t' && is_unsafe_in_comment(c)), "{:?}", line);
            }
        }

        #[test]
        fn every_toml_string_reads_back(value in "\\PC*|[\\x00-\\x7f]*") {
            let doc: toml_edit::DocumentMut = format!("key = {}", toml_string(&value)).parse().unwrap();
            proptest::prop_assert_eq!(doc["key"].as_str(), Some(value.as_str()));
        }
    }

    #[test]
    fn toml_strings_are_quoted_and_escaped() {
        assert_eq!(toml_string("../runtime"), "\"../runtime\"");
        let nasty = "a\"\n[workspace]\nb\\\u{7f}";
        let doc: toml_edit::DocumentMut = format!("key = {}", toml_string(nasty)).parse().unwrap();
        assert_eq!(doc["key"].as_str(), Some(nasty));
        assert_eq!(doc.len(), 1);
    }
}
