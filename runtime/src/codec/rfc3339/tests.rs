use proptest::prelude::*;

use super::*;

/// Go's reading of each input of `vectors.jsonl` (written by `vectors.go`
/// with Go's `time.Parse(time.RFC3339, ..)`): the same instant, or an
/// error where Go refuses it.
#[test]
fn reads_as_go_reads() {
    #[derive(serde::Deserialize)]
    struct Vector {
        #[serde(rename = "in")]
        input: String,
        unix: Option<i64>,
        nanos: Option<i32>,
    }
    let mut read = 0;
    for line in include_str!("vectors.jsonl").lines() {
        let v: Vector = serde_json::from_str(line).unwrap();
        let go = v.unix.map(|s| Timestamp::new(s, v.nanos.unwrap_or(0)));
        read += usize::from(go.is_some());
        match (parse(&v.input), go) {
            (Ok(ours), Some(Ok(go))) => assert_eq!(ours, go, "{:?}", v.input),
            (Err(_), None) => {}
            // Go reaches a little further than jiff (past 9999-12-30):
            // such a time is an error here, not another time.
            (Err(_), Some(Err(_))) => {}
            (ours, go) => panic!("{:?}: ours {ours:?}, Go's {go:?}", v.input),
        }
    }
    assert!(read > 100, "only {read} vectors Go reads");
}

#[test]
fn errors_say_why() {
    for (input, why) in [
        ("2026-01-01T00:00:60Z", "second out of range"),
        ("2026-02-30T00:00:00Z", "day out of range"),
        ("2026-13-01T00:00:00Z", "month out of range"),
        ("12026-01-01T00:00:00Z", "not an RFC 3339 timestamp"),
        ("2026-01-01T00:00:00Z junk", "extra text"),
        ("2026-01-01T00:00:00+25:00", "offset hour out of range"),
    ] {
        let err = parse(input).unwrap_err().to_string();
        assert!(err.contains(why), "{input}: {err}");
    }
}

#[test]
fn the_apiserver_form_takes_the_fast_path() {
    for s in [
        "2026-01-01T00:00:00Z",
        "1969-12-31T23:59:59Z",
        "0001-01-01T00:00:00Z",
        "2026-11-24T13:35:38.123456Z",
        "2026-11-24T13:35:38.123456789Z",
    ] {
        assert_eq!(parse_canonical(s.as_bytes()), parse_general(s.as_bytes()).ok(), "{s}");
        assert!(parse_canonical(s.as_bytes()).is_some(), "{s} took the slow path");
    }
}

proptest! {
    /// The fast path and the general parser agree on every input of the
    /// apiserver's form, valid or not; what the fast path leaves, the
    /// general parser decides.
    #[test]
    fn fast_path_agrees_with_the_general_parser(
        year in 0u32..=9999, month in 0u32..=13, day in 0u32..=32,
        hour in 0u32..=24, minute in 0u32..=60, second in 0u32..=60,
        fraction in proptest::option::of("[0-9]{1,12}"),
    ) {
        let fraction = fraction.map(|f| format!(".{f}")).unwrap_or_default();
        let s = format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}{fraction}Z");
        if let Some(fast) = parse_canonical(s.as_bytes()) {
            prop_assert_eq!(Ok(fast), parse_general(s.as_bytes()));
        }
    }

    /// Any text at all: an answer, never a panic.
    #[test]
    fn never_panics(s in "\\PC{0,40}") {
        let _ = parse(&s);
    }
}
