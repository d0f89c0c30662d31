use std::path::{Path, PathBuf};

use super::*;
use crate::config::{Auth, Config, Error};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, text).unwrap();
    p
}

const FIRST: &str = r#"
apiVersion: v1
kind: Config
clusters:
- name: shared
  cluster:
    server: https://first.example:6443
    certificate-authority: certs/ca.crt
    tls-server-name: kubernetes
users:
- name: alice
  user:
    client-certificate: certs/alice.crt
    client-key: certs/alice.key
- name: exec-user
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./bin/plugin
      args: ["--x"]
      env:
      - name: SECRET_ENV
        value: envsecretvalue
- name: path-user
  user:
    exec:
      command: aws
contexts:
- name: one
  context: {cluster: shared, user: alice, namespace: team-a}
- name: execctx
  context: {cluster: shared, user: exec-user}
current-context: ""
"#;

const SECOND: &str = r#"
clusters:
- name: shared
  cluster: {server: "https://second.example"}
- name: other
  cluster:
    server: https://other.example/
    insecure-skip-tls-verify: true
    disable-compression: true
users:
- name: alice
  user: {token: should-not-win}
- name: bob
  user: {token: bobtokenvalue, as: admin, as-groups: [g1]}
- name: basic
  user: {username: u, password: hunter2}
- name: legacy
  user:
    auth-provider: {name: gcp}
- name: filetok
  user: {tokenFile: tok.txt, token: ignored}
contexts:
- name: two
  context: {cluster: other, user: bob}
- name: one
  context: {cluster: other, user: bob}
- name: basicctx
  context: {cluster: other, user: basic}
- name: legacyctx
  context: {cluster: other, user: legacy}
- name: filectx
  context: {cluster: other, user: filetok}
current-context: two
"#;

fn fixture() -> (tempfile::TempDir, Kubeconfig) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a/certs/ca.crt", "CA PEM");
    write(dir.path(), "a/certs/alice.crt", "CERT PEM");
    write(dir.path(), "a/certs/alice.key", "KEY PEM");
    let a = write(dir.path(), "a/config", FIRST);
    let b = write(dir.path(), "b/config", SECOND);
    let missing = dir.path().join("nope/config");
    let kc = Kubeconfig::read_merged(&[a, missing, b]).unwrap().unwrap();
    (dir, kc)
}

#[test]
fn first_definition_and_first_current_context_win() {
    let (_dir, kc) = fixture();
    assert_eq!(kc.current_context.as_deref(), Some("two"));
    assert_eq!(kc.clusters.len(), 2);
    let shared = kc.clusters.iter().find(|c| c.name == "shared").unwrap();
    assert_eq!(shared.cluster.as_ref().unwrap().server.as_deref(), Some("https://first.example:6443"));
    let one =
        Config::from_kubeconfig(&kc, &KubeconfigOptions { context: Some("one".into()), ..Default::default() }).unwrap();
    // Context "one" comes from the first file: cluster shared, user alice.
    assert_eq!(one.cluster_url.host(), Some("first.example"));
    assert_eq!(one.default_namespace, "team-a");
    assert_eq!(one.root_ca_pem.as_deref(), Some(&b"CA PEM"[..]));
    assert_eq!(one.client_cert_pem.as_deref(), Some(&b"CERT PEM"[..]));
    assert_eq!(one.client_key_pem.as_ref().unwrap().expose(), "KEY PEM");
    // Read from files, so read again when they are rotated.
    let files = &one.certificate_files;
    assert!(files.certificate_authority.as_ref().is_some_and(|p| p.ends_with("a/certs/ca.crt")), "{files:?}");
    assert!(files.client_certificate.as_ref().is_some_and(|p| p.ends_with("a/certs/alice.crt")), "{files:?}");
    assert!(files.client_key.as_ref().is_some_and(|p| p.ends_with("a/certs/alice.key")), "{files:?}");
    assert_eq!(one.tls_server_name.as_deref(), Some("kubernetes"));
    assert!(!one.disable_compression, "compression is on unless a cluster turns it off");
    assert!(matches!(one.auth, Auth::None), "alice from the first file has no token");
}

