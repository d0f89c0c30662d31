//! [`Controller`]: what a controller reconciles, what enqueues it, and how.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::handlers::{EnqueueMapped, EnqueueOwner, EnqueuePrimary, OwnerKind};
use super::metrics::ControllerMetrics;
use super::workers::{ErrorPolicy, Workers};
use super::{Action, BoxError, Error, Metrics, Predicate, Request};
use tokio_util::sync::CancellationToken;

use crate::cache::{HasSynced, HandlerRegistration, wait_for_cache_sync, SharedIndexInformer, SharedInformerFactory};
use crate::object::{DynamicResource, Object, Resource, Scope};
use crate::rest::verbs::{List, Watch};
use crate::workqueue::{MetricsProvider, Queue, RateLimiter, RateLimitingQueue, default_controller_rate_limiter};

/// An event handler to add once the controller's queue exists, and what
/// it returns: the registration (to wait for and to remove).
type Register = Box<dyn FnOnce(&Queue<String>) -> Result<Registered, crate::cache::informer::Error> + Send>;

struct Registered {
    resource: String,
    registration: HandlerRegistration,
    informer_failure: Box<dyn Fn() -> Option<String> + Send + Sync>,
    remove: Box<dyn FnOnce() + Send + Sync>,
}

type QueueFactory = Box<dyn FnOnce(&str, Option<&dyn MetricsProvider>) -> RateLimitingQueue<String> + Send>;

/// A controller of the primary kind `K` (controller-runtime's builder
/// `For`/`Owns`/`Watches`, kube-runtime's `Controller`): reconciles each
/// `K` key when the object, an object it owns, or a watched object that
/// maps to it changes. Build it, then [`run`](Self::run) it, or add it to
/// a [`Manager`](super::Manager).
///
/// ```no_run
/// # use std::sync::Arc;
/// # use std::time::Duration;
/// # use k8s_client_runtime::controller::{Action, Controller, Predicate, Request};
/// # use k8s_client_runtime::cache::SharedInformerFactory;
/// # type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// # async fn demo<K, C>(factory: SharedInformerFactory) -> Result<(), k8s_client_runtime::controller::Error>
/// # where
/// #     K: k8s_client_runtime::Object + k8s_client_runtime::Resource + k8s_client_runtime::rest::verbs::List
/// #         + k8s_client_runtime::rest::verbs::Watch + Send + Sync + 'static,
/// #     C: k8s_client_runtime::Object + k8s_client_runtime::Resource + k8s_client_runtime::rest::verbs::List
/// #         + k8s_client_runtime::rest::verbs::Watch + Send + Sync + 'static,
/// # {
/// struct Context {/* clients, listers, a recorder */}
///
/// async fn reconcile<K>(request: Request<K>, ctx: Arc<Context>) -> Result<Action, BoxError> {
///     let Some(object) = request.object() else {
///         return Ok(Action::done()); // gone
///     };
///     // ... bring the world to what `object` asks for ...
///     Ok(Action::requeue_after(Duration::from_secs(300)))
/// }
///
/// Controller::<K>::new(&factory)
///     .owns::<C>()
///     .with_predicate(Predicate::generation_changed())
///     .concurrency(4)
///     .run(reconcile, Arc::new(Context {}), async { let _ = tokio::signal::ctrl_c().await; })
///     .await
/// # }
/// ```
pub struct Controller<K> {
    name: String,
    factory: SharedInformerFactory,
    informer: SharedIndexInformer<K>,
    resource: DynamicResource,
    predicates: Vec<Predicate<K>>,
    watches: Vec<Register>,
    concurrency: usize,
    shutdown_deadline: Duration,
    queue: QueueFactory,
    error_policy: ErrorPolicy,
    metrics: Option<Metrics>,
}

impl<K> fmt::Debug for Controller<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Controller")
            .field("name", &self.name)
            .field("resource", &self.resource.plural)
            .field("watches", &self.watches.len())
            .field("concurrency", &self.concurrency)
            .finish_non_exhaustive()
    }
}

