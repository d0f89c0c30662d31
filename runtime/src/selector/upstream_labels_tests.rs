//! The cases of apimachinery's own label tests
//! (`k8s.io/apimachinery/pkg/labels/selector_test.go` and `labels_test.go`,
//! v0.35), as tables of ours. Each table names the upstream function it
//! follows; cases our API cannot express are kept as comments saying why.

use std::collections::BTreeMap;

use super::*;

fn set(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn req(key: &str, op: Operator, values: &[&str]) -> Requirement {
    Requirement::new(key, op, values.iter().copied()).unwrap_or_else(|e| panic!("{key} {op:?} {values:?}: {e}"))
}

fn parse(s: &str) -> LabelSelector {
    LabelSelector::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

// TestSelectorParse: good strings print back without their spaces; bad
// strings fail.
#[test]
fn selector_parse() {
    let good = ["x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ", "!x", "x>1", "x>1,z<5"];
    for s in good {
        assert_eq!(parse(s).to_string(), s.replace(' ', ""), "{s:?}");
    }
    let bad = ["x=a||y=b", "x==a==b", "!x=a", "x<a"];
    for s in bad {
        assert!(LabelSelector::parse(s).is_err(), "{s:?} parsed");
    }
}

// TestDeterministicParse
#[test]
fn deterministic_parse() {
    assert_eq!(parse("x=a,a=x").to_string(), parse("a=x,x=a").to_string());
}

// TestEverything, TestNilMapIsValid, TestSetIsEmpty
#[test]
fn everything_and_empty_sets() {
    assert!(LabelSelector::everything().matches(&set(&[("x", "y")])));
    assert!(LabelSelector::everything().is_everything());
    // A nil set and an empty set both give the empty selector.
    let empty: [(&str, &str); 0] = [];
    assert!(LabelSelector::from_labels(empty).unwrap().is_everything());
    assert!(LabelSelector::from_labels(BTreeMap::<String, String>::new()).unwrap().is_everything());
}

// TestSelectorMatches
#[test]
fn selector_matches() {
    let labelset = set(&[("foo", "bar"), ("baz", "blah")]);
    let table: &[(&str, BTreeMap<String, String>, bool)] = &[
        ("", set(&[("x", "y")]), true),
        ("x=y", set(&[("x", "y")]), true),
        ("x=y,z=w", set(&[("x", "y"), ("z", "w")]), true),
        ("x!=y,z!=w", set(&[("x", "z"), ("z", "a")]), true),
        ("notin=in", set(&[("notin", "in")]), true), // in and notin in exactMatch
        ("x", set(&[("x", "z")]), true),
        ("!x", set(&[("y", "z")]), true),
        ("x>1", set(&[("x", "2")]), true),
        ("x<1", set(&[("x", "0")]), true),
        ("x=z", set(&[]), false),
        ("x=y", set(&[("x", "z")]), false),
        ("x=y,z=w", set(&[("x", "w"), ("z", "w")]), false),
        ("x!=y,z!=w", set(&[("x", "z"), ("z", "w")]), false),
        ("x", set(&[("y", "z")]), false),
        ("!x", set(&[("x", "z")]), false),
        ("x>1", set(&[("x", "0")]), false),
        ("x<1", set(&[("x", "2")]), false),
        ("foo=bar", labelset.clone(), true),
        ("baz=blah", labelset.clone(), true),
        ("foo=bar,baz=blah", labelset.clone(), true),
        ("foo=blah", labelset.clone(), false),
        ("baz=bar", labelset.clone(), false),
        ("foo=bar,foobar=bar,baz=blah", labelset, false),
    ];
    for (selector, labels, want) in table {
        assert_eq!(parse(selector).matches(labels), *want, "{selector:?} on {labels:?}");
    }
}

// TestSetMatches (its commented-out upstream cases stay out here too)
#[test]
fn set_matches() {
    let labelset = set(&[("foo", "bar"), ("baz", "blah")]);
    let table = [set(&[]), set(&[("foo", "bar")]), set(&[("baz", "blah")]), set(&[("foo", "bar"), ("baz", "blah")])];
    for s in table {
        assert!(LabelSelector::from_labels(s.clone()).unwrap().matches(&labelset), "{s:?}");
    }
}

// TestLexer, TestLexerSequence, TestParserLookahead: not expressible; the
// lexer and the parser's lookahead are private here. Their inputs are
// covered through `parse` in `set_selector_parser` below.

// TestParseOperator: the operator after a key. Binary operators parse;
// `!`, `exists` and `(` are syntax errors expecting a binary operator.
#[test]
fn parse_operator() {
    let table: &[(&str, bool)] = &[
        ("in", true),
        ("=", true),
        ("==", true),
        (">", true),
        ("<", true),
        ("notin", true),
        ("!=", true),
        ("!", false),
        ("exists", false),
        ("(", false),
    ];
    for (op, ok) in table {
        let input = match *op {
            "in" | "notin" => format!("x {op} (1)"),
            _ => format!("x {op} 1"),
        };
        match LabelSelector::parse(&input) {
            Ok(_) => assert!(ok, "{input:?} parsed"),
            Err(Error::Syntax { expected, .. }) => {
                assert!(!ok, "{input:?} failed");
                assert!(expected.contains("'notin'") && expected.contains("'!='"), "{input:?}: {expected}");
            }
            Err(e) => panic!("{input:?}: not a syntax error: {e}"),
        }
    }
}

// TestRequirementConstructor
#[test]
fn requirement_constructor() {
    use Operator::*;
    let a254 = "a".repeat(254);
    let table: &[(&str, Operator, &[&str], bool)] = &[
        ("x1", In, &[], false),
        ("x2", NotIn, &[], false),
        ("x3", In, &["foo"], true),
        ("x4", NotIn, &["foo"], true),
        ("x5", Equals, &["foo", "bar"], false),
        ("x6", Exists, &[], true),
        ("x7", DoesNotExist, &[], true),
        ("x8", Exists, &["foo"], false),
        ("x9", In, &["bar"], true),
        ("x10", In, &["bar"], true),
        ("x11", GreaterThan, &["1"], true),
        ("x12", LessThan, &["6"], true),
        ("x13", GreaterThan, &[], false),
        ("x14", GreaterThan, &["bar"], false),
        ("x15", LessThan, &["bar"], false),
        // Breaks the DNS rule that a key is at most 253 characters.
        (&a254, Exists, &[], false),
        ("x16", Equals, &[&a254], false),
        ("x17", Equals, &["a b"], false),
    ];
    for (key, op, values, ok) in table {
        let r = Requirement::new(*key, *op, values.iter().copied());
        assert_eq!(r.is_ok(), *ok, "{key} {op:?} {values:?}: {r:?}");
    }
    // x18 `"unsupportedOp"`: our operators are an enum; the one place a
    // string becomes an operator is a metav1 matchExpressions entry.
    assert!(matches!(Requirement::from_expression("x18", "unsupportedOp", ["a"]), Err(Error::UnknownOperator { .. })));
}

// TestToString
#[test]
fn to_string() {
    use Operator::*;
    type Reqs<'a> = &'a [(&'a str, Operator, &'a [&'a str])];
    let table: &[(Reqs<'_>, &str)] = &[
        (&[("x", In, &["abc", "def"]), ("y", NotIn, &["jkl"]), ("z", Exists, &[])], "x in (abc,def),y notin (jkl),z"),
        (
            &[("x", NotIn, &["abc", "def"]), ("y", NotEquals, &["jkl"]), ("z", DoesNotExist, &[])],
            "x notin (abc,def),y!=jkl,!z",
        ),
        // `x in (abc,def),` (an empty Requirement for the trailing ','): not
        // expressible, a Requirement cannot be empty here.
        (
            &[("x", NotIn, &["abc"]), ("y", In, &["jkl", "mno"]), ("z", NotIn, &[""])],
            "x notin (abc),y in (jkl,mno),z notin ()",
        ),
        (
            &[("x", Equals, &["abc"]), ("y", DoubleEquals, &["jkl"]), ("z", NotEquals, &["a"]), ("z", Exists, &[])],
            "x=abc,y==jkl,z!=a,z",
        ),
        (&[("x", GreaterThan, &["2"]), ("y", LessThan, &["8"]), ("z", Exists, &[])], "x>2,y<8,z"),
    ];
    for (reqs, want) in table {
        let s = LabelSelector::from_requirements(reqs.iter().map(|(k, o, v)| req(k, *o, v)));
        assert_eq!(s.to_string(), *want);
    }
}

// TestRequirementSelectorMatching
#[test]
fn requirement_selector_matching() {
    use Operator::*;
    type Reqs<'a> = &'a [(&'a str, Operator, &'a [&'a str])];
    // The first upstream case (a selector holding an empty Requirement,
    // matching nothing) is not expressible.
    let table: &[(BTreeMap<String, String>, Reqs<'_>, bool)] = &[
        (set(&[("x", "foo"), ("y", "baz")]), &[("x", In, &["foo"]), ("y", NotIn, &["alpha"])], true),
        (set(&[("x", "foo"), ("y", "baz")]), &[("x", In, &["foo"]), ("y", In, &["alpha"])], false),
        (set(&[("y", "")]), &[("x", NotIn, &[""]), ("y", Exists, &[])], true),
        (set(&[("y", "")]), &[("x", DoesNotExist, &[]), ("y", Exists, &[])], true),
        (set(&[("y", "")]), &[("x", NotIn, &[""]), ("y", DoesNotExist, &[])], false),
        (set(&[("y", "baz")]), &[("x", In, &[""])], false),
        (set(&[("z", "2")]), &[("z", GreaterThan, &["1"])], true),
        (set(&[("z", "v2")]), &[("z", GreaterThan, &["1"])], false),
    ];
    for (labels, reqs, want) in table {
        let s = LabelSelector::from_requirements(reqs.iter().map(|(k, o, v)| req(k, *o, v)));
        assert_eq!(s.matches(labels), *want, "{s} on {labels:?}");
    }
}

// TestSetSelectorParser: input, expected requirements (None: only validity
// is checked), whether they must equal the parse, whether it parses.
#[test]
fn set_selector_parser() {
    use Operator::*;
    type Reqs<'a> = Option<&'a [(&'a str, Operator, &'a [&'a str])]>;
    let table: &[(&str, Reqs<'_>, bool, bool)] = &[
        ("", Some(&[]), true, true),
        ("\rx", Some(&[("x", Exists, &[])]), true, true),
        (
            "this-is-a-dns.domain.com/key-with-dash",
            Some(&[("this-is-a-dns.domain.com/key-with-dash", Exists, &[])]),
            true,
            true,
        ),
        (
            "this-is-another-dns.domain.com/key-with-dash in (so,what)",
            Some(&[("this-is-another-dns.domain.com/key-with-dash", In, &["so", "what"])]),
            true,
            true,
        ),
        (
            "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
            Some(&[("0.1.2.domain/99", NotIn, &["10.10.100.1", "tick.tack.clock"])]),
            true,
            true,
        ),
        ("foo  in\t (abc)", Some(&[("foo", In, &["abc"])]), true, true),
        ("x notin\n (abc)", Some(&[("x", NotIn, &["abc"])]), true, true),
        ("x  notin\t\t\t(abc,def)", Some(&[("x", NotIn, &["abc", "def"])]), true, true),
        ("x in (abc,def)", Some(&[("x", In, &["abc", "def"])]), true, true),
        ("x in (abc,)", Some(&[("x", In, &["abc", ""])]), true, true),
        ("x in (abc,abc)", Some(&[("x", In, &["abc"])]), true, true),
        ("x in ()", Some(&[("x", In, &[""])]), true, true),
        ("x in (a,,)", Some(&[("x", In, &["a", ""])]), true, true),
        ("x in (a,,,)", Some(&[("x", In, &["a", ""])]), true, true),
        ("x in (a,,,,,,)", Some(&[("x", In, &["a", ""])]), true, true),
        ("x in (a,,a,,a,,a,,)", Some(&[("x", In, &["a", ""])]), true, true),
        (
            "x notin (abc,,def),bar,z in (),w",
            Some(&[("bar", Exists, &[]), ("w", Exists, &[]), ("x", NotIn, &["abc", "", "def"]), ("z", In, &[""])]),
            true,
            true,
        ),
        // Upstream's expected value is unsorted, so it must differ.
        ("x,y in (a)", Some(&[("y", In, &["a"]), ("x", Exists, &[])]), false, true),
        ("x=a", Some(&[("x", Equals, &["a"])]), true, true),
        ("x>1", Some(&[("x", GreaterThan, &["1"])]), true, true),
        ("x<7", Some(&[("x", LessThan, &["7"])]), true, true),
        ("x=a,y!=b", Some(&[("x", Equals, &["a"]), ("y", NotEquals, &["b"])]), true, true),
        (
            "x=a,y!=b,z in (h,i,j)",
            Some(&[("x", Equals, &["a"]), ("y", NotEquals, &["b"]), ("z", In, &["h", "i", "j"])]),
            true,
            true,
        ),
        ("x=a||y=b", None, false, false),
        ("x,,y", None, true, false),
        (",x,y", None, true, false),
        ("x nott in (y)", None, true, false),
        ("x notin ( )", Some(&[("x", NotIn, &[""])]), true, true),
        ("x notin (, a)", Some(&[("x", NotIn, &["", "a"])]), true, true),
        ("a in (xyz),", None, true, false),
        ("a in (xyz)b notin ()", None, true, false),
        ("a ", Some(&[("a", Exists, &[])]), true, true),
        // The operator 'in' inside a list of identifiers.
        ("a in (x,y,notin, z,in)", Some(&[("a", In, &["in", "notin", "x", "y", "z"])]), true, true),
        ("a in (xyz abc)", None, false, false), // no comma
        ("a notin(", None, true, false),        // badly formed
        ("a (", None, false, false),            // cpar
        ("(", None, false, false),              // opar
    ];
    for (input, reqs, must_equal, valid) in table {
        let parsed = LabelSelector::parse(input);
        assert_eq!(parsed.is_ok(), *valid, "{input:?}: {parsed:?}");
        if let (Ok(parsed), Some(reqs)) = (parsed, reqs) {
            // Upstream compares the internal slice as given, in order.
            let expected: Vec<Requirement> = reqs.iter().map(|(k, o, v)| req(k, *o, v)).collect();
            assert_eq!(parsed.requirements() == expected.as_slice(), *must_equal, "{input:?}: {parsed:?}");
        }
    }
}

// TestAdd
#[test]
fn add() {
    let s = LabelSelector::everything().and(req("key", Operator::In, &["value"]));
    assert_eq!(s.requirements(), [req("key", Operator::In, &["value"])]);
    let s = s.and(req("key2", Operator::Equals, &["value2"]));
    assert_eq!(s.requirements(), [req("key", Operator::In, &["value"]), req("key2", Operator::Equals, &["value2"])]);
}

// TestSafeSort: not expressible; requirement values are kept sorted and
// deduplicated by `Requirement::new` (no separate sort helper).

// TestSetSelectorString, and labels_test.go TestSetString
#[test]
fn set_selector_string() {
    let table: &[(&[(&str, &str)], &str)] = &[
        (&[], ""),
        (&[("app", "foo")], "app=foo"),
        (&[("app", "foo"), ("a", "b")], "a=b,app=foo"),
        (&[("x", "y")], "x=y"),
        (&[("foo", "bar")], "foo=bar"),
        (&[("foo", "bar"), ("baz", "qup")], "baz=qup,foo=bar"),
    ];
    for (labels, want) in table {
        assert_eq!(LabelSelector::from_labels(set(labels)).unwrap().to_string(), *want);
    }
}

// TestRequiresExactMatch
#[test]
fn requires_exact_match() {
    use Operator::*;
    type Reqs<'a> = &'a [(&'a str, Operator, &'a [&'a str])];
    let table: &[(&str, Reqs<'_>, &str, Option<&str>)] = &[
        ("keyInOperatorExactMatch", &[("key", In, &["value"])], "key", Some("value")),
        ("keyInOperatorNotExactMatch", &[("key", In, &["value", "value2"])], "key", None),
        (
            "keyInOperatorNotExactMatch (second key)",
            &[("key", In, &["value", "value1"]), ("key2", In, &["value2"])],
            "key2",
            Some("value2"),
        ),
        ("keyEqualOperatorExactMatch", &[("key", Equals, &["value"])], "key", Some("value")),
        ("keyDoubleEqualOperatorExactMatch", &[("key", DoubleEquals, &["value"])], "key", Some("value")),
        ("keyNotEqualOperatorExactMatch", &[("key", NotEquals, &["value"])], "key", None),
        (
            "keyEqualOperatorExactMatchFirst",
            &[("key", In, &["value"]), ("key2", In, &["value2"])],
            "key",
            Some("value"),
        ),
    ];
    for (name, reqs, label, want) in table {
        let s = LabelSelector::from_requirements(reqs.iter().map(|(k, o, v)| req(k, *o, v)));
        assert_eq!(s.requires_exact_match(label), *want, "{name}");
    }
}

// TestValidatedSelectorFromSet
#[test]
fn validated_selector_from_set() {
    let s = LabelSelector::from_labels(set(&[("key", "val")])).unwrap();
    assert_eq!(s.requirements(), [req("key", Operator::Equals, &["val"])]);
    let too_long = "axahm2EJ8Phiephe2eixohbee9eGeiyees1thuozi1xoh0GiuH3diewi8iem7Nui";
    assert!(matches!(LabelSelector::from_labels(set(&[("Key", too_long)])), Err(Error::InvalidValue { .. })));
}

// TestRequirementEqual. Upstream builds `key=foo,bar` (Equals with two
// values) directly; `Requirement::new` refuses that, so the cases with two
// values use `In`, and the operator case compares single values.
#[test]
fn requirement_equal() {
    use Operator::*;
    let table = [
        (req("key", In, &["foo", "bar"]), req("key", In, &["foo", "bar"]), true),
        (req("key1", In, &["foo", "bar"]), req("key2", In, &["foo", "bar"]), false),
        (req("key", Equals, &["foo"]), req("key", In, &["foo"]), false),
        (req("key", In, &["foo", "bar"]), req("key", In, &["foobar"]), false),
    ];
    for (x, y, want) in table {
        assert_eq!(x == y, want, "{x} vs {y}");
    }
}

// TestMatchesNothing: only `nothing()` is the selector that matches nothing.
#[test]
fn matches_nothing() {
    assert_eq!(LabelSelector::nothing(), LabelSelector::nothing());
    assert_ne!(LabelSelector::everything(), LabelSelector::nothing());
    assert_ne!(LabelSelector::from_labels(set(&[])).unwrap(), LabelSelector::nothing());
    assert_ne!(LabelSelector::from_labels(set(&[("key", "value")])).unwrap(), LabelSelector::nothing());
    for s in ["", "a", "!a", "a=b", "a!=b", "a in (b)", "a notin (b)", "a,!a", "a=b,a!=b", "a in (b),a notin (b)"] {
        assert_ne!(parse(s), LabelSelector::nothing(), "{s:?}");
    }
    assert!(!LabelSelector::nothing().matches(&set(&[])));
}

// labels_test.go TestLabelHas, TestLabelGet
#[test]
fn label_has_and_get() {
    type Has<'a> = (&'a [(&'a str, &'a str)], &'a str, bool);
    let table: &[Has<'_>] = &[(&[("x", "y")], "x", true), (&[("x", "")], "x", true), (&[("x", "y")], "foo", false)];
    for (labels, key, has) in table {
        assert_eq!(set(labels).get_label(key).is_some(), *has, "{labels:?} has {key}");
    }
    assert_eq!(set(&[("x", "y")]).get_label("x"), Some("y"));
}

// labels_test.go TestLabelConflict, TestLabelMerge and TestLabelSelectorParse
// (`Conflicts`, `Merge`, `ConvertSelectorToLabelsMap`): not expressible; we
// have no label-set helpers, plain maps serve as label sets.