#[test]
fn current_context_namespace_and_overrides() {
    let (_dir, kc) = fixture();
    let c = Config::from_kubeconfig(&kc, &KubeconfigOptions::default()).unwrap();
    assert_eq!(c.cluster_url.to_string(), "https://other.example/");
    assert_eq!(c.default_namespace, "default");
    assert!(c.insecure_skip_tls_verify);
    assert!(c.disable_compression, "the cluster's disable-compression");
    assert!(matches!(&c.auth, Auth::Bearer(t) if t.expose() == "bobtokenvalue"));
    assert_eq!(c.impersonate.user.as_deref(), Some("admin"));
    assert_eq!(c.impersonate.groups, vec!["g1"]);
    let o = KubeconfigOptions { namespace: Some("ns2".into()), user: Some("basic".into()), ..Default::default() };
    let c = Config::from_kubeconfig(&kc, &o).unwrap();
    assert_eq!(c.default_namespace, "ns2");
    assert!(c.disable_compression, "the cluster's, whoever the user");
    assert!(matches!(&c.auth, Auth::Basic { username, .. } if username == "u"));
}

#[test]
fn relative_paths_resolve_against_their_file() {
    let (dir, kc) = fixture();
    let exec_user = kc.auth_infos.iter().find(|a| a.name == "exec-user").unwrap();
    let exec = exec_user.auth_info.as_ref().unwrap().exec.as_ref().unwrap();
    assert_eq!(PathBuf::from(&exec.command), dir.path().join("a").join("./bin/plugin"));
    let path_user = kc.auth_infos.iter().find(|a| a.name == "path-user").unwrap();
    assert_eq!(path_user.auth_info.as_ref().unwrap().exec.as_ref().unwrap().command, "aws");
    let c = Config::from_kubeconfig(&kc, &KubeconfigOptions { context: Some("filectx".into()), ..Default::default() })
        .unwrap();
    assert!(matches!(&c.auth, Auth::TokenFile(p) if *p == dir.path().join("b/tok.txt")));
}

#[test]
fn errors_name_the_file_and_the_problem() {
    let (dir, kc) = fixture();
    let err = Config::from_kubeconfig(&kc, &KubeconfigOptions { context: Some("foo".into()), ..Default::default() })
        .unwrap_err()
        .to_string();
    assert!(err.contains("context \"foo\" not found"), "{err}");
    assert!(err.contains(&dir.path().join("a/config").display().to_string()), "{err}");
    let err =
        Config::from_kubeconfig(&kc, &KubeconfigOptions { context: Some("legacyctx".into()), ..Default::default() })
            .unwrap_err()
            .to_string();
    assert!(err.contains("auth-provider"), "{err}");

    let missing = dir.path().join("missing");
    let err = Config::from_kubeconfig_file(&missing, &KubeconfigOptions::default()).unwrap_err();
    assert!(matches!(err, Error::KubeconfigMissing { .. }));
    assert!(err.to_string().contains(&missing.display().to_string()));

    let bad = write(dir.path(), "bad", "clusters: [ {name: x, cluster: {server: 5}");
    let err = Kubeconfig::read_from(&bad).unwrap_err().to_string();
    assert!(err.contains("invalid YAML") && err.contains("bad"), "{err}");

    let no_ca = write(
        dir.path(),
        "noca",
        "clusters: [{name: c, cluster: {server: 'https://x', certificate-authority: nope.crt}}]\ncontexts: [{name: c, context: {cluster: c}}]\ncurrent-context: c\n",
    );
    let err = Config::from_kubeconfig_file(&no_ca, &KubeconfigOptions::default()).unwrap_err().to_string();
    assert!(err.contains("certificate-authority") && err.contains("nope.crt"), "{err}");

    for text in ["", "null", "clusters: null\nusers: null", "current-context: x"] {
        let kc = Kubeconfig::from_yaml(text).unwrap();
        assert!(Config::from_kubeconfig(&kc, &KubeconfigOptions::default()).is_err());
    }
    let kc = Kubeconfig::from_yaml("clusters: [{name: c, cluster: {server: 'https://x', insecure-skip-tls-verify: true, certificate-authority-data: Q0E=}}]\ncontexts: [{name: c, context: {cluster: c}}]\ncurrent-context: c").unwrap();
    let err = Config::from_kubeconfig(&kc, &KubeconfigOptions::default()).unwrap_err().to_string();
    assert!(err.contains("cannot both be set"), "{err}");
    let kc = Kubeconfig::from_yaml("clusters: [{name: c, cluster: {server: 'not a url'}}]\ncontexts: [{name: c, context: {cluster: c}}]\ncurrent-context: c").unwrap();
    assert!(Config::from_kubeconfig(&kc, &KubeconfigOptions::default()).is_err());
}

