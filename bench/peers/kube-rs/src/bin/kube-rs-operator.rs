//! The kube-rs program of the operator workload of `make bench-peers` (see
//! `../../../PROTOCOL.md`): the Greeting operator on `kube::runtime::Controller`.
//! A program of its own rather than a subcommand of `kube-rs-peer`, whose
//! counting allocator would add to every allocation of a long-running
//! process.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::convert::Infallible;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Parser;
use futures::StreamExt;
use governor::{Quota, RateLimiter};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, OwnerReference, Time};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::finalizer::{self, finalizer};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{Predicate, WatchStreamExt, predicates, watcher};
use kube::{Api, Client, Config, CustomResource, Resource, ResourceExt};
use serde::{Deserialize, Serialize};
use serde_json::json;

const FINALIZER: &str = "example.com/greeting-cleanup";

/// The spec of `examples/crds/greeting.yaml`, whose schema is the CRD's own
/// (installed by the harness), so none is derived here.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Greeting",
    namespaced,
    status = "GreetingStatus",
    schema = "disabled"
)]
pub struct GreetingSpec {
    pub message: String,
    #[serde(default = "one")]
    pub replicas: i32,
}

fn one() -> i32 {
    1
}

#[derive(Deserialize, Serialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct GreetingStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

#[derive(Parser)]
#[command(name = "kube-rs-operator", about = "The Greeting operator on kube-rs (see bench/peers/PROTOCOL.md)")]
struct Args {
    /// The namespace to watch.
    #[arg(long)]
    namespace: String,
    /// Client requests per second (burst: twice as many).
    #[arg(long, default_value_t = 50.0)]
    qps: f64,
    /// Kubeconfig file; $KUBECONFIG (or ~/.kube/config) without it.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
enum Error {
    #[error(transparent)]
    Kube(#[from] kube::Error),
    #[error("ConfigMap {0} is controlled by another object")]
    ControlledByOther(String),
    #[error("the ConfigMap cache is gone")]
    CacheGone,
}

struct Context {
    client: Client,
    configmaps: Store<ConfigMap>,
    /// Failures in a row per Greeting, for the error policy's backoff.
    failures: Mutex<HashMap<ObjectRef<Greeting>, u32>>,
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    if let Err(e) = run(args).await {
        eprintln!("kube-rs-operator: {e}");
        std::process::exit(1);
    }
}

async fn run(args: Args) -> Result<(), String> {
    if !(args.qps.is_finite() && args.qps > 0.0) {
        return Err("--qps must be a positive number".into());
    }
    let client = client(args.kubeconfig, args.qps).await?;
    let ns = &args.namespace;

    let (greetings, greeting_writer) = reflector::store();
    let greeting_events = watcher(Api::<Greeting>::namespaced(client.clone(), ns), watcher::Config::default())
        .default_backoff()
        .reflect(greeting_writer)
        .applied_objects()
        // Its own status writes change neither, so they trigger nothing; the
        // finalizer it adds does, which starts the work proper.
        .predicate_filter(predicates::generation.combine(predicates::finalizers), Default::default());

    let (configmaps, configmap_writer) = reflector::store();
    let configmap_events = watcher(Api::<ConfigMap>::namespaced(client.clone(), ns), watcher::Config::default())
        .default_backoff()
        .reflect(configmap_writer)
        // Deletions too: a deleted ConfigMap is put back.
        .touched_objects();

    let context = Arc::new(Context { client, configmaps, failures: Mutex::default() });
    Controller::for_stream(greeting_events, greetings)
        .owns_stream(configmap_events)
        .with_config(controller::Config::default().concurrency(4))
        .shutdown_on_signal()
        .run(reconcile, error_policy, context)
        .for_each(|result| async move {
            match result {
                // A ConfigMap's event after its Greeting is gone.
                Ok(_) | Err(controller::Error::ObjectNotFound(_)) => {}
                Err(e) => eprintln!("kube-rs-operator: {e}"),
            }
        })
        .await;
    Ok(())
}

/// A client from `--kubeconfig` or as kube infers it, whose requests wait
/// for a token bucket of `qps` a second and twice that burst (client-go's
/// limiter; kube has none of its own).
async fn client(kubeconfig: Option<PathBuf>, qps: f64) -> Result<Client, String> {
    let config = match kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
            Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default()).await.map_err(|e| e.to_string())?
        }
        None => Config::infer().await.map_err(|e| e.to_string())?,
    };
    let burst = NonZeroU32::new((2.0 * qps).round() as u32).unwrap_or(NonZeroU32::MIN);
    let quota = Quota::with_period(Duration::from_secs_f64(1.0 / qps)).ok_or("--qps is too large")?;
    let limiter = Arc::new(RateLimiter::direct(quota.allow_burst(burst)));
    // A filter calls a clone of the service it wraps: the buffer is one.
    let limit = tower::ServiceBuilder::new()
        .layer(tower::filter::AsyncFilterLayer::new(move |request| {
            let limiter = limiter.clone();
            async move {
                limiter.until_ready().await;
                Ok::<_, Infallible>(request)
            }
        }))
        .buffer(1024);
    let builder = kube::client::ClientBuilder::try_from(config).map_err(|e| format!("building client: {e}"))?;
    Ok(builder.with_layer(&limit).build())
}

