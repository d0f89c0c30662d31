//! What a request asks for, read from its method, path and query as the
//! apiserver's `RequestInfoFactory` reads them.

use http::Method;

use super::status;
use serde_json::Value;

use super::tracker::{Gvr, Key, ResourceInfo};
use crate::rest::Status;

/// The verbs of the API, as RBAC and client-go's actions name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verb {
    Get,
    List,
    Watch,
    Create,
    Update,
    Patch,
    Delete,
    DeleteCollection,
}

impl Verb {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
        }
    }
}

/// One resource request.
#[derive(Debug, Clone)]
pub(crate) struct RequestInfo {
    pub verb: Verb,
    pub gvr: Gvr,
    /// The namespace of the path; `None` at cluster scope or across all
    /// namespaces.
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

/// Subresources of a namespace that are not a resource inside it.
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

/// Reads a resource request; anything else (discovery, `/version`, a
/// malformed path) is a 404 Status, an unusable method a 405.
pub(crate) fn parse(method: &Method, path: &str, query: &[(String, String)]) -> Result<RequestInfo, Status> {
    let segments: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned())
        .collect();
    let (group, version, rest) = match segments.as_slice() {
        [api, version, rest @ ..] if api == "api" => (String::new(), version.clone(), rest),
        [apis, group, version, rest @ ..] if apis == "apis" => (group.clone(), version.clone(), rest),
        _ => return Err(status::no_route(path)),
    };
    let (namespace, parts): (Option<String>, &[String]) = match rest {
        [ns, namespace, tail @ ..] if ns == "namespaces" && !tail.is_empty() => {
            if NAMESPACE_SUBRESOURCES.contains(&tail[0].as_str()) && tail.len() == 1 {
                (None, rest)
            } else {
                (Some(namespace.clone()), tail)
            }
        }
        _ => (None, rest),
    };
    let (resource, name, subresource) = match parts {
        [resource] => (resource.clone(), None, None),
        [resource, name] => (resource.clone(), Some(name.clone()), None),
        [resource, name, sub] => (resource.clone(), Some(name.clone()), Some(sub.clone())),
        _ => return Err(status::no_route(path)),
    };
    let watch = query.iter().any(|(k, v)| k == "watch" && (v == "true" || v == "1"));
    let verb = match (method.as_str(), name.is_some()) {
        ("GET", _) if watch => Verb::Watch,
        ("GET", true) => Verb::Get,
        ("GET", false) => Verb::List,
        ("POST", false) => Verb::Create,
        ("POST", true) if subresource.is_some() => Verb::Create,
        ("PUT", true) => Verb::Update,
        ("PATCH", true) => Verb::Patch,
        ("DELETE", true) => Verb::Delete,
        ("DELETE", false) => Verb::DeleteCollection,
        _ => return Err(status::method_not_allowed(method.as_str(), path)),
    };
    Ok(RequestInfo { verb, gvr: Gvr { group, version, resource }, namespace, name, subresource })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(method: Method, path: &str, query: &[(&str, &str)]) -> Result<RequestInfo, Status> {
        let query: Vec<(String, String)> = query.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        parse(&method, path, &query)
    }

    #[test]
    fn paths_read_as_the_apiserver_reads_them() {
        let i = info(Method::GET, "/api/v1/namespaces/ns/pods/web", &[]).unwrap();
        assert_eq!(
            (i.verb, i.gvr.resource.as_str(), i.namespace.as_deref(), i.name.as_deref()),
            (Verb::Get, "pods", Some("ns"), Some("web"))
        );
        let i = info(Method::GET, "/apis/apps/v1/deployments", &[("watch", "true")]).unwrap();
        assert_eq!((i.verb, i.gvr.group.as_str(), i.namespace), (Verb::Watch, "apps", None));
        let i = info(Method::PUT, "/apis/apps/v1/namespaces/ns/deployments/web/scale", &[]).unwrap();
        assert_eq!((i.verb, i.subresource.as_deref()), (Verb::Update, Some("scale")));
        let i = info(Method::DELETE, "/api/v1/namespaces/ns/pods", &[]).unwrap();
        assert_eq!(i.verb, Verb::DeleteCollection);
    }

    #[test]
    fn namespaces_and_their_subresources() {
        let i = info(Method::GET, "/api/v1/namespaces/ns", &[]).unwrap();
        assert_eq!((i.gvr.resource.as_str(), i.name.as_deref(), i.namespace), ("namespaces", Some("ns"), None));
        let i = info(Method::PUT, "/api/v1/namespaces/ns/finalize", &[]).unwrap();
        assert_eq!(
            (i.gvr.resource.as_str(), i.name.as_deref(), i.subresource.as_deref()),
            ("namespaces", Some("ns"), Some("finalize"))
        );
        let i = info(Method::PUT, "/api/v1/namespaces/ns/status", &[]).unwrap();
        assert_eq!((i.name.as_deref(), i.subresource.as_deref()), (Some("ns"), Some("status")));
        let i = info(Method::GET, "/api/v1/namespaces", &[]).unwrap();
        assert_eq!((i.verb, i.gvr.resource.as_str()), (Verb::List, "namespaces"));
        // A resource named like a namespace subresource, inside a namespace.
        let i = info(Method::GET, "/api/v1/namespaces/ns/status/x", &[]).unwrap();
        assert_eq!((i.gvr.resource.as_str(), i.namespace.as_deref()), ("status", Some("ns")));
    }

    #[test]
    fn other_paths_and_methods_are_refused() {
        assert_eq!(info(Method::GET, "/version", &[]).unwrap_err().code, 404);
        assert_eq!(info(Method::GET, "/api/v1/namespaces/ns/pods/a/b/c", &[]).unwrap_err().code, 404);
        assert_eq!(info(Method::PUT, "/api/v1/pods", &[]).unwrap_err().code, 405);
        assert_eq!(info(Method::POST, "/api/v1/namespaces/ns/pods/web", &[]).unwrap_err().code, 405);
    }
}

/// An answer: HTTP status and JSON body.
pub(crate) type Answer = Result<(u16, Value), Status>;

/// One request, read.
#[derive(Clone)]
pub(crate) struct Ctx<'a> {
    pub info: &'a RequestInfo,
    pub query: &'a [(String, String)],
    /// `fieldManager`, else the user agent's program name.
    pub manager: String,
    pub dry_run: bool,
    /// Objects seeded by the test keep their status and are not recorded.
    pub seed: bool,
    /// Server-side apply already recorded the managed fields.
    pub apply: bool,
}

impl Ctx<'_> {
    pub(crate) fn param(&self, key: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    pub(crate) fn gvr(&self) -> &Gvr {
        &self.info.gvr
    }

    pub(crate) fn name(&self) -> &str {
        self.info.name.as_deref().unwrap_or_default()
    }

    pub(crate) fn subresource(&self) -> Option<&str> {
        self.info.subresource.as_deref()
    }

    /// The namespace part of the object's key: the path's, none for a
    /// registered cluster-scoped resource.
    pub(crate) fn key_namespace(&self, resource: &ResourceInfo) -> String {
        match resource.namespaced {
            Some(false) => String::new(),
            _ => self.info.namespace.clone().unwrap_or_default(),
        }
    }

    pub(crate) fn key(&self, resource: &ResourceInfo) -> Key {
        (self.key_namespace(resource), self.name().to_owned())
    }
}
