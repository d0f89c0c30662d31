use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn sel(s: &str) -> LabelSelector {
    s.parse().unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

#[test]
fn parses_every_operator() {
    let cases = [
        ("a=b", Operator::Equals, vec!["b"]),
        ("a==b", Operator::DoubleEquals, vec!["b"]),
        ("a!=b", Operator::NotEquals, vec!["b"]),
        ("a in (x,y)", Operator::In, vec!["x", "y"]),
        ("a notin (y,x)", Operator::NotIn, vec!["x", "y"]),
        ("a", Operator::Exists, vec![]),
        ("!a", Operator::DoesNotExist, vec![]),
        ("a>1", Operator::GreaterThan, vec!["1"]),
        ("a<3", Operator::LessThan, vec!["3"]),
    ];
    for (input, op, values) in cases {
        let s = sel(input);
        let r = &s.requirements()[0];
        assert_eq!(
            (r.key(), r.operator(), r.values()),
            ("a", op, &values.iter().map(|v| v.to_string()).collect::<Vec<_>>()[..]),
            "{input}"
        );
    }
}

#[test]
fn whitespace_is_allowed_between_tokens() {
    assert_eq!(sel("  a = b ,\tc\nin ( x , y ) , ! d "), sel("a=b,c in (x,y),!d"));
}

#[test]
fn empty_values_are_allowed() {
    assert_eq!(sel("a=").requirements()[0].values(), [""]);
    assert_eq!(sel("a=,b").requirements().len(), 2);
    assert_eq!(sel("a in ()").requirements()[0].values(), [""]);
    assert_eq!(sel("a in (x,,y)").requirements()[0].values(), ["", "x", "y"]);
    assert_eq!(sel("a in (,x)").requirements()[0].values(), ["", "x"]);
}

#[test]
fn in_and_notin_are_plain_identifiers_in_key_and_value_positions() {
    let s = sel("in=notin,notin in (in)");
    assert_eq!(s.to_string(), "in=notin,notin in (in)");
}

#[test]
fn empty_string_selects_everything() {
    let s = sel("");
    assert!(s.is_everything());
    assert!(s.matches(&labels(&[])));
    assert_eq!(s.to_string(), "");
    assert!(!LabelSelector::nothing().matches(&labels(&[])));
}

#[test]
fn syntax_errors_name_the_position_and_token() {
    let cases = [
        ("a=b,", 4, "end of string", "identifier after ','"),
        ("a in x", 5, "'x'", "'('"),
        ("a in (x y)", 8, "'y'", "',' or ')'"),
        ("a in (x", 7, "end of string", "',' or ')'"),
        ("a b", 2, "'b'", "'=', '!=', '==', 'in', 'notin', '>' or '<'"),
        ("a=b c", 4, "'c'", "',' or end of string"),
        ("=b", 0, "'='", "'!', identifier, or end of string"),
        ("!=b", 0, "'!='", "'!', identifier, or end of string"),
        ("a=(", 2, "'('", "identifier"),
        ("!", 1, "end of string", "identifier"),
    ];
    for (input, position, found, expected) in cases {
        match LabelSelector::parse(input) {
            Err(Error::Syntax { position: p, found: f, expected: e, .. }) => {
                assert_eq!((p, f.as_str(), e), (position, found, expected), "{input}")
            }
            other => panic!("{input:?}: expected a syntax error, got {other:?}"),
        }
    }
}

#[test]
fn invalid_keys_and_values_are_rejected() {
    assert!(matches!(LabelSelector::parse("-a=b"), Err(Error::InvalidKey { .. })));
    assert!(matches!(LabelSelector::parse("Example.com/a=b"), Err(Error::InvalidKey { .. })));
    assert!(matches!(LabelSelector::parse("a=b/c"), Err(Error::InvalidValue { .. })));
    assert!(matches!(LabelSelector::parse("a>x"), Err(Error::InvalidRequirement { .. })));
    // As apimachinery: the integer must still be a valid label value.
    assert!(matches!(LabelSelector::parse("a<-3"), Err(Error::InvalidValue { .. })));
    assert!(LabelSelector::parse("example.com/a-b=c.d_e").is_ok());
}

#[test]
fn requirement_value_counts_are_checked() {
    let none: [&str; 0] = [];
    assert!(Requirement::new("a", Operator::In, none).is_err());
    assert!(Requirement::new("a", Operator::Equals, ["x", "y"]).is_err());
    assert!(Requirement::new("a", Operator::Exists, ["x"]).is_err());
    assert!(Requirement::new("a", Operator::GreaterThan, ["1", "2"]).is_err());
    assert!(Requirement::new("a", Operator::NotIn, ["x", "y"]).is_ok());
}

#[test]
fn matching_follows_apimachinery() {
    let l = labels(&[("app", "web"), ("tier", "front"), ("replicas", "3")]);
    let cases = [
        ("app=web", true),
        ("app==web", true),
        ("app=db", false),
        ("app!=db", true),
        ("missing!=x", true),
        ("tier in (front,back)", true),
        ("tier in (back)", false),
        ("missing in (x)", false),
        ("tier notin (back)", true),
        ("tier notin (front)", false),
        ("missing notin (x)", true),
        ("app", true),
        ("missing", false),
        ("!missing", true),
        ("!app", false),
        ("replicas>2", true),
        ("replicas>3", false),
        ("replicas<4", true),
        ("app>1", false),
        ("missing<1", false),
        ("app=web,tier=back", false),
        ("app=web,tier=front", true),
    ];
    for (input, want) in cases {
        assert_eq!(sel(input).matches(&l), want, "{input}");
    }
}

#[test]
fn matches_optional_label_maps() {
    let s = sel("!app");
    let none: Option<&BTreeMap<String, String>> = None;
    assert!(s.matches(&none));
    let l = labels(&[("app", "x")]);
    assert!(!s.matches(&Some(&l)));
    let hm: std::collections::HashMap<String, String> = l.clone().into_iter().collect();
    assert!(sel("app=x").matches(&hm));
}

#[test]
fn display_sorts_by_key_and_values() {
    assert_eq!(sel("z=1,a in (c,b),!m").to_string(), "a in (b,c),!m,z=1");
}

#[test]
fn from_match_converts_a_metav1_label_selector() {
    let s = LabelSelector::from_match(
        [("app", "web")],
        [
            Requirement::from_expression("tier", "In", ["front", "back"]).unwrap(),
            Requirement::from_expression("canary", "DoesNotExist", Vec::<String>::new()).unwrap(),
        ],
    )
    .unwrap();
    assert_eq!(s.to_string(), "app=web,!canary,tier in (back,front)");
    assert!(s.matches(&labels(&[("app", "web"), ("tier", "front")])));
    assert!(matches!(Requirement::from_expression("a", "Gt", ["1"]), Err(Error::UnknownOperator { .. })));
    let empty = LabelSelector::from_match(Vec::<(String, String)>::new(), []).unwrap();
    assert!(empty.is_everything());
}

#[test]
fn field_selector_parses_and_matches() {
    let s: FieldSelector = "metadata.name=x,status.phase!=Running".parse().unwrap();
    let mut f = BTreeMap::new();
    f.insert("metadata.name".to_string(), "x".to_string());
    f.insert("status.phase".to_string(), "Pending".to_string());
    assert!(s.matches(&f));
    f.insert("status.phase".to_string(), "Running".to_string());
    assert!(!s.matches(&f));
    assert!(s.matches_with(|name| match name {
        "metadata.name" => Some("x"),
        _ => None,
    }));
    assert_eq!(s.requires_exact_match("metadata.name"), Some("x"));
}

#[test]
fn field_selector_double_equals_is_equals_and_missing_fields_are_empty() {
    let s = FieldSelector::parse("a==b").unwrap();
    assert_eq!(s.to_string(), "a=b");
    let empty: BTreeMap<String, String> = BTreeMap::new();
    assert!(FieldSelector::parse("a=").unwrap().matches(&empty));
    assert!(FieldSelector::parse("a!=b").unwrap().matches(&empty));
}

#[test]
fn field_selector_escaping() {
    let s = FieldSelector::parse(r"a=x\,y\=z\\w,b=c").unwrap();
    assert_eq!(s.terms()[0].value(), r"x,y=z\w");
    assert_eq!(s.to_string(), r"a=x\,y\=z\\w,b=c");
    assert_eq!(escape_value(r"a,b=c\d"), r"a\,b\=c\\d");
    assert!(matches!(unescape_value(r"a\x"), Err(Error::InvalidEscape { .. })));
    assert!(matches!(unescape_value(r"a\"), Err(Error::InvalidEscape { .. })));
    assert!(matches!(FieldSelector::parse("a=b=c"), Err(Error::UnescapedRune { rune: '=', .. })));
    assert!(matches!(FieldSelector::parse("ab"), Err(Error::InvalidFieldTerm { .. })));
}

#[test]
fn field_selector_everything_and_empty_terms() {
    assert!(FieldSelector::parse("").unwrap().is_everything());
    assert_eq!(FieldSelector::parse("a=b,,c!=d").unwrap().to_string(), "a=b,c!=d");
    assert_eq!(FieldSelector::everything().to_string(), "");
    assert!(FieldTerm::new("a,b", FieldOperator::Equals, "x").is_err());
    assert!(FieldTerm::new("a!", FieldOperator::Equals, "x").is_err());
}

fn key_strategy() -> impl Strategy<Value = String> {
    let name = "[A-Za-z0-9]([A-Za-z0-9._-]{0,10}[A-Za-z0-9])?";
    prop_oneof![
        name.prop_map(|n| n),
        ("[a-z0-9]([a-z0-9-]{0,5}[a-z0-9])?(\\.[a-z]{1,4})?", name).prop_map(|(p, n)| format!("{p}/{n}")),
    ]
}

fn value_strategy() -> impl Strategy<Value = String> {
    "([A-Za-z0-9]([A-Za-z0-9._-]{0,10}[A-Za-z0-9])?)?"
}

fn requirement_strategy() -> impl Strategy<Value = Requirement> {
    let ops = prop_oneof![
        Just(Operator::Equals),
        Just(Operator::DoubleEquals),
        Just(Operator::NotEquals),
        Just(Operator::In),
        Just(Operator::NotIn),
        Just(Operator::Exists),
        Just(Operator::DoesNotExist),
        Just(Operator::GreaterThan),
        Just(Operator::LessThan),
    ];
    (key_strategy(), ops, prop::collection::vec(value_strategy(), 1..4), any::<u32>()).prop_map(
        |(key, op, values, n)| {
            let values = match op {
                Operator::In | Operator::NotIn => values,
                Operator::Exists | Operator::DoesNotExist => Vec::new(),
                Operator::GreaterThan | Operator::LessThan => vec![n.to_string()],
                _ => values[..1].to_vec(),
            };
            Requirement::new(key, op, values).expect("strategy builds valid requirements")
        },
    )
}

proptest! {
    #[test]
    fn label_selector_display_parses_back(reqs in prop::collection::vec(requirement_strategy(), 0..5)) {
        let s = LabelSelector::from_requirements(reqs);
        let text = s.to_string();
        let back = LabelSelector::parse(&text).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
        prop_assert_eq!(back, s);
    }

    #[test]
    fn field_selector_display_parses_back(
        terms in prop::collection::vec(("[a-z][a-z.]{0,10}", any::<bool>(), "[ -~]{0,12}"), 0..5)
    ) {
        let terms = terms.into_iter().map(|(f, eq, v)| {
            let op = if eq { FieldOperator::Equals } else { FieldOperator::NotEquals };
            FieldTerm::new(f, op, v).expect("valid field name")
        });
        let s = FieldSelector::from_terms(terms);
        let text = s.to_string();
        let back = FieldSelector::parse(&text).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
        prop_assert_eq!(back, s);
    }

    #[test]
    fn parsers_never_panic(input in "[ -~]{0,30}|\\PC{0,30}") {
        let _ = LabelSelector::parse(&input);
        let _ = FieldSelector::parse(&input);
    }
}
