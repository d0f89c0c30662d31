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
