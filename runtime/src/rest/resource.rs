//! [`ResourceClient<K>`]: every verb of one resource, written once.
//!
//! The same type serves a generated kind (`ResourceClient<Pod>`, which the
//! generated ClientSet hands out as `PodClient`), an object type known only
//! at run time ([`DynamicClient`](crate::dynamic::DynamicClient) is
//! `ResourceClient<DynamicObject>`), or any other representation of a
//! resource's objects (see [`ResourceClient::for_resource`]). Subresources
//! come as generic `*_subresource` methods, plus typed ones for kinds that
//! declare them through the marker traits of [`subresource`](super::subresource).

use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::Client;
use super::content::{ACCEPT_PROTOBUF, Format, PROTOBUF, envelope, protobuf_error};
use super::error::{Error, Status};
use super::options::{
    ApplyOptions, CreateOptions, DeleteOptions, GetOptions, ListOptions, Patch, PatchOptions, UpdateOptions,
};
use super::request::Request;
use super::target::Target;
use super::verbs;
use super::watch::{WatchEvent, WatchStream, protobuf_watch_stream, watch_stream_with};
use crate::apply::ApplyConfiguration;
use crate::codec::{DecodeOptions, DecodeWith};
use crate::config::ContentType;
use crate::object::{DynamicResource, Metadata as _, Object, ObjectList, Resource};
use crate::protobuf::{Codec, Envelope};

/// Bounds every object type used with [`ResourceClient`] meets. Lists and
/// watches decode objects with [`DecodeOptions`] ([`DecodeWith`]): generated
/// kinds and the dynamic object have it; a hand-written kind gets it from
/// [`deserialize_then_apply`](crate::object::deserialize_then_apply).
pub trait ClientObject: Object + Serialize + DeserializeOwned + DecodeWith + Clone + Send + Sync + 'static {}
impl<K: Object + Serialize + DeserializeOwned + DecodeWith + Clone + Send + Sync + 'static> ClientObject for K {}

/// What `delete` returns: the apiserver answers with the object when it is
/// not gone yet (finalizers, graceful deletion; some resources always do)
/// or with a success Status.
// Not boxed: callers match on it directly, and it lives only briefly.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum DeleteResult<K> {
    /// The object, still present (being deleted).
    Object(K),
    /// The object is gone.
    Status(Status),
}

impl<K> DeleteResult<K> {
    /// The object, when the server answered with one.
    pub fn object(self) -> Option<K> {
        match self {
            DeleteResult::Object(k) => Some(k),
            DeleteResult::Status(_) => None,
        }
    }
}

/// The client of one resource's objects `K` in one namespace, in all
/// namespaces, or at cluster scope (client-go's generic
/// `gentype.ClientWithListAndApply`; kube-rs's `Api<K>`).
///
/// For cluster-scoped resources the namespace is ignored and never put in
/// the path. A namespaced resource's client for all namespaces lists and
/// watches across namespaces; single-object calls then need the object's
/// `metadata.namespace` (create/update) or fail with
/// [`Error::InvalidRequest`] (get/patch/apply/delete by name).
///
/// # Cancel safety
/// Every async method is cancel safe in the sense of
/// [`Request::send`](super::Request::send): dropping the future abandons
/// the request; a write may or may not have reached the server.
pub struct ResourceClient<K> {
    pub(super) target: Target,
    /// What [`list`](Self::list), [`list_all`](Self::list_all) and
    /// [`watch`](Self::watch) leave out while decoding.
    decode: DecodeOptions,
    /// The kind's protobuf codec when its requests negotiate protobuf
    /// (see the [module docs](super#content-types)); `None`: JSON only.
    protobuf: Option<Codec<K>>,
    _kind: PhantomData<fn() -> K>,
}

impl<K> Clone for ResourceClient<K> {
    fn clone(&self) -> Self {
        ResourceClient { target: self.target.clone(), decode: self.decode, protobuf: self.protobuf, _kind: PhantomData }
    }
}

impl<K> std::fmt::Debug for ResourceClient<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceClient")
            .field("resource", &format_args!("{}/{}", self.target.prefix, self.target.resource.plural))
            .field("namespace", &self.target.namespace)
            .finish()
    }
}

