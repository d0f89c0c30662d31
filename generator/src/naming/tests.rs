use proptest::prelude::*;

use super::*;

/// What every name the generator writes must be: an identifier syn accepts
/// (not a keyword, not `_`).
fn is_identifier(name: &str) -> bool {
    syn::parse_str::<syn::Ident>(name).is_ok() && name.is_ascii()
}

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
        // The escaping rule, step by step.
        ("-", "dash"),
        ("_", "underscore"),
        ("$", "dollar"),
        ("", "empty"),
        ("..", "dot_dot"),
        ("3scale", "_3scale"),
        ("1", "_1"),
        ("a.b/c", "a_b_c"),
        ("größe", "gr_u00f6_u00df_e"),
        ("Self", "self_"),
        ("self", "self_"),
        ("union", "union_"),
        ("__proto__", "proto"),
        ("x²", "x_u00b2"),
    ];
    for (json, rust) in cases {
        assert_eq!(field_name(json), rust, "for {json:?}");
    }
}

#[test]
fn variant_names() {
    let cases = [
        ("Exact", "Exact"),
        ("PathPrefix", "PathPrefix"),
        ("http", "Http"),
        ("HTTP/1.1", "Http11"),
        ("", "Empty"),
        ("*", "Star"),
        ("1", "_1"),
        ("Self", "Self_"),
        ("ECDSA", "Ecdsa"),
        ("no-op", "NoOp"),
    ];
    for (value, rust) in cases {
        assert_eq!(variant_name(value), rust, "for {value:?}");
    }
}

#[test]
fn type_segments_keep_their_spelling() {
    assert_eq!(type_segment("backendRefs"), "BackendRefs");
    assert_eq!(type_segment("clusterIPs"), "ClusterIPs");
    assert_eq!(type_segment("x-kubernetes-thing"), "XKubernetesThing");
    assert_eq!(type_segment("$"), "Dollar");
    assert_eq!(type_segment("3d"), "3d");
}

#[test]
fn kinds_keep_their_spelling_with_the_first_letter_upper_cased() {
    let cases = [
        ("HTTPRoute", Some("HTTPRoute")),
        ("Pod", Some("Pod")),
        ("APIcast", Some("APIcast")),
        // Zalando's postgres-operator: `kind: postgresql`, `listKind: postgresqlList`.
        ("postgresql", Some("Postgresql")),
        ("postgresqlList", Some("PostgresqlList")),
        ("my-kind", Some("MyKind")),
        ("My-Thing", Some("MyThing")),
        ("My_Type", Some("MyType")),
        ("x", Some("X")),
        ("Self", Some("Self_")),
        ("self", Some("Self_")),
        ("v1", Some("V1")),
        ("3Thing", None),
        ("-thing", None),
        ("Größe", None),
        ("a.b", None),
        ("", None),
    ];
    for (kind, name) in cases {
        assert_eq!(kind_name(kind).as_deref(), name, "for {kind:?}");
    }
}

#[test]
fn type_names_of_one_module_are_told_apart_with_their_files() {
    // `Foo` and `foo` are one name; `HTTPRoute` and `HttpRoute` one file.
    assert_eq!(dedupe_type_names(&[], &["Foo", "Foo", "FooList"]), ["Foo", "Foo_2", "FooList"]);
    assert_eq!(dedupe_type_names(&[], &["HTTPRoute", "HttpRoute"]), ["HTTPRoute", "HttpRoute_2"]);
    assert_eq!(file_name("HttpRoute_2"), "http_route_2");
    // Taken names keep theirs; a numbered name already taken is skipped.
    assert_eq!(dedupe_type_names(&["Foo"], &["Foo", "Foo"]), ["Foo_2", "Foo_3"]);
    assert_eq!(dedupe_type_names(&[], &["Self_", "Self_"]), ["Self_", "Self_2"]);
    assert_eq!(dedupe_type_names(&[], &["Pod", "PodList"]), ["Pod", "PodList"]);
}