#[test]
fn debug_output_redacts_secrets() {
    let (_dir, kc) = fixture();
    let text = format!("{kc:?}");
    for secret in ["bobtokenvalue", "hunter2", "envsecretvalue"] {
        assert!(!text.contains(secret), "{secret} leaked");
    }
    let data = Kubeconfig::from_yaml(
        "users: [{name: u, user: {client-key-data: S0VZIGRBVEE=, token: tokdata, password: pw}}]",
    )
    .unwrap();
    let text = format!("{data:?}");
    assert!(!text.contains("S0VZIGRBVEE=") && !text.contains("tokdata") && !text.contains("pw\""), "{text}");
    let c = Config::from_kubeconfig(&kc, &KubeconfigOptions::default()).unwrap();
    let text = format!("{c:?}");
    assert!(!text.contains("bobtokenvalue"), "{text}");
    // Legacy auth-provider config and exec args carry tokens and client
    // secrets too.
    let legacy = Kubeconfig::from_yaml(
        "users:\n- name: o\n  user:\n    auth-provider:\n      name: oidc\n      config: {id-token: idtokvalue, client-secret: oidcsecretvalue}\n- name: e\n  user:\n    exec: {command: kubelogin, apiVersion: client.authentication.k8s.io/v1, args: [get-token, --client-secret=execsecretvalue]}\ncontexts: [{name: e, context: {cluster: c, user: e}}]\nclusters: [{name: c, cluster: {server: 'https://x'}}]\ncurrent-context: e\n",
    )
    .unwrap();
    let text = format!("{legacy:?}");
    for secret in ["idtokvalue", "oidcsecretvalue", "execsecretvalue"] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
    assert!(text.contains("oidc") && text.contains("kubelogin"), "{text}");
    let c = Config::from_kubeconfig(&legacy, &KubeconfigOptions::default()).unwrap();
    let text = format!("{c:?}");
    assert!(!text.contains("execsecretvalue") && text.contains("kubelogin"), "{text}");
    let o = KubeconfigOptions { context: Some("one".into()), ..Default::default() };
    let c = Config::from_kubeconfig(&kc, &o).unwrap();
    assert!(!format!("{c:?}").contains("KEY PEM"));
}

