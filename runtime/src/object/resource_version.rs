//! Ordering resourceVersions, as apimachinery's
//! `util/resourceversion.CompareResourceVersion`.
//!
//! A resourceVersion is opaque to clients in general, but the apiserver
//! (with etcd behind it) hands out positive integers in decimal, and
//! comparing two of the same resource tells which state is newer: what a
//! controller needs to know whether its cache has caught up with its own
//! write ([`SharedIndexInformer::wait_for_store_resource_version`](crate::cache::SharedIndexInformer::wait_for_store_resource_version)).

use std::cmp::Ordering;

/// A resourceVersion that is not a positive decimal integer without
/// leading zeros, so cannot be ordered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("resource version is not well formed: {0:?}")]
pub struct InvalidResourceVersion(pub String);

/// Orders two resourceVersions of the same resource; an error names the
/// first one that is not a positive decimal integer without leading zeros
/// (zero is refused too: list and watch use it to mean "any").
pub fn compare_resource_version(a: &str, b: &str) -> Result<Ordering, InvalidResourceVersion> {
    check_resource_version(a)?;
    check_resource_version(b)?;
    // Without leading zeros, the longer number is the larger; numbers of
    // one length compare as text. No width limit, as upstream.
    Ok(a.len().cmp(&b.len()).then_with(|| a.cmp(b)))
}

/// Whether `rv` can be ordered at all (a positive decimal integer without
/// leading zeros); the error names it if not.
pub fn check_resource_version(rv: &str) -> Result<(), InvalidResourceVersion> {
    if is_well_formed(rv) { Ok(()) } else { Err(InvalidResourceVersion(rv.to_owned())) }
}

fn is_well_formed(rv: &str) -> bool {
    !rv.is_empty() && !rv.starts_with('0') && rv.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    // The table of apimachinery's `TestCompareResourceVersion`
    // (`pkg/util/resourceversion/resourceversion_test.go`, v0.35).
    #[test]
    fn compares_as_apimachinery() {
        use Ordering::{Equal, Greater, Less};
        let big_a = "99999999999999999999999999999999999999999999999999";
        let big_b = "100000000000000000000000000000000000000000000000000";
        let big_c = "12345678901234567890123456789012345678901234567890";
        let table: &[(&str, &str, &str, Option<Ordering>)] = &[
            ("a less than b", "100", "200", Some(Less)),
            ("a is zero, invalid", "0", "1", None),
            ("both zero", "0", "0", None),
            ("a greater than b", "200", "100", Some(Greater)),
            ("b is 0, invalid", "1", "0", None),
            ("a equal to b small", "1", "1", Some(Equal)),
            ("a equal to b", "100", "100", Some(Equal)),
            ("a shorter than b", "99", "100", Some(Less)),
            ("a longer than b", "100", "99", Some(Greater)),
            ("a with leading zero", "0100", "100", None),
            ("b with leading zero", "100", "0100", None),
            ("a empty", "", "100", None),
            ("b empty", "100", "", None),
            ("a non-digit", "100a", "100", None),
            ("b non-digit", "100", "100a", None),
            ("large int a less than b", big_a, big_b, Some(Less)),
            ("large int a greater than b", big_b, big_a, Some(Greater)),
            ("large int a equal to b", big_c, big_c, Some(Equal)),
        ];
        for (name, a, b, want) in table {
            assert_eq!(compare_resource_version(a, b).ok(), *want, "{name}");
        }
    }

    #[test]
    fn the_error_names_the_bad_version() {
        let err = compare_resource_version("100", "10a").unwrap_err();
        assert_eq!(err.to_string(), r#"resource version is not well formed: "10a""#);
        assert_eq!(check_resource_version("0100"), Err(InvalidResourceVersion("0100".into())));
        assert_eq!(check_resource_version("100"), Ok(()));
    }
}
