//! Creates, lists and watches `Note`s with the client `build.rs` generated
//! from `crds/note.yaml`, in the namespace given as the first argument
//! (default `default`), on the cluster of the kubeconfig (`KUBECONFIG`,
//! `~/.kube/config` or in-cluster).

use std::time::Duration;

use futures_util::StreamExt;
use k8s_client::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_client_runtime::rest::{Client, CreateOptions, ListOptions, ResourceClient, WatchEvent};

include!(concat!(env!("OUT_DIR"), "/notes.rs"));

use notes::com::example::build::v1::{Note, NoteSpec};

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let namespace = std::env::args().nth(1).unwrap_or_else(|| "default".into());
    let client = Client::try_default()?;
    install_crd(&client).await?;

    let notes = ResourceClient::<Note>::namespaced(client, &namespace);
    let listed = notes.list(&ListOptions::default()).await?;
    // Watch from the list's version: the create below comes as ADDED.
    let mut events = notes
        .watch(&ListOptions { resource_version: listed.metadata.resource_version.clone(), ..Default::default() })
        .await?;

    let note = Note {
        metadata: k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            generate_name: Some("note-".into()),
            ..Default::default()
        },
        spec: Some(NoteSpec { text: "hello from build.rs".into(), pinned: Some(true) }),
        status: None,
    };
    let created = notes.create(&note, &CreateOptions::default()).await?;
    let name = created.metadata.name.clone().unwrap_or_default();
    println!("created {name}");

    let listed = notes.list(&ListOptions::default()).await?;
    let texts: Vec<&str> = listed.items.iter().filter_map(|n| n.spec.as_ref()).map(|s| s.text.as_str()).collect();
    println!("listed {} with texts {texts:?}", listed.items.len());

    let watched = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(event) = events.next().await {
            if let WatchEvent::Added(n) = event? {
                if n.metadata.name.as_deref() == Some(name.as_str()) {
                    return Ok::<_, Error>(n);
                }
            }
        }
        Err("the watch ended".into())
    })
    .await
    .map_err(|_| "no ADDED event within 30 s")??;
    println!("watched ADDED {}", watched.metadata.name.unwrap_or_default());
    Ok(())
}

/// Creates the CRD unless it is there, and waits until it is served.
async fn install_crd(client: &Client) -> Result<(), Error> {
    let manifest: serde_json::Value = serde_yaml_ng::from_str(include_str!("../crds/note.yaml"))?;
    let crd: CustomResourceDefinition = serde_json::from_value(manifest)?;
    let crds = ResourceClient::<CustomResourceDefinition>::all(client.clone());
    if let Err(e) = crds.create(&crd, &CreateOptions::default()).await {
        if !e.is_already_exists() {
            return Err(e.into());
        }
    }
    for _ in 0..300 {
        let current = crds.get("notes.build.example.com", &Default::default()).await?;
        let conditions = current.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or_default();
        if conditions.iter().any(|c| c.type_ == "Established" && c.status == "True") {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err("the Note CRD was not established within 30 s".into())
}
