//! [`Manager`]: controllers on one client and one informer factory, with
//! leader election, metrics and probes (controller-runtime's manager).

mod probes;

use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::{Action, BoxError, Controller, Error, Metrics, Request};
use crate::cache::SharedInformerFactory;
use crate::leaderelection::{LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaseLock, LeadershipToken};
use crate::object::{Object, Resource};
use crate::rest::Client;
use crate::rest::verbs::{List, Watch};

type RunController = Box<dyn FnOnce(CancellationToken) -> Pin<Box<dyn Future<Output = Result<(), Error>> + Send>> + Send>;

/// Leader election settings of a [`Manager`].
#[derive(Debug, Clone)]
struct Election {
    lease: String,
    namespace: String,
    identity: String,
    config: LeaderElectionConfig,
}

/// Options of a [`Manager`].
pub struct ManagerBuilder {
    client: Client,
    namespace: Option<String>,
    factory: Option<SharedInformerFactory>,
    election: Option<Election>,
    metrics_addr: Option<SocketAddr>,
}

impl fmt::Debug for ManagerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManagerBuilder")
            .field("election", &self.election.as_ref().map(|e| (&e.namespace, &e.lease)))
            .field("metrics_addr", &self.metrics_addr)
            .finish_non_exhaustive()
    }
}

impl ManagerBuilder {
    /// The informer factory the controllers share (default: all
    /// namespaces or [`namespace`](Self::namespace), resync every 10 hours
    /// as controller-runtime's `SyncPeriod`). Build it with
    /// [`SharedInformerFactory::builder`] for a namespace, per-kind
    /// namespaces (`namespace_for`), transforms or selectors.
    #[must_use]
    pub fn factory(mut self, factory: SharedInformerFactory) -> Self {
        self.factory = Some(factory);
        self
    }

    /// Watch this namespace only (the default factory's namespace;
    /// controller-runtime's `Cache.DefaultNamespaces`); default: all.
    #[must_use]
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Run the controllers only while holding the Lease `lease` in
    /// `namespace` (client-go's timing: 15 s lease, 10 s renew deadline,
    /// 2 s retry). The controllers are stopped when leadership is lost,
    /// and the Lease is handed back on shutdown once they have stopped.
    #[must_use]
    pub fn leader_election(mut self, lease: impl Into<String>, namespace: impl Into<String>) -> Self {
        let lease = lease.into();
        let identity = format!(
            "{}_{:08x}",
            std::env::var("POD_NAME").or_else(|_| std::env::var("HOSTNAME")).unwrap_or_else(|_| lease.clone()),
            rand::random::<u32>()
        );
        let config = LeaderElectionConfig { name: lease.clone(), release_on_cancel: true, ..Default::default() };
        self.election = Some(Election { lease, namespace: namespace.into(), identity, config });
        self
    }

    /// The leader election's timing and identity (after
    /// [`leader_election`](Self::leader_election)); its callbacks and
    /// `release_on_cancel` are the manager's.
    #[must_use]
    pub fn leader_election_timing(mut self, lease_duration: Duration, renew_deadline: Duration, retry_period: Duration) -> Self {
        if let Some(election) = &mut self.election {
            election.config.lease_duration = lease_duration;
            election.config.renew_deadline = renew_deadline;
            election.config.retry_period = retry_period;
        }
        self
    }

    /// Serve `/metrics` (Prometheus text), `/healthz` and `/readyz` on
    /// `addr` (port 0: any free port, see [`Manager::metrics_addr`]).
    #[must_use]
    pub fn metrics_addr(mut self, addr: SocketAddr) -> Self {
        self.metrics_addr = Some(addr);
        self
    }

    /// Binds the metrics address, if any, and registers the metrics.
    pub fn build(self) -> Result<Manager, Error> {
        let factory = self.factory.unwrap_or_else(|| {
            let factory = SharedInformerFactory::builder(self.client.clone()).default_resync(Duration::from_secs(10 * 3600));
            match self.namespace {
                Some(namespace) => factory.namespace(namespace).build(),
                None => factory.build(),
            }
        });
        let listener = match self.metrics_addr {
            Some(addr) => Some(probes::bind(addr)?),
            None => None,
        };
        let metrics = Metrics::new(&prometheus::Registry::new())?;
        Ok(Manager { client: self.client, factory, election: self.election, listener, metrics, controllers: Vec::new() })
    }
}