#[test]
fn names_on_the_wire_follow_the_apiserver() {
    for ok in ["v1", "v1beta1", "a", "my-version", &"a".repeat(63)] {
        assert_eq!(dns1035_label_error(ok), None, "{ok:?}");
    }
    for bad in ["", "V1", "1v", "v1-", "-v1", "v_1", "v.1", "v1\n", &"a".repeat(64), "vé"] {
        assert!(dns1035_label_error(bad).is_some(), "{bad:?}");
    }
    for ok in ["example.com", "3scale.net", "a-b.c", "apps", "x.y.z", "0.0"] {
        assert_eq!(dns1123_subdomain_error(ok), None, "{ok:?}");
    }
    for bad in ["", "Example.com", "a..b", ".a", "a.", "a_b.c", "a-.b", "a b.c", &format!("{}.com", "a".repeat(250))] {
        assert!(dns1123_subdomain_error(bad).is_some(), "{bad:?}");
    }
    assert_eq!(group_error("", false), None);
    assert!(group_error("", true).is_some());
    assert_eq!(group_error("apps", false), None);
    assert_eq!(group_error("apps", true).as_deref(), Some("should be a domain with at least one dot"));
    assert_eq!(group_error("acid.zalan.do", true), None);
    for ok in ["Pod", "HTTPRoute", "postgresql", "My-Kind", "x"] {
        assert_eq!(kind_error(ok), None, "{ok:?}");
    }
    for bad in ["", "3Thing", "A.B", "Größe", "Kind)\npub fn x() {}", "Kind-", &"K".repeat(64)] {
        let e = kind_error(bad).unwrap_or_else(|| panic!("{bad:?} accepted"));
        assert!(bad.is_empty() || e.starts_with("may have mixed case"), "{e}");
    }
}

#[test]
fn duplicates_get_numbered_in_wire_order() {
    assert_eq!(dedupe(&["FooBar", "fooBar", "foo_bar"], field_name), ["foo_bar", "foo_bar_2", "foo_bar_3"]);
    assert_eq!(dedupe(&["a", "b"], field_name), ["a", "b"]);
    // A numbered name that is itself a wire name's name is skipped.
    assert_eq!(dedupe(&["a", "a_2", "A"], field_name), ["a", "a_2", "a_3"]);
}

#[test]
fn schema_paths() {
    assert_eq!(
        schema_path("io.k8s.api.apps.v1.Deployment"),
        (vec!["api".into(), "apps".into(), "v1".into()], Some("Deployment".into()))
    );
    assert_eq!(
        schema_path("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService"),
        (
            vec!["kube_aggregator", "pkg", "apis", "apiregistration", "v1"].into_iter().map(String::from).collect(),
            Some("APIService".into())
        )
    );
    assert_eq!(schema_path("io.k8s.api.core.v1.Pod").0, vec!["api", "core", "v1"]);
    assert_eq!(
        schema_path("net.3scale.v1.Thing"),
        (vec!["net".into(), "_3scale".into(), "v1".into()], Some("Thing".into()))
    );
    assert_eq!(schema_path("io.k8s.networking.gateway.v1.HTTPRoute").0, vec!["networking", "gateway", "v1"]);
    assert_eq!(schema_path("com.example.v1.3Thing").1, None);
    assert_eq!(schema_path("do.zalan.acid.v1.postgresql").1.as_deref(), Some("Postgresql"));
    assert_eq!(schema_path("com.example.v1.My-Type").1.as_deref(), Some("MyType"));
}

#[test]
fn published_schema_names() {
    assert_eq!(
        published_schema_name("monitoring.coreos.com", "v1", "ServiceMonitor"),
        "com.coreos.monitoring.v1.ServiceMonitor"
    );
    assert_eq!(
        published_schema_name("gateway.networking.k8s.io", "v1", "HTTPRoute"),
        "io.k8s.networking.gateway.v1.HTTPRoute"
    );
    assert_eq!(published_schema_name("3scale.net", "v1beta1", "APIcast"), "net.3scale.v1beta1.APIcast");
}

