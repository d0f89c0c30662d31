//! An operator for the `Greeting` custom resource (`examples/crds/greeting.yaml`,
//! installed when missing): for each Greeting `G` it keeps the ConfigMaps
//! `G-0` … `G-(replicas-1)` holding `spec.message`, owned by `G`; deletes
//! them itself when `G` is deleted (behind a finalizer); and reports
//! `status.observedGeneration` and a `Ready` condition. Runs until SIGTERM
//! or ctrl-c, or for `--for <seconds>`.
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use k8s_client::api::core::v1::ConfigMap;
use k8s_client::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_client::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_client::clientset::Clientset;
use k8s_client::prelude::*;
use k8s_client_example_greetings::com::example::v1::Greeting;
use k8s_client_runtime::cache::Lister;
use k8s_client_runtime::controller::{
    Action, BoxError, Controller, FinalizerEvent, Manager, Predicate, Request, finalizer, get_or_create,
    set_controller_reference, shutdown_signal,
};
use k8s_client_runtime::object::{Metadata as _, set_status_condition};
use k8s_client_runtime::rest::{Client, Patch, PatchOptions};
use k8s_client_runtime::selector::LabelSelector;
use k8s_client_runtime::{Config, ErrorChain, Object as _, ResourceClient};

const FINALIZER: &str = "example.com/greeting-cleanup";

/// The command line.
#[derive(Parser, Debug, Default)]
pub struct Args {
    /// Watch Greetings and ConfigMaps in this namespace only (default: all); the Lease lives here too.
    #[arg(long)]
    pub namespace: Option<String>,
    /// Act only while holding the Lease `greeting-operator`.
    #[arg(long)]
    pub leader_elect: bool,
    /// Serve /metrics, /healthz and /readyz on this address.
    #[arg(long)]
    pub metrics_addr: Option<SocketAddr>,
    /// Stop after this many seconds (default: on SIGTERM or ctrl-c).
    #[arg(long = "for")]
    pub run_for: Option<f64>,
    /// Requests per second to the apiserver (bursts of twice as many).
    #[arg(long, default_value_t = 50.0)]
    pub qps: f32,
}

struct Context {
    client: Client,
    configmaps: Lister<ConfigMap>,
}

async fn reconcile(request: Request<Greeting>, ctx: Arc<Context>) -> Result<Action, BoxError> {
    let Some(greeting) = request.into_object() else { return Ok(Action::done()) }; // its finalizer cleaned up
    Ok(finalizer(&ctx.client, FINALIZER, greeting, |event| async {
        match event {
            FinalizerEvent::Apply(greeting) => apply(&greeting, &ctx).await,
            FinalizerEvent::Cleanup(greeting) => cleanup(&greeting, &ctx).await,
        }
    })
    .await?)
}

/// The ConfigMaps `greeting` should have, written where the cache differs,
/// those beyond `replicas` deleted, then the status.
async fn apply(greeting: &Greeting, ctx: &Context) -> Result<Action, BoxError> {
    let (namespace, name) = (greeting.namespace().unwrap_or_default(), greeting.name().unwrap_or_default());
    let spec = &greeting.spec;
    let replicas = spec.replicas.unwrap_or(1).max(0);
    let configmaps = Clientset::new(ctx.client.clone()).core_v1().config_maps(namespace);
    for i in 0..replicas {
        let current = ctx.configmaps.namespace(namespace).get(&format!("{name}-{i}")).ok();
        let mut wanted = current.as_deref().cloned().unwrap_or_default();
        wanted.metadata.name = Some(format!("{name}-{i}").into());
        set_controller_reference(greeting, &mut wanted)?;
        wanted.data.get_or_insert_default().insert("message", spec.message.clone());
        match current {
            Some(current) if *current == wanted => {}
            Some(_) => drop(configmaps.update(&wanted, &Default::default()).await?),
            None => match configmaps.create(&wanted, &Default::default()).await {
                Err(e) if !e.is_already_exists() => return Err(e.into()),
                _ => {}
            },
        }
    }
    for extra in owned(greeting, ctx) {
        let index = extra.name().and_then(|n| n.rsplit('-').next()?.parse::<i32>().ok());
        if index.is_none_or(|i| i >= replicas) {
            delete(&configmaps, extra.name().unwrap_or_default()).await?;
        }
    }
    let mut status = greeting.status.clone().unwrap_or_default();
    let ready = Condition {
        type_: "Ready".into(),
        status: "True".into(),
        reason: "Reconciled".into(),
        message: format!("{replicas} ConfigMaps hold the message").into(),
        observed_generation: greeting.metadata.generation,
        ..Default::default()
    };
    let changed = set_status_condition(status.conditions.get_or_insert_default(), ready);
    if changed || status.observed_generation != greeting.metadata.generation {
        status.observed_generation = greeting.metadata.generation;
        let patch = Patch::Merge(serde_json::json!({ "status": serde_json::to_value(&status)? }));
        let greetings = ResourceClient::<Greeting>::namespaced(ctx.client.clone(), namespace);
        greetings.patch_status(name, &patch, &PatchOptions::default()).await?;
    }
    Ok(Action::done())
}

