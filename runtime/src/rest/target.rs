//! The verbs of one REST resource, written once over the object type, so
//! the typed [`ResourceClient`](super::ResourceClient) and the dynamic
//! client share every request.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::error::{Error, Status};
use super::options::{ApplyOptions, DeleteOptions, GetOptions, ListOptions, Patch, WriteOptions};
use super::request::Request;
use super::watch::{ByteStream, WatchStream};
use super::Client;

/// What `delete` returns: the apiserver answers with the object when it is
/// not gone yet (finalizers, graceful deletion; some resources always do)
/// or with a success Status.
// Not boxed: callers match on it directly, and it lives only briefly.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum DeleteResult<K> {
    Object(K),
    Status(Status),
}

impl<K> DeleteResult<K> {
    pub fn object(self) -> Option<K> {
        match self {
            DeleteResult::Object(k) => Some(k),
            DeleteResult::Status(_) => None,
        }
    }
}

/// group/version prefix, plural, scope, and the namespace requests go to.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    pub client: Client,
    pub prefix: String,
    pub plural: String,
    pub namespaced: bool,
    /// `None`: all namespaces (or cluster scope).
    pub namespace: Option<String>,
}

fn missing(what: &str) -> Error {
    Error::InvalidRequest { what: what.to_owned(), message: "must not be empty".into() }
}

impl Target {
    fn base(&self, method: http::Method, namespace: Option<&str>) -> Request {
        let req = self.client.request(method, self.prefix.clone());
        let req = match namespace.filter(|_| self.namespaced) {
            Some(ns) => req.namespace(ns),
            None => req,
        };
        req.resource(&self.plural)
    }

    /// A request for the collection (list, watch, create, deletecollection).
    pub fn collection(&self, method: http::Method, object_ns: Option<&str>) -> Request {
        self.base(method, self.namespace.as_deref().or(object_ns))
    }

    /// A request for one named object (or its subresource).
    pub fn item(
        &self,
        method: http::Method,
        name: &str,
        subresource: &str,
        object_ns: Option<&str>,
    ) -> Result<Request, Error> {
        if name.is_empty() {
            return Err(missing("resource name"));
        }
        let ns = self.namespace.as_deref().or(object_ns).filter(|n| !n.is_empty());
        if self.namespaced && ns.is_none() {
            return Err(Error::InvalidRequest {
                what: format!("{} {name:?}", self.plural),
                message: "a namespaced resource needs a namespace; this client is for all namespaces".into(),
            });
        }
        Ok(self.base(method, ns).name(name).subresource(subresource))
    }

    pub async fn get<T: DeserializeOwned>(&self, name: &str, sub: &str, opts: &GetOptions) -> Result<T, Error> {
        self.item(http::Method::GET, name, sub, None)?.params(opts.query_pairs()).json().await
    }

    pub async fn get_with<T: DeserializeOwned, P: Serialize + ?Sized>(
        &self,
        name: &str,
        sub: &str,
        params: &P,
    ) -> Result<T, Error> {
        self.item(http::Method::GET, name, sub, None)?.params_from(params).json().await
    }

    pub async fn list<L: DeserializeOwned>(&self, opts: &ListOptions) -> Result<L, Error> {
        self.collection(http::Method::GET, None).params(opts.query_pairs(false)).json().await
    }

    pub async fn watch<T: DeserializeOwned + Send + 'static>(&self, opts: &ListOptions) -> Result<WatchStream<T>, Error> {
        self.collection(http::Method::GET, None).params(opts.query_pairs(true)).watch().await
    }

    pub async fn create<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        object_ns: Option<&str>,
        body: &B,
        opts: &WriteOptions,
    ) -> Result<T, Error> {
        if self.namespaced && self.namespace.is_none() && object_ns.is_none_or(str::is_empty) {
            return Err(Error::InvalidRequest {
                what: format!("create {}", self.plural),
                message: "no namespace: set metadata.namespace or use a namespaced client".into(),
            });
        }
        self.collection(http::Method::POST, object_ns).params(opts.query_pairs()).json_body(body).json().await
    }

    pub async fn create_sub<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        name: &str,
        sub: &str,
        body: &B,
        opts: &WriteOptions,
    ) -> Result<T, Error> {
        self.item(http::Method::POST, name, sub, None)?.params(opts.query_pairs()).json_body(body).json().await
    }

    pub async fn replace<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        name: &str,
        sub: &str,
        object_ns: Option<&str>,
        body: &B,
        opts: &WriteOptions,
    ) -> Result<T, Error> {
        self.item(http::Method::PUT, name, sub, object_ns)?.params(opts.query_pairs()).json_body(body).json().await
    }

    pub async fn patch<T: DeserializeOwned>(
        &self,
        name: &str,
        sub: &str,
        patch: &Patch,
        opts: &WriteOptions,
    ) -> Result<T, Error> {
        if matches!(patch, Patch::Apply(_)) && opts.field_manager.is_none() {
            return Err(missing("fieldManager (required for apply patches)"));
        }
        self.item(http::Method::PATCH, name, sub, None)?
            .params(opts.query_pairs())
            .json_body_as(patch.body(), patch.content_type())
            .json()
            .await
    }

    pub async fn apply<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        name: &str,
        sub: &str,
        object_ns: Option<&str>,
        body: &B,
        opts: &ApplyOptions,
    ) -> Result<T, Error> {
        if opts.field_manager.is_empty() {
            return Err(missing("fieldManager (required for apply)"));
        }
        self.item(http::Method::PATCH, name, sub, object_ns)?
            .params(opts.query_pairs())
            .json_body_as(body, "application/apply-patch+yaml")
            .json()
            .await
    }

    pub async fn delete<T: DeserializeOwned>(&self, name: &str, opts: &DeleteOptions) -> Result<DeleteResult<T>, Error> {
        let bytes = self.item(http::Method::DELETE, name, "", None)?.json_body(&opts.to_body()).bytes().await?;
        decode_delete(&bytes, "delete response")
    }

    pub async fn delete_collection<L: DeserializeOwned>(
        &self,
        opts: &DeleteOptions,
        list: &ListOptions,
    ) -> Result<DeleteResult<L>, Error> {
        let bytes = self
            .collection(http::Method::DELETE, None)
            .params(list.query_pairs(false))
            .json_body(&opts.to_body())
            .bytes()
            .await?;
        decode_delete(&bytes, "deletecollection response")
    }

    pub async fn stream_sub<P: Serialize + ?Sized>(&self, name: &str, sub: &str, params: &P) -> Result<ByteStream, Error> {
        self.item(http::Method::GET, name, sub, None)?.params_from(params).no_timeout().stream().await
    }
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
    let probe: Probe = serde_json::from_slice(bytes).map_err(decode)?;
    if probe.kind.as_deref() == Some("Status") && probe.api_version.as_deref().is_none_or(|v| v == "v1") {
        return Ok(DeleteResult::Status(serde_json::from_slice(bytes).map_err(decode)?));
    }
    Ok(DeleteResult::Object(serde_json::from_slice(bytes).map_err(decode)?))
}
