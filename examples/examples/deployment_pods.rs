//! From a Deployment, find its ReplicaSets and their Pods through listers
//! and label selectors (plus owner references), as `kubectl describe` does.
//! Usage: `deployment_pods [namespace] [deployment]` (default: every
//! Deployment of namespace `default`). Prints a tree:
//! `deployment ns/name`, `  replicaset ns/name`, `    pod ns/name<TAB>phase`.

use std::time::Duration;

use k8s_client::informers::SharedInformerFactory;
use k8s_client::prelude::*;
use k8s_client_runtime::LeanString;
use k8s_client_runtime::Report;
use k8s_client_runtime::object::object_key;
use k8s_client_runtime::rest::Client;
use k8s_client_runtime::selector::LabelSelector;

fn owned_by(
    owners: Option<&[k8s_client::apimachinery::pkg::apis::meta::v1::OwnerReference]>,
    uid: &Option<LeanString>,
) -> bool {
    owners.unwrap_or_default().iter().any(|o| o.controller == Some(true) && Some(&o.uid) == uid.as_ref())
}

#[tokio::main]
async fn main() -> Result<(), Report> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let namespace = args.first().map(String::as_str).unwrap_or("default");
    let only = args.get(1);

    let factory = SharedInformerFactory::builder(Client::try_default()?).namespace(namespace).build();
    let deployments = factory.apps_v1().deployments().lister();
    let replica_sets = factory.apps_v1().replica_sets().lister();
    let pods = factory.core_v1().pods().lister();
    factory.start();
    factory.wait_for_cache_sync_within(Duration::from_secs(60)).await?;

    let mut list = deployments.namespace(namespace).list(&LabelSelector::everything());
    list.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    for deployment in list.iter().filter(|d| only.is_none() || d.metadata.name.as_deref() == only.map(String::as_str)) {
        println!("deployment {}", object_key(deployment));
        let selector = deployment.spec.selector.to_selector()?;
        let mut sets = replica_sets.namespace(namespace).list(&selector);
        sets.retain(|rs| owned_by(rs.metadata.owner_references.as_deref(), &deployment.metadata.uid));
        sets.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        for rs in sets {
            println!("  replicaset {}", object_key(&rs));
            let rs_selector = rs.spec.selector.to_selector()?;
            let mut owned = pods.namespace(namespace).list(&rs_selector);
            owned.retain(|p| owned_by(p.metadata.owner_references.as_deref(), &rs.metadata.uid));
            owned.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
            for pod in owned {
                let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or_default();
                println!("    pod {}\t{phase}", object_key(&pod));
            }
        }
    }
    factory.shutdown();
    Ok(())
}
