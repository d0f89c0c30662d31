//! Every Rust name the generator writes comes from here: field, method,
//! module, type, variant and file names.
//!
//! # The escaping rule
//! Names on the wire (JSON properties, group labels, kinds, enum values)
//! may be anything; the Rust names made from them are always identifiers,
//! by one rule applied everywhere:
//! 1. Case: heck converts to snake_case or UpperCamelCase; an override
//!    table keeps plural acronyms whole (`clusterIPs` is `cluster_ips`, not
//!    `cluster_i_ps`).
//! 2. Characters: ASCII letters and digits are kept; every other ASCII
//!    character (`-`, `.`, `/`, `$`, `_`, ...) separates words; a
//!    non-ASCII character becomes the word `u` + its code point in hex
//!    (`größe` is `gr_u00f6_u00df_e`), so every name is plain ASCII.
//! 3. A name with no letter or digit at all is spelled out (`$` is
//!    `dollar`, `-` is `dash`, `_` is `underscore`).
//! 4. A name that starts with a digit gets a leading `_` (`3scale` is
//!    `_3scale`).
//! 5. A Rust keyword gets a trailing `_` (`type` is `type_`, `Self` is `Self_`).
//! 6. Two wire names of one scope that come out the same (`fooBar` and
//!    `FooBar`) are told apart by [`dedupe`]: in sorted wire-name order, the
//!    first keeps the name and the others get `_2`, `_3`, ...
//!
//! Kinds (and the other type names of named schemas) are the exception to
//! 1: they keep their spelling (`HTTPRoute`), except that the first letter
//! is upper-cased and separators are dropped, the letter after one
//! upper-cased (`postgresql` is `Postgresql`, `my-kind` is `MyKind`); see
//! [`kind_name`]. A name that does not start with a letter is an input
//! error. Two kinds of one module that come out the same, or whose files
//! would ([`file_name`]: `HTTPRoute` and `HttpRoute` are both
//! `http_route.rs`), are told apart by step 6 ([`dedupe_type_names`]).
//!
//! # Names on the wire
//! Kubernetes' own names are checked by the apiserver's rules before any
//! Rust name is made from them, so that input the apiserver would refuse
//! is refused here too, naming where it came from: a group is a DNS-1123
//! subdomain ([`group_error`]), a version, plural, singular, short name or
//! category a DNS-1035 label ([`dns1035_label_error`]), a kind one in lower
//! case ([`kind_error`]). Text that is no name (file labels, a server's
//! version, descriptions) never becomes one: it is only ever written into
//! comments, doc comments and TOML strings, escaped by
//! [`crate::emit::text`].

use std::collections::BTreeSet;

use heck::{ToSnakeCase, ToUpperCamelCase};

/// Plural acronyms that heck would split before the lower-case `s`.
const PLURAL_ACRONYMS: &[(&str, &str)] = &[
    ("CIDRs", "Cidrs"),
    ("IPs", "Ips"),
    ("URLs", "Urls"),
    ("UIDs", "Uids"),
    ("IDs", "Ids"),
    ("APIs", "Apis"),
    ("CRDs", "Crds"),
    ("DNSNames", "DnsNames"),
    ("FQDNs", "Fqdns"),
    ("TTLs", "Ttls"),
    ("WWNs", "Wwns"),
];

/// Whole names whose conversion is fixed by hand (JSON Schema's own keywords).
const FIELD_OVERRIDES: &[(&str, &str)] = &[("$ref", "ref_path"), ("$schema", "schema")];

/// Strict and reserved keywords of every edition, and the weak `union`.
const KEYWORDS: &[&str] = &[
    "Self", "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate", "do", "dyn",
    "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "macro",
    "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return", "self", "static", "struct", "super",
    "trait", "true", "try", "type", "typeof", "union", "unsafe", "unsized", "use", "virtual", "where", "while",
    "yield",
];

