//! Certificates rotated on disk under a running client, against a real
//! apiserver that trusts two client CAs: the client certificate moves from
//! one CA's (user `rotator-one`) to the other's (`rotator-two`), and the CA
//! bundle that verifies the server is replaced. New connections use the new
//! files; an informer running throughout keeps its watch and loses nothing.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_client::api::authentication::v1::SelfSubjectReview;
use k8s_client::api::core::v1::ConfigMap;
use k8s_client::clientset::Clientset;
use k8s_client::prelude::*;
use k8s_client_runtime::cache::{ResourceEventHandlerFuncs, SharedIndexInformer, wait_for_cache_sync};
use k8s_client_runtime::config::{CertificateFiles, Config, KubeconfigOptions, Proxy};
use k8s_client_runtime::rest::{self, Client, CreateOptions, ResourceClient};
use k8s_client_testenv::TestEnv;
use tokio_util::sync::CancellationToken;

/// A new CA and a client certificate of `user` it signs, in `dir`.
fn client_certificate(env_binary: &Path, dir: &Path, user: &str) {
    let status = Command::new(env_binary)
        .args(["client-cert", "--out"])
        .arg(dir)
        .args(["--user", user])
        .status()
        .expect("kube-testenv client-cert");
    assert!(status.success(), "kube-testenv client-cert failed");
}

/// Replaces `to` with `from`'s content the way rotation tools do: a new
/// file renamed over the old one.
fn replace(from: &Path, to: &Path) {
    let tmp = to.with_extension("new");
    std::fs::copy(from, &tmp).unwrap();
    std::fs::rename(&tmp, to).unwrap();
}

/// Who the apiserver takes this client for, over a new request.
async fn whoami(client: &Client) -> Result<String, rest::Error> {
    let review = Clientset::new(client.clone())
        .authentication_v1()
        .self_subject_reviews()
        .create(&SelfSubjectReview::default(), &CreateOptions::default())
        .await?;
    Ok(review.status.and_then(|s| s.user_info).and_then(|u| u.username).map(String::from).unwrap_or_default())
}

/// Polls `whoami` until it says `user`, for at most 10 s.
async fn becomes(client: &Client, user: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let seen = whoami(client).await;
        if seen.as_deref().is_ok_and(|u| u == user) {
            return;
        }
        assert!(Instant::now() < deadline, "still {seen:?}, not {user}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotated_certificate_files_are_used_by_new_connections() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    let binary = support::env().binary();
    client_certificate(&binary, &one, "rotator-one");
    client_certificate(&binary, &two, "rotator-two");
    let client_cas = dir.path().join("client-cas.crt");
    let bundle = [std::fs::read(one.join("ca.crt")).unwrap(), std::fs::read(two.join("ca.crt")).unwrap()].concat();
    std::fs::write(&client_cas, bundle).unwrap();
    let env = TestEnv::start_with_args(&[
        "--no-node".to_owned(),
        format!("--apiserver-arg=--client-ca-file={}", client_cas.display()),
    ]);

    // The files the client reads: the testenv's CA, rotator-one's certificate.
    let live = dir.path().join("live");
    std::fs::create_dir(&live).unwrap();
    let (ca, cert, key): (PathBuf, PathBuf, PathBuf) =
        (live.join("ca.crt"), live.join("client.crt"), live.join("client.key"));
    replace(&env.ca_file(), &ca);
    replace(&one.join("client.crt"), &cert);
    replace(&one.join("client.key"), &key);
    let mut config = Config::new(env.server_url().parse().unwrap());
    config.proxy = Proxy::None;
    config.certificate_files = CertificateFiles {
        certificate_authority: Some(ca.clone()),
        client_certificate: Some(cert.clone()),
        client_key: Some(key.clone()),
    };
    config.cert_reload_interval = Duration::from_millis(200);
    config.qps = 1000.0;
    config.burst = 2000;
    let client = Client::new(config).unwrap();
    assert_eq!(whoami(&client).await.unwrap(), "rotator-one");

    // An informer that runs throughout, on the first connection.
    let admin_options = KubeconfigOptions::default();
    let admin = Client::new(Config::from_kubeconfig_file(env.kubeconfig_path(), &admin_options).unwrap()).unwrap();
    let ns = env.create_namespace("rotation");
    let direct = ResourceClient::<ConfigMap>::namespaced(admin, &ns);
    let informer =
        SharedIndexInformer::new(ResourceClient::<ConfigMap>::namespaced(client.clone(), &ns), Duration::ZERO);
    let seen = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let added = seen.clone();
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new().on_add(move |c: &Arc<ConfigMap>, _| {
                added.lock().unwrap().push(c.metadata.name.clone().unwrap().into())
            }),
        )
        .unwrap();
    let cancel = CancellationToken::new();
    informer.start(cancel.clone());
    assert!(tokio::time::timeout(Duration::from_secs(30), wait_for_cache_sync(&cancel, &[&informer])).await.unwrap());
    let delivered = |name: &'static str| {
        let (seen, direct) = (seen.clone(), direct.clone());
        async move {
            let cm = ConfigMap {
                metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
                ..Default::default()
            };
            direct.create(&cm, &CreateOptions::default()).await.unwrap();
            let deadline = Instant::now() + Duration::from_secs(10);
            while !seen.lock().unwrap().iter().any(|n| n == name) {
                assert!(Instant::now() < deadline, "the informer did not see {name}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    delivered("before").await;

    // The client certificate rotates to the other CA's: new connections
    // present it; the informer's watch stays where it is.
    replace(&two.join("client.key"), &key);
    replace(&two.join("client.crt"), &cert);
    becomes(&client, "rotator-two").await;
    delivered("after-client-rotation").await;

    // The CA bundle is replaced by one that does not hold the server's CA:
    // new connections refuse the server, open ones go on.
    replace(&one.join("ca.crt"), &ca);
    let deadline = Instant::now() + Duration::from_secs(10);
    let refused = loop {
        match whoami(&client).await {
            Err(e) => break e,
            Ok(_) => assert!(Instant::now() < deadline, "the new CA bundle was never used"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let refused = k8s_client_runtime::ErrorChain(&refused).to_string();
    assert!(refused.contains("certificate"), "{refused}");
    delivered("while-the-ca-is-wrong").await;

    // A bundle with both CAs, as during a real CA rotation: new connections
    // verify the server again.
    let both = [std::fs::read(one.join("ca.crt")).unwrap(), std::fs::read(env.ca_file()).unwrap()].concat();
    let staged = dir.path().join("both.crt");
    std::fs::write(&staged, both).unwrap();
    replace(&staged, &ca);
    becomes(&client, "rotator-two").await;
    delivered("after-ca-rotation").await;

    let counters = informer.reflector_counters();
    assert_eq!(counters.full_loads(), 1, "the informer never relisted (last error {:?})", counters.last_error());
    assert_eq!(
        *seen.lock().unwrap(),
        ["before", "after-client-rotation", "while-the-ca-is-wrong", "after-ca-rotation"]
    );
    cancel.cancel();
}
