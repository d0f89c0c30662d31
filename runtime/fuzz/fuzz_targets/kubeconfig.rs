//! Arbitrary text as a kubeconfig, loaded as far as it goes without the
//! network or a process: parsed, written back and parsed again, turned into
//! a [`Config`] for every context and then into an authenticator and (for
//! PEM data from the file) a TLS configuration.
//!
//! Checked: nothing panics; a parsed kubeconfig written as YAML reads back
//! equal; with its secrets (token, password, client key, exec arguments and
//! environment, auth-provider config) replaced by marked ones, no `Debug`
//! output or error shows any of them. Exec plugins are described, never
//! run; file paths are redirected into a fixture directory, so what is read
//! is known.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use base64::Engine as _;
use k8s_client_runtime::config::{Authenticator, Config, Kubeconfig, KubeconfigOptions, Secret, build_tls_config};
use libfuzzer_sys::fuzz_target;

/// In every marked secret; found in output, a secret leaked.
const MARK: &str = "Zq81-marked-secret";
/// The marked client key: a key no seed holds.
const CLIENT_KEY: &[u8] = include_bytes!("../fixtures/marked.key");

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(mut kc) = Kubeconfig::from_yaml(text) else { return };

    let written = serde_yaml_ng::to_string(&kc).expect("a parsed kubeconfig writes as YAML");
    let again = Kubeconfig::from_yaml(&written)
        .unwrap_or_else(|e| panic!("written kubeconfig does not read back: {e}\n{written}"));
    assert_eq!(kc, again, "kubeconfig changed through YAML:\n{written}");

    redirect_paths(&mut kc);
    // The input's own secrets, whatever they are: nothing panics.
    load(&kc, &|_| {});
    // The same secrets marked, where the input does not hold the marks
    // elsewhere: no output may show them.
    if !marks().iter().any(|m| text.contains(m.as_str())) {
        let marked = with_marked_secrets(kc);
        assert_hidden(&format!("{marked:?}"));
        load(&marked, &assert_hidden);
    }
});

/// Every context of `kc` (and the current one) to a `Config`, an
/// authenticator and TLS settings; `check` sees every `Debug` and error.
fn load(kc: &Kubeconfig, check: &dyn Fn(&str)) {
    let mut contexts: Vec<Option<String>> = kc.contexts.iter().map(|c| Some(c.name.clone())).collect();
    contexts.push(None);
    for context in contexts {
        let options = KubeconfigOptions { context, ..KubeconfigOptions::default() };
        match Config::from_kubeconfig(kc, &options) {
            Ok(config) => {
                check(&format!("{config:?}"));
                let auth = match Authenticator::new(&config) {
                    Ok(auth) => auth,
                    Err(e) => {
                        check(&e.to_string());
                        continue;
                    }
                };
                check(&format!("{auth:?}"));
                // Without a CA of its own, TLS would read the system's
                // certificates: slow and not the input's.
                if (config.root_ca_pem.is_some() || config.insecure_skip_tls_verify)
                    && let Err(e) = build_tls_config(&config, &auth)
                {
                    check(&e.to_string());
                }
            }
            Err(e) => check(&e.to_string()),
        }
    }
}

/// `kc` with every secret it sets replaced by a marked one of the same
/// kind: a header-safe token, a PEM client key.
fn with_marked_secrets(mut kc: Kubeconfig) -> Kubeconfig {
    let mark = |secret: &mut Secret, what: &str| {
        if !secret.is_empty() {
            *secret = Secret::new(format!("{MARK}-{what}"));
        }
    };
    for user in kc.auth_infos.iter_mut().filter_map(|a| a.auth_info.as_mut()) {
        user.token.iter_mut().for_each(|t| mark(t, "token"));
        user.password.iter_mut().for_each(|p| mark(p, "password"));
        for key in user.client_key_data.iter_mut().filter(|k| !k.is_empty()) {
            *key = Secret::new(client_key_data());
        }
        if let Some(exec) = user.exec.as_mut() {
            exec.env.iter_mut().for_each(|v| mark(&mut v.value, "env"));
            exec.args.iter_mut().for_each(|a| *a = format!("--token={MARK}-arg"));
        }
        if let Some(config) =
            user.auth_provider.as_mut().and_then(|p| p.get_mut("config")).and_then(|c| c.as_object_mut())
        {
            config.values_mut().for_each(|v| *v = format!("{MARK}-provider").into());
        }
    }
    kc
}

fn client_key_data() -> String {
    base64::engine::general_purpose::STANDARD.encode(CLIENT_KEY)
}

/// What shows that a marked secret leaked: the mark, the marked key as
/// base64 and a line of its PEM body.
fn marks() -> &'static [String; 3] {
    static MARKS: OnceLock<[String; 3]> = OnceLock::new();
    MARKS.get_or_init(|| {
        let key_body = std::str::from_utf8(CLIENT_KEY).expect("PEM").lines().nth(1).expect("a PEM body line");
        [MARK.to_owned(), client_key_data(), key_body.to_owned()]
    })
}

fn assert_hidden(text: &str) {
    for mark in marks() {
        assert!(!text.contains(mark.as_str()), "a secret shows in: {text}");
    }
}

/// Points every file the kubeconfig names into the fixture directory:
/// `ca.crt`, `client.crt` and `client.key` exist there, other names do not.
fn redirect_paths(kc: &mut Kubeconfig) {
    let redirect = |p: &mut Option<PathBuf>| {
        if let Some(path) = p.as_mut() {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            *path = fixtures().join(name.replace(['/', '\\'], "_"));
        }
    };
    for cluster in kc.clusters.iter_mut().filter_map(|c| c.cluster.as_mut()) {
        redirect(&mut cluster.certificate_authority);
    }
    for user in kc.auth_infos.iter_mut().filter_map(|a| a.auth_info.as_mut()) {
        redirect(&mut user.client_certificate);
        redirect(&mut user.client_key);
        redirect(&mut user.token_file);
    }
}

fn fixtures() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        // The same contents every run: concurrent runs may share it.
        let dir = std::env::temp_dir().join("k8s-client-kubeconfig-fuzz");
        std::fs::create_dir_all(&dir).expect("fixture directory");
        for (name, contents) in [
            ("ca.crt", &include_bytes!("../fixtures/ca.crt")[..]),
            ("client.crt", &include_bytes!("../fixtures/client.crt")[..]),
            ("client.key", &include_bytes!("../fixtures/client.key")[..]),
        ] {
            std::fs::write(dir.join(name), contents).expect("fixture file");
        }
        dir
    })
}
