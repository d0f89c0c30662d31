//! A controller in the style of client-go's sample-controller, the one the
//! README's "Writing a controller" walks through: for each ConfigMap
//! annotated `example.com/greet: <name>` it makes sure a ConfigMap
//! `<name>-greeting` exists with `greeting: hello <name>`, owned by the
//! first, and records an Event. Runs until Ctrl-C, or for `--for <seconds>`.
use std::error::Error;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use k8s_client::api::core::v1::ConfigMap;
use k8s_client::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_client::clientset::Clientset;
use k8s_client::informers::SharedInformerFactory;
use k8s_client::listers::core_v1::ConfigMapLister;
use k8s_client::prelude::*;
use k8s_client_runtime::cache::EnqueueKeys;
use k8s_client_runtime::object::split_key;
use k8s_client_runtime::record::{EventBroadcaster, EventRecorder, EventType};
use k8s_client_runtime::rest::{Client, CreateOptions};
use k8s_client_runtime::workqueue::{RateLimitingQueue, default_controller_rate_limiter};
use k8s_client_runtime::{ErrorChain, Map, thin_vec};

type BoxError = Box<dyn Error + Send + Sync>;

const ANNOTATION: &str = "example.com/greet";

struct Controller {
    clientset: Clientset,
    configmaps: ConfigMapLister,
    queue: RateLimitingQueue<String>,
    recorder: EventRecorder,
}

impl Controller {
    /// Brings one ConfigMap's greeting to what its annotation asks for.
    async fn reconcile(&self, key: &str) -> Result<(), BoxError> {
        let (namespace, name) = split_key(key);
        let namespace = namespace.unwrap_or_default();
        let cm = match self.configmaps.namespace(namespace).get(name) {
            Ok(cm) => cm,
            Err(e) if e.is_not_found() => return Ok(()), // deleted; what it owned is garbage-collected
            Err(e) => return Err(e.into()),
        };
        let Some(who) = cm.metadata.annotations.as_ref().and_then(|a| a.get(ANNOTATION)) else {
            return Ok(());
        };
        let greeting_name = format!("{name}-greeting");
        if self.configmaps.namespace(namespace).get(&greeting_name).is_ok() {
            return Ok(());
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
        let configmaps = self.clientset.core_v1().config_maps(namespace);
        match configmaps.create(&greeting, &CreateOptions::default()).await {
            Ok(_) => {}
            Err(e) if e.is_already_exists() => return Ok(()), // the cache had not seen it yet
            Err(e) => return Err(e.into()),
        }
        self.recorder.eventf(&cm, EventType::Normal, "Greeted", format_args!("created {greeting_name}"));
        Ok(())
    }

    /// Takes keys from the queue until it shuts down; a failed key is
    /// retried with backoff, at most five times.
    async fn run_worker(self: Arc<Self>) {
        while let Some(key) = self.queue.get().await {
            match self.reconcile(&key).await {
                Ok(()) => self.queue.forget(&key),
                Err(e) if self.queue.num_requeues(&key) < 5 => {
                    tracing::warn!(%key, error = %ErrorChain(&*e), "reconcile failed, retrying");
                    self.queue.add_rate_limited(key.clone());
                }
                Err(e) => {
                    tracing::error!(%key, error = %ErrorChain(&*e), "reconcile failed, dropping the key");
                    self.queue.forget(&key);
                }
            }
            self.queue.done(&key);
        }
    }
}

/// Runs the controller with two workers until `stop` completes.
pub async fn run(client: Client, stop: impl Future<Output = ()>) -> Result<(), BoxError> {
    let factory = SharedInformerFactory::new(client.clone(), Duration::from_secs(300));
    let configmaps = factory.core_v1().config_maps();
    let events = EventBroadcaster::with_client(client.clone())?;
    let controller = Arc::new(Controller {
        clientset: Clientset::new(client),
        configmaps: configmaps.lister(),
        queue: RateLimitingQueue::new(default_controller_rate_limiter()),
        recorder: events.new_recorder("greeting-controller"),
    });
    configmaps.informer().add_event_handler(EnqueueKeys::new(&controller.queue))?;

    factory.start();
    factory.wait_for_cache_sync_within(Duration::from_secs(60)).await?;
    let workers: Vec<_> = (0..2).map(|_| tokio::spawn(controller.clone().run_worker())).collect();
    stop.await;

    controller.queue.shut_down_with_drain().await;
    for worker in workers {
        worker.await?;
    }
    factory.shutdown();
    events.drain().await;
    Ok(())
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt::init(); // log lines on stderr
    let stop = async {
        match std::env::args().skip_while(|a| a != "--for").nth(1).and_then(|s| s.parse().ok()) {
            Some(seconds) => tokio::time::sleep(Duration::from_secs_f64(seconds)).await,
            None => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    };
    let result = match Client::try_default() {
        Ok(client) => run(client, stop).await,
        Err(e) => Err(e.into()),
    };
    if let Err(e) = result {
        eprintln!("error: {}", ErrorChain(&*e));
        std::process::exit(1);
    }
}
