//! Where the requests of one resource go: group/version prefix, plural,
//! scope and namespace. [`ResourceClient`](super::ResourceClient) builds
//! every request through it, so path rules live in one place.

use super::Client;
use super::error::Error;
use super::request::Request;
use crate::object::DynamicResource;

/// One resource of one apiserver, in one namespace or all.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    pub client: Client,
    pub resource: DynamicResource,
    /// `/api/v1` or `/apis/<group>/<version>`, computed once.
    pub prefix: String,
    /// `None`: all namespaces (or cluster scope).
    pub namespace: Option<String>,
}

impl Target {
    /// A target for `resource`; `namespace` is dropped for cluster-scoped
    /// resources and when empty.
    pub fn new(client: Client, resource: DynamicResource, namespace: Option<&str>) -> Self {
        let namespace = namespace.filter(|n| resource.namespaced && !n.is_empty()).map(str::to_owned);
        Target { client, prefix: resource.api_prefix(), resource, namespace }
    }

    fn base(&self, method: http::Method, namespace: Option<&str>) -> Request {
        let req = self.client.request(method, self.prefix.clone());
        let req = match namespace.filter(|_| self.resource.namespaced) {
            Some(ns) => req.namespace(ns),
            None => req,
        };
        req.resource(&self.resource.plural)
    }

    /// A request for the collection (list, watch, create, deletecollection),
    /// in this target's namespace, else `object_ns`.
    pub fn collection(&self, method: http::Method, object_ns: Option<&str>) -> Request {
        self.base(method, self.namespace.as_deref().or(object_ns))
    }

    /// A request for one named object or its `subresource` (`""`: none).
    pub fn item(
        &self,
        method: http::Method,
        name: &str,
        subresource: &str,
        object_ns: Option<&str>,
    ) -> Result<Request, Error> {
        if name.is_empty() {
            return Err(Error::InvalidRequest {
                what: "resource name".to_owned(),
                message: "must not be empty".into(),
            });
        }
        let ns = self.namespace.as_deref().or(object_ns).filter(|n| !n.is_empty());
        if self.resource.namespaced && ns.is_none() {
            return Err(Error::InvalidRequest {
                what: format!("{} {name:?}", self.resource.plural),
                message: "a namespaced resource needs a namespace; this client is for all namespaces".into(),
            });
        }
        Ok(self.base(method, ns).name(name).subresource(subresource))
    }

    /// Refuses a create of a namespaced object that names no namespace
    /// through a client for all namespaces.
    pub fn check_create(&self, object_ns: Option<&str>) -> Result<(), Error> {
        if self.resource.namespaced && self.namespace.is_none() && object_ns.is_none_or(str::is_empty) {
            return Err(Error::InvalidRequest {
                what: format!("create {}", self.resource.plural),
                message: "no namespace: set metadata.namespace or use a namespaced client".into(),
            });
        }
        Ok(())
    }
}