#[test]
fn group_version_names() {
    let names = GroupNames::default();
    // (group, version, accessor and module, type prefix)
    let cases = [
        // Built-in groups: the first label, as client-go names them.
        ("", "v1", "core_v1", "CoreV1"),
        ("apps", "v1", "apps_v1", "AppsV1"),
        ("networking.k8s.io", "v1beta1", "networking_v1beta1", "NetworkingV1beta1"),
        ("rbac.authorization.k8s.io", "v1", "rbac_v1", "RbacV1"),
        ("flowcontrol.apiserver.k8s.io", "v1", "flowcontrol_v1", "FlowcontrolV1"),
        ("extensions", "v1beta1", "extensions_v1beta1", "ExtensionsV1beta1"),
        ("metrics.k8s.io", "v1beta1", "metrics_v1beta1", "MetricsV1beta1"),
        // Every other group: its whole name.
        ("autoscaling.k8s.io", "v1", "autoscaling_k8s_io_v1", "AutoscalingK8sIoV1"),
        ("networking.istio.io", "v1beta1", "networking_istio_io_v1beta1", "NetworkingIstioIoV1beta1"),
        ("operator.tigera.io", "v1", "operator_tigera_io_v1", "OperatorTigeraIoV1"),
        ("operator.victoriametrics.com", "v1", "operator_victoriametrics_com_v1", "OperatorVictoriametricsComV1"),
        ("cert-manager.io", "v1", "cert_manager_io_v1", "CertManagerIoV1"),
        ("3scale.net", "v1", "_3scale_net_v1", "_3scaleNetV1"),
        ("snapshot.storage.k8s.io", "v1", "snapshot_storage_k8s_io_v1", "SnapshotStorageK8sIoV1"),
    ];
    for (group, version, method, prefix) in cases {
        assert_eq!(names.method(group, version), method, "{group}/{version}");
        assert_eq!(names.type_prefix(group, version), prefix, "{group}/{version}");
    }
    // A custom group's name never equals a built-in one's.
    let reserved: Vec<String> = groups::reserved_names().collect();
    for (group, ..) in cases.iter().filter(|(g, ..)| !is_builtin(g)) {
        assert!(!reserved.contains(&names.group_name(group)), "{group}");
    }
}

