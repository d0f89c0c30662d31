//! A controller in the style of client-go's sample-controller: a ConfigMap
//! informer feeds keys into a rate-limited workqueue; two workers reconcile
//! each ConfigMap annotated `example.com/greet: <name>` by making sure a
//! ConfigMap `<name>-greeting` exists with `greeting: hello <name>`, owned by
//! it, and record an Event. Errors are retried with backoff. Runs until
//! Ctrl-C, or for `--for <seconds>`.

use std::sync::Arc;
use std::time::Duration;

use k8s_client::api::core::v1::ConfigMap;
use k8s_client::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_client::clientset::Clientset;
use k8s_client::informers::SharedInformerFactory;
use k8s_client::listers::core_v1::ConfigMapLister;
use k8s_client::prelude::*;
use k8s_client_runtime::cache::{DeltaObject, ResourceEventHandlerFuncs};
use k8s_client_runtime::object::{object_key, split_key};
use k8s_client_runtime::record::{EventBroadcaster, EventRecorder, EventType};
use k8s_client_runtime::rest::{Client, CreateOptions, GetOptions};
use k8s_client_runtime::workqueue::{RateLimitingQueue, default_controller_rate_limiter};
use k8s_client_runtime::{Map, thin_vec};

const ANNOTATION: &str = "example.com/greet";
const MAX_RETRIES: u32 = 5;

struct Controller {
    clientset: Clientset,
    lister: ConfigMapLister,
    queue: RateLimitingQueue<String>,
    recorder: EventRecorder,
}

impl Controller {
    async fn reconcile(&self, key: &str) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let (namespace, name) = split_key(key);
        let namespace = namespace.unwrap_or("default");
        let cm = match self.lister.namespace(namespace).get(name) {
            Ok(cm) => cm,
            Err(e) if e.is_not_found() => return Ok(()), // deleted meanwhile; owned objects are garbage-collected
            Err(e) => return Err(e.into()),
        };
        let Some(who) = cm.metadata.annotations.as_ref().and_then(|a| a.get(ANNOTATION)) else { return Ok(()) };
        let greeting_name = format!("{name}-greeting");
        let configmaps = self.clientset.core_v1().config_maps(namespace);
        match configmaps.get(&greeting_name, &GetOptions::default()).await {
            Ok(_) => return Ok(()),
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e.into()),
        }
        let greeting = ConfigMap {
            metadata: ObjectMeta {
                name: Some(greeting_name.as_str().into()),
                owner_references: Some(thin_vec![OwnerReference {
                    api_version: "v1".into(),
                    kind: "ConfigMap".into(),
                    name: name.into(),
                    uid: cm.metadata.uid.clone().unwrap_or_default(),
                    controller: Some(true),
                    ..Default::default()
                }]),
                ..Default::default()
            },
            data: Some(Map::from([("greeting", format!("hello {who}"))])),
            ..Default::default()
        };
        configmaps.create(&greeting, &CreateOptions::default()).await?;
        self.recorder.eventf(&cm, EventType::Normal, "Greeted", format_args!("created {greeting_name}"));
        Ok(())
    }

    async fn run_worker(self: Arc<Self>) {
        while let Some(key) = self.queue.get().await {
            match self.reconcile(&key).await {
                Ok(()) => {
                    self.queue.forget(&key);
                    println!("reconciled {key}");
                }
                Err(e) if self.queue.num_requeues(&key) < MAX_RETRIES => {
                    eprintln!("error reconciling {key}, retrying: {e}");
                    self.queue.add_rate_limited(key.clone());
                }
                Err(e) => {
                    eprintln!("dropping {key} after {MAX_RETRIES} retries: {e}");
                    self.queue.forget(&key);
                }
            }
            self.queue.done(&key);
        }
    }
}

fn run_for() -> Option<Duration> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == "--for")?;
    Some(Duration::from_secs_f64(args.get(at + 1)?.parse().ok()?))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::try_default()?;
    let factory = SharedInformerFactory::new(client.clone(), Duration::from_secs(300));
    let informer = factory.core_v1().config_maps();
    let broadcaster = EventBroadcaster::with_client(client.clone())?;
    let controller = Arc::new(Controller {
        clientset: Clientset::new(client),
        lister: informer.lister(),
        queue: RateLimitingQueue::new(default_controller_rate_limiter()),
        recorder: broadcaster.new_recorder("greeting-controller"),
    });

    let enqueue = {
        let queue = controller.queue.clone();
        move |cm: &ConfigMap| queue.add(object_key(cm))
    };
    let (on_add, on_update) = (enqueue.clone(), enqueue.clone());
    let queue = controller.queue.clone();
    informer.informer().add_event_handler(
        ResourceEventHandlerFuncs::new()
            .on_add(move |cm: &Arc<ConfigMap>, _| on_add(cm))
            .on_update(move |_, cm: &Arc<ConfigMap>| on_update(cm))
            .on_delete(move |d: &DeltaObject<ConfigMap>| match d {
                DeltaObject::Object(cm) => queue.add(object_key(cm)),
                DeltaObject::DeletedFinalStateUnknown(t) => queue.add(t.key.clone()),
            }),
    )?;
    factory.start();
    factory.wait_for_cache_sync().await;
    let workers: Vec<_> = (0..2).map(|_| tokio::spawn(controller.clone().run_worker())).collect();

    match run_for() {
        Some(d) => tokio::select! {
            _ = tokio::time::sleep(d) => {}
            _ = tokio::signal::ctrl_c() => {}
        },
        None => tokio::signal::ctrl_c().await?,
    }
    controller.queue.shut_down_with_drain().await;
    for w in workers {
        w.await?;
    }
    factory.shutdown();
    broadcaster.drain().await;
    Ok(())
}