impl<K: Object + Resource + List + Watch + Send + Sync + 'static> Controller<K> {
    /// A controller of `K` on `factory`'s informer of `K`, named after the
    /// kind in lower case (controller-runtime's default), reconciling one
    /// key at a time.
    pub fn new(factory: &SharedInformerFactory) -> Self {
        Controller {
            name: K::KIND.to_lowercase(),
            factory: factory.clone(),
            informer: factory.informer_for::<K>(),
            resource: DynamicResource::of::<K>(),
            predicates: Vec::new(),
            watches: Vec::new(),
            concurrency: 1,
            shutdown_deadline: Duration::from_secs(30),
            queue: Box::new(|name, metrics| match metrics {
                Some(metrics) => RateLimitingQueue::with_metrics(name, metrics, default_controller_rate_limiter()),
                None => RateLimitingQueue::new(default_controller_rate_limiter()),
            }),
            error_policy: Arc::new(|_, _, _| Action::backoff()),
            metrics: None,
        }
    }

    /// Names the controller in logs, metrics and its queue's metrics.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Drops updates of `K` the predicate rejects (several: every one must
    /// accept). Additions and deletions always enqueue.
    #[must_use]
    pub fn with_predicate(mut self, predicate: Predicate<K>) -> Self {
        self.predicates.push(predicate);
        self
    }

    /// Reconciles the controlling owner of each changed `C` (an object with
    /// a controller owner reference to a `K`; controller-runtime's
    /// `Owns`), through the factory's informer of `C`.
    #[must_use]
    pub fn owns<C: Object + Resource + List + Watch + Send + Sync + 'static>(self) -> Self {
        self.owns_with(Vec::<Predicate<C>>::new())
    }

    /// [`owns`](Self::owns), dropping updates of `C` the predicates reject.
    #[must_use]
    pub fn owns_with<C: Object + Resource + List + Watch + Send + Sync + 'static>(
        mut self,
        predicates: impl IntoIterator<Item = Predicate<C>>,
    ) -> Self {
        let owner = OwnerKind { group: K::GROUP, kind: K::KIND, namespaced: K::SCOPE == Scope::Namespaced };
        let predicates: Vec<_> = predicates.into_iter().collect();
        let informer = self.factory.informer_for::<C>();
        let resource = resource_name(&DynamicResource::of::<C>());
        self.watches.push(Box::new(move |queue| {
            register(&informer, resource, EnqueueOwner { queue: queue.clone(), owner, predicates })
        }));
        self
    }

    /// Reconciles the keys `mapper` gives for each changed `W`
    /// (controller-runtime's `Watches` with `EnqueueRequestsFromMapFunc`),
    /// through the factory's informer of `W`. Keys are `namespace/name`
    /// ([`object_key`](crate::object::object_key) of a `K`), or `name` for a
    /// cluster-scoped `K`. An update maps both the old and the new object.
    #[must_use]
    pub fn watches<W, I>(self, mapper: impl Fn(&W) -> I + Send + Sync + 'static) -> Self
    where
        W: Object + Resource + List + Watch + Send + Sync + 'static,
        I: IntoIterator<Item = String>,
    {
        let informer = self.factory.informer_for::<W>();
        self.watches_informer(informer, mapper, Vec::new())
    }

    /// [`watches`](Self::watches) on an informer of your own (one outside
    /// the factory, or of a kind known at run time), dropping updates the
    /// predicates reject.
    #[must_use]
    pub fn watches_informer<W, I>(
        mut self,
        informer: SharedIndexInformer<W>,
        mapper: impl Fn(&W) -> I + Send + Sync + 'static,
        predicates: impl IntoIterator<Item = Predicate<W>>,
    ) -> Self
    where
        W: Object + Send + Sync + 'static,
        I: IntoIterator<Item = String>,
    {
        let mapper = Arc::new(move |obj: &W| mapper(obj).into_iter().collect::<Vec<_>>());
        let predicates: Vec<_> = predicates.into_iter().collect();
        let resource = std::any::type_name::<W>().rsplit("::").next().unwrap_or_default().to_owned();
        self.watches.push(Box::new(move |queue| {
            register(&informer, resource, EnqueueMapped { queue: queue.clone(), mapper, predicates })
        }));
        self
    }

    /// At most `n` reconciles at a time (of different keys; one key is
    /// never reconciled twice at once). Default 1, as controller-runtime's
    /// `MaxConcurrentReconciles`.
    #[must_use]
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// How long running reconciles may take to finish on shutdown before
    /// they are aborted (default 30 s, controller-runtime's
    /// `GracefulShutdownTimeout`).
    #[must_use]
    pub fn shutdown_deadline(mut self, deadline: Duration) -> Self {
        self.shutdown_deadline = deadline;
        self
    }

    /// The delays of [`Action::backoff`] and of the default error policy
    /// (default: client-go's `DefaultControllerRateLimiter`, per-key
    /// exponential 5 ms to 1000 s, and 10 per second overall).
    #[must_use]
    pub fn rate_limiter(mut self, limiter: impl RateLimiter<String> + 'static) -> Self {
        self.queue = Box::new(move |name, metrics| match metrics {
            Some(metrics) => RateLimitingQueue::with_metrics(name, metrics, limiter),
            None => RateLimitingQueue::new(limiter),
        });
        self
    }

    /// What to do with a key whose reconcile failed, given the key, the
    /// error and how many backoffs in a row it had (kube-runtime's
    /// `error_policy`). Default: [`Action::backoff`].
    #[must_use]
    pub fn error_policy(
        mut self,
        policy: impl Fn(&str, &(dyn std::error::Error + 'static), u32) -> Action + Send + Sync + 'static,
    ) -> Self {
        self.error_policy = Arc::new(policy);
        self
    }

    /// Records reconcile and queue metrics in `metrics`' registry.
    #[must_use]
    pub fn metrics(mut self, metrics: &Metrics) -> Self {
        self.metrics = Some(metrics.clone());
        self
    }

    /// The controller's name.
    pub fn controller_name(&self) -> &str {
        &self.name
    }

    /// The informer of the primary kind (from the factory).
    pub fn informer(&self) -> &SharedIndexInformer<K> {
        &self.informer
    }

    /// Runs until `shutdown` completes: adds its event handlers, starts
    /// the factory's informers, waits for every cache it reads to sync,
    /// then reconciles keys with `reconcile(request, context)`. On
    /// shutdown it takes no more keys, lets running reconciles finish
    /// within the [deadline](Self::shutdown_deadline), and removes its
    /// handlers; the informers keep running (they are the factory's).
    ///
    /// Fails when a cache it needs fails for good, or a handler cannot be
    /// added; a failing reconcile is the error policy's business, not an
    /// error of `run`.
    pub async fn run<C, F, Fut, E>(
        self,
        reconcile: F,
        context: Arc<C>,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), Error>
    where
        C: Send + Sync + 'static,
        F: Fn(Request<K>, Arc<C>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: Into<BoxError> + 'static,
    {
        let name = self.name;
        let provider = self.metrics.as_ref().map(|m| &m.workqueue as &dyn MetricsProvider);
        let queue = (self.queue)(&name, provider);
        let handler_error = |source| Error::Handler { controller: name.clone(), source };
        let base: &Queue<String> = &queue;
        let primary = EnqueuePrimary { queue: base.clone(), predicates: self.predicates };
        let primary = register(&self.informer, resource_name(&self.resource), primary).map_err(handler_error)?;
        let mut registered = vec![primary];
        for watch in self.watches {
            registered.push(watch(&queue).map_err(handler_error)?);
        }
        self.factory.start();

        tokio::pin!(shutdown);
        let synced = tokio::select! {
            synced = wait_for_sync(&name, &registered) => synced,
            () = &mut shutdown => Ok(false),
        };
        let result = match synced {
            Ok(true) => {
                tracing::info!(controller = %name, workers = self.concurrency, "caches synced, starting workers");
                let metrics = self.metrics.as_ref().map(|m| ControllerMetrics::new(m, &name, self.concurrency));
                let workers = Workers {
                    name: name.clone(),
                    queue,
                    store: self.informer.store(),
                    reconcile: Arc::new(reconcile),
                    context,
                    error_policy: self.error_policy,
                    metrics,
                };
                Arc::new(workers).run(self.concurrency, self.shutdown_deadline, shutdown).await;
                Ok(())
            }
            Ok(false) => {
                queue.shut_down();
                Ok(())
            }
            Err(e) => {
                queue.shut_down();
                Err(e)
            }
        };
        for r in registered {
            (r.remove)();
        }
        tracing::info!(controller = %name, "stopped");
        result
    }
}

/// Adds `handler` to `informer`.
fn register<K: Object + Send + Sync + 'static>(
    informer: &SharedIndexInformer<K>,
    resource: String,
    handler: impl crate::cache::ResourceEventHandler<K>,
) -> Result<Registered, crate::cache::informer::Error> {
    let registration = informer.add_event_handler(handler)?;
    let (to_remove, failing) = (informer.clone(), informer.clone());
    let id = registration.clone();
    Ok(Registered {
        resource,
        registration,
        informer_failure: Box::new(move || failing.failure()),
        remove: Box::new(move || {
            to_remove.remove_event_handler(&id);
        }),
    })
}

/// `plural.group`, or `plural` for the core group, as logs name resources.
fn resource_name(resource: &DynamicResource) -> String {
    if resource.group.is_empty() { resource.plural.clone() } else { format!("{}.{}", resource.plural, resource.group) }
}

/// A handler synced once it has seen its informer's initial list; it can
/// never sync once its informer failed for good.
impl HasSynced for Registered {
    fn has_synced(&self) -> bool {
        self.registration.has_synced()
    }
    fn failure(&self) -> Option<String> {
        (self.informer_failure)()
    }
}

/// Waits until every handler has seen its informer's initial list: `true`;
/// an error when an informer failed for good.
async fn wait_for_sync(controller: &str, registered: &[Registered]) -> Result<bool, Error> {
    let synced: Vec<&(dyn HasSynced + Sync)> = registered.iter().map(|r| r as &(dyn HasSynced + Sync)).collect();
    if wait_for_cache_sync(&CancellationToken::new(), &synced).await {
        return Ok(true);
    }
    // Never cancelled: only a failure ends the wait unsynced.
    let (resource, failure) = registered.iter().find_map(|r| Some((r.resource.clone(), r.failure()?))).unwrap_or_default();
    Err(Error::CacheFailed { controller: controller.to_owned(), resource, failure })
}