#[test]
fn groups_named_by_hand() {
    let names = GroupNames::parse(&["operator.tigera.io=tigera".into(), "autoscaling.k8s.io=vpa".into()]).unwrap();
    assert_eq!(names.method("operator.tigera.io", "v1"), "tigera_v1");
    assert_eq!(names.type_prefix("autoscaling.k8s.io", "v1"), "VpaV1");
    assert_eq!(names.method("operator.victoriametrics.com", "v1"), "operator_victoriametrics_com_v1");
    for (pair, why) in [
        ("tigera", "expected <group>=<name>"),
        ("operator.tigera.io=apps", "the name of a built-in group"),
        ("operator.tigera.io=core", "the name of a built-in group"),
        ("apps=my_apps", "built-in group"),
        ("autoscaling.k8s.io=vpa2", ""),
        ("operator.tigera.io=Tigera", "not a snake_case word"),
        ("operator.tigera.io=type", "no Rust keyword"),
        ("operator.tigera.io=tigera_", "not a snake_case word"),
        ("operator=tigera", "at least one dot"),
    ] {
        match GroupNames::parse(&[pair.to_owned()]) {
            Err(e) if !why.is_empty() => assert!(e.contains(why), "{pair}: {e}"),
            Ok(_) if why.is_empty() => {}
            other => panic!("{pair}: {other:?}"),
        }
    }
    let twice = GroupNames::parse(&["a.io=x".into(), "a.io=y".into()]).unwrap_err();
    assert!(twice.contains("named twice"), "{twice}");
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
        ("HTTPRoute", "httproutes", "http_routes"),
        // Non-ASCII plurals are words of their own, never sliced mid-character.
        ("Größe", "größen", "gr_u00f6_u00df_en"),
        ("Thing", "für", "f_u00fc_r"),
        ("Type", "types", "types"),
        ("Self", "self", "self_"),
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

proptest! {
    #[test]
    fn every_name_is_an_identifier(s in "\\PC{0,12}") {
        prop_assert!(is_identifier(&field_name(&s)), "field {:?} -> {:?}", s, field_name(&s));
        prop_assert!(is_identifier(&variant_name(&s)), "variant {:?}", s);
        prop_assert!(is_identifier(&module_name(&s)), "module {:?} -> {:?}", s, module_name(&s));
        prop_assert!(is_identifier(&GroupNames::default().method(&s, "v1")), "group {:?}", s);
        prop_assert!(is_identifier(&GroupNames::default().type_prefix(&s, "v1")), "group type {:?}", s);
        prop_assert!(is_identifier(&resource_method("Thing", &s)), "plural {:?}", s);
        prop_assert!(is_identifier(&resource_method(&s, "things")), "kind {:?}", s);
        prop_assert!(is_identifier(&format!("Kind{}", type_segment(&s))), "segment {:?}", s);
        if let Some(k) = kind_name(&s) {
            prop_assert!(is_identifier(&k));
            // Never the name of a file's module (snake_case).
            prop_assert!(!k.starts_with(|c: char| c.is_ascii_lowercase()), "kind {:?} -> {:?}", s, k);
        }
        let (modules, ty) = schema_path(&s);
        for m in modules {
            prop_assert!(is_identifier(&m), "schema {:?}", s);
        }
        if let Some(ty) = ty {
            prop_assert!(is_identifier(&ty));
        }
    }

    #[test]
    fn every_accepted_kind_has_a_type_name(kind in "[A-Za-z][-A-Za-z0-9]{0,20}") {
        if kind_error(&kind).is_none() {
            let name = kind_name(&kind);
            prop_assert!(name.as_deref().is_some_and(is_identifier), "kind {:?} -> {:?}", kind, name);
        }
    }

    #[test]
    fn deduped_type_names_and_files_are_unique(names in proptest::collection::vec("[A-Za-z][a-zA-Z0-9]{0,6}", 0..12)) {
        let names: Vec<String> = names.iter().filter_map(|n| kind_name(n)).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let out = dedupe_type_names(&[], &refs);
        let types: BTreeSet<&String> = out.iter().collect();
        let files: BTreeSet<String> = out.iter().map(|n| file_name(n)).collect();
        prop_assert_eq!(types.len(), out.len());
        prop_assert_eq!(files.len(), out.len());
        for n in &out {
            prop_assert!(is_identifier(n));
        }
    }

    #[test]
    fn ascii_property_names_are_identifiers(s in "[ -~]{0,16}") {
        prop_assert!(is_identifier(&field_name(&s)), "field {:?} -> {:?}", s, field_name(&s));
        prop_assert!(is_identifier(&variant_name(&s)), "variant {:?}", s);
    }
}

#[test]
fn apply_configuration_names() {
    let types = [
        ("Deployment", "DeploymentApply"),
        ("ObjectMeta", "ObjectMetaApply"),
        ("HTTPRoute", "HTTPRouteApply"),
        ("Self_", "SelfApply"),
        ("Foo_2", "Foo_2Apply"),
    ];
    for (ty, apply) in types {
        assert_eq!(apply_type_name(ty, |_| false), apply, "for {ty:?}");
        assert!(is_identifier(&apply_type_name(ty, |_| false)));
    }
    // A type of the module with the name keeps it; the configuration is numbered.
    let taken = ["FooSpecApply", "FooSpecApply_2", "BarApply_2"];
    let taken = |name: &str| taken.contains(&name);
    assert_eq!(apply_type_name("FooSpec", taken), "FooSpecApply_3");
    assert_eq!(apply_type_name("Bar", taken), "BarApply");
    let methods = [
        ("replicas", "with_replicas"),
        ("cluster_ips", "with_cluster_ips"),
        ("type_", "with_type"),
        ("self_", "with_self"),
        ("self_2", "with_self_2"),
        ("_3scale", "with_3scale"),
        ("ref_path", "with_ref_path"),
        ("extra", "with_extra"),
    ];
    for (field, method) in methods {
        assert_eq!(apply_method_name(field), method, "for {field:?}");
        assert!(is_identifier(&apply_method_name(field)));
    }
}

proptest! {
    /// Every field name gives a method name, and two fields of one struct
    /// (told apart by [`dedupe`]) never give the same one.
    #[test]
    fn apply_method_names_are_identifiers_and_distinct(wire in proptest::collection::btree_set("[a-zA-Z0-9_$-]{0,8}", 1..8)) {
        let wire: Vec<&str> = wire.iter().map(String::as_str).collect();
        let fields = dedupe(&wire, field_name);
        let methods: BTreeSet<String> = fields.iter().map(|f| apply_method_name(f)).collect();
        prop_assert_eq!(methods.len(), fields.len(), "fields {:?}", fields);
        for m in &methods {
            prop_assert!(is_identifier(m), "{}", m);
        }
    }
}
