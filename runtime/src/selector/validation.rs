//! Label key and value syntax, as apimachinery's `validation` package
//! (`IsQualifiedName`, `IsValidLabelValue`), without regular expressions.

const QUALIFIED_NAME_MAX_LENGTH: usize = 63;
const LABEL_VALUE_MAX_LENGTH: usize = 63;
const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;

const QUALIFIED_NAME_FORMAT: &str = "must consist of alphanumeric characters, '-', '_' or '.', \
     and must start and end with an alphanumeric character";

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, the empty string excluded.
fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => alnum(first) && alnum(last) && b.iter().all(|c| alnum(c) || *c == b'-'),
        _ => false,
    }
}

/// A DNS subdomain (RFC 1123): lower-case labels joined by dots.
pub(crate) fn validate_dns1123_subdomain(s: &str) -> Result<(), String> {
    if s.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        return Err(format!("must be no more than {DNS1123_SUBDOMAIN_MAX_LENGTH} characters"));
    }
    if !s.split('.').all(is_dns1123_label) {
        return Err("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', \
                    and must start and end with an alphanumeric character"
            .to_owned());
    }
    Ok(())
}

/// A label key: `name` or `prefix/name`, the prefix a DNS subdomain and
/// the name at most 63 characters of the qualified-name syntax.
pub(crate) fn validate_qualified_name(key: &str) -> Result<(), String> {
    let mut parts = key.split('/');
    let (prefix, name) = match (parts.next(), parts.next(), parts.next()) {
        (Some(name), None, _) => (None, name),
        (Some(prefix), Some(name), None) => (Some(prefix), name),
        _ => {
            return Err(format!(
                "a qualified name {QUALIFIED_NAME_FORMAT}, with an optional DNS subdomain prefix and '/' \
                 (e.g. 'example.com/MyName')"
            ));
        }
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            return Err("prefix part must be non-empty".to_owned());
        }
        validate_dns1123_subdomain(prefix).map_err(|e| format!("prefix part {e}"))?;
    }
    if name.is_empty() {
        return Err("name part must be non-empty".to_owned());
    }
    if name.len() > QUALIFIED_NAME_MAX_LENGTH {
        return Err(format!("name part must be no more than {QUALIFIED_NAME_MAX_LENGTH} characters"));
    }
    if !is_qualified_name_part(name) {
        return Err(format!("name part {QUALIFIED_NAME_FORMAT}"));
    }
    Ok(())
}

/// A label value: empty, or at most 63 characters of the qualified-name
/// syntax.
pub(crate) fn validate_label_value(value: &str) -> Result<(), String> {
    if value.len() > LABEL_VALUE_MAX_LENGTH {
        return Err(format!("must be no more than {LABEL_VALUE_MAX_LENGTH} characters"));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        return Err(format!("a valid label value must be an empty string or {QUALIFIED_NAME_FORMAT}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names() {
        for ok in ["a", "A1", "a-b_c.d", "example.com/MyName", "k8s.io/a", "a/b"] {
            assert!(validate_qualified_name(ok).is_ok(), "{ok}");
        }
        let long = "a".repeat(64);
        for bad in ["", "-a", "a-", "/a", "a/", "a/b/c", "Example.com/a", "a_b.com/x", long.as_str(), "a b"] {
            assert!(validate_qualified_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn label_values() {
        for ok in ["", "a", "a.b-c_d", "123"] {
            assert!(validate_label_value(ok).is_ok(), "{ok}");
        }
        let long = "a".repeat(64);
        for bad in ["-a", "a-", "a b", "a/b", long.as_str(), "é"] {
            assert!(validate_label_value(bad).is_err(), "{bad}");
        }
    }
}
