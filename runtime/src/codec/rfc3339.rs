//! A fast path for the one timestamp form the apiserver writes:
//! `2006-01-02T15:04:05Z`, with an optional fraction of up to nine digits
//! (`MicroTime` has six).
//!
//! A pod carries about ten timestamps (creation, conditions, container
//! states, managedFields); read with jiff's general RFC 3339 / ISO 8601
//! parser, they were about 4% of decoding a `PodList`. Anything else (a
//! lowercase `t` or `z`, an offset, a leap second, a date out of range) is
//! left to jiff, which then also words the error.

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::Offset;

/// The timestamp `s` names, when it is in the canonical form and valid;
/// `None` to let the general parser decide.
pub(super) fn parse_canonical(s: &[u8]) -> Option<Timestamp> {
    let (head, rest) = s.split_first_chunk::<19>()?;
    let nanos = match rest {
        [b'Z'] => 0,
        [b'.', fraction @ .., b'Z'] if (1..=9).contains(&fraction.len()) => {
            let mut nanos = digits(fraction)?;
            for _ in fraction.len()..9 {
                nanos *= 10;
            }
            nanos
        }
        _ => return None,
    };
    if [head[4], head[7], head[10], head[13], head[16]] != *b"--T::" {
        return None;
    }
    let field = |at: std::ops::Range<usize>| digits(&head[at]).and_then(|n| i8::try_from(n).ok());
    let year = digits(&head[0..4]).and_then(|n| i16::try_from(n).ok())?;
    // jiff checks the calendar (month, day of month, hour, minute; it has
    // no leap seconds) and the range: it ends late on 9999-12-30, and what
    // lies beyond is left to its parser, which then says why.
    let time = DateTime::new(
        year,
        field(5..7)?,
        field(8..10)?,
        field(11..13)?,
        field(14..16)?,
        field(17..19)?,
        i32::try_from(nanos).ok()?,
    )
    .ok()?;
    Offset::UTC.to_timestamp(time).ok()
}

/// The number the ASCII digits spell; `None` if one is not a digit.
fn digits(bytes: &[u8]) -> Option<u32> {
    bytes.iter().try_fold(0u32, |n, &b| b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0')))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn jiff(s: &str) -> Option<Timestamp> {
        s.parse::<Timestamp>().ok()
    }

    #[test]
    fn reads_what_the_apiserver_writes() {
        for s in [
            "2026-01-01T00:00:00Z",
            "1970-01-01T00:00:00Z",
            "1969-12-31T23:59:59Z",
            "0001-01-01T00:00:00Z",
            "2024-02-29T12:34:56Z",
            "9999-12-30T21:59:59.999999999Z",
            "2026-11-24T13:35:38.123456Z",
            "2026-11-24T13:35:38.1Z",
        ] {
            assert_eq!(parse_canonical(s.as_bytes()), jiff(s), "{s}");
            assert!(parse_canonical(s.as_bytes()).is_some(), "{s} took the slow path");
        }
    }

    #[test]
    fn leaves_every_other_form_to_jiff() {
        for s in [
            "2026-01-01t00:00:00Z",
            "2026-01-01T00:00:00z",
            "2026-01-01T00:00:00+00:00",
            "2026-01-01T00:00:60Z",
            "2023-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z",
            "2026-01-00T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:00:00.Z",
            "2026-01-01T00:00:00.1234567890Z",
            "2026-01-01 00:00:00Z",
            "+2026-01-01T00:00:00Z",
            "2026-01-01T00:00:00",
            "",
        ] {
            assert_eq!(parse_canonical(s.as_bytes()), None, "{s}");
        }
    }

    proptest! {
        /// Every canonical timestamp, valid or not, reads as jiff reads it,
        /// or is left to jiff.
        #[test]
        fn agrees_with_jiff(
            year in 0u32..=9999, month in 0u32..=13, day in 0u32..=32,
            hour in 0u32..=24, minute in 0u32..=60, second in 0u32..=60,
            fraction in proptest::option::of("[0-9]{1,9}"),
        ) {
            let fraction = fraction.map(|f| format!(".{f}")).unwrap_or_default();
            let s = format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}{fraction}Z");
            match parse_canonical(s.as_bytes()) {
                Some(fast) => prop_assert_eq!(Some(fast), jiff(&s)),
                // Left to jiff: only what it refuses, or a leap second.
                None => prop_assert!(jiff(&s).is_none() || second == 60, "{} left to jiff", s),
            }
        }
    }
}
