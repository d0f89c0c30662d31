//! Plain HTTP to a pod, service or node through the apiserver's proxy
//! (`pods/proxy`, `services/proxy`, `nodes/proxy`).
//!
//! [`ResourceClient::proxy`] gives a [`Request`] for a path on the target;
//! add a body, headers and query (the backend's own) and read the answer
//! with any of [`Request`]'s methods. The name may carry a port and scheme
//! as the apiserver reads them: `web:8080`, `https:web:8443`, or a named
//! port (`web:http`). A 5xx with the backend's body comes back as
//! [`Error::Api`] like any other failed call.

use super::error::Error;
use super::request::Request;
use super::resource::{ClientObject, ResourceClient};

/// Kinds with a `proxy` subresource (pods, services, nodes).
pub trait HasProxy: ClientObject {}

impl<K: HasProxy> ResourceClient<K> {
    /// A `method` request to `path` (e.g. `/healthz`, `metrics`) of the
    /// object `name` through the apiserver's proxy. The client-side
    /// timeout applies, but is not put in the query, which belongs to the
    /// backend.
    pub fn proxy(&self, method: http::Method, name: &str, path: &str) -> Result<Request, Error> {
        Ok(self.target.item(method, name, "proxy", None)?.suffix(path).without_timeout_param())
    }
}
