//! The two calls a [`Reflector`](super::Reflector) makes to the apiserver,
//! as client-go's `ListerWatcher`.
//!
//! - A [`ResourceClient<K>`] is a [`ListWatch<K>`] as it is: lists and
//!   watches everything its namespace (or cluster scope) holds.
//! - [`FilteredListWatch`] adds a tweak of the [`ListOptions`] of every call
//!   (label/field selectors), as client-go's
//!   `NewFilteredListWatchFromClient`; generated per-kind informers use it.
//! - Implement [`ListWatch`] yourself to feed a reflector from anything
//!   else (tests script it this way).
//!
//! A reflector calls [`list_with`](ListWatch::list_with) and
//! [`watch_with`](ListWatch::watch_with), passing the [`DecodeOptions`] its
//! informer chose (skip `managedFields` unless they are kept): a
//! [`ResourceClient`] and a [`FilteredListWatch`] over one decode with them;
//! an implementation of your own may ignore them (the default does), since
//! the informer's transform drops what they would have skipped anyway.
//!
//! The methods return boxed futures so the trait stays object safe: an
//! informer holds an `Arc<dyn ListWatch<K>>` and its type does not depend
//! on where the objects come from. One allocation per list/watch call is
//! nothing next to the HTTP request.

use std::fmt;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::codec::DecodeOptions;
use crate::object::ObjectList;
use crate::rest::{self, ListOptions, ResourceClient, WatchStream};

/// Lists and watches objects of kind `K` (client-go `ListerWatcher`).
#[doc(alias = "ListerWatcher")]
pub trait ListWatch<K>: Send + Sync {
    /// One page of objects (or all, without `opts.limit`).
    ///
    /// # Cancel safety
    /// Dropping the future abandons the call; nothing was changed.
    fn list<'a>(&'a self, opts: &'a ListOptions) -> BoxFuture<'a, Result<ObjectList<K>, rest::Error>>;

    /// A watch from `opts.resource_version` on. `ERROR` events arrive as
    /// `Err` items of the stream.
    ///
    /// # Cancel safety
    /// Dropping the future abandons the call; nothing was changed.
    fn watch<'a>(&'a self, opts: &'a ListOptions) -> BoxFuture<'a, Result<WatchStream<K>, rest::Error>>;

    /// [`list`](Self::list), the objects decoded with `decode` where the
    /// source decodes them; the default ignores `decode`.
    ///
    /// # Cancel safety
    /// As [`list`](Self::list).
    fn list_with<'a>(
        &'a self,
        opts: &'a ListOptions,
        decode: DecodeOptions,
    ) -> BoxFuture<'a, Result<ObjectList<K>, rest::Error>> {
        let _ = decode;
        self.list(opts)
    }

    /// [`watch`](Self::watch), the objects decoded with `decode` where the
    /// source decodes them; the default ignores `decode`.
    ///
    /// # Cancel safety
    /// As [`watch`](Self::watch).
    fn watch_with<'a>(
        &'a self,
        opts: &'a ListOptions,
        decode: DecodeOptions,
    ) -> BoxFuture<'a, Result<WatchStream<K>, rest::Error>> {
        let _ = decode;
        self.watch(opts)
    }
}

/// Lists and watches with the client's own
/// [`decode_options`](ResourceClient::decode_options); given options as
/// well, it leaves out what either leaves out.
impl<K: crate::rest::verbs::List + crate::rest::verbs::Watch> ListWatch<K> for ResourceClient<K> {
    fn list<'a>(&'a self, opts: &'a ListOptions) -> BoxFuture<'a, Result<ObjectList<K>, rest::Error>> {
        Box::pin(ResourceClient::list(self, opts))
    }
    fn watch<'a>(&'a self, opts: &'a ListOptions) -> BoxFuture<'a, Result<WatchStream<K>, rest::Error>> {
        Box::pin(ResourceClient::watch(self, opts))
    }
    fn list_with<'a>(
        &'a self,
        opts: &'a ListOptions,
        decode: DecodeOptions,
    ) -> BoxFuture<'a, Result<ObjectList<K>, rest::Error>> {
        Box::pin(ResourceClient::list_with(self, opts, self.decode_options().skipping_also(decode)))
    }
    fn watch_with<'a>(
        &'a self,
        opts: &'a ListOptions,
        decode: DecodeOptions,
    ) -> BoxFuture<'a, Result<WatchStream<K>, rest::Error>> {
        Box::pin(ResourceClient::watch_with(self, opts, self.decode_options().skipping_also(decode)))
    }
}

