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
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client::clientset::Clientset;
use k8s_client::informers::SharedInformerFactory;
use k8s_client::listers::core_v1::ConfigMapLister;
use k8s_client::prelude::*;
use k8s_client_runtime::controller::{Action, Controller, Request, set_controller_reference};
use k8s_client_runtime::record::{EventBroadcaster, EventRecorder, EventType};
use k8s_client_runtime::rest::{Client, CreateOptions};
use k8s_client_runtime::{ErrorChain, Map};

type BoxError = Box<dyn Error + Send + Sync>;

const ANNOTATION: &str = "example.com/greet";

struct Context {
    clientset: Clientset,
    configmaps: ConfigMapLister,
    recorder: EventRecorder,
}

/// Brings one ConfigMap's greeting to what its annotation asks for.
async fn reconcile(request: Request<ConfigMap>, ctx: Arc<Context>) -> Result<Action, BoxError> {
    let Some(cm) = request.object() else {
        return Ok(Action::done()); // deleted; what it owned is garbage-collected
    };
    let Some(who) = cm.metadata.annotations.as_ref().and_then(|a| a.get(ANNOTATION)) else {
        return Ok(Action::done());
    };
    let namespace = request.namespace().unwrap_or_default();
    let greeting_name = format!("{}-greeting", request.name());
    if ctx.configmaps.namespace(namespace).get(&greeting_name).is_ok() {
        return Ok(Action::done());
    }
    let mut greeting = ConfigMap {
        metadata: ObjectMeta { name: Some(greeting_name.as_str().into()), ..Default::default() },
        data: Some(Map::from([("greeting", format!("hello {who}"))])),
        ..Default::default()
    };
    set_controller_reference(&**cm, &mut greeting)?;
    let configmaps = ctx.clientset.core_v1().config_maps(namespace);
    match configmaps.create(&greeting, &CreateOptions::default()).await {
        Ok(_) => {}
        Err(e) if e.is_already_exists() => return Ok(Action::done()), // the cache had not seen it yet
        Err(e) => return Err(e.into()),
    }
    ctx.recorder.eventf(&**cm, EventType::Normal, "Greeted", format_args!("created {greeting_name}"));
    Ok(Action::done())
}

/// Runs the controller with two workers until `stop` completes.
pub async fn run(client: Client, stop: impl Future<Output = ()>) -> Result<(), BoxError> {
    let factory = SharedInformerFactory::new(client.clone(), Duration::from_secs(300));
    let events = EventBroadcaster::with_client(client.clone())?;
    let context = Arc::new(Context {
        clientset: Clientset::new(client),
        configmaps: factory.core_v1().config_maps().lister(),
        recorder: events.new_recorder("greeting-controller"),
    });
    Controller::<ConfigMap>::new(&factory)
        .owns::<ConfigMap>() // a greeting changed or deleted: look at its owner again
        .concurrency(2)
        .error_policy(|_key, _error, retries| if retries < 5 { Action::backoff() } else { Action::done() })
        .run(reconcile, context, stop)
        .await?;
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