/// Words for the ASCII punctuation a name may consist of (step 3).
const PUNCTUATION_WORDS: &[(char, &str)] = &[
    ('$', "dollar"),
    ('-', "dash"),
    ('_', "underscore"),
    ('.', "dot"),
    ('/', "slash"),
    ('@', "at"),
    ('+', "plus"),
    ('#', "hash"),
    ('*', "star"),
    (':', "colon"),
    ('~', "tilde"),
    ('%', "percent"),
    ('&', "and"),
    ('=', "equals"),
    ('!', "bang"),
    ('?', "question"),
    (' ', "space"),
];

/// Step 2: ASCII letters and digits stay, other ASCII separates words, and
/// non-ASCII characters become `u<hex>` words.
fn ascii_words(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if c.is_ascii() {
            out.push('_');
        } else {
            out.push_str(&format!("_u{:04x}_", c as u32));
        }
    }
    out
}

/// Step 3: a name of punctuation only, spelled out as words.
fn spelled_out(name: &str) -> String {
    if name.is_empty() {
        return "empty".to_owned();
    }
    let words: Vec<String> = name
        .chars()
        .map(|c| match PUNCTUATION_WORDS.iter().find(|(p, _)| *p == c) {
            Some((_, w)) => (*w).to_owned(),
            None => format!("u{:04x}", c as u32),
        })
        .collect();
    words.join("_")
}

/// Steps 4 and 5 on a name made only of ASCII letters, digits and `_`.
fn escape(name: String) -> String {
    let name = if name.starts_with(|c: char| c.is_ascii_digit()) { format!("_{name}") } else { name };
    if KEYWORDS.contains(&name.as_str()) { name + "_" } else { name }
}

/// snake_case with plural acronyms kept whole, ASCII only (steps 1 to 3);
/// not yet escaped, for names that get a prefix or suffix.
pub fn snake(name: &str) -> String {
    let mut s = name.to_owned();
    for (from, to) in PLURAL_ACRONYMS {
        if let Some(pos) = s.find(from) {
            // Only when the acronym ends the word: `IPsec` is not `IPs`.
            let end = pos + from.len();
            let at_word_end = s[end..].chars().next().is_none_or(|c| c.is_ascii_uppercase() || !c.is_alphanumeric());
            if at_word_end {
                s.replace_range(pos..end, to);
            }
        }
    }
    let snake = ascii_words(&s).to_snake_case();
    if snake.is_empty() { spelled_out(name) } else { snake }
}

/// UpperCamelCase, ASCII only (steps 1 to 3): enum variants, type-name parts.
pub fn pascal(name: &str) -> String {
    let camel = ascii_words(name).to_upper_camel_case();
    if camel.is_empty() { spelled_out(name).to_upper_camel_case() } else { camel }
}

/// A path segment of a nested type name: its first letter upper-cased and
/// separators dropped, the rest kept as written (`backendRefs` is
/// `BackendRefs`, `clusterIPs` stays `ClusterIPs`), as the kind keeps its
/// own spelling.
pub fn type_segment(name: &str) -> String {
    let words = ascii_words(name);
    let mut out = String::with_capacity(words.len());
    let mut upper_next = true;
    for c in words.chars() {
        if c == '_' {
            upper_next = true;
        } else if upper_next {
            out.push(c.to_ascii_uppercase());
            upper_next = false;
        } else {
            out.push(c);
        }
    }
    if out.is_empty() { pascal(name) } else { out }
}

/// Escapes a name already made of ASCII letters, digits and `_` (steps 4
/// and 5): `type` → `type_`, `3scale` → `_3scale`.
pub fn escape_keyword(name: String) -> String {
    escape(name)
}

/// The Rust field name for a JSON property name.
pub fn field_name(json_name: &str) -> String {
    if let Some((_, to)) = FIELD_OVERRIDES.iter().find(|(from, _)| *from == json_name) {
        return (*to).to_owned();
    }
    escape(snake(json_name))
}

/// An enum variant for a wire value (`PathPrefix`, `http` → `Http`, `""` → `Empty`).
pub fn variant_name(value: &str) -> String {
    escape(pascal(value))
}