/// Runs controllers on one client and one shared informer factory
/// (controller-runtime's manager): their caches are shared, they start
/// when the caches have synced and (with leader election) only while this
/// process leads, and stop together on SIGTERM or ctrl-c.
///
/// ```no_run
/// # use std::sync::Arc;
/// # use k8s_client_runtime::controller::{Action, Controller, Manager, Request};
/// # type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// # async fn reconcile<K>(_: Request<K>, _: Arc<()>) -> Result<Action, BoxError> { Ok(Action::done()) }
/// # async fn demo<K>(client: k8s_client_runtime::Client) -> Result<(), k8s_client_runtime::controller::Error>
/// # where K: k8s_client_runtime::Object + k8s_client_runtime::Resource + k8s_client_runtime::rest::verbs::List
/// #     + k8s_client_runtime::rest::verbs::Watch + Send + Sync + 'static {
/// let mut manager = Manager::builder(client)
///     .leader_election("my-operator", "default")
///     .metrics_addr("0.0.0.0:8080".parse().unwrap())
///     .build()?;
/// let controller = Controller::<K>::new(manager.factory());
/// manager.add(controller, reconcile, Arc::new(()));
/// manager.run().await
/// # }
/// ```
pub struct Manager {
    client: Client,
    factory: SharedInformerFactory,
    election: Option<Election>,
    listener: Option<std::net::TcpListener>,
    metrics: Metrics,
    controllers: Vec<(String, RunController)>,
}

