//! Arbitrary text as a kubeconfig: parsing and building a Config must fail
//! cleanly, never panic.
#![no_main]

use k8s_client_runtime::config::{Config, Kubeconfig, KubeconfigOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(kc) = Kubeconfig::from_yaml(text) {
        let _ = Config::from_kubeconfig(&kc, &KubeconfigOptions::default());
        let _ = format!("{kc:?}");
    }
});
