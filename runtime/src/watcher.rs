//! A watch that recovers on its own, as a [`Stream`]: client-go's
//! `tools/watch.NewRetryWatcher`, and kube-rs's `watcher`.
//!
//! [`ResourceClient::watch`] is one HTTP request: it ends when the
//! apiserver ends it (`timeoutSeconds`, a restart), when the connection
//! breaks, or with an `ERROR` event (410 Gone once its resourceVersion was
//! compacted). [`watcher`] and [`retry_watcher`] keep watching through all
//! of that:
//!
//! - **Resume.** Every event moves the last seen resourceVersion on
//!   (bookmarks too: the watches ask for them). A watch that ends, or whose
//!   connection breaks ([`rest::Error::is_probable_eof`]), is started again
//!   from that version, so no event is lost or delivered twice: the
//!   apiserver sends exactly the changes after it, in order. (After an
//!   apiserver *restart* that version is usually gone: the new watch
//!   cache starts at the current revision and answers an older one with
//!   410, which leads to the next point.)
//! - **Expired (410 Gone, `reason: Expired`).** The changes after the last
//!   version are no longer known to the server. [`OnExpired::Relist`] (the
//!   default of [`watcher`]) lists the current objects and goes on
//!   watching from the list; [`OnExpired::Fail`] (what [`retry_watcher`]
//!   does, as client-go's `RetryWatcher`) yields [`Error::Expired`] and
//!   ends the stream.
//! - **Backoff.** A failed list or watch is yielded as an `Err` item and
//!   tried again after a [`BackoffConfig`] delay (the reflector's:
//!   800 ms doubling to 30 s, jittered), which starts over once an
//!   attempt succeeds. A watch that ends within a second without any
//!   event waits a backoff delay too, so a server closing watches at once
//!   is not hammered. The stream never ends on these errors: stop polling
//!   it (drop it) on the ones you deem fatal (a 403, say).
//!
//! # What the caller sees
//! Items are `Result<`[`Event<K>`]`, `[`Error`]`>`:
//! - [`Event::Watch`]: a [`WatchEvent`] of a watch, in the server's order
//!   (added, modified, deleted, bookmark).
//! - [`Event::Init`], then one [`Event::InitApply`] per object, then
//!   [`Event::InitDone`]: a list, the whole current state, at the start
//!   when no resourceVersion was given and after every relist. A list
//!   *replaces* what the caller knew: an object known before and not in
//!   the list was deleted meanwhile, with no `Deleted` event for it
//!   (kube-rs's `Init`/`InitApply`/`InitDone`, chosen over synthetic events
//!   because making those needs a copy of every object, which is an
//!   informer's job). The watch resumes from the list's version, so the
//!   events after `InitDone` follow the list without gap or overlap.
//!
//! # Watcher or informer?
//! An informer (`cache`, feature `informers`) keeps a
//! cache of every object, shared by handlers and listers, with resyncs
//! and a work queue: use it for controllers and anything that reads the
//! objects again and again. Use a watcher to *react* to changes without
//! keeping them: follow one object until a condition holds
//! ([`wait`](crate::wait)), tail changes from a known resourceVersion
//! (client-go's `RetryWatcher`), or feed a store of your own. It holds
//! one watch and nothing else.
//!
//! # Cancel safety
//! `next()` on the stream is cancel safe: dropping it (in a
//! `tokio::select!`, under a timeout) loses no event, since the step in
//! progress (a list, a watch request, a read, a backoff sleep) is kept in
//! the stream and goes on at the next poll. Dropping the stream closes
//! its watch; to pick up later where it stopped, start a new one from
//! the resourceVersion of the last event handled
//! ([`Config::resource_version`]).

#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::time::Duration;

use futures_util::{Stream, StreamExt as _};
use tokio::time::Instant;

use crate::backoff::Backoff;
pub use crate::backoff::BackoffConfig;
use crate::object::Metadata as _;
use crate::rest::{self, ListOptions, ResourceClient, WatchEvent, WatchStream, verbs};

/// What a watcher does when the server no longer has the changes after
/// its last resourceVersion (410 Gone, `reason: Expired`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnExpired {
    /// List the current objects ([`Event::Init`] … [`Event::InitDone`])
    /// and go on watching from the list.
    #[default]
    Relist,
    /// Yield [`Error::Expired`] and end the stream, as client-go's
    /// `RetryWatcher`: the caller decides how to catch up.
    Fail,
}