impl fmt::Debug for Manager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Manager")
            .field("controllers", &self.controllers.iter().map(|(name, _)| name).collect::<Vec<_>>())
            .field("leader_election", &self.election.is_some())
            .field("metrics_addr", &self.metrics_addr())
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// A manager on `client`; see [`ManagerBuilder`].
    pub fn builder(client: Client) -> ManagerBuilder {
        ManagerBuilder { client, namespace: None, factory: None, election: None, metrics_addr: None }
    }

    /// The client the controllers share.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The informer factory the controllers share: build controllers on
    /// it, and read its listers from reconcilers.
    pub fn factory(&self) -> &SharedInformerFactory {
        &self.factory
    }

    /// The metrics served at `/metrics`; register your own collectors in
    /// its [`registry`](Metrics::registry).
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The address `/metrics`, `/healthz` and `/readyz` are served on, once
    /// bound (the port chosen when asked for port 0).
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.listener.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// Adds a controller, run with `reconcile` and `context` when the
    /// manager runs (see [`Controller::run`]).
    pub fn add<K, C, F, Fut, E>(&mut self, controller: Controller<K>, reconcile: F, context: Arc<C>)
    where
        K: Object + Resource + List + Watch + Send + Sync + 'static,
        C: Send + Sync + 'static,
        F: Fn(Request<K>, Arc<C>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: Into<BoxError> + 'static,
    {
        let controller = controller.metrics(&self.metrics);
        let name = controller.controller_name().to_owned();
        self.controllers.push((
            name,
            Box::new(move |stop: CancellationToken| {
                Box::pin(async move { controller.run(reconcile, context, stop.cancelled_owned()).await })
            }),
        ));
    }

    /// Runs until SIGTERM or ctrl-c (see [`run_until`](Self::run_until)).
    pub async fn run(self) -> Result<(), Error> {
        self.run_until(shutdown_signal()).await
    }

    /// Runs until `shutdown` completes: serves metrics and probes, starts
    /// the informers, and runs the controllers (while leading, with leader
    /// election). Then stops the controllers (each within its shutdown
    /// deadline), hands the Lease back, and stops the informers.
    ///
    /// Fails when a controller fails (a cache that can never sync), or
    /// with [`Error::LeadershipLost`] when the Lease was lost: exit then,
    /// as a controller-runtime manager does, and let the Deployment start
    /// the process again.
    pub async fn run_until(self, shutdown: impl Future<Output = ()>) -> Result<(), Error> {
        let Manager { client, factory, election, listener, metrics, controllers } = self;
        let stop = CancellationToken::new();
        let failure = Arc::new(Mutex::new(None::<Error>));
        let mut run_all = Some({
            let (stop, failure) = (stop.clone(), failure.clone());
            move |leading: CancellationToken| run_controllers(controllers, leading, stop, failure)
        });
        let led = Arc::new(AtomicBool::new(false));
        let elector = match &election {
            Some(election) => {
                let once = Mutex::new(run_all.take());
                let led = led.clone();
                let callbacks = LeaderCallbacks::new().on_started_leading(move |token: LeadershipToken| {
                    led.store(true, Ordering::SeqCst);
                    let run_all = once.lock().take();
                    async move {
                        let Some(run_all) = run_all else { return };
                        let leading = CancellationToken::new();
                        let on_loss = leading.clone();
                        let relay = tokio::spawn(async move {
                            token.cancelled().await;
                            on_loss.cancel();
                        });
                        run_all(leading).await;
                        relay.abort();
                    }
                });
                let config = LeaderElectionConfig { callbacks, ..election.config.clone() };
                let lock = LeaseLock::new(client.clone(), &election.namespace, &election.lease, election.identity.clone());
                Some(LeaderElector::new(config, lock).map_err(Error::LeaderElection)?)
            }
            None => None,
        };
        let probes = match listener {
            Some(listener) => {
                let state = probes::State { factory: factory.clone(), metrics, elector: elector.clone() };
                Some(tokio::spawn(probes::serve(listener, state, stop.clone())?))
            }
            None => None,
        };
        factory.start();

        tokio::pin!(shutdown);
        let stopping = stop.clone();
        let until_stopped = async move {
            tokio::select! {
                () = shutdown => stopping.cancel(),
                () = stopping.cancelled() => {}
            }
        };
        match (&elector, run_all) {
            (Some(elector), _) => elector.run(until_stopped).await,
            (None, Some(run_all)) => {
                futures_util::future::join(run_all(stop.clone()), until_stopped).await;
            }
            (None, None) => {}
        }
        // The elector ended without a shutdown asked for: the lease was lost.
        let lost = led.load(Ordering::SeqCst) && !stop.is_cancelled();
        stop.cancel();
        factory.shutdown();
        if let Some(probes) = probes {
            let _ = probes.await;
        }
        if let Some(error) = failure.lock().take() {
            return Err(error);
        }
        if lost {
            return Err(Error::LeadershipLost);
        }
        Ok(())
    }
}

/// Runs every controller until `leading` is cancelled or `stop` is; the
/// first controller to fail records its error and stops the manager.
async fn run_controllers(
    controllers: Vec<(String, RunController)>,
    leading: CancellationToken,
    stop: CancellationToken,
    failure: Arc<Mutex<Option<Error>>>,
) {
    let end = CancellationToken::new();
    let relay = {
        let (end, stop) = (end.clone(), stop.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = leading.cancelled() => {}
                () = stop.cancelled() => {}
            }
            end.cancel();
        })
    };
    let mut running = tokio::task::JoinSet::new();
    let mut names = std::collections::HashMap::new();
    for (name, run) in controllers {
        let task = running.spawn(run(end.clone()));
        names.insert(task.id(), name);
    }
    while let Some(joined) = running.join_next_with_id().await {
        let (name, error) = match joined {
            Ok((_, Ok(()))) => continue,
            Ok((id, Err(e))) => (names.remove(&id).unwrap_or_default(), e),
            Err(e) => {
                let name = names.remove(&e.id()).unwrap_or_default();
                (name.clone(), Error::Panicked { controller: name, message: e.to_string() })
            }
        };
        tracing::error!(controller = %name, error = %crate::ErrorChain(&error), "controller failed, stopping the manager");
        failure.lock().get_or_insert(Error::Controller { controller: name, source: Box::new(error) });
        end.cancel();
        stop.cancel();
    }
    relay.abort();
}

/// Completes on SIGTERM (what Kubernetes sends a pod) or ctrl-c: what
/// [`Manager::run`] stops on.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(term) => term,
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM; stopping on ctrl-c only");
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