impl<K: ClientObject + Resource> ResourceClient<K> {
    /// The client of kind `K`; namespace `None` (or empty) = all namespaces
    /// (or cluster scope). It speaks protobuf when `K` does
    /// ([`Resource::PROTOBUF`]) and the client's
    /// [`content_type`](Client::content_type) is
    /// [`ContentType::Protobuf`], JSON otherwise.
    #[must_use]
    pub fn new(client: Client, namespace: Option<&str>) -> Self {
        let protobuf = K::PROTOBUF.filter(|_| client.content_type() == ContentType::Protobuf);
        ResourceClient { protobuf, ..Self::for_resource(client, &DynamicResource::of::<K>(), namespace) }
    }
    /// Objects in `namespace` (ignored for cluster-scoped kinds).
    #[must_use]
    pub fn namespaced(client: Client, namespace: &str) -> Self {
        Self::new(client, Some(namespace))
    }
    /// The namespace of the client's kubeconfig context / service account.
    #[must_use]
    pub fn default_namespaced(client: Client) -> Self {
        let ns = client.default_namespace().to_owned();
        Self::new(client, Some(&ns))
    }
    /// All namespaces, or cluster scope.
    #[must_use]
    pub fn all(client: Client) -> Self {
        Self::new(client, None)
    }
}

impl<K: ClientObject> ResourceClient<K> {
    /// The client of `resource`, whose objects decode as `K`: the dynamic
    /// client, or a kind served under another group/version than `K`'s own.
    /// It speaks JSON, or protobuf for a type read from any resource that
    /// has a codec ([`Object::protobuf_as`]) when the client's
    /// [`content_type`](Client::content_type) is protobuf.
    #[must_use]
    pub fn for_resource(client: Client, resource: &DynamicResource, namespace: Option<&str>) -> Self {
        // A type read from any resource may speak protobuf (the metadata-only one).
        let protobuf = K::protobuf_as().map(|as_| as_.codec).filter(|_| client.content_type() == ContentType::Protobuf);
        ResourceClient {
            target: Target::new(client, resource.clone(), namespace),
            decode: DecodeOptions::default(),
            protobuf,
            _kind: PhantomData,
        }
    }