/// A kind's type name, and that of any named schema: its own spelling
/// with the first letter upper-cased and the separators `-` and `_`
/// dropped, the letter after one upper-cased ([`type_segment`]), then
/// escaped (steps 4 and 5): `HTTPRoute` stays, `postgresql` is
/// `Postgresql`, `postgresqlList` is `PostgresqlList`, `my-kind` is
/// `MyKind`, `self` is `Self_`. A type name thus never starts with a
/// lower-case letter, so it never takes the name of the (snake_case)
/// module of its file. `None` when `kind` does not start with an ASCII
/// letter or holds anything but ASCII letters, digits, `-` and `_`: the
/// input is wrong.
pub fn kind_name(kind: &str) -> Option<String> {
    let valid = kind.starts_with(|c: char| c.is_ascii_alphabetic())
        && kind.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    valid.then(|| escape(type_segment(kind)))
}

/// Tells apart the type names of one module (step 6): `names` are
/// [`kind_name`]s in the sorted order of the schema names they come from;
/// the first keeps its name, a later one that comes out the same as an
/// earlier one, or whose file would ([`file_name`]), gets `_2`, `_3`, ...
/// (`Foo` and `foo` are `Foo` and `Foo_2`, in `foo.rs` and `foo_2.rs`).
/// The names in `fixed` are taken already and keep their names.
pub fn dedupe_type_names(fixed: &[&str], names: &[&str]) -> Vec<String> {
    let mut types: BTreeSet<String> = fixed.iter().map(|n| (*n).to_owned()).collect();
    let mut files: BTreeSet<String> = fixed.iter().map(|n| file_name(n)).collect();
    names
        .iter()
        .map(|base| {
            let mut candidate = (*base).to_owned();
            let mut n = 2;
            while types.contains(&candidate) || files.contains(&file_name(&candidate)) {
                candidate = format!("{}_{n}", base.trim_end_matches('_'));
                n += 1;
            }
            files.insert(file_name(&candidate));
            types.insert(candidate.clone());
            candidate
        })
        .collect()
}

/// Why `value` is not a DNS-1035 label as the apiserver checks it
/// (`[a-z]([-a-z0-9]*[a-z0-9])?`, at most 63 characters); `None` when it
/// is one. Versions, plurals, singulars, short names and categories are.
pub fn dns1035_label_error(value: &str) -> Option<String> {
    if value.len() > DNS_LABEL_MAX {
        return Some(format!("must be no more than {DNS_LABEL_MAX} characters"));
    }
    let valid = value.starts_with(|c: char| c.is_ascii_lowercase())
        && !value.ends_with('-')
        && value.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    (!valid).then(|| {
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic \
         character, and end with an alphanumeric character"
            .to_owned()
    })
}

/// Why `value` is not a DNS-1123 subdomain as the apiserver checks it
/// (dot-separated `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 253 characters).
pub fn dns1123_subdomain_error(value: &str) -> Option<String> {
    if value.len() > DNS_SUBDOMAIN_MAX {
        return Some(format!("must be no more than {DNS_SUBDOMAIN_MAX} characters"));
    }
    let label = |l: &str| {
        l.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && l.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && l.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    };
    (!value.split('.').all(label)).then(|| {
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must \
         start and end with an alphanumeric character"
            .to_owned()
    })
}

/// Why `group` is not an API group name: a DNS-1123 subdomain, with at
/// least one dot for a custom resource's group (`needs_dot`), as the
/// apiserver requires of CRDs; `""` is the core group where that is allowed
/// (not `needs_dot`).
pub fn group_error(group: &str, needs_dot: bool) -> Option<String> {
    if group.is_empty() {
        return needs_dot.then(|| "must not be empty".to_owned());
    }
    if let Some(e) = dns1123_subdomain_error(group) {
        return Some(e);
    }
    (needs_dot && !group.contains('.')).then(|| "should be a domain with at least one dot".to_owned())
}

