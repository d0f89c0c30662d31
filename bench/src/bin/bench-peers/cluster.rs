//! What the harness does to the apiserver: creating the pods once per run,
//! and the churn writer.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use k8s_client::api::core::v1::{Namespace, Pod, PodList, ServiceAccount};
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client::clientset::Clientset;
use k8s_client_bench::{LATENCY_ANNOTATION, unix_nanos};
use k8s_client_runtime::ErrorChain;
use k8s_client_runtime::rest::{CreateOptions, Patch, PatchOptions, UpdateOptions};

/// Requests in flight while populating.
const CONCURRENCY: usize = 32;

/// One created pod.
pub struct PodRef {
    pub namespace: String,
    pub name: String,
}

/// Creates `total` pods spread over `namespaces` namespaces, cycling
/// through the pods of `list` (so every program sees the same realistic
/// objects), each with its status set through the status subresource as a
/// kubelet would. Server-owned metadata of the input is dropped.
pub async fn populate(
    clientset: &Clientset,
    list: &PodList,
    total: usize,
    namespaces: usize,
) -> Result<Vec<PodRef>, Box<dyn std::error::Error>> {
    if list.items.is_empty() {
        return Err("the pod list to populate from is empty".into());
    }
    let names: Vec<String> = (0..namespaces).map(|i| format!("bench-peers-{i}")).collect();
    for ns in &names {
        let namespace = Namespace { metadata: meta(ns, None), ..Default::default() };
        ignore_exists(clientset.core_v1().namespaces().create(&namespace, &CreateOptions::default()).await)?;
        // Pods name the `default` service account; with no controller manager
        // to create it, admission would refuse them.
        let account = ServiceAccount { metadata: meta("default", Some(ns)), ..Default::default() };
        ignore_exists(clientset.core_v1().service_accounts(ns).create(&account, &CreateOptions::default()).await)?;
    }
    let start = Instant::now();
    let results: Vec<Result<PodRef, String>> = futures_util::stream::iter(0..total)
        .map(|i| {
            let template = &list.items[i % list.items.len()];
            let namespace = names[i % namespaces].clone();
            let base = template.metadata.name.as_deref().unwrap_or("pod");
            let name = format!("{base}-{}", i / list.items.len());
            async move {
                let pods = clientset.core_v1().pods(&namespace);
                let mut pod = fresh_copy(template, &namespace, &name);
                let status = pod.status.take();
                let mut created = match pods.create(&pod, &CreateOptions::default()).await {
                    Ok(created) => created,
                    // There from an earlier run on the same apiserver.
                    Err(e) if e.is_already_exists() => return Ok(PodRef { namespace, name }),
                    Err(e) => return Err(format!("{name}: {}", ErrorChain(&e))),
                };
                created.status = status;
                pods.update_status(&created, &UpdateOptions::default())
                    .await
                    .map_err(|e| format!("{name} status: {}", ErrorChain(&e)))?;
                Ok(PodRef { namespace, name })
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let pods = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    eprintln!("bench-peers: created {} pods in {:.1} s", pods.len(), start.elapsed().as_secs_f64());
    Ok(pods)
}

fn meta(name: &str, namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta { name: Some(name.into()), namespace: namespace.map(Into::into), ..Default::default() }
}

fn ignore_exists<T>(result: Result<T, k8s_client_runtime::rest::Error>) -> Result<(), Box<dyn std::error::Error>> {
    match result {
        Ok(_) => Ok(()),
        Err(e) if e.is_already_exists() => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// `template` as a new object named `name` in `namespace`.
fn fresh_copy(template: &Pod, namespace: &str, name: &str) -> Pod {
    let mut pod = template.clone();
    let m = &mut pod.metadata;
    m.name = Some(name.into());
    m.namespace = Some(namespace.into());
    m.generate_name = None;
    m.uid = None;
    m.resource_version = None;
    m.creation_timestamp = None;
    m.managed_fields = None;
    pod
}

/// Merge-patches the latency annotation onto `pods` in turn, `rate` times a
/// second for `duration`, each write stamped with its own start time. Writes
/// run concurrently, so a slow answer does not lower the rate. Returns the
/// writes that succeeded.
pub async fn churn_writer(clientset: &Clientset, pods: &[PodRef], rate: f64, duration: Duration) -> usize {
    let total = (rate * duration.as_secs_f64()).round() as usize;
    let ok = Arc::new(AtomicUsize::new(0));
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut writes = Vec::with_capacity(total);
    for i in 0..total {
        tick.tick().await;
        let target = &pods[i % pods.len()];
        let client = clientset.core_v1().pods(&target.namespace);
        let (name, ok) = (target.name.clone(), ok.clone());
        writes.push(tokio::spawn(async move {
            let stamp = unix_nanos().to_string();
            let patch =
                Patch::Merge(serde_json::json!({ "metadata": { "annotations": { LATENCY_ANNOTATION: stamp } } }));
            match client.patch(&name, &patch, &PatchOptions::default()).await {
                Ok(_) => {
                    ok.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => eprintln!("bench-peers: churn write to {name}: {}", ErrorChain(&e)),
            }
        }));
    }
    for w in writes {
        let _ = w.await;
    }
    ok.load(Ordering::Relaxed)
}
