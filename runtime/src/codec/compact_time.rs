//! [`CompactTimestamp`]: a timestamp that costs nothing more when optional.

use std::fmt;
use std::num::NonZeroU32;

use jiff::Timestamp;

const NANOS_PER_SECOND: i32 = 1_000_000_000;

/// A [`Timestamp`] in 16 bytes with a niche, as the generated `Time` and
/// `MicroTime` keep it.
///
/// `Option<Timestamp>` is 24 bytes, and an absent one costs them all
/// inline: a pod has about a dozen optional times (conditions' probe and
/// transition times, container states, deletion), and an informer keeps
/// every cached object's. `Option<CompactTimestamp>` is 16 bytes, as the
/// time itself.
///
/// It converts to and from `Timestamp` without loss, and orders, compares
/// and hashes as the `Timestamp` it holds.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CompactTimestamp {
    /// Whole seconds since the Unix epoch, rounded down: before the epoch
    /// the fraction is still counted forwards, so the fields order as the
    /// times do.
    second: i64,
    /// The nanoseconds after `second` (below 10⁹), plus one: never zero,
    /// which is the niche `Option` uses.
    nanosecond_plus_one: NonZeroU32,
}

impl CompactTimestamp {
    /// The timestamp, as jiff computes with it.
    pub fn timestamp(self) -> Timestamp {
        let nanosecond = (self.nanosecond_plus_one.get() - 1) as i32;
        // Every value was made from a valid `Timestamp`, whose seconds and
        // nanoseconds `new` takes back (it accepts a positive fraction of a
        // negative second): the fallback is never taken.
        Timestamp::new(self.second, nanosecond).unwrap_or(Timestamp::UNIX_EPOCH)
    }
}

impl From<Timestamp> for CompactTimestamp {
    fn from(t: Timestamp) -> Self {
        let (mut second, mut nanosecond) = (t.as_second(), t.subsec_nanosecond());
        if nanosecond < 0 {
            // jiff gives a time before the epoch a negative fraction.
            second -= 1;
            nanosecond += NANOS_PER_SECOND;
        }
        CompactTimestamp { second, nanosecond_plus_one: NonZeroU32::MIN.saturating_add(nanosecond as u32) }
    }
}

impl From<CompactTimestamp> for Timestamp {
    fn from(t: CompactTimestamp) -> Self {
        t.timestamp()
    }
}

impl fmt::Debug for CompactTimestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.timestamp(), f)
    }
}

impl fmt::Display for CompactTimestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.timestamp(), f)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn an_absent_time_costs_nothing_more() {
        assert_eq!(std::mem::size_of::<Option<CompactTimestamp>>(), 16);
        assert_eq!(std::mem::size_of::<CompactTimestamp>(), 16);
    }

    #[test]
    fn the_ends_of_jiffs_range_convert_back() {
        for t in [Timestamp::MIN, Timestamp::MAX, Timestamp::UNIX_EPOCH, Timestamp::constant(-1, -1)] {
            assert_eq!(CompactTimestamp::from(t).timestamp(), t);
        }
    }

    proptest! {
        #[test]
        fn converts_without_loss_and_orders_as_the_times(
            a in Timestamp::MIN.as_second()..=Timestamp::MAX.as_second(),
            an in -999_999_999i32..=999_999_999,
            b in -10_000i64..=10_000,
            bn in -999_999_999i32..=999_999_999,
        ) {
            let (Ok(a), Ok(b)) = (Timestamp::new(a, an), Timestamp::new(b, bn)) else {
                return Ok(());
            };
            let (ca, cb) = (CompactTimestamp::from(a), CompactTimestamp::from(b));
            prop_assert_eq!(ca.timestamp(), a);
            prop_assert_eq!(cb.timestamp(), b);
            prop_assert_eq!(ca.cmp(&cb), a.cmp(&b));
            prop_assert_eq!(ca == cb, a == b);
        }
    }
}