/// Follows client-go loader_test.go TestDuplicateClusterName,
/// TestDuplicateContextName and TestDuplicateUserName: one file defining a
/// name twice is an error naming the file and the name.
#[test]
fn a_name_defined_twice_in_one_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "clusters",
            "clusters: [{name: dup, cluster: {server: 'https://a'}}, {name: dup, cluster: {server: 'https://b'}}]",
        ),
        ("contexts", "contexts: [{name: dup, context: {cluster: a}}, {name: dup, context: {cluster: b}}]"),
        ("users", "users: [{name: dup, user: {token: a}}, {name: dup, user: {token: b}}]"),
    ];
    for (list, text) in cases {
        let path = write(dir.path(), list, text);
        let err = Kubeconfig::read_from(&path).unwrap_err().to_string();
        assert!(err.contains(&format!("duplicate name \"dup\" in {list}")), "{err}");
        assert!(err.contains(&path.display().to_string()), "{err}");
    }
    // The same name in two files is kubectl's merge, not an error; and the
    // same file listed twice is read once.
    let a = write(dir.path(), "one", "clusters: [{name: dup, cluster: {server: 'https://a'}}]");
    let b = write(dir.path(), "two", "clusters: [{name: dup, cluster: {server: 'https://b'}}]");
    let kc = Kubeconfig::read_merged(&[a.clone(), b, a]).unwrap().unwrap();
    assert_eq!(kc.clusters.len(), 1);
    assert_eq!(kc.origin.len(), 2);
}

#[test]
fn no_kubeconfig_names_where_it_was_looked_for() {
    let set = looked_at(Some(std::ffi::OsStr::new("/nowhere/a:/nowhere/b")));
    assert_eq!(set, "KUBECONFIG=/nowhere/a:/nowhere/b names no existing file");
    let err = Error::NoKubeconfig { looked_at: set };
    assert_eq!(err.to_string(), "no kubeconfig found: KUBECONFIG=/nowhere/a:/nowhere/b names no existing file");
    // Unset or empty: the default location, and only that.
    for unset in [None, Some(std::ffi::OsStr::new(""))] {
        let text = looked_at(unset);
        assert!(text.starts_with("KUBECONFIG is not set and ") && text.ends_with("config does not exist"), "{text}");
    }
    // The files KUBECONFIG names are what is read: none exists, none is read.
    let paths = [PathBuf::from("/nowhere/a"), PathBuf::from("/nowhere/b")];
    assert!(Kubeconfig::read_merged(&paths).unwrap().is_none());
}

#[test]
fn debug_output_shows_certificates_as_their_size() {
    let mut config = Config::new("https://127.0.0.1:6443".parse().unwrap());
    let pem = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".to_vec();
    config.root_ca_pem = Some(pem.clone());
    config.client_cert_pem = Some(pem.clone());
    let text = format!("{config:?}");
    let size = format!("Some(<{} bytes of PEM>)", pem.len());
    assert!(text.contains(&format!("root_ca_pem: {size}")), "{text}");
    assert!(text.contains(&format!("client_cert_pem: {size}")), "{text}");
    // Neither the bytes as numbers nor the PEM text.
    assert!(!text.contains("45, 45, 45") && !text.contains("BEGIN CERTIFICATE"), "{text}");
    assert!(text.contains("cluster_url: https://127.0.0.1:6443/") && text.contains("user_agent: "), "{text}");
}

#[test]
fn extensions_preferences_and_unknown_keys_merge_first_wins() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(
        dir.path(),
        "a",
        "extensions: [{name: shared, extension: from-a}]\npreferences: {extensions: [{name: p, extension: 1}]}\nx-tool: a\n",
    );
    let b = write(
        dir.path(),
        "b",
        "extensions: [{name: shared, extension: from-b}, {name: only-b, extension: 2}]\n\
         preferences: {colors: true, extensions: [{name: p, extension: 2}]}\nx-tool: b\nx-other: b\n",
    );
    let kc = Kubeconfig::read_merged(&[a, b]).unwrap().unwrap();
    let ext: Vec<_> = kc.extensions.iter().map(|e| (e.name.as_str(), e.extension.clone())).collect();
    assert_eq!(ext, [("shared", "from-a".into()), ("only-b", 2.into())]);
    assert_eq!(kc.preferences.colors, Some(true));
    assert_eq!(kc.preferences.extensions.len(), 1);
    assert_eq!(kc.preferences.extensions[0].extension, 1);
    assert_eq!(kc.unknown["x-tool"], "a");
    assert_eq!(kc.unknown["x-other"], "b");
}
