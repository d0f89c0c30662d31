//! Arbitrary text as a kubeconfig, loaded as far as it goes without the
//! network or a process: parsed, written back and parsed again, turned into
//! a [`Config`] for every context and then into an authenticator and (for
//! PEM data from the file) a TLS configuration.
//!
//! Checked: nothing panics; a parsed kubeconfig written as YAML reads back
//! equal; no `Debug` output shows a token, password or key longer than a
//! few characters. Exec plugins are described, never run; file paths are
//! redirected into a fixture directory, so what is read is known.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use k8s_client_runtime::config::{Authenticator, Config, Kubeconfig, KubeconfigOptions, build_tls_config};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(mut kc) = Kubeconfig::from_yaml(text) else { return };

    let written = serde_yaml_ng::to_string(&kc).expect("a parsed kubeconfig writes as YAML");
    let again = Kubeconfig::from_yaml(&written)
        .unwrap_or_else(|e| panic!("written kubeconfig does not read back: {e}\n{written}"));
    assert_eq!(kc, again, "kubeconfig changed through YAML:\n{written}");

    let secrets = secrets(&kc, text);
    assert_hidden(&format!("{kc:?}"), &secrets);

    redirect_paths(&mut kc);
    let mut contexts: Vec<Option<String>> = kc.contexts.iter().map(|c| Some(c.name.clone())).collect();
    contexts.push(None);
    for context in contexts {
        let options = KubeconfigOptions { context, ..KubeconfigOptions::default() };
        match Config::from_kubeconfig(&kc, &options) {
            Ok(config) => {
                assert_hidden(&format!("{config:?}"), &secrets);
                let Ok(auth) = Authenticator::new(&config) else { continue };
                assert_hidden(&format!("{auth:?}"), &secrets);
                // Without a CA of its own, TLS would read the system's
                // certificates: slow and not the input's.
                if (config.root_ca_pem.is_some() || config.insecure_skip_tls_verify)
                    && let Err(e) = build_tls_config(&config, &auth)
                {
                    assert_hidden(&e.to_string(), &secrets);
                }
            }
            Err(e) => assert_hidden(&e.to_string(), &secrets),
        }
    }
});

/// Secret values that, found in output, can only have come from a secret
/// field: long enough not to be chance, and written once in the input.
fn secrets(kc: &Kubeconfig, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for user in kc.auth_infos.iter().filter_map(|a| a.auth_info.as_ref()) {
        let values = [&user.token, &user.password, &user.client_key_data];
        out.extend(values.into_iter().flatten().map(|s| s.expose().to_owned()));
        if let Some(exec) = &user.exec {
            out.extend(exec.env.iter().map(|v| v.value.expose().to_owned()));
            out.extend(exec.args.iter().cloned());
        }
    }
    out.retain(|s| s.trim().len() >= 12 && text.matches(s.as_str()).count() == 1);
    out
}

fn assert_hidden(text: &str, secrets: &[String]) {
    for s in secrets {
        assert!(!text.contains(s.as_str()), "a secret shows in: {text}");
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
