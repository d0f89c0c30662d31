//! Where events end up: the [`EventSink`] trait and its apiserver
//! implementation [`RestEventSink`].

use std::future::Future;

use crate::dynamic::DynamicObject;
use crate::object::DynamicResource;
use crate::rest::{Client, CreateOptions, Error, Patch, PatchOptions, ResourceClient, UpdateOptions};

use super::events_resource;

/// Writes events (client-go's `EventSink`). The broadcaster calls it from
/// its own task, one event at a time.
///
/// Events are [`DynamicObject`]s (kind `Event`, the fields in `data`):
/// core/v1 Events (apiVersion `v1`) from this module's broadcaster,
/// events.k8s.io/v1 ones from [`crate::events`]; what a sink returns is
/// read back the same way. A sink that wants the generated `api::core::v1::Event`
/// converts with [`DynamicObject::try_into_typed`] and
/// [`DynamicObject::from_typed`].
///
/// Errors are [`rest::Error`](crate::rest::Error)s because the broadcaster's
/// retry rules are client-go's: answers from the server (`Error::Api`) are
/// final, a 404 on `patch` means "create it anew", and transport failures
/// are retried.
///
/// # Cancel safety
/// The broadcaster awaits every call to completion; it never drops these
/// futures midway except when the runtime shuts down.
pub trait EventSink: Send + Sync + 'static {
    /// Creates `event` in `event.metadata.namespace`.
    fn create(&self, event: &DynamicObject) -> impl Future<Output = Result<DynamicObject, Error>> + Send;
    /// Replaces the event named by `event.metadata.name`.
    fn update(&self, event: &DynamicObject) -> impl Future<Output = Result<DynamicObject, Error>> + Send;
    /// Applies a strategic merge `patch` to the event named by
    /// `event.metadata.name`.
    fn patch(
        &self,
        event: &DynamicObject,
        patch: &serde_json::Value,
    ) -> impl Future<Output = Result<DynamicObject, Error>> + Send;
}

/// An [`EventSink`] writing core/v1 Events through the REST client to
/// `/api/v1/namespaces/{namespace}/events` (client-go's `EventSinkImpl`),
/// in each event's own namespace.
#[derive(Debug, Clone)]
#[doc(alias = "EventSinkImpl")]
pub struct RestEventSink {
    client: Client,
    /// core/v1 `events`, or events.k8s.io/v1 `events` for [`crate::events`].
    resource: DynamicResource,
}

impl RestEventSink {
    /// A sink writing through `client`, which needs the RBAC rights to
    /// create and patch `events` in the involved objects' namespaces.
    pub fn new(client: Client) -> Self {
        Self::for_resource(client, events_resource())
    }

    /// A sink writing to `resource`'s collection in each event's namespace.
    pub(crate) fn for_resource(client: Client, resource: DynamicResource) -> Self {
        RestEventSink { client, resource }
    }

    fn events(&self, event: &DynamicObject) -> ResourceClient<DynamicObject> {
        let ns = event.metadata.namespace.as_deref().filter(|n| !n.is_empty()).unwrap_or("default");
        ResourceClient::namespaced_with(self.client.clone(), ns, &self.resource)
    }
}

impl EventSink for RestEventSink {
    /// # Cancel safety
    /// As [`ResourceClient::create`]: dropping the future abandons the
    /// request, which may or may not have reached the server.
    async fn create(&self, event: &DynamicObject) -> Result<DynamicObject, Error> {
        self.events(event).create(event, &CreateOptions::default()).await
    }

    async fn update(&self, event: &DynamicObject) -> Result<DynamicObject, Error> {
        self.events(event).update(event, &UpdateOptions::default()).await
    }

    async fn patch(&self, event: &DynamicObject, patch: &serde_json::Value) -> Result<DynamicObject, Error> {
        let events = self.events(event);
        let name = events.object_name(event)?;
        events.patch(name, &Patch::Strategic(patch.clone()), &PatchOptions::default()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rest::tests::server::{Reply, TestServer};

    #[tokio::test]
    async fn writes_to_the_event_namespace() {
        let server = TestServer::start(|req, _| {
            let mut body = req.json();
            if let Some(m) = body.get_mut("metadata") {
                m["resourceVersion"] = "11".into();
            }
            Reply::json(if req.method == "POST" { 201 } else { 200 }, body)
        })
        .await;
        let sink = RestEventSink::new(server.client());
        let ev = DynamicObject::new(&events_resource(), "pod.abc")
            .within("ns1")
            .with_data(serde_json::json!({"count": 1, "message": "m"}));
        let created = sink.create(&ev).await.unwrap();
        assert_eq!(created.metadata.resource_version.as_deref(), Some("11"));
        sink.patch(&ev, &serde_json::json!({"count": 2})).await.unwrap();
        sink.update(&ev).await.unwrap();
        let unnamed = DynamicObject { metadata: Default::default(), ..ev };
        assert!(matches!(sink.patch(&unnamed, &serde_json::json!({})).await, Err(Error::InvalidRequest { .. })));
        let reqs = server.requests();
        assert_eq!(reqs.len(), 3);
        assert_eq!(reqs[0].method, "POST");
        assert_eq!(reqs[0].path, "/api/v1/namespaces/ns1/events");
        assert_eq!(reqs[1].method, "PATCH");
        assert_eq!(reqs[1].path, "/api/v1/namespaces/ns1/events/pod.abc");
        assert_eq!(reqs[1].header("content-type"), Some("application/strategic-merge-patch+json"));
        assert_eq!(reqs[1].json(), serde_json::json!({"count": 2}));
        assert_eq!(reqs[2].method, "PUT");
        assert_eq!(reqs[2].path, "/api/v1/namespaces/ns1/events/pod.abc");
    }

    #[tokio::test]
    async fn broadcaster_creates_then_patches_over_http() {
        let server = TestServer::start(|req, _| {
            let mut body = req.json();
            body["metadata"] =
                serde_json::json!({"name": req.path.rsplit('/').next().unwrap_or_default(), "resourceVersion": "5"});
            if req.method == "POST" {
                body["metadata"] = serde_json::json!({"name": "web-0.1", "resourceVersion": "4"});
            }
            Reply::json(if req.method == "POST" { 201 } else { 200 }, body)
        })
        .await;
        let b = crate::record::EventBroadcaster::with_client(server.client()).unwrap();
        let r = b.new_recorder("ctrl");
        let pod = crate::testing::pod("ns", "web-0", "");
        // One sink task handles events in order, so the repeat sees the
        // first one's written state without any waiting here.
        r.event(&pod, crate::record::EventType::Normal, "Synced", "ok");
        r.event(&pod, crate::record::EventType::Normal, "Synced", "ok");
        b.drain().await;
        let reqs = server.requests();
        assert_eq!(reqs.len(), 2);
        assert_eq!((reqs[0].method.as_str(), reqs[0].path.as_str()), ("POST", "/api/v1/namespaces/ns/events"));
        let created = reqs[0].json();
        assert_eq!(created["kind"], "Event");
        assert_eq!(created["apiVersion"], "v1");
        assert_eq!(created["count"], 1);
        assert_eq!(created["involvedObject"]["name"], "web-0");
        assert_eq!(created["source"]["component"], "ctrl");
        assert_eq!((reqs[1].method.as_str(), reqs[1].path.as_str()), ("PATCH", "/api/v1/namespaces/ns/events/web-0.1"));
        assert_eq!(reqs[1].json()["count"], 2);
    }
}