/// Why `kind` is not a kind name: in lower case, a DNS-1035 label
/// (`HTTPRoute`, `postgresql` and `My-Kind` are kinds; `3Thing`, `a.b`
/// and `Größe` are not).
pub fn kind_error(kind: &str) -> Option<String> {
    if kind.is_empty() {
        return Some("must not be empty".to_owned());
    }
    // Non-ASCII letters stay as they are, and fail the label's rule.
    dns1035_label_error(&kind.to_ascii_lowercase())
        .map(|e| format!("may have mixed case, but should otherwise match: {e}"))
}

/// The longest DNS label (RFC 1035 and RFC 1123).
const DNS_LABEL_MAX: usize = 63;
/// The longest DNS subdomain (RFC 1123).
const DNS_SUBDOMAIN_MAX: usize = 253;

/// Names for several wire names of one scope (the fields of a struct, the
/// variants of an enum), each made by `name`, told apart by step 6.
/// `wire` must be in sorted order; the result is in the same order.
pub fn dedupe(wire: &[&str], name: impl Fn(&str) -> String) -> Vec<String> {
    let mut taken = BTreeSet::new();
    wire.iter()
        .map(|w| {
            let base = name(w);
            let mut candidate = base.clone();
            let mut n = 2;
            while !taken.insert(candidate.clone()) {
                // `self_` numbered is `self_2`, not `self__2`.
                candidate = format!("{}_{n}", base.trim_end_matches('_'));
                n += 1;
            }
            candidate
        })
        .collect()
}

/// Names beyond this many characters are shortened (see [`nested_type_candidates`]).
pub const LONG_TYPE_NAME: usize = 48;

/// The names to try, best first, for a type defined inline at the property
/// path `segments` below the type `owner`: the owner's name followed by each
/// segment (`HTTPRoute` + `spec.rules.matches.path` →
/// `HTTPRouteSpecRulesMatchesPath`). A name longer than [`LONG_TYPE_NAME`]
/// is shortened to the owner, the first segment and as few (but at least
/// two) of the last segments as keep it unique (`ChallengeSpec` +
/// `…NodeAffinityPreference`); the full name comes last. When all are
/// taken the caller numbers the full name, or the shortest when the full
/// name is over twice the limit (a path of many equal segments).
pub fn nested_type_candidates(owner: &str, segments: &[String]) -> Vec<String> {
    let parts: Vec<String> = segments.iter().map(|s| type_segment(s)).collect();
    let full = format!("{owner}{}", parts.concat());
    let mut out = Vec::new();
    if full.len() > LONG_TYPE_NAME && parts.len() > 3 {
        for keep in 2..parts.len() - 1 {
            out.push(format!("{owner}{}{}", parts[0], parts[parts.len() - keep..].concat()));
        }
    }
    out.push(full);
    out
}

/// A module name for one segment of a schema name (`kube-aggregator` →
/// `kube_aggregator`, `3scale` → `_3scale`). Lower-case segments keep their
/// spelling otherwise, so built-in paths match k8s-openapi's.
pub fn module_name(segment: &str) -> String {
    let plain: String = ascii_words(segment).split('_').filter(|w| !w.is_empty()).collect::<Vec<_>>().join("_");
    let plain = if plain.is_empty() { spelled_out(segment) } else { plain };
    escape(plain)
}

/// File name (without `.rs`) for a type name (`APIService` → `api_service`).
pub fn file_name(type_name: &str) -> String {
    let s = snake(type_name);
    // A file must not shadow the `mod.rs` of its own directory.
    if s == "mod" { "mod_".to_owned() } else { s }
}

/// The apply configuration of a generated type (client-go's
/// `<Type>ApplyConfiguration`): the type's name and `Apply`, a keyword's
/// escape dropped (`Deployment` → `DeploymentApply`, `Self_` → `SelfApply`).
/// It is generated in the type's module, beside it: when a type of the
/// module (`taken`) already has the name (a property `apply` of `FooSpec`
/// is the type `FooSpecApply`), it is numbered as [`dedupe`] numbers,
/// `FooSpecApply_2`, and the type keeps its name. [`crate::plan`] checks
/// the result once more.
pub fn apply_type_name(type_name: &str, taken: impl Fn(&str) -> bool) -> String {
    let base = format!("{}Apply", type_name.trim_end_matches('_'));
    let mut candidate = base.clone();
    let mut n = 2;
    while taken(&candidate) {
        candidate = format!("{base}_{n}");
        n += 1;
    }
    candidate
}

