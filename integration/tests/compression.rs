//! Compressed responses from the real apiserver: a list over its 128 KB
//! threshold comes gzip-compressed (the client asks, as client-go does),
//! decodes to what an uncompressed read gives, and costs a fraction of the
//! bytes on the wire; `disable_compression` turns it off.

mod support;

use http_body_util::BodyExt;
use k8s_client::api::core::v1::ConfigMap;
use k8s_client_runtime::rest::{Client, CreateOptions, ListOptions, ResourceClient};

/// The bytes on the wire and the decoded body of a GET.
async fn read(client: &Client, path: &str) -> (u64, Vec<u8>) {
    let response = client.get(path).send().await.expect("GET");
    let mut body = response.into_body();
    let mut decoded = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.expect("body").into_data() {
            decoded.extend_from_slice(&data);
        }
    }
    (body.wire_bytes(), decoded)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_lists_come_compressed_and_decode_the_same() {
    let namespace = support::namespace("gzip");
    let client = support::client();
    let configmaps = ResourceClient::<ConfigMap>::namespaced(client.clone(), &namespace);
    // 300 objects of about 1 KB of repetitive data: over the threshold,
    // and as compressible as real objects' names, labels and fields are.
    let filler = "the same words again and again ".repeat(32);
    for i in 0..300 {
        let cm = support::config_map(&format!("cm-{i:03}"), ("app", "gzip"), &[("data", &filler)]);
        configmaps.create(&cm, &CreateOptions::default()).await.expect("create");
    }
    let path = format!("/api/v1/namespaces/{namespace}/configmaps");
    let (wire, decoded) = read(&client, &path).await;

    let mut config = support::config_for(support::env(), None);
    config.disable_compression = true;
    let plain_client = Client::new(config).unwrap();
    let (plain_wire, plain) = read(&plain_client, &path).await;

    assert_eq!(plain_wire, plain.len() as u64, "uncompressed, the wire carries the body");
    assert!(plain.len() > 128 * 1024, "the list is over the apiserver's threshold: {} bytes", plain.len());
    assert!(wire * 4 < plain_wire, "compressed: {wire} bytes on the wire for {} decoded", decoded.len());
    let items = |body: &[u8]| -> Vec<serde_json::Value> {
        let v: serde_json::Value = serde_json::from_slice(body).expect("a JSON list");
        v["items"].as_array().expect("items").iter().map(|i| i["data"].clone()).collect()
    };
    assert_eq!(items(&decoded), items(&plain));
    eprintln!("list of 300 ConfigMaps: {wire} bytes compressed, {plain_wire} plain");

    // The typed client reads the same list through the same decoding.
    let listed = configmaps.list(&ListOptions::default()).await.expect("list");
    assert_eq!(listed.items.len(), 300);
}
