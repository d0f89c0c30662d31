use serde_json::json;

use super::*;

#[test]
fn keys_sort_as_go_yaml_sorts_them() {
    let mut keys = vec!["b10", "b9", "a-b", "ab", "a", "tokenFile", "token", "as-user-extra", "as-uid", "a1", "a01"];
    keys.sort_by(|a, b| key_order(a, b));
    // As go-yaml v2.4.4 orders them (checked against it).
    assert_eq!(keys, ["a", "a-b", "a1", "a01", "ab", "as-uid", "as-user-extra", "b9", "b10", "token", "tokenFile"]);
}

#[test]
fn strings_are_quoted_when_go_yaml_quotes_them() {
    let cases = [
        ("plain", "plain"),
        ("", r#""""#),
        ("yes", r#""yes""#),
        ("on", r#""on""#),
        ("01", r#""01""#),
        ("1_000", r#""1_000""#),
        ("0x1F", r#""0x1F""#),
        ("1.5e3", r#""1.5e3""#),
        ("2001-12-14", r#""2001-12-14""#),
        ("1:20", r#""1:20""#),
        ("null", r#""null""#),
        ("- dash", "'- dash'"),
        ("team: a", "'team: a'"),
        ("#tag", "'#tag'"),
        ("it's", "it's"),
        ("'quoted'", "'''quoted'''"),
        (" lead", "' lead'"),
        ("tab\there", r#""tab\there""#),
        ("https://x.example:6443/p?q=1#f", "https://x.example:6443/p?q=1#f"),
        ("a #b", "'a #b'"),
    ];
    for (input, want) in cases {
        assert_eq!(to_yaml(&json!({ "k": input })), format!("k: {want}\n"), "{input:?}");
    }
}

#[test]
fn long_scalars_fold_past_column_80() {
    // go-yaml v2's own line-wrapping case.
    let text = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 1234567890 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 1234567890 ";
    assert_eq!(
        to_yaml(&json!({ "a": text })),
        "a: 'abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 1234567890 abcdefghijklmnopqrstuvwxyz\n  ABCDEFGHIJKLMNOPQRSTUVWXYZ 1234567890 '\n"
    );
}

#[test]
fn collections_numbers_and_blocks() {
    // The expected text is what go-yaml v2.4.4 writes for the same value.
    let value = json!({
        "list": [1, 2.5, 1000000.5, 0.00001, true, null, [], {}, ["x", "y"], {"b": 1, "a": 2}],
        "empty": {},
        "text": "line one\nline two\n",
        "bare": "no newline\nat end",
    });
    assert_eq!(
        to_yaml(&value),
        "bare: |-\n  no newline\n  at end\nempty: {}\nlist:\n- 1\n- 2.5\n- 1.0000005e+06\n- 1e-05\n- true\n- null\n- []\n- {}\n\
         - - x\n  - \"y\"\n- a: 2\n  b: 1\ntext: |\n  line one\n  line two\n"
    );
}

/// Values and what sigs.k8s.io/yaml v1.6.0 (`JSONToYAML`) writes for them,
/// taken from running it: numbers, explicit `? key` for long and multi-line
/// keys, nested sequences, folding inside nested mappings, literal blocks.
const GO_WRITES: &[(&str, &str)] = &[
    (
        r#"{"n": [0, -0.0, 1.0, 0.1, 1e+21, 1e+20, 123456.0, 1234567.0, 1e-07, 0.0001, 1e-05, -2.5e-05, 18446744073709551615, -9223372036854775808, 9007199254740993, 3.14159, 100, 1.5e+300]}"#,
        "\"n\":\n- 0\n- -0\n- 1\n- 0.1\n- 1e+21\n- 1e+20\n- 123456\n- 1.234567e+06\n- 1e-07\n- 0.0001\n- 1e-05\n- -2.5e-05\n- 18446744073709551615\n- -9223372036854775808\n- 9007199254740993\n- 3.14159\n- 100\n- 1.5e+300\n",
    ),
    (
        r#"{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": {"x": 1, "y": [1, 2]}, "multi\nline": [1, {"z": 2}], "k": {"deep": {"deeper": ["a", ["b", "c"], {"e": {}}]}}}"#,
        "? aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n: x: 1\n  \"y\":\n  - 1\n  - 2\nk:\n  deep:\n    deeper:\n    - a\n    - - b\n      - c\n    - e: {}\n? |-\n  multi\n  line\n: - 1\n  - z: 2\n",
    ),
    (
        r#"{"long": "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp qqqq rrrr ssss tttt", "nested": {"inner": {"long": "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp qqqq rrrr ssss tttt"}}, "list": ["aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp qqqq rrrr ssss tttt"], "lit": {"x": "a\n  b\n"}}"#,
        "list:\n- aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp\n  qqqq rrrr ssss tttt\nlit:\n  x: |\n    a\n      b\nlong: aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp\n  qqqq rrrr ssss tttt\nnested:\n  inner:\n    long: aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo\n      pppp qqqq rrrr ssss tttt\n",
    ),
];

#[test]
fn writes_what_sigs_k8s_io_yaml_writes() {
    for (json, want) in GO_WRITES {
        let value: Value = serde_json::from_str(json).unwrap();
        assert_eq!(to_yaml(&value), *want, "{json}");
    }
    assert_eq!(to_yaml(&json!({ "<<": "<<" })), "<<: <<\n", "not a merge key to go-yaml's writer");
}

#[derive(serde::Deserialize)]
struct GoWrote {
    string: String,
    as_value: String,
    as_key: String,
    in_list: String,
}

#[test]
fn strings_are_written_as_go_yaml_writes_them() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kubeconfig/go-yaml-strings.json");
    // 184 strings, each in three places.
    let cases: Vec<GoWrote> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(cases.len() > 150, "{} cases", cases.len());
    for case in cases {
        let s = &case.string;
        let mut as_key = serde_json::Map::new();
        as_key.insert(s.clone(), json!(1));
        assert_eq!(to_yaml(&json!({ "k": s })), case.as_value, "as a value: {s:?}");
        assert_eq!(to_yaml(&Value::Object(as_key)), case.as_key, "as a key: {s:?}");
        assert_eq!(to_yaml(&json!({ "list": [s, { "inner": s }] })), case.in_list, "in a list: {s:?}");
    }
}