/// The builder method of an apply configuration's field, from the field's
/// Rust name ([`field_name`]), as client-go names it `With<Field>`:
/// `replicas` → `with_replicas`; the escapes of a keyword or a leading
/// digit are dropped, which `with_` makes unneeded (`type_` →
/// `with_type`, `_3scale` → `with_3scale`). Distinct field names give
/// distinct methods: only a keyword's name ends with `_`, and only one
/// starting with a digit begins with one.
pub fn apply_method_name(field_rust_name: &str) -> String {
    format!("with_{}", field_rust_name.trim_start_matches('_').trim_end_matches('_'))
}

/// Module path and type name for a schema name, following the public rule:
/// drop `io.k8s.`, dots become `::`, each segment escaped as a module name.
/// The type name is the last segment's [`kind_name`]; `None` when that
/// does not start with a letter.
pub fn schema_path(schema_name: &str) -> (Vec<String>, Option<String>) {
    let trimmed = schema_name.strip_prefix("io.k8s.").unwrap_or(schema_name);
    let mut parts: Vec<&str> = trimmed.split('.').collect();
    let type_name = parts.pop().unwrap_or_default();
    (parts.into_iter().map(module_name).collect(), kind_name(type_name))
}

/// The schema name the apiserver publishes for a kind of a group: the
/// group's labels reversed, then version and kind (`monitoring.coreos.com`
/// → `com.coreos.monitoring.v1.ServiceMonitor`), as its OpenAPI builder does.
pub fn published_schema_name(group: &str, version: &str, kind: &str) -> String {
    let mut labels: Vec<&str> = group.split('.').filter(|l| !l.is_empty()).collect();
    labels.reverse();
    labels.push(version);
    labels.push(kind);
    labels.join(".")
}

/// The Cargo feature gating a module path (and the types in it): the API
/// group's Go package (`api::apps` → `apps`, `…::apis::apiextensions` →
/// `apiextensions`), or `None` for apimachinery, which every group needs.
pub fn module_feature(module: &[String]) -> Option<String> {
    match module.first().map(String::as_str) {
        Some("apimachinery") | None => None,
        Some("api") => module.get(1).cloned(),
        _ => module.iter().position(|m| m == "apis").and_then(|i| module.get(i + 1)).cloned(),
    }
}

/// Method name for a resource on a group/version client, from its kind
/// and REST plural as client-go names it: `ConfigMap` + `configmaps` →
/// `config_maps`, `NetworkPolicy` + `networkpolicies` → `network_policies`.
pub fn resource_method(kind: &str, plural: &str) -> String {
    let snake_kind = snake(kind);
    let plural = snake(plural);
    let lower_kind: Vec<char> = snake_kind.chars().filter(|c| *c != '_').collect();
    let common = lower_kind.iter().zip(plural.chars()).take_while(|(a, b)| *a == b).count();
    if common < lower_kind.len().saturating_sub(3) || common == 0 {
        // The plural is not a form of the kind's name (`componentstatuses` is):
        // use the plural as it is.
        return escape(plural);
    }
    let mut out = String::new();
    let mut taken = 0;
    for c in snake_kind.chars() {
        if taken == common {
            break;
        }
        out.push(c);
        if c != '_' {
            taken += 1;
        }
    }
    // `common` counts characters; both names are ASCII by now, but slice by
    // characters all the same.
    out.extend(plural.chars().skip(common));
    escape(out)
}

mod groups;

pub use groups::{BUILTIN_GROUPS, GroupNames, is_builtin};

#[cfg(test)]
mod tests;
