//! [`RestEventSink`]: the [`EventSink`] writing events.k8s.io/v1 Events to
//! the apiserver.

use super::event::events_resource;
use crate::dynamic::DynamicObject;
use crate::broadcast::EventSink;
use crate::rest::{Client, Error};

/// An [`EventSink`] writing events.k8s.io/v1 Events through the REST
/// client to `/apis/events.k8s.io/v1/namespaces/{namespace}/events`
/// (client-go's `events.EventSinkImpl`), in each event's own namespace.
/// Patches are strategic merge patches.
#[derive(Debug, Clone)]
#[doc(alias = "EventSinkImpl")]
pub struct RestEventSink {
    inner: crate::broadcast::RestEventSink,
}

impl RestEventSink {
    /// A sink writing through `client`, which needs the RBAC rights to
    /// create and patch `events.events.k8s.io` in the regarding objects'
    /// namespaces.
    pub fn new(client: Client) -> Self {
        RestEventSink { inner: crate::broadcast::RestEventSink::for_resource(client, events_resource()) }
    }
}

impl EventSink for RestEventSink {
    /// # Cancel safety
    /// As [`ResourceClient::create`](crate::rest::ResourceClient::create):
    /// dropping the future abandons the request, which may or may not have
    /// reached the server.
    async fn create(&self, event: &DynamicObject) -> Result<DynamicObject, Error> {
        self.inner.create(event).await
    }

    async fn update(&self, event: &DynamicObject) -> Result<DynamicObject, Error> {
        self.inner.update(event).await
    }

    async fn patch(&self, event: &DynamicObject, patch: &serde_json::Value) -> Result<DynamicObject, Error> {
        self.inner.patch(event, patch).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rest::tests::server::{Reply, TestServer};

    #[tokio::test]
    async fn writes_events_v1_in_the_event_namespace() {
        let server =
            TestServer::start(|req, _| Reply::json(if req.method == "POST" { 201 } else { 200 }, req.json())).await;
        let sink = RestEventSink::new(server.client());
        let ev = DynamicObject::new(&events_resource(), "pod.abc").within("ns1");
        sink.create(&ev).await.unwrap();
        sink.patch(&ev, &serde_json::json!({"series": {"count": 2}})).await.unwrap();
        sink.update(&ev).await.unwrap();
        let reqs = server.requests();
        let calls: Vec<_> = reqs.iter().map(|r| (r.method.as_str(), r.path.as_str())).collect();
        assert_eq!(
            calls,
            [
                ("POST", "/apis/events.k8s.io/v1/namespaces/ns1/events"),
                ("PATCH", "/apis/events.k8s.io/v1/namespaces/ns1/events/pod.abc"),
                ("PUT", "/apis/events.k8s.io/v1/namespaces/ns1/events/pod.abc"),
            ]
        );
        assert_eq!(reqs[0].json()["apiVersion"], "events.k8s.io/v1");
        assert_eq!(reqs[1].header("content-type"), Some("application/strategic-merge-patch+json"));
        assert_eq!(reqs[1].json(), serde_json::json!({"series": {"count": 2}}));
    }
}