impl<K, L: ListWatch<K> + ?Sized> ListWatch<K> for Arc<L> {
    fn list<'a>(&'a self, opts: &'a ListOptions) -> BoxFuture<'a, Result<ObjectList<K>, rest::Error>> {
        (**self).list(opts)
    }
    fn watch<'a>(&'a self, opts: &'a ListOptions) -> BoxFuture<'a, Result<WatchStream<K>, rest::Error>> {
        (**self).watch(opts)
    }
    fn list_with<'a>(
        &'a self,
        opts: &'a ListOptions,
        decode: DecodeOptions,
    ) -> BoxFuture<'a, Result<ObjectList<K>, rest::Error>> {
        (**self).list_with(opts, decode)
    }
    fn watch_with<'a>(
        &'a self,
        opts: &'a ListOptions,
        decode: DecodeOptions,
    ) -> BoxFuture<'a, Result<WatchStream<K>, rest::Error>> {
        (**self).watch_with(opts, decode)
    }
}

/// Changes the options of every list and watch call (client-go's
/// `optionsModifier`): set selectors here, never the resourceVersion or
/// paging fields the reflector owns.
pub type TweakListOptions = Arc<dyn Fn(&mut ListOptions) + Send + Sync>;

/// A [`ListWatch`] whose calls go through a [`TweakListOptions`] first
/// (client-go `NewFilteredListWatchFromClient`).
#[doc(alias = "NewFilteredListWatchFromClient")]
pub struct FilteredListWatch<L> {
    inner: L,
    tweak: TweakListOptions,
}

impl<L: fmt::Debug> fmt::Debug for FilteredListWatch<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilteredListWatch").field("inner", &self.inner).finish_non_exhaustive()
    }
}

impl<L> FilteredListWatch<L> {
    /// Wraps `inner` so each call's options pass through `tweak`.
    pub fn new(inner: L, tweak: impl Fn(&mut ListOptions) + Send + Sync + 'static) -> Self {
        FilteredListWatch { inner, tweak: Arc::new(tweak) }
    }

    /// Same, with a tweak already shared (as informer factories hold it).
    pub fn with_tweak(inner: L, tweak: TweakListOptions) -> Self {
        FilteredListWatch { inner, tweak }
    }

    /// The wrapped list/watch, which sees the tweaked options.
    pub fn inner(&self) -> &L {
        &self.inner
    }
}

impl<K, L: ListWatch<K>> ListWatch<K> for FilteredListWatch<L> {
    fn list<'a>(&'a self, opts: &'a ListOptions) -> BoxFuture<'a, Result<ObjectList<K>, rest::Error>> {
        let mut opts = opts.clone();
        (self.tweak)(&mut opts);
        Box::pin(async move { self.inner.list(&opts).await })
    }
    fn watch<'a>(&'a self, opts: &'a ListOptions) -> BoxFuture<'a, Result<WatchStream<K>, rest::Error>> {
        let mut opts = opts.clone();
        (self.tweak)(&mut opts);
        Box::pin(async move { self.inner.watch(&opts).await })
    }
    fn list_with<'a>(
        &'a self,
        opts: &'a ListOptions,
        decode: DecodeOptions,
    ) -> BoxFuture<'a, Result<ObjectList<K>, rest::Error>> {
        let mut opts = opts.clone();
        (self.tweak)(&mut opts);
        Box::pin(async move { self.inner.list_with(&opts, decode).await })
    }
    fn watch_with<'a>(
        &'a self,
        opts: &'a ListOptions,
        decode: DecodeOptions,
    ) -> BoxFuture<'a, Result<WatchStream<K>, rest::Error>> {
        let mut opts = opts.clone();
        (self.tweak)(&mut opts);
        Box::pin(async move { self.inner.watch_with(&opts, decode).await })
    }
}

/// A [`ListWatch`] that plays back scripted answers and records every
/// call, for the reflector and informer tests.
#[cfg(test)]
pub(crate) mod scripted {
    use std::collections::VecDeque;

    use futures_util::StreamExt as _;
    use parking_lot::Mutex;
    use tokio::time::Instant;

    use super::*;
    use crate::rest::{Status, WatchEvent};

