//! Timestamps read as apimachinery reads them: Go's
//! `time.Parse(time.RFC3339, s)`, which `metav1.Time` and
//! `metav1.MicroTime` use (the latter with six fraction digits in its
//! layout, but any RFC 3339 form of a time is the same instant).
//!
//! The form is `2006-01-02T15:04:05[.frac](Z|±07:00)`, with Go's leniencies
//! and limits, so that what the apiserver stores and a Go controller reads,
//! this reads too, and what Go refuses is refused here:
//! - a fraction of any length, `.` or `,`, truncated to nanoseconds (more
//!   than nine digits are accepted: one such value in a custom resource
//!   must not stop an informer from syncing);
//! - an hour of one digit (`T9:04:05Z`), as Go's general parser allows;
//! - an offset of `±hh:mm` up to `24:60`, as Go's general parser allows;
//! - the year exactly four digits (0000–9999), a leap second (`:60`) and
//!   anything after the zone are errors, as in Go; so is a lowercase `t`
//!   or `z`.
//!
//! The apiserver's own form (`2006-01-02T15:04:05Z`, a fraction of up to
//! nine digits) takes a fast path: a pod carries about ten timestamps, and
//! read with a general parser they were about 4% of decoding a `PodList`.

use jiff::civil::DateTime;
use jiff::tz::Offset;
use jiff::{SignedDuration, Timestamp};

/// Why a timestamp could not be read (the caller names the text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TimeError(&'static str);

/// The shape every RFC 3339 timestamp must have, for errors.
const LAYOUT: &str = "not an RFC 3339 timestamp (2006-01-02T15:04:05Z07:00)";

/// Reads `s` as Go's `time.Parse(time.RFC3339, s)` does.
pub(super) fn parse(s: &str) -> Result<Timestamp, TimeError> {
    match parse_canonical(s.as_bytes()) {
        Some(t) => Ok(t),
        None => parse_general(s.as_bytes()),
    }
}

/// The timestamp `s` names, when it is in the apiserver's form and valid;
/// `None` to let the general parser decide (and word the error).
pub(super) fn parse_canonical(s: &[u8]) -> Option<Timestamp> {
    let (head, rest) = s.split_first_chunk::<19>()?;
    let nanos = match rest {
        [b'Z'] => 0,
        [b'.', fraction @ .., b'Z'] if (1..=9).contains(&fraction.len()) => scaled_nanos(fraction)?,
        _ => return None,
    };
    if [head[4], head[7], head[10], head[13], head[16]] != *b"--T::" {
        return None;
    }
    let field = |at: std::ops::Range<usize>| digits(&head[at]).and_then(|n| i8::try_from(n).ok());
    let year = digits(&head[0..4]).and_then(|n| i16::try_from(n).ok())?;
    // jiff checks the calendar (month, day of month, hour, minute, second
    // up to 59) and its range, which ends late on 9999-12-30.
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

/// Go's general `time.Parse` for the RFC 3339 layout.
fn parse_general(s: &[u8]) -> Result<Timestamp, TimeError> {
    let mut rest = Cursor(s);
    let year = rest.fixed(4).ok_or(TimeError(LAYOUT))?;
    rest.literal(b'-')?;
    let month = rest.fixed(2).ok_or(TimeError(LAYOUT))?;
    rest.literal(b'-')?;
    let day = rest.fixed(2).ok_or(TimeError(LAYOUT))?;
    rest.literal(b'T')?;
    // Go reads the hour of this layout as one or two digits.
    let hour = rest.fixed(2).or_else(|| rest.fixed(1)).ok_or(TimeError(LAYOUT))?;
    rest.literal(b':')?;
    let minute = rest.fixed(2).ok_or(TimeError(LAYOUT))?;
    rest.literal(b':')?;
    let second = rest.fixed(2).ok_or(TimeError(LAYOUT))?;
    let mut nanos = 0;
    if let [b'.' | b',', first, ..] = rest.0
        && first.is_ascii_digit()
    {
        let len = rest.0[1..].iter().take_while(|b| b.is_ascii_digit()).count();
        // Digits past the ninth are dropped, as Go drops them.
        nanos = scaled_nanos(&rest.0[1..1 + len.min(9)]).ok_or(TimeError(LAYOUT))?;
        rest.0 = &rest.0[1 + len..];
    }
    let offset_seconds = match rest.0 {
        [b'Z', tail @ ..] => {
            rest.0 = tail;
            0
        }
        [sign @ (b'+' | b'-'), ..] => {
            let sign = if *sign == b'-' { -1 } else { 1 };
            rest.0 = &rest.0[1..];
            let hours = rest.fixed(2).ok_or(TimeError(LAYOUT))?;
            rest.literal(b':')?;
            let minutes = rest.fixed(2).ok_or(TimeError(LAYOUT))?;
            // Go's limits: some write offsets of 24 hours or 60 minutes.
            if hours > 24 {
                return Err(TimeError("time zone offset hour out of range"));
            }
            if minutes > 60 {
                return Err(TimeError("time zone offset minute out of range"));
            }
            sign * (i64::from(hours) * 3600 + i64::from(minutes) * 60)
        }
        _ => return Err(TimeError(LAYOUT)),
    };
    if !rest.0.is_empty() {
        return Err(TimeError("extra text after the time zone"));
    }
    let range = |what, value: u32, max| if value > max { Err(TimeError(what)) } else { Ok(value) };
    if month == 0 {
        return Err(TimeError("month out of range"));
    }
    range("month out of range", month, 12)?;
    range("hour out of range", hour, 23)?;
    range("minute out of range", minute, 59)?;
    range("second out of range (Go has no leap seconds)", second, 59)?;
    let as_i8 = |v: u32| i8::try_from(v).unwrap_or(i8::MAX);
    let time = DateTime::new(
        i16::try_from(year).unwrap_or(i16::MAX),
        as_i8(month),
        as_i8(day),
        as_i8(hour),
        as_i8(minute),
        as_i8(second),
        i32::try_from(nanos).unwrap_or(0),
    )
    .map_err(|_| TimeError("day out of range"))?;
    Offset::UTC
        .to_timestamp(time)
        .ok()
        .and_then(|t| t.checked_sub(SignedDuration::from_secs(offset_seconds)).ok())
        .ok_or(TimeError("outside the range of representable times"))
}

/// The unread rest of a timestamp.
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    /// Exactly `n` ASCII digits, consumed; `None` (nothing consumed) if
    /// they are not there.
    fn fixed(&mut self, n: usize) -> Option<u32> {
        let (head, tail) = self.0.split_at_checked(n)?;
        let value = digits(head)?;
        // `1` of `1:04` is an hour of one digit, not the start of two.
        self.0 = tail;
        Some(value)
    }

    fn literal(&mut self, byte: u8) -> Result<(), TimeError> {
        match self.0.split_first() {
            Some((b, tail)) if *b == byte => {
                self.0 = tail;
                Ok(())
            }
            _ => Err(TimeError(LAYOUT)),
        }
    }
}

/// Up to nine fraction digits as nanoseconds.
fn scaled_nanos(fraction: &[u8]) -> Option<u32> {
    let mut nanos = digits(fraction)?;
    for _ in fraction.len()..9 {
        nanos *= 10;
    }
    Some(nanos)
}

/// The number the ASCII digits spell; `None` if one is not a digit.
fn digits(bytes: &[u8]) -> Option<u32> {
    bytes.iter().try_fold(0u32, |n, &b| b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0')))
}

#[cfg(test)]
mod tests;