async fn reconcile(greeting: Arc<Greeting>, ctx: Arc<Context>) -> Result<Action, finalizer::Error<Error>> {
    let ns = greeting.namespace().unwrap_or_default();
    let key = ObjectRef::from_obj(&*greeting);
    let api = Api::<Greeting>::namespaced(ctx.client.clone(), &ns);
    let action = finalizer(&api, FINALIZER, greeting, |event| async {
        ctx.configmaps.wait_until_ready().await.map_err(|_| Error::CacheGone)?;
        match event {
            finalizer::Event::Apply(g) => apply(&g, &ctx).await,
            finalizer::Event::Cleanup(g) => cleanup(&g, &ctx).await,
        }
    })
    .await?;
    ctx.failures.lock().expect("not poisoned").remove(&key);
    Ok(action)
}

/// Per Greeting, 5 ms doubling to 1000 s: client-go's controllers' default
/// per-item backoff, which controller-runtime uses; kube has none built in.
fn error_policy(greeting: Arc<Greeting>, error: &finalizer::Error<Error>, ctx: Arc<Context>) -> Action {
    eprintln!("kube-rs-operator: {}: {error}", greeting.name_any());
    let mut failures = ctx.failures.lock().expect("not poisoned");
    let n = failures.entry(ObjectRef::from_obj(&*greeting)).or_default();
    let delay = Duration::from_millis(5).saturating_mul(1 << (*n).min(30)).min(Duration::from_secs(1000));
    *n += 1;
    Action::requeue(delay)
}

