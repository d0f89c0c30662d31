//! Shared set-up of the integration tests: clients for the real apiserver
//! started by `k8s-client-testenv`, one namespace per test.
#![allow(dead_code)]

use k8s_client::clientset::Clientset;
use k8s_client_runtime::config::{Config, KubeconfigOptions};
use k8s_client_runtime::rest::Client;
use k8s_client_testenv::TestEnv;

pub fn env() -> &'static TestEnv {
    TestEnv::shared()
}

/// A REST client for a kubeconfig context of the testenv (`None`: admin),
/// with a rate limit high enough for bulk tests.
pub fn client_for(context: Option<&str>) -> Client {
    let options = KubeconfigOptions { context: context.map(str::to_owned), ..Default::default() };
    let mut config = Config::from_kubeconfig_file(env().kubeconfig_path(), &options).expect("testenv kubeconfig");
    config.qps = 1000.0;
    config.burst = 2000;
    Client::new(config).expect("client")
}

pub fn client() -> Client {
    client_for(None)
}

pub fn clientset() -> Clientset {
    Clientset::new(client())
}

/// A fresh namespace for one test.
pub fn namespace(prefix: &str) -> String {
    env().create_namespace(prefix)
}