/// How a [`watcher`] lists and watches.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Selectors (`label_selector`, `field_selector`), the page size of
    /// lists (`limit`, 500 when unset) and the server-side `timeout_seconds`
    /// of each watch. The resourceVersion fields, `continue` and
    /// `sendInitialEvents` are the watcher's own and ignored here;
    /// bookmarks are always asked for.
    pub list_options: ListOptions,
    /// Where to start watching: `None` (or `""`, or `"0"`, which name no
    /// point in history) lists the current objects first.
    pub resource_version: Option<String>,
    /// What to do on 410 Gone.
    pub on_expired: OnExpired,
    /// Delays between failed attempts.
    pub backoff: BackoffConfig,
}

impl Config {
    /// Watches the objects matching a label selector (`app=web`).
    #[must_use]
    pub fn labels(mut self, selector: &str) -> Self {
        self.list_options.label_selector = Some(selector.to_owned());
        self
    }

    /// Watches the objects matching a field selector (`metadata.name=web`).
    #[must_use]
    pub fn fields(mut self, selector: &str) -> Self {
        self.list_options.field_selector = Some(selector.to_owned());
        self
    }

    /// Starts watching after `resource_version` instead of listing first.
    #[must_use]
    pub fn from_resource_version(mut self, resource_version: &str) -> Self {
        self.resource_version = Some(resource_version.to_owned());
        self
    }

    /// What to do on 410 Gone.
    #[must_use]
    pub fn on_expired(mut self, on_expired: OnExpired) -> Self {
        self.on_expired = on_expired;
        self
    }

    /// Delays between failed attempts.
    #[must_use]
    pub fn backoff(mut self, backoff: BackoffConfig) -> Self {
        self.backoff = backoff;
        self
    }
}

/// An item of a [`watcher`]'s stream; see the [module docs](self#what-the-caller-sees).
#[derive(Debug, Clone, PartialEq)]
pub enum Event<K> {
    /// An event of a watch, in order.
    Watch(WatchEvent<K>),
    /// A list begins: the objects up to [`Event::InitDone`] are the whole
    /// current state, replacing what was known.
    Init,
    /// One object of the list.
    InitApply(K),
    /// The list is complete, at this resourceVersion; watch events follow.
    InitDone {
        /// The list's resourceVersion, which the watch resumes from.
        resource_version: String,
    },
}