/// Deletes the Greeting's ConfigMaps: a cluster may run no garbage collector.
async fn cleanup(greeting: &Greeting, ctx: &Context) -> Result<Action, BoxError> {
    let configmaps = Clientset::new(ctx.client.clone()).core_v1().config_maps(greeting.namespace().unwrap_or_default());
    for owned in owned(greeting, ctx) {
        delete(&configmaps, owned.name().unwrap_or_default()).await?;
    }
    Ok(Action::done())
}

/// The cached ConfigMaps `greeting` controls.
fn owned(greeting: &Greeting, ctx: &Context) -> Vec<Arc<ConfigMap>> {
    let lister = ctx.configmaps.namespace(greeting.namespace().unwrap_or_default());
    let uid = greeting.metadata.uid.as_deref();
    let controlled = |cm: &Arc<ConfigMap>| cm.metadata.controller_reference().is_some_and(|r| Some(&*r.uid) == uid);
    lister.list(&LabelSelector::everything()).into_iter().filter(controlled).collect()
}

async fn delete(configmaps: &ResourceClient<ConfigMap>, name: &str) -> Result<(), BoxError> {
    match configmaps.delete(name, &Default::default()).await {
        Err(e) if !e.is_not_found() => Err(e.into()),
        _ => Ok(()),
    }
}

/// Installs the Greeting CRD unless there, and waits until it is served.
pub async fn install_crd(client: &Client) -> Result<(), BoxError> {
    let manifest: serde_json::Value = serde_yaml_ng::from_str(include_str!("../crds/greeting.yaml"))?;
    let manifest: CustomResourceDefinition = serde_json::from_value(manifest)?;
    let crds = Clientset::new(client.clone()).apiextensions_v1().custom_resource_definitions();
    let (mut crd, _) = get_or_create(&crds, "greetings.example.com", || manifest).await?;
    for _ in 0..300 {
        let conditions = crd.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or_default();
        if conditions.iter().any(|c| c.type_ == "Established" && c.status == "True") {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        crd = crds.get("greetings.example.com", &Default::default()).await?;
    }
    Err("the Greeting CRD was not established within 30 s".into())
}

/// Runs the operator on `client` until `stop` completes.
pub async fn run(client: Client, args: &Args, stop: impl Future<Output = ()>) -> Result<(), BoxError> {
    let mut manager = Manager::builder(client.clone());
    if let Some(namespace) = &args.namespace {
        manager = manager.namespace(namespace);
    }
    if args.leader_elect {
        manager = manager.leader_election("greeting-operator", args.namespace.as_deref().unwrap_or("default"));
    }
    if let Some(addr) = args.metrics_addr {
        manager = manager.metrics_addr(addr);
    }
    let mut manager = manager.build()?;
    let controller = Controller::<Greeting>::new(manager.factory())
        .owns::<ConfigMap>()
        .with_predicate(Predicate::generation_changed())
        .concurrency(4);
    let context = Context { client, configmaps: manager.factory().core_v1().config_maps().lister() };
    manager.add(controller, reconcile, Arc::new(context));
    Ok(manager.run_until(stop).await?)
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt::init(); // log lines on stderr
    let args = Args::parse();
    let stop = async {
        match args.run_for {
            Some(seconds) => drop(tokio::time::timeout(Duration::from_secs_f64(seconds), shutdown_signal()).await),
            None => shutdown_signal().await,
        }
    };
    let result = async {
        let mut config = Config::infer()?;
        (config.qps, config.burst) = (args.qps, (args.qps * 2.0) as u32);
        let client = Client::new(config)?;
        install_crd(&client).await?;
        run(client, &args, stop).await
    };
    if let Err(e) = result.await {
        eprintln!("error: {}", ErrorChain(&*e));
        std::process::exit(1);
    }
}
