//! [`ResourceClient<K>`]: every verb of one kind, typed. The generated
//! ClientSet's per-kind clients are thin wrappers over it.

use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::error::Error;
use super::options::{ApplyOptions, CreateOptions, DeleteOptions, GetOptions, ListOptions, Patch, PatchOptions, UpdateOptions};
use super::target::{DeleteResult, Target};
use super::watch::{ByteStream, WatchStream};
use super::Client;
use crate::object::{Object, ObjectList, Scope};

/// Bounds every kind used with [`ResourceClient`] meets.
pub trait ClientObject: Object + Serialize + DeserializeOwned + Clone + Send + Sync + 'static {}
impl<K: Object + Serialize + DeserializeOwned + Clone + Send + Sync + 'static> ClientObject for K {}

/// The typed client of kind `K` in one namespace, in all namespaces, or at
/// cluster scope (client-go's generated `PodInterface` & co., generic).
///
/// For cluster-scoped kinds the namespace is ignored and never put in the
/// path. A namespaced kind's client made with [`ResourceClient::all`]
/// lists and watches across namespaces; single-object calls then need the
/// object's `metadata.namespace` (create/update/apply) or fail with
/// `Error::InvalidRequest` (get/patch/delete by name).
pub struct ResourceClient<K> {
    target: Target,
    _kind: PhantomData<fn() -> K>,
}

impl<K> Clone for ResourceClient<K> {
    fn clone(&self) -> Self {
        ResourceClient { target: self.target.clone(), _kind: PhantomData }
    }
}

impl<K> std::fmt::Debug for ResourceClient<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceClient")
            .field("resource", &format_args!("{}/{}", self.target.prefix, self.target.plural))
            .field("namespace", &self.target.namespace)
            .finish()
    }
}

fn meta_ns<K: Object>(obj: &K) -> Option<&str> {
    use crate::object::Metadata as _;
    obj.metadata().namespace().filter(|n| !n.is_empty())
}

fn meta_name<K: Object>(obj: &K) -> Result<&str, Error> {
    use crate::object::Metadata as _;
    obj.metadata().name().filter(|n| !n.is_empty()).ok_or_else(|| Error::InvalidRequest {
        what: format!("{} object", K::KIND),
        message: "metadata.name is not set".into(),
    })
}

impl<K: ClientObject> ResourceClient<K> {
    /// Namespace `None` = all namespaces (or cluster scope).
    pub fn new(client: Client, namespace: Option<&str>) -> Self {
        let namespaced = K::SCOPE == Scope::Namespaced;
        ResourceClient {
            target: Target {
                client,
                prefix: K::api_prefix(),
                plural: K::PLURAL.to_owned(),
                namespaced,
                namespace: namespace.filter(|n| namespaced && !n.is_empty()).map(str::to_owned),
            },
            _kind: PhantomData,
        }
    }
    /// Objects in `namespace` (ignored for cluster-scoped kinds).
    pub fn namespaced(client: Client, namespace: &str) -> Self {
        Self::new(client, Some(namespace))
    }
    /// The namespace of the client's kubeconfig context / service account.
    pub fn default_namespaced(client: Client) -> Self {
        let ns = client.default_namespace().to_owned();
        Self::new(client, Some(&ns))
    }
    /// All namespaces, or cluster scope.
    pub fn all(client: Client) -> Self {
        Self::new(client, None)
    }

    pub fn namespace(&self) -> Option<&str> {
        self.target.namespace.as_deref()
    }
    pub fn client(&self) -> &Client {
        &self.target.client
    }

    /// # Cancel safety
    /// All async methods of this type are cancel safe in the sense of
    /// [`Request::send`](super::Request::send): dropping the future abandons
    /// the request; a write may or may not have reached the server.
    pub async fn get(&self, name: &str, opts: &GetOptions) -> Result<K, Error> {
        self.target.get(name, "", opts).await
    }