    /// The `Accept` header of a request negotiating protobuf: `K`'s own
    /// representation ([`Object::protobuf_as`]) for one object or a `list`,
    /// else protobuf then JSON.
    fn protobuf_accept(list: bool) -> &'static str {
        match K::protobuf_as() {
            Some(as_) if list => as_.accept.list,
            Some(as_) => as_.accept.object,
            None => ACCEPT_PROTOBUF,
        }
    }

    /// The wire format this client's requests ask for:
    /// [`ContentType::Protobuf`] when they negotiate protobuf (the kind
    /// speaks it and the client was configured for it), else
    /// [`ContentType::Json`].
    pub fn content_type(&self) -> ContentType {
        if self.protobuf.is_some() { ContentType::Protobuf } else { ContentType::Json }
    }

    /// `request` sent accepting protobuf, its answer decoded by its
    /// `Content-Type`: JSON by `json`, protobuf by `protobuf` from the
    /// body's envelope.
    async fn negotiate<T>(
        request: Request,
        accept: &str,
        json: impl FnOnce(&[u8], &str) -> Result<T, Error>,
        protobuf: impl FnOnce(&Envelope<'_>, &str) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let (body, format, what) = request.accept(accept).negotiated_bytes().await?;
        match format {
            Format::Json => json(&body, &what),
            Format::Protobuf => protobuf(&envelope(&body, &what)?, &what),
        }
    }

    /// One object in the answer to `request`: through `codec` when it came
    /// as protobuf, as JSON otherwise.
    async fn negotiate_object(request: Request, codec: Codec<K>) -> Result<K, Error> {
        let options = DecodeOptions::default();
        Self::negotiate(
            request,
            Self::protobuf_accept(false),
            |body, what| decode_json_as(body, what, options),
            |envelope, what| codec.decode(envelope.raw, options).map_err(protobuf_error(what)),
        )
        .await
    }

    /// The object `request` answers with: asked for as protobuf when this
    /// client speaks it (the body stays as built), else as JSON.
    pub(super) async fn object_answer(&self, request: Request) -> Result<K, Error> {
        match self.protobuf {
            Some(codec) => Self::negotiate_object(request, codec).await,
            None => Self::accepting_object(request).json().await,
        }
    }

    /// `request`, a JSON one for one object, asking for `K`'s own
    /// representation when it has one ([`Object::accept_as`]).
    fn accepting_object(request: Request) -> Request {
        match K::accept_as() {
            Some(accept) => request.accept(accept.object),
            None => request,
        }
    }

    /// `request`, a JSON one for a list, asking for `K`'s own list
    /// representation when it has one ([`Object::accept_as`]).
    fn accepting_list(request: Request) -> Request {
        match K::accept_as() {
            Some(accept) => request.accept(accept.list),
            None => request,
        }
    }

    /// Sends `obj` to the object (or `subresource`) with `method`: as
    /// protobuf when this client speaks it, else as JSON.
    pub(super) async fn write_object(
        &self,
        method: http::Method,
        subresource: &str,
        obj: &K,
        opts: &super::WriteOptions,
    ) -> Result<K, Error> {
        let Some(codec) = self.protobuf else {
            return self.write(method, self.object_name(obj)?, subresource, object_namespace(obj), obj, opts).await;
        };
        let request = self.target.item(method, self.object_name(obj)?, subresource, object_namespace(obj))?;
        let body = self.encode(&codec, obj);
        Self::negotiate_object(request.params(opts.query_pairs()).body(body, PROTOBUF), codec).await
    }

    /// `obj` in its envelope, as a request body.
    fn encode(&self, codec: &Codec<K>, obj: &K) -> Vec<u8> {
        codec.encode_object(&self.target.resource.api_version(), &self.target.resource.kind, obj)
    }

    /// This client's [`list`](Self::list), [`list_all`](Self::list_all) and
    /// [`watch`](Self::watch) skip every object's `metadata.managedFields`
    /// while decoding, leaving them `None`: for a cache that would drop
    /// them, the time and memory of reading them are spared. (Informers
    /// need not be given such a client: they ask for it themselves, see
    /// [`InformerBuilder`](crate::cache::InformerBuilder).)
    #[must_use]
    pub fn without_managed_fields(mut self) -> Self {
        self.decode = self.decode.skipping_also(DecodeOptions::WITHOUT_MANAGED_FIELDS);
        self
    }

    /// What this client's [`list`](Self::list), [`list_all`](Self::list_all)
    /// and [`watch`](Self::watch) leave out while decoding (the default:
    /// nothing).
    pub fn decode_options(&self) -> DecodeOptions {
        self.decode
    }

    /// The client of the resource serving `kind` of `api_version` (`apps/v1`,
    /// `v1`: an object's `apiVersion`), found through `mapper`, which
    /// discovers again if the kind is not known yet (a CRD just installed).
    ///
    /// # Cancel safety
    /// Cancel safe: it only reads discovery.
    pub async fn for_kind(
        client: Client,
        mapper: &crate::discovery::RestMapper,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Self, crate::discovery::MappingError> {
        let gv = crate::object::GroupVersion::parse(api_version);
        let mapping = mapper.mapping(gv.group, kind, Some(gv.version)).await?;
        Ok(Self::for_resource(client, &mapping.resource, namespace))
    }

    /// The client of `resource` in `namespace`.
    #[must_use]
    pub fn namespaced_with(client: Client, namespace: &str, resource: &DynamicResource) -> Self {
        Self::for_resource(client, resource, Some(namespace))
    }

    /// The client of `resource` in all namespaces, or at cluster scope.
    #[must_use]
    pub fn all_with(client: Client, resource: &DynamicResource) -> Self {
        Self::for_resource(client, resource, None)
    }

    /// The namespace requests go to; `None` for all namespaces or cluster scope.
    pub fn namespace(&self) -> Option<&str> {
        self.target.namespace.as_deref()
    }
    /// The REST client underneath.
    pub fn client(&self) -> &Client {
        &self.target.client
    }
    /// The group/version/kind/plural/scope this client talks to.
    pub fn resource(&self) -> &DynamicResource {
        &self.target.resource
    }

    fn fill_type(&self, obj: &mut K) {
        obj.set_type_meta(&self.target.resource.api_version(), &self.target.resource.kind);
    }

    /// `obj`'s name, which calls about one object need.
    pub(crate) fn object_name<'o>(&self, obj: &'o K) -> Result<&'o str, Error> {
        obj.metadata().name().filter(|n| !n.is_empty()).ok_or_else(|| Error::InvalidRequest {
            what: format!("{} object", self.target.resource.kind),
            message: "metadata.name is not set".into(),
        })
    }
}

/// Reads, for a kind whose resource serves `get`.
impl<K: verbs::Get> ResourceClient<K> {
    /// Reads the object `name`.
    pub async fn get(&self, name: &str, opts: &GetOptions) -> Result<K, Error> {
        let request = self.target.item(http::Method::GET, name, "", None)?.params(opts.query_pairs());
        self.object_answer(request).await
    }