    /// Which call was made.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Verb {
        List,
        Watch,
    }

    /// One recorded call.
    #[derive(Debug, Clone)]
    pub struct Call {
        pub verb: Verb,
        pub opts: ListOptions,
        /// The decode options the caller passed (the default through
        /// `list`/`watch`).
        pub decode: DecodeOptions,
        pub at: Instant,
    }

    /// A scripted watch answer: events, then either the end of the stream
    /// or (with `hang`) a stream that never ends.
    pub struct ScriptedWatch<K> {
        pub events: Vec<Result<WatchEvent<K>, rest::Error>>,
        pub hang: bool,
    }

    pub struct Scripted<K> {
        lists: Mutex<VecDeque<Result<ObjectList<K>, rest::Error>>>,
        watches: Mutex<VecDeque<Result<ScriptedWatch<K>, rest::Error>>>,
        pub calls: Mutex<Vec<Call>>,
    }

    impl<K> Default for Scripted<K> {
        fn default() -> Self {
            Scripted { lists: Mutex::default(), watches: Mutex::default(), calls: Mutex::default() }
        }
    }

    impl<K: Send + 'static> Scripted<K> {
        pub fn push_list(&self, answer: Result<ObjectList<K>, rest::Error>) {
            self.lists.lock().push_back(answer);
        }
        pub fn push_watch(&self, events: Vec<Result<WatchEvent<K>, rest::Error>>, hang: bool) {
            self.watches.lock().push_back(Ok(ScriptedWatch { events, hang }));
        }
        pub fn push_watch_err(&self, err: rest::Error) {
            self.watches.lock().push_back(Err(err));
        }
        pub fn calls(&self) -> Vec<Call> {
            self.calls.lock().clone()
        }
        fn record(&self, verb: Verb, opts: &ListOptions, decode: DecodeOptions) {
            self.calls.lock().push(Call { verb, opts: opts.clone(), decode, at: Instant::now() });
        }
    }

    impl<K: Send + Sync + 'static> ListWatch<K> for Scripted<K> {
        fn list<'a>(&'a self, opts: &'a ListOptions) -> BoxFuture<'a, Result<ObjectList<K>, rest::Error>> {
            self.list_with(opts, DecodeOptions::default())
        }
        fn watch<'a>(&'a self, opts: &'a ListOptions) -> BoxFuture<'a, Result<WatchStream<K>, rest::Error>> {
            self.watch_with(opts, DecodeOptions::default())
        }
        fn list_with<'a>(
            &'a self,
            opts: &'a ListOptions,
            decode: DecodeOptions,
        ) -> BoxFuture<'a, Result<ObjectList<K>, rest::Error>> {
            self.record(Verb::List, opts, decode);
            let answer = self.lists.lock().pop_front();
            Box::pin(async move {
                match answer {
                    Some(a) => a,
                    // Out of script: never answer, so a running reflector parks.
                    None => futures_util::future::pending().await,
                }
            })
        }
        fn watch_with<'a>(
            &'a self,
            opts: &'a ListOptions,
            decode: DecodeOptions,
        ) -> BoxFuture<'a, Result<WatchStream<K>, rest::Error>> {
            self.record(Verb::Watch, opts, decode);
            let answer = self.watches.lock().pop_front();
            Box::pin(async move {
                match answer {
                    Some(Ok(w)) => {
                        let events = futures_util::stream::iter(w.events);
                        Ok(if w.hang { events.chain(futures_util::stream::pending()).boxed() } else { events.boxed() })
                    }
                    Some(Err(e)) => Err(e),
                    None => futures_util::future::pending().await,
                }
            })
        }
    }

    /// An API error with `code` and `reason`.
    pub fn api_error(code: u16, reason: &str) -> rest::Error {
        rest::Error::Api(Box::new(Status { code, reason: reason.into(), message: reason.into(), ..Status::default() }))
    }

    /// A list page.
    pub fn page<K>(items: Vec<K>, rv: &str, continue_: Option<&str>) -> ObjectList<K> {
        ObjectList {
            metadata: crate::object::ListMeta {
                resource_version: Some(rv.into()),
                continue_: continue_.map(Into::into),
                ..Default::default()
            },
            items,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::scripted::*;
    use super::*;
    use crate::testing::Pod;

    #[tokio::test]
    async fn filtered_list_watch_tweaks_every_call() {
        let inner = Arc::new(Scripted::<Pod>::default());
        inner.push_list(Ok(page(vec![], "1", None)));
        inner.push_watch(vec![], false);
        let lw = FilteredListWatch::new(Arc::clone(&inner), |o: &mut ListOptions| {
            o.label_selector = Some("app=web".into());
        });
        let opts = ListOptions { resource_version: Some("0".into()), ..Default::default() };
        lw.list(&opts).await.unwrap();
        let _ = lw.watch(&opts).await.unwrap();
        let calls = inner.calls();
        assert_eq!(calls.len(), 2);
        for c in calls {
            assert_eq!(c.opts.label_selector.as_deref(), Some("app=web"));
            assert_eq!(c.opts.resource_version.as_deref(), Some("0"));
            assert_eq!(c.decode, DecodeOptions::KEEP_ALL);
        }
    }

    #[tokio::test]
    async fn filtered_list_watch_passes_the_decode_options_on() {
        let inner = Arc::new(Scripted::<Pod>::default());
        inner.push_list(Ok(page(vec![], "1", None)));
        inner.push_watch(vec![], false);
        let lw = FilteredListWatch::new(Arc::clone(&inner), |o: &mut ListOptions| o.limit = Some(7));
        let skip = DecodeOptions::WITHOUT_MANAGED_FIELDS;
        lw.list_with(&ListOptions::default(), skip).await.unwrap();
        let _ = lw.watch_with(&ListOptions::default(), skip).await.unwrap();
        let calls = inner.calls();
        assert_eq!(
            calls.iter().map(|c| (c.verb, c.decode, c.opts.limit)).collect::<Vec<_>>(),
            [(Verb::List, skip, Some(7)), (Verb::Watch, skip, Some(7))]
        );
    }
}