/// Creates or puts back ConfigMaps `<name>-<i>` for i below `replicas`,
/// deletes the other ones it controls, then writes the status if it changed.
async fn apply(g: &Greeting, ctx: &Context) -> Result<Action, Error> {
    let ns = g.namespace().unwrap_or_default();
    let name = g.name_any();
    let configmaps = Api::<ConfigMap>::namespaced(ctx.client.clone(), &ns);
    let owner = OwnerReference {
        // As controller-runtime's SetControllerReference: kube sets only `controller`.
        block_owner_deletion: Some(true),
        ..g.controller_owner_ref(&()).expect("a Greeting from the apiserver has a name and uid")
    };
    let replicas = g.spec.replicas.max(0);

    let mut wanted = HashSet::new();
    for i in 0..replicas {
        let cm_name = format!("{name}-{i}");
        let cached = ctx.configmaps.get(&ObjectRef::new(&cm_name).within(&ns));
        match cached {
            None => {
                let cm = ConfigMap {
                    metadata: ObjectMeta {
                        name: Some(cm_name.clone()),
                        namespace: Some(ns.clone()),
                        owner_references: Some(vec![owner.clone()]),
                        ..ObjectMeta::default()
                    },
                    data: Some(message_data(g)),
                    ..ConfigMap::default()
                };
                configmaps.create(&PostParams::default(), &cm).await?;
            }
            Some(cm) if is_controlled_by(&cm, g) && message(&cm) == Some(&g.spec.message) => {}
            // Other keys are left as they are.
            Some(cm) => {
                let mut cm = (*cm).clone();
                set_controller(&mut cm.metadata, &owner).map_err(|()| Error::ControlledByOther(cm_name.clone()))?;
                cm.data.get_or_insert_default().insert("message".into(), g.spec.message.clone());
                configmaps.replace(&cm_name, &PostParams::default(), &cm).await?;
            }
        }
        wanted.insert(cm_name);
    }
    for cm in ctx.configmaps.state_filter(|cm| is_controlled_by(cm, g)) {
        let cm_name = cm.name_any();
        if !wanted.contains(&cm_name) {
            delete_ignoring_gone(&configmaps, &cm_name).await?;
        }
    }

    let generation = g.metadata.generation;
    let status = g.status.clone().unwrap_or_default();
    let ready = ready_condition(&status, generation, replicas);
    let current = status.conditions.iter().find(|c| c.type_ == "Ready");
    let same = |c: &&Condition| {
        (&c.status, &c.reason, &c.message, c.observed_generation)
            == (&ready.status, &ready.reason, &ready.message, ready.observed_generation)
    };
    if status.observed_generation != generation || !current.is_some_and(|c| same(&c)) {
        let mut conditions: Vec<Condition> = status.conditions.into_iter().filter(|c| c.type_ != "Ready").collect();
        conditions.push(ready);
        let patch = json!({ "status": { "observedGeneration": generation, "conditions": conditions } });
        Api::<Greeting>::namespaced(ctx.client.clone(), &ns)
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
    }
    Ok(Action::await_change())
}

/// Deletes every ConfigMap `g` controls; the finalizer is removed after.
async fn cleanup(g: &Greeting, ctx: &Context) -> Result<Action, Error> {
    let configmaps = Api::<ConfigMap>::namespaced(ctx.client.clone(), &g.namespace().unwrap_or_default());
    for cm in ctx.configmaps.state_filter(|cm| is_controlled_by(cm, g)) {
        delete_ignoring_gone(&configmaps, &cm.name_any()).await?;
    }
    Ok(Action::await_change())
}

fn message_data(g: &Greeting) -> BTreeMap<String, String> {
    BTreeMap::from([("message".to_owned(), g.spec.message.clone())])
}

fn message(cm: &ConfigMap) -> Option<&String> {
    cm.data.as_ref()?.get("message")
}

/// `Ready` as `apimachinery`'s `meta.SetStatusCondition` would leave it:
/// the transition time is kept while the status stays the same.
fn ready_condition(status: &GreetingStatus, generation: Option<i64>, replicas: i32) -> Condition {
    let previous = status.conditions.iter().find(|c| c.type_ == "Ready" && c.status == "True");
    Condition {
        type_: "Ready".into(),
        status: "True".into(),
        observed_generation: generation,
        reason: "Reconciled".into(),
        message: format!("ConfigMaps up to date: {replicas}"),
        last_transition_time: previous
            .map_or_else(|| Time(k8s_openapi::jiff::Timestamp::now()), |c| c.last_transition_time.clone()),
    }
}

fn is_controlled_by(cm: &ConfigMap, g: &Greeting) -> bool {
    let uid = g.metadata.uid.as_deref();
    cm.owner_references().iter().any(|o| o.controller == Some(true) && Some(o.uid.as_str()) == uid)
}

/// Makes `owner` the controller of `meta`, as controller-runtime's
/// `SetControllerReference`: an error when another object controls it.
fn set_controller(meta: &mut ObjectMeta, owner: &OwnerReference) -> Result<(), ()> {
    let refs = meta.owner_references.get_or_insert_with(Vec::new);
    if refs.iter().any(|o| o.controller == Some(true) && o.uid != owner.uid) {
        return Err(());
    }
    refs.retain(|o| o.uid != owner.uid);
    refs.push(owner.clone());
    Ok(())
}

async fn delete_ignoring_gone(api: &Api<ConfigMap>, name: &str) -> Result<(), kube::Error> {
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.is_not_found() => Ok(()),
        Err(e) => Err(e),
    }
}
