//! The cases of apimachinery's own field selector tests
//! (`k8s.io/apimachinery/pkg/fields/selector_test.go` and `fields_test.go`,
//! v0.35), as tables of ours. Each table names the upstream function it
//! follows; cases our API cannot express are kept as comments saying why.

use std::collections::BTreeMap;

use super::fields::{split_term, split_terms};
use super::*;

fn set(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn parse(s: &str) -> FieldSelector {
    FieldSelector::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

// TestSplitTerms
#[test]
fn split_terms_table() {
    let table: &[(&str, &[&str])] = &[
        // Simple selectors
        (r"a", &[r"a"]),
        (r"a=avalue", &[r"a=avalue"]),
        (r"a=avalue,b=bvalue", &[r"a=avalue", r"b=bvalue"]),
        (r"a=avalue,b==bvalue,c!=cvalue", &[r"a=avalue", r"b==bvalue", r"c!=cvalue"]),
        // Empty terms
        (r"", &[]),
        (r"a=a,", &[r"a=a", r""]),
        (r",a=a", &[r"", r"a=a"]),
        // Escaped values
        (r"k=\,,k2=v2", &[r"k=\,", r"k2=v2"]),     // escaped comma in value
        (r"k=\\,k2=v2", &[r"k=\\", r"k2=v2"]),     // escaped backslash, unescaped comma
        (r"k=\\\,,k2=v2", &[r"k=\\\,", r"k2=v2"]), // escaped backslash and comma
        (r"k=\a\b\", &[r"k=\a\b\"]),               // non-escape sequences
        (r"k=\", &[r"k=\"]),                       // orphan backslash
        // Multi-byte
        ("함=수,목=록", &["함=수", "목=록"]),
    ];
    for (selector, want) in table {
        assert_eq!(split_terms(selector), *want, "{selector:?}");
    }
}

// TestSplitTerm. Our operator type folds `==` into `=`; the right-hand side
// tells the two apart.
#[test]
fn split_term_table() {
    use FieldOperator::*;
    type Split<'a> = Option<(&'a str, FieldOperator, &'a str)>;
    let table: &[(&str, Split<'_>)] = &[
        // Simple terms
        (r"a=value", Some((r"a", Equals, r"value"))),
        (r"b==value", Some((r"b", Equals, r"value"))),
        (r"c!=value", Some((r"c", NotEquals, r"value"))),
        // Empty or invalid terms
        (r"", None),
        (r"a", None),
        // Escaped values
        (r"k=\,", Some((r"k", Equals, r"\,"))),
        (r"k=\=", Some((r"k", Equals, r"\="))),
        (r"k=\\\a\b\=\,\", Some((r"k", Equals, r"\\\a\b\=\,\"))),
        // Multi-byte
        ("함=수", Some(("함", Equals, "수"))),
        // Not an upstream case: escapes are not skipped when splitting (we
        // used to skip them and accepted this selector, which upstream
        // rejects when unescaping `x=y`).
        (r"k\=x=y", Some((r"k\", Equals, r"x=y"))),
    ];
    for (term, want) in table {
        assert_eq!(split_term(term), *want, "{term:?}");
    }
    assert!(FieldSelector::parse(r"k\=x=y").is_err());
}

// TestEscapeValue
#[test]
fn escape_value_table() {
    let table: &[(&str, &str)] =
        &[(r"", r""), (r"a", r"a"), (r"=", r"\="), (r",", r"\,"), (r"\", r"\\"), (r"\=\,\", r"\\\=\\\,\\")];
    for (unescaped, escaped) in table {
        assert_eq!(escape_value(unescaped), *escaped, "escape {unescaped:?}");
        assert_eq!(unescape_value(escaped).as_deref(), Ok(*unescaped), "unescape {escaped:?}");
    }
    // Invalid escape sequences: an orphan slash, an unrecognized escape.
    for invalid in [r"\", r"\\\", r"\a"] {
        assert!(
            matches!(unescape_value(invalid), Err(Error::InvalidEscape { .. })),
            "{invalid:?}: {:?}",
            unescape_value(invalid)
        );
    }
}

// TestSelectorParse: good strings print back unchanged; bad ones fail.
#[test]
fn selector_parse() {
    for good in ["x=a,y=b,z=c", "", "x!=a,y=b", r"x=a||y\=b", r"x=a\=\=b"] {
        assert_eq!(parse(good).to_string(), good);
    }
    for bad in ["x=a||y=b", "x==a==b", "x=a,b", "x in (a)", "x in (a,b,c)", "x"] {
        assert!(FieldSelector::parse(bad).is_err(), "{bad:?} parsed");
    }
}

// TestDeterministicParse
#[test]
fn deterministic_parse() {
    assert_eq!(parse("x=a,a=x").to_string(), parse("a=x,x=a").to_string());
}

// TestEverything, TestNilMapIsValid, TestSetIsEmpty
#[test]
fn everything_and_empty() {
    assert!(FieldSelector::everything().matches(&set(&[("x", "y")])));
    assert!(FieldSelector::everything().is_everything());
    assert!(FieldSelector::from_fields(set(&[])).unwrap().is_everything());
    // A term with an empty field and value is still a term.
    assert!(!FieldSelector::from_terms([FieldTerm::new("", FieldOperator::Equals, "").unwrap()]).is_everything());
    assert!(!FieldSelector::from_terms([FieldTerm::new("", FieldOperator::NotEquals, "").unwrap()]).is_everything());
    assert!(!FieldSelector::from_fields(set(&[("a", "b")])).unwrap().is_everything());
    // Nested andTerms: not expressible (our selector is one flat list).
}

// TestSelectorMatches
#[test]
fn selector_matches() {
    let fieldset = set(&[("foo", "bar"), ("baz", "blah"), ("complex", r"=value\,\")]);
    let table: &[(&str, BTreeMap<String, String>, bool)] = &[
        ("", set(&[("x", "y")]), true),
        ("x=y", set(&[("x", "y")]), true),
        ("x=y,z=w", set(&[("x", "y"), ("z", "w")]), true),
        ("x!=y,z!=w", set(&[("x", "z"), ("z", "a")]), true),
        ("notin=in", set(&[("notin", "in")]), true), // in and notin in exactMatch
        ("x=y", set(&[("x", "z")]), false),
        ("x=y,z=w", set(&[("x", "w"), ("z", "w")]), false),
        ("x!=y,z!=w", set(&[("x", "z"), ("z", "w")]), false),
        ("foo=bar", fieldset.clone(), true),
        ("baz=blah", fieldset.clone(), true),
        ("foo=bar,baz=blah", fieldset.clone(), true),
        (r"foo=bar,baz=blah,complex=\=value\\\,\\", fieldset.clone(), true),
        ("foo=blah", fieldset.clone(), false),
        ("baz=bar", fieldset.clone(), false),
        ("foo=bar,foobar=bar,baz=blah", fieldset, false),
    ];
    for (selector, fields, want) in table {
        assert_eq!(parse(selector).matches(fields), *want, "{selector:?} on {fields:?}");
    }
}

// TestOneTermEqualSelector
#[test]
fn one_term_equal_selector() {
    let s = FieldSelector::one_term_equal("x", "y").unwrap();
    assert!(s.matches(&set(&[("x", "y")])));
    assert!(!s.matches(&set(&[("x", "z")])));
}

// TestSetMatches
#[test]
fn set_matches() {
    let labelset = set(&[("foo", "bar"), ("baz", "blah")]);
    let table: &[(&[(&str, &str)], bool)] = &[
        (&[], true),
        (&[("foo", "bar")], true),
        (&[("baz", "blah")], true),
        (&[("foo", "bar"), ("baz", "blah")], true),
        (&[("foo", "=blah")], false),
        (&[("baz", "=bar")], false),
        (&[("foo", "=bar"), ("foobar", "bar"), ("baz", "blah")], false),
    ];
    for (fields, want) in table {
        assert_eq!(FieldSelector::from_fields(set(fields)).unwrap().matches(&labelset), *want, "{fields:?}");
    }
}

// TestRequiresExactMatch. hasTerm is `field=value`, notHasTerm `field!=value`.
#[test]
fn requires_exact_match() {
    use FieldOperator::*;
    let term = |f: &str, op, v: &str| FieldTerm::new(f, op, v).unwrap();
    let table: Vec<(&str, FieldSelector, Option<&str>)> = vec![
        ("empty set", FieldSelector::from_fields(set(&[])).unwrap(), None),
        ("empty hasTerm", FieldSelector::from_terms([term("", Equals, "")]), None),
        ("skipped hasTerm", FieldSelector::from_terms([term("a", Equals, "b")]), None),
        ("valid hasTerm", FieldSelector::from_terms([term("test", Equals, "b")]), Some("b")),
        ("valid hasTerm no value", FieldSelector::from_terms([term("test", Equals, "")]), Some("")),
        ("valid notHasTerm", FieldSelector::from_terms([term("test", NotEquals, "b")]), None),
        ("valid notHasTerm no value", FieldSelector::from_terms([term("test", NotEquals, "")]), None),
        ("nil andTerm", FieldSelector::everything(), None),
        // "empty andTerm", "nested andTerm": the same as everything() here.
        ("nested andTerm matches", FieldSelector::from_terms([term("test", Equals, "b")]), Some("b")),
        (
            "andTerm with non-match",
            FieldSelector::from_terms([term("", Equals, ""), term("test", Equals, "b")]),
            Some("b"),
        ),
    ];
    for (name, s, want) in table {
        assert_eq!(s.requires_exact_match("test"), want, "{name}");
    }
}

// TestTransform (`ParseAndTransformSelector`): not expressible; there is no
// transforming parse. Its five cases would need a `FieldSelector::transform`.

// fields_test.go TestSetString, TestFieldHas, TestFieldGet
#[test]
fn set_string_has_get() {
    let table: &[(&[(&str, &str)], &str)] = &[
        (&[("x", "y")], "x=y"),
        (&[("foo", "bar")], "foo=bar"),
        (&[("foo", "bar"), ("baz", "qup")], "baz=qup,foo=bar"),
    ];
    for (fields, want) in table {
        let s = FieldSelector::from_fields(set(fields)).unwrap();
        assert_eq!(s.to_string(), *want);
        assert!(s.matches(&set(fields)));
    }
    type Has<'a> = (&'a [(&'a str, &'a str)], &'a str, bool);
    let has: &[Has<'_>] = &[(&[("x", "y")], "x", true), (&[("x", "")], "x", true), (&[("x", "y")], "foo", false)];
    for (fields, key, want) in has {
        assert_eq!(set(fields).get_field(key).is_some(), *want, "{fields:?} has {key}");
    }
    assert_eq!(set(&[("x", "y")]).get_field("x"), Some("y"));
}
