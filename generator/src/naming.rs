//! Every Rust name the generator writes comes from here: field and method
//! names, module names, file names. heck does the case conversion; an
//! override table handles acronyms heck would split (`clusterIPs` must be
//! `cluster_ips`, not `cluster_i_ps`), and keywords get a trailing `_`.

use heck::ToSnakeCase;

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

/// Whole names whose conversion is fixed by hand.
const FIELD_OVERRIDES: &[(&str, &str)] = &[("$ref", "ref_path"), ("$schema", "schema"), ("-", "dash")];

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "box", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false",
    "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "override", "priv", "pub",
    "ref", "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof", "unsafe",
    "unsized", "use", "virtual", "where", "while", "yield", "abstract", "become", "do", "final", "macro",
];

/// snake_case with plural acronyms kept whole; no keyword escaping.
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
    s.replace(['-', '.', '$'], "_").to_snake_case()
}

/// Escapes a Rust keyword by appending `_` (`type` → `type_`).
pub fn escape_keyword(name: String) -> String {
    if KEYWORDS.contains(&name.as_str()) { name + "_" } else { name }
}

/// The Rust field name for a JSON property name.
pub fn field_name(json_name: &str) -> String {
    if let Some((_, to)) = FIELD_OVERRIDES.iter().find(|(from, _)| *from == json_name) {
        return (*to).to_owned();
    }
    let s = snake(json_name);
    let s = if s.starts_with(|c: char| c.is_ascii_digit()) { format!("_{s}") } else { s };
    escape_keyword(s)
}

/// A module name for one segment of a schema name (`kube-aggregator` → `kube_aggregator`).
pub fn module_name(segment: &str) -> String {
    escape_keyword(segment.replace('-', "_"))
}

/// File name (without `.rs`) for a type name (`APIService` → `api_service`).
pub fn file_name(type_name: &str) -> String {
    let s = snake(type_name);
    // A file must not shadow the `mod.rs` of its own directory.
    if s == "mod" { "mod_".to_owned() } else { s }
}

/// Module path and type name for a schema name, following the public rule:
/// drop `io.k8s.`, dots become `::`, hyphens `_`.
pub fn schema_path(schema_name: &str) -> (Vec<String>, String) {
    let trimmed = schema_name.strip_prefix("io.k8s.").unwrap_or(schema_name);
    let mut parts: Vec<&str> = trimmed.split('.').collect();
    let type_name = parts.pop().unwrap_or_default().replace('-', "_");
    (parts.into_iter().map(module_name).collect(), type_name)
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

/// Accessor name of a group/version on the ClientSet (`apps`, `v1` → `apps_v1`;
/// `networking.k8s.io` → `networking_v1`; core → `core_v1`).
pub fn group_version_method(group: &str, version: &str) -> String {
    let short = if group.is_empty() { "core" } else { group.split('.').next().unwrap_or(group) };
    // `flowcontrol.apiserver.k8s.io` and `internal.apiserver.k8s.io` are
    // named by their first label, as client-go does.
    format!("{}_{}", snake(short), version)
}

/// Method name for a resource on a group/version client, from its kind
/// and REST plural as client-go names it: `ConfigMap` + `configmaps` →
/// `config_maps`, `NetworkPolicy` + `networkpolicies` → `network_policies`.
pub fn resource_method(kind: &str, plural: &str) -> String {
    let snake_kind = snake(kind);
    let lower_kind: String = snake_kind.chars().filter(|c| *c != '_').collect();
    let common = lower_kind.chars().zip(plural.chars()).take_while(|(a, b)| a == b).count();
    if common < lower_kind.len().saturating_sub(3) || common == 0 {
        // The plural is not a form of the kind's name (`componentstatuses` is):
        // use the plural as it is.
        return escape_keyword(snake(plural));
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
    out.push_str(&plural[common..]);
    escape_keyword(out)
}

/// PascalCase type-name fragment for a group/version (`AppsV1`).
pub fn group_version_type(group: &str, version: &str) -> String {
    use heck::ToUpperCamelCase;
    group_version_method(group, version).to_upper_camel_case()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names() {
        let cases = [
            ("clusterIPs", "cluster_ips"),
            ("clusterIP", "cluster_ip"),
            ("podCIDRs", "pod_cidrs"),
            ("podIPs", "pod_ips"),
            ("hostIPs", "host_ips"),
            ("externalIPs", "external_ips"),
            ("type", "type_"),
            ("continue", "continue_"),
            ("ref", "ref_"),
            ("$ref", "ref_path"),
            ("$schema", "schema"),
            ("x-kubernetes-int-or-string", "x_kubernetes_int_or_string"),
            ("apiVersion", "api_version"),
            ("deletionGracePeriodSeconds", "deletion_grace_period_seconds"),
            ("readOnlyRootFilesystem", "read_only_root_filesystem"),
            ("targetWWNs", "target_wwns"),
            ("nodeIPAMEnabled", "node_ipam_enabled"),
            ("ipsecMode", "ipsec_mode"),
            ("allowedUIDs", "allowed_uids"),
            ("dnsNames", "dns_names"),
            ("enum", "enum_"),
        ];
        for (json, rust) in cases {
            assert_eq!(field_name(json), rust, "for {json}");
        }
    }

    #[test]
    fn schema_paths() {
        assert_eq!(
            schema_path("io.k8s.api.apps.v1.Deployment"),
            (vec!["api".into(), "apps".into(), "v1".into()], "Deployment".into())
        );
        assert_eq!(
            schema_path("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService"),
            (
                vec!["kube_aggregator", "pkg", "apis", "apiregistration", "v1"].into_iter().map(String::from).collect(),
                "APIService".into()
            )
        );
        assert_eq!(schema_path("io.k8s.api.core.v1.Pod").0, vec!["api", "core", "v1"]);
    }

    #[test]
    fn group_version_names() {
        assert_eq!(group_version_method("", "v1"), "core_v1");
        assert_eq!(group_version_method("apps", "v1"), "apps_v1");
        assert_eq!(group_version_method("networking.k8s.io", "v1beta1"), "networking_v1beta1");
        assert_eq!(group_version_method("rbac.authorization.k8s.io", "v1"), "rbac_v1");
        assert_eq!(group_version_type("flowcontrol.apiserver.k8s.io", "v1"), "FlowcontrolV1");
    }

    #[test]
    fn resource_methods() {
        let cases = [
            ("ConfigMap", "configmaps", "config_maps"),
            ("NetworkPolicy", "networkpolicies", "network_policies"),
            ("Endpoints", "endpoints", "endpoints"),
            ("IPAddress", "ipaddresses", "ip_addresses"),
            ("ServiceCIDR", "servicecidrs", "service_cidrs"),
            ("Pod", "pods", "pods"),
            ("ComponentStatus", "componentstatuses", "component_statuses"),
            ("APIService", "apiservices", "api_services"),
            ("CSIStorageCapacity", "csistoragecapacities", "csi_storage_capacities"),
            ("Binding", "bindings", "bindings"),
        ];
        for (kind, plural, method) in cases {
            assert_eq!(resource_method(kind, plural), method, "for {kind}");
        }
    }

    #[test]
    fn file_names() {
        assert_eq!(file_name("APIService"), "api_service");
        assert_eq!(file_name("CSIDriver"), "csi_driver");
        assert_eq!(file_name("JSONSchemaProps"), "json_schema_props");
    }
}