    /// `get`, with `Ok(None)` for 404 Not Found.
    pub async fn get_opt(&self, name: &str, opts: &GetOptions) -> Result<Option<K>, Error> {
        match self.get(name, opts).await {
            Ok(obj) => Ok(Some(obj)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// One page (or all, without `limit`) of objects.
    pub async fn list(&self, opts: &ListOptions) -> Result<ObjectList<K>, Error> {
        self.target.list(opts).await
    }

    /// Every object, fetched in pages of `opts.limit` (default 500) and
    /// joined, like client-go's `pager.List`: when a continue token has
    /// expired (410) the list is fetched again in one piece. The returned
    /// list carries the resourceVersion of the last page.
    pub async fn list_all(&self, opts: &ListOptions) -> Result<ObjectList<K>, Error> {
        let mut page_opts = opts.clone();
        page_opts.limit = Some(opts.limit.unwrap_or(500));
        let mut all: ObjectList<K> = ObjectList { metadata: Default::default(), items: Vec::new() };
        loop {
            let page = match self.list(&page_opts).await {
                Ok(page) => page,
                Err(e) if page_opts.continue_token.is_some() && e.is_resource_expired() => {
                    let full = ListOptions { limit: None, continue_token: None, ..opts.clone() };
                    return self.list(&full).await;
                }
                Err(e) => return Err(e),
            };
            all.items.extend(page.items);
            all.metadata = page.metadata;
            match all.metadata.continue_.take().filter(|c| !c.is_empty()) {
                Some(token) => {
                    page_opts.continue_token = Some(token);
                    // The server pins later pages to the first page's version.
                    page_opts.resource_version = None;
                    page_opts.resource_version_match = None;
                }
                None => return Ok(all),
            }
        }
    }

    /// A list decoded as a concrete list type (e.g. the generated `PodList`).
    pub async fn list_as<L: DeserializeOwned>(&self, opts: &ListOptions) -> Result<L, Error> {
        self.target.list(opts).await
    }

    /// Watch events from `opts.resource_version` on. No client-side timeout;
    /// use `opts.timeout_seconds` to bound it server-side.
    pub async fn watch(&self, opts: &ListOptions) -> Result<WatchStream<K>, Error> {
        self.target.watch(opts).await
    }

    /// Creates `obj` (in this client's namespace, else `obj`'s).
    pub async fn create(&self, obj: &K, opts: &CreateOptions) -> Result<K, Error> {
        self.target.create(meta_ns(obj), obj, opts).await
    }

    /// Replaces the object named by `obj.metadata.name`; set
    /// `metadata.resourceVersion` for optimistic concurrency.
    pub async fn update(&self, obj: &K, opts: &UpdateOptions) -> Result<K, Error> {
        self.target.replace(meta_name(obj)?, "", meta_ns(obj), obj, opts).await
    }

    pub async fn patch(&self, name: &str, patch: &Patch, opts: &PatchOptions) -> Result<K, Error> {
        self.target.patch(name, "", patch, opts).await
    }

    /// Server-side apply of `config` (a `K` or any JSON-shaped partial object).
    pub async fn apply<B: Serialize + ?Sized>(&self, name: &str, config: &B, opts: &ApplyOptions) -> Result<K, Error> {
        self.target.apply(name, "", None, config, opts).await
    }

    pub async fn delete(&self, name: &str, opts: &DeleteOptions) -> Result<DeleteResult<K>, Error> {
        self.target.delete(name, opts).await
    }

    /// Deletes every object matching `list`'s selectors.
    pub async fn delete_collection(
        &self,
        opts: &DeleteOptions,
        list: &ListOptions,
    ) -> Result<DeleteResult<ObjectList<K>>, Error> {
        self.target.delete_collection(opts, list).await
    }

    /// `GET .../name/subresource` with query `params` (a flat struct such as
    /// a generated `*Options`, a slice of pairs, or `&()`).
    pub async fn get_subresource<R: DeserializeOwned, P: Serialize + ?Sized>(
        &self,
        name: &str,
        subresource: &str,
        params: &P,
    ) -> Result<R, Error> {
        self.target.get_with(name, subresource, params).await
    }

    /// `POST .../name/subresource` (eviction, token, binding).
    pub async fn create_subresource<B: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: &str,
        body: &B,
        opts: &CreateOptions,
    ) -> Result<R, Error> {
        self.target.create_sub(name, subresource, body, opts).await
    }

    /// `PUT .../name/subresource` (status, scale, finalize).
    pub async fn update_subresource<B: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: &str,
        body: &B,
        opts: &UpdateOptions,
    ) -> Result<R, Error> {
        self.target.replace(name, subresource, None, body, opts).await
    }

    pub async fn patch_subresource<R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: &str,
        patch: &Patch,
        opts: &PatchOptions,
    ) -> Result<R, Error> {
        self.target.patch(name, subresource, patch, opts).await
    }

    /// Server-side apply to a subresource (`status`).
    pub async fn apply_subresource<B: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: &str,
        config: &B,
        opts: &ApplyOptions,
    ) -> Result<R, Error> {
        self.target.apply(name, subresource, None, config, opts).await
    }

    /// A subresource's body as a byte stream (`log` with `follow=true`).
    pub async fn stream_subresource<P: Serialize + ?Sized>(
        &self,
        name: &str,
        subresource: &str,
        params: &P,
    ) -> Result<ByteStream, Error> {
        self.target.stream_sub(name, subresource, params).await
    }

    /// `update_subresource(name, "status", obj)` with the name from `obj`.
    pub async fn update_status(&self, obj: &K, opts: &UpdateOptions) -> Result<K, Error> {
        self.target.replace(meta_name(obj)?, "status", meta_ns(obj), obj, opts).await
    }
}