    /// `get`, with `Ok(None)` for 404 Not Found.
    pub async fn get_opt(&self, name: &str, opts: &GetOptions) -> Result<Option<K>, Error> {
        match self.get(name, opts).await {
            Ok(obj) => Ok(Some(obj)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Lists, for a kind whose resource serves `list`.
impl<K: verbs::List> ResourceClient<K> {
    /// One page (or all, without `limit`) of objects; follow
    /// `metadata.continue_` for the next page, or use [`list_all`](Self::list_all).
    pub async fn list(&self, opts: &ListOptions) -> Result<ObjectList<K>, Error> {
        self.list_with(opts, self.decode).await
    }

    /// [`list`](Self::list), the objects decoded with `decode` instead of
    /// the client's own [`decode_options`](Self::decode_options).
    pub async fn list_with(&self, opts: &ListOptions, decode: DecodeOptions) -> Result<ObjectList<K>, Error> {
        let request = self.target.collection(http::Method::GET, None).params(opts.query_pairs(false));
        let mut list: ObjectList<K> = match self.protobuf {
            Some(codec) => {
                Self::negotiate(
                    request,
                    Self::protobuf_accept(true),
                    |body, what| decode_json_as(body, what, decode),
                    |envelope, what| {
                        ObjectList::decode_protobuf(envelope.raw, &codec, decode).map_err(protobuf_error(what))
                    },
                )
                .await?
            }
            None => Self::accepting_list(request).json_with(decode).await?,
        };
        if !list.items.is_empty() {
            let api_version = self.target.resource.api_version();
            for item in &mut list.items {
                item.set_type_meta(&api_version, &self.target.resource.kind);
            }
        }
        Ok(list)
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

    /// A list decoded as another list type (e.g. the generated `PodList`).
    pub async fn list_as<L: DeserializeOwned>(&self, opts: &ListOptions) -> Result<L, Error> {
        let request = self.target.collection(http::Method::GET, None).params(opts.query_pairs(false));
        Self::accepting_list(request).json().await
    }
}

/// Watches, for a kind whose resource serves `watch`.
impl<K: verbs::Watch> ResourceClient<K> {
    /// Watch events from `opts.resource_version` on. No client-side timeout;
    /// use `opts.timeout_seconds` to bound it server-side. One request: it
    /// ends with the connection; [`watcher`](crate::watcher::watcher)
    /// watches on from where it ended.
    pub async fn watch(&self, opts: &ListOptions) -> Result<WatchStream<K>, Error> {
        self.watch_with(opts, self.decode).await
    }

    /// [`watch`](Self::watch), the objects decoded with `decode` instead of
    /// the client's own [`decode_options`](Self::decode_options).
    pub async fn watch_with(&self, opts: &ListOptions, decode: DecodeOptions) -> Result<WatchStream<K>, Error> {
        use futures_util::StreamExt as _;
        let request = self.target.collection(http::Method::GET, None).params(opts.query_pairs(true));
        let stream: WatchStream<K> = match self.protobuf {
            Some(codec) => {
                let what = format!("GET {} watch", request.path_and_query());
                let response = request.accept(Self::protobuf_accept(false)).no_timeout().send().await?;
                let max = self.target.client.inner.max_watch_event_size;
                match super::content::response_format(response.headers(), &[], &what)? {
                    Format::Protobuf => protobuf_watch_stream(super::client::body_stream(response), max, codec, decode),
                    Format::Json => watch_stream_with(super::client::body_stream(response), max, decode),
                }
            }
            None => Self::accepting_object(request).watch_with(decode).await?,
        };
        let this = self.clone();
        Ok(stream
            .map(move |event| {
                event.map(|mut e| {
                    if let WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) = &mut e {
                        this.fill_type(o);
                    }
                    e
                })
            })
            .boxed())
    }
}

/// Creates, for a kind whose resource serves `create`.
impl<K: verbs::Create> ResourceClient<K> {
    /// Creates `obj` (in this client's namespace, else `obj`'s).
    pub async fn create(&self, obj: &K, opts: &CreateOptions) -> Result<K, Error> {
        let ns = object_namespace(obj);
        self.target.check_create(ns)?;
        let request = self.target.collection(http::Method::POST, ns).params(opts.query_pairs());
        match self.protobuf {
            Some(codec) => Self::negotiate_object(request.body(self.encode(&codec, obj), PROTOBUF), codec).await,
            None => request.json_body(obj).json().await,
        }
    }
}

/// Replaces, for a kind whose resource serves `update`.
impl<K: verbs::Update> ResourceClient<K> {
    /// Replaces the object named by `obj.metadata.name`; set
    /// `metadata.resourceVersion` for optimistic concurrency.
    pub async fn update(&self, obj: &K, opts: &UpdateOptions) -> Result<K, Error> {
        self.write_object(http::Method::PUT, "", obj, opts).await
    }
}

/// Patches and applies, for a kind whose resource serves `patch`.
impl<K: verbs::Patch> ResourceClient<K> {
    /// Patches the object `name` (JSON, merge or strategic-merge patch).
    /// The patch is JSON; the answer comes as protobuf when this client
    /// speaks it.
    pub async fn patch(&self, name: &str, patch: &Patch, opts: &PatchOptions) -> Result<K, Error> {
        self.object_answer(self.patch_request(name, "", patch, opts)?).await
    }

    /// Server-side apply of `config` to the object `name`: `K`'s generated
    /// apply configuration (`DeploymentApply`, only the fields you set), `K`
    /// itself, or raw JSON; see [`apply`](crate::apply) for which. The
    /// configuration is sent as JSON; the answer comes as protobuf when this
    /// client speaks it. Another manager's conflicting fields are a 409
    /// ([`Error::is_conflict`]) naming them, unless `opts` forces.
    pub async fn apply<B: ApplyConfiguration<K> + ?Sized>(
        &self,
        name: &str,
        config: &B,
        opts: &ApplyOptions,
    ) -> Result<K, Error> {
        self.object_answer(self.apply_request(name, "", config, opts)?).await
    }
}

/// Deletes, for a kind whose resource serves `delete`.
impl<K: verbs::Delete> ResourceClient<K> {
    /// Deletes the object `name`; the server answers with the object (when
    /// finalizers keep it) or a Status.
    pub async fn delete(&self, name: &str, opts: &DeleteOptions) -> Result<DeleteResult<K>, Error> {
        let request = self.target.item(http::Method::DELETE, name, "", None)?.json_body(&opts.to_body());
        let Some(codec) = self.protobuf else {
            return decode_delete(&Self::accepting_object(request).bytes().await?, "delete response");
        };
        Self::negotiate(request, Self::protobuf_accept(false), decode_delete, |envelope, what| {
            delete_result(envelope, what, |raw| codec.decode(raw, DecodeOptions::default()))
        })
        .await
    }
}

/// Deletes collections, for a kind whose resource serves `deletecollection`.
impl<K: verbs::DeleteCollection> ResourceClient<K> {
    /// Deletes every object matching `list`'s selectors.
    pub async fn delete_collection(
        &self,
        opts: &DeleteOptions,
        list: &ListOptions,
    ) -> Result<DeleteResult<ObjectList<K>>, Error> {
        let request = self
            .target
            .collection(http::Method::DELETE, None)
            .params(list.query_pairs(false))
            .json_body(&opts.to_body());
        let Some(codec) = self.protobuf else {
            return decode_delete(&Self::accepting_list(request).bytes().await?, "deletecollection response");
        };
        Self::negotiate(request, Self::protobuf_accept(true), decode_delete, |envelope, what| {
            delete_result(envelope, what, |raw| ObjectList::decode_protobuf(raw, &codec, DecodeOptions::default()))
        })
        .await
    }
}

/// `metadata.namespace` when set and not empty.
pub(super) fn object_namespace<K: Object>(obj: &K) -> Option<&str> {
    obj.metadata().namespace().filter(|n| !n.is_empty())
}

/// A JSON body decoded with `options`, errors naming `what`.
fn decode_json_as<T: DecodeWith>(body: &[u8], what: &str, options: DecodeOptions) -> Result<T, Error> {
    crate::codec::decode_json_with(body, options).map_err(|source| Error::Decode { what: what.to_owned(), source })
}

/// What a protobuf delete answered: a Status (envelope kind `Status`), or
/// the object `object` decodes.
fn delete_result<T>(
    envelope: &Envelope<'_>,
    what: &str,
    object: impl FnOnce(&[u8]) -> Result<T, crate::protobuf::Error>,
) -> Result<DeleteResult<T>, Error> {
    if envelope.kind == "Status" {
        return Ok(DeleteResult::Status(Status::from_envelope(envelope).map_err(protobuf_error(what))?));
    }
    Ok(DeleteResult::Object(object(envelope.raw).map_err(protobuf_error(what))?))
}

fn decode_delete<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<DeleteResult<T>, Error> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Probe {
        #[serde(default)]
        kind: Option<String>,
        #[serde(default)]
        api_version: Option<String>,
    }
    let decode = |source| Error::Decode { what: what.to_owned(), source };
    let probe: Probe = crate::codec::decode_json(bytes).map_err(decode)?;
    if probe.kind.as_deref() == Some("Status") && probe.api_version.as_deref().is_none_or(|v| v == "v1") {
        return Ok(DeleteResult::Status(crate::codec::decode_json(bytes).map_err(decode)?));
    }
    Ok(DeleteResult::Object(crate::codec::decode_json(bytes).map_err(decode)?))
}