/// A failure of a [`watcher`]: every one but [`Error::Expired`] is followed
/// by a retry after a backoff delay.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Listing failed; listed again after a backoff.
    #[error("listing failed")]
    List(#[source] rest::Error),
    /// The apiserver refused a watch or could not be reached; watched
    /// again from the same resourceVersion after a backoff.
    #[error("starting a watch failed")]
    WatchStart(#[source] rest::Error),
    /// An open watch failed: an `ERROR` event (a 5xx, a 429) or an event
    /// that did not decode; watched again from the last resourceVersion
    /// after a backoff.
    #[error("watch failed")]
    Watch(#[source] rest::Error),
    /// The server no longer has the changes after `resource_version` (410
    /// Gone), with [`OnExpired::Fail`]: the stream ends after this.
    #[error("resourceVersion {resource_version} is too old to watch from")]
    Expired {
        /// The last resourceVersion seen.
        resource_version: String,
        /// The server's answer.
        #[source]
        source: rest::Error,
    },
}

impl Error {
    /// The apiserver's or transport's error underneath.
    pub fn rest_error(&self) -> &rest::Error {
        match self {
            Error::List(e) | Error::WatchStart(e) | Error::Watch(e) | Error::Expired { source: e, .. } => e,
        }
    }

    /// Whether trying again may help: a transport failure, 429, a 5xx or a
    /// timeout. A 4xx (forbidden, not found, invalid selector) or the end
    /// of an expired stream is not.
    pub fn is_transient(&self) -> bool {
        if matches!(self, Error::Expired { .. }) {
            return false;
        }
        let e = self.rest_error();
        match e.code() {
            Some(code) => code == 429 || code >= 500 || e.is_timeout() || e.is_server_timeout(),
            // A broken connection, a refused one, an event that did not decode.
            None => true,
        }
    }
}

/// The objects of `client` and their changes, recovering from ended
/// watches, broken connections and (with [`OnExpired::Relist`], the
/// default) expired resourceVersions; see the [module docs](self).
///
/// ```no_run
/// # use futures_util::TryStreamExt as _;
/// # use k8s_client_runtime::{ResourceClient, dynamic::DynamicObject};
/// # use k8s_client_runtime::watcher::{self, Event};
/// # use k8s_client_runtime::rest::WatchEvent;
/// # async fn run(pods: ResourceClient<DynamicObject>) -> Result<(), watcher::Error> {
/// let events = watcher::watcher(pods, watcher::Config::default().labels("app=web"));
/// let mut events = std::pin::pin!(events);
/// while let Some(event) = events.try_next().await? {
///     match event {
///         Event::Init => println!("(re)listing"),
///         Event::InitApply(pod) | Event::Watch(WatchEvent::Added(pod) | WatchEvent::Modified(pod)) => {
///             println!("{:?}", pod.name())
///         }
///         Event::Watch(WatchEvent::Deleted(pod)) => println!("gone: {:?}", pod.name()),
///         Event::InitDone { .. } | Event::Watch(WatchEvent::Bookmark(_)) => {}
///     }
/// }
/// # Ok(()) }
/// ```
pub fn watcher<K>(client: ResourceClient<K>, config: Config) -> impl Stream<Item = Result<Event<K>, Error>> + Send
where
    K: verbs::List + verbs::Watch,
{
    State::new(client, config, false).into_stream()
}

/// Client-go's `RetryWatcher`: the changes after `resource_version`, in
/// order, watched again after every ended watch or broken connection;
/// ends with [`Error::Expired`] on 410 Gone. `resource_version` `""` or
/// `"0"` means "from now": one object is listed to learn the current
/// version (client-go refuses those versions instead).
///
/// Selectors and the server-side timeout of each watch come from
/// `list_options`, the backoff is [`BackoffConfig::default`]. For another
/// backoff, or to relist instead of failing, use [`watcher`] with
/// [`OnExpired`].
pub fn retry_watcher<K>(
    client: ResourceClient<K>,
    resource_version: &str,
    list_options: ListOptions,
) -> impl Stream<Item = Result<WatchEvent<K>, Error>> + Send
where
    K: verbs::List + verbs::Watch,
{
    let config = Config {
        list_options,
        resource_version: Some(resource_version.to_owned()),
        on_expired: OnExpired::Fail,
        backoff: BackoffConfig::default(),
    };
    // With a version to start from and no relists, only watch events come.
    State::new(client, config, true).into_stream().filter_map(|item| {
        std::future::ready(match item {
            Ok(Event::Watch(event)) => Some(Ok(event)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
    })
}

/// What the watcher does next.
enum Phase<K> {
    List,
    Watch,
    Watching { stream: WatchStream<K>, started: Instant, events: u64 },
    Backoff { until: Instant, then: Next },
    Done,
}

/// Where to go after a backoff.
#[derive(Debug, Clone, Copy)]
enum Next {
    List,
    Watch,
}

/// The state machine behind the stream: each [`step`](State::step) hands
/// out one item.
struct State<K> {
    client: ResourceClient<K>,
    config: Config,
    backoff: Backoff,
    phase: Phase<K>,
    /// The objects of a list, handed out one per step.
    pending: VecDeque<Event<K>>,
    /// The last resourceVersion seen; the next watch starts after it.
    rv: String,
    /// The first list only learns the current version ([`retry_watcher`]
    /// from "now"), yielding nothing.
    version_only: bool,
}

impl<K: verbs::List + verbs::Watch> State<K> {
    fn new(client: ResourceClient<K>, config: Config, version_only: bool) -> Self {
        let rv = config.resource_version.clone().filter(|rv| !rv.is_empty() && rv != "0");
        State {
            client,
            backoff: Backoff::new(config.backoff),
            phase: if rv.is_some() { Phase::Watch } else { Phase::List },
            version_only: version_only && rv.is_none(),
            rv: rv.unwrap_or_default(),
            config,
            pending: VecDeque::new(),
        }
    }

    fn into_stream(self) -> impl Stream<Item = Result<Event<K>, Error>> + Send {
        // `unfold` keeps the step in progress inside the stream, which is
        // what makes `next()` cancel safe.
        futures_util::stream::unfold(self, |mut state| async move {
            let item = state.step().await?;
            Some((item, state))
        })
    }

    /// The next item; `None` once the stream has ended.
    async fn step(&mut self) -> Option<Result<Event<K>, Error>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(Ok(event));
            }
            match std::mem::replace(&mut self.phase, Phase::Done) {
                Phase::Done => return None,
                Phase::Backoff { until, then } => {
                    tokio::time::sleep_until(until).await;
                    self.phase = match then {
                        Next::List => Phase::List,
                        Next::Watch => Phase::Watch,
                    };
                }
                Phase::List => {
                    if let Err(e) = self.list().await {
                        self.phase = self.backoff(Next::List);
                        return Some(Err(Error::List(e)));
                    }
                    self.phase = Phase::Watch;
                }
                Phase::Watch => match self.client.watch(&self.watch_options()).await {
                    Ok(stream) => self.phase = Phase::Watching { stream, started: Instant::now(), events: 0 },
                    Err(e) if e.is_expired() => {
                        if let Some(err) = self.expired(e) {
                            return Some(Err(err));
                        }
                    }
                    Err(e) => {
                        self.phase = self.backoff(Next::Watch);
                        return Some(Err(Error::WatchStart(e)));
                    }
                },
                Phase::Watching { mut stream, started, events } => match stream.next().await {
                    Some(Ok(event)) => {
                        if events == 0 {
                            // The watch works: the next failure backs off afresh.
                            self.backoff.reset();
                        }
                        self.seen(&event);
                        self.phase = Phase::Watching { stream, started, events: events + 1 };
                        return Some(Ok(Event::Watch(event)));
                    }
                    Some(Err(e)) if e.is_probable_eof() => {
                        // Every complete event was delivered: a normal end.
                        tracing::debug!(error = %crate::ErrorChain(&e), "watcher: connection broke; watching again");
                        self.phase = self.watch_ended(started, events);
                    }
                    Some(Err(e)) if e.is_expired() => {
                        if let Some(err) = self.expired(e) {
                            return Some(Err(err));
                        }
                    }
                    Some(Err(e)) => {
                        self.phase = self.backoff(Next::Watch);
                        return Some(Err(Error::Watch(e)));
                    }
                    None => self.phase = self.watch_ended(started, events),
                },
            }
        }
    }

    /// Lists the current objects into `pending` (or only learns their
    /// version), moving the watch's start to the list's version.
    async fn list(&mut self) -> Result<(), rest::Error> {
        let mut opts = ListOptions {
            label_selector: self.config.list_options.label_selector.clone(),
            field_selector: self.config.list_options.field_selector.clone(),
            limit: self.config.list_options.limit,
            ..ListOptions::default()
        };
        // No resourceVersion: a consistent read, as fresh as any later watch.
        if self.version_only {
            opts.limit = Some(1);
            let list = self.client.list(&opts).await?;
            self.version_only = false;
            self.rv = list.metadata.resource_version.unwrap_or_default();
            return Ok(());
        }
        let list = self.client.list_all(&opts).await?;
        self.backoff.reset();
        self.rv = list.metadata.resource_version.unwrap_or_default();
        self.pending.push_back(Event::Init);
        self.pending.extend(list.items.into_iter().map(Event::InitApply));
        self.pending.push_back(Event::InitDone { resource_version: self.rv.clone() });
        Ok(())
    }

    fn watch_options(&self) -> ListOptions {
        ListOptions {
            label_selector: self.config.list_options.label_selector.clone(),
            field_selector: self.config.list_options.field_selector.clone(),
            timeout_seconds: self.config.list_options.timeout_seconds,
            resource_version: Some(self.rv.clone()),
            allow_watch_bookmarks: true,
            ..ListOptions::default()
        }
    }

    /// Moves the last seen version to `event`'s.
    fn seen(&mut self, event: &WatchEvent<K>) {
        let rv = match event {
            WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => {
                o.metadata().resource_version().unwrap_or_default()
            }
            WatchEvent::Bookmark(b) => &b.resource_version,
        };
        if !rv.is_empty() {
            rv.clone_into(&mut self.rv);
        }
    }

    /// 410 Gone: relist at once (a consistent list cannot be expired), or
    /// end with the error.
    fn expired(&mut self, e: rest::Error) -> Option<Error> {
        match self.config.on_expired {
            OnExpired::Relist => {
                tracing::debug!(resource_version = %self.rv, "watcher: resourceVersion expired; relisting");
                self.phase = Phase::List;
                None
            }
            OnExpired::Fail => {
                self.phase = Phase::Done;
                Some(Error::Expired { resource_version: self.rv.clone(), source: e })
            }
        }
    }

    /// A watch that ended: watch again from the last version, after a
    /// backoff if it ended at once with nothing (client-go's "very short
    /// watch"), so that a server closing watches is not hammered.
    fn watch_ended(&mut self, started: Instant, events: u64) -> Phase<K> {
        if events == 0 && started.elapsed() < Duration::from_secs(1) { self.backoff(Next::Watch) } else { Phase::Watch }
    }

    fn backoff(&mut self, then: Next) -> Phase<K> {
        let now = Instant::now();
        Phase::Backoff { until: now + self.backoff.next_delay(now), then }
    }
}
