//! Content negotiation and protobuf on the wire, against the scripted
//! server: what a client of a kind that speaks protobuf sends, and how it
//! reads each kind of answer.

use futures_util::StreamExt as _;
use serde_json::json;

use super::proto_kind::{CONFIGMAP, CONFIGMAP_LIST, ConfigMap, STATUS_EXPIRED, STATUS_NOT_FOUND, config_map, hex};
use super::server::{Reply, TestServer};
use crate::codec::DecodeOptions;
use crate::object::{ListMeta, ObjectList, Resource};
use crate::protobuf::{Envelope, encode_frame, encode_watch_event};
use crate::rest::*;

const ACCEPT: &str = "application/vnd.kubernetes.protobuf,application/json";
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

fn protobuf(status: u16, body: Vec<u8>) -> Reply {
    Reply::Respond { status, headers: vec![("Content-Type".into(), PROTOBUF.into())], body }
}

fn codec() -> crate::protobuf::Codec<ConfigMap> {
    ConfigMap::PROTOBUF.unwrap()
}

fn client_for(server: &TestServer, content_type: ContentType) -> Client {
    let mut config = crate::config::Config::new(server.url.parse().unwrap());
    config.qps = 0.0;
    config.content_type = content_type;
    Client::new(config).unwrap()
}

fn config_maps(server: &TestServer) -> ResourceClient<ConfigMap> {
    ResourceClient::namespaced(server.client(), "ns")
}

#[test]
fn object_lists_and_statuses_agree_with_go() {
    let bytes = hex(CONFIGMAP_LIST);
    let envelope = Envelope::decode(&bytes).unwrap();
    assert_eq!((envelope.api_version, envelope.kind), ("v1", "ConfigMapList"));
    let list = ObjectList::decode_protobuf(envelope.raw, &codec(), DecodeOptions::default()).unwrap();
    let metadata = ListMeta {
        resource_version: Some("9".into()),
        continue_: Some("next".into()),
        remaining_item_count: Some(1),
        self_link: None,
    };
    assert_eq!(list.metadata, metadata, "empty strings read as absent, as JSON leaves them out");
    let mut a = config_map("a", "1", &[("k", "v")]);
    a.metadata.managed_fields = Some(json!([{"manager": "kubectl"}]));
    assert_eq!(list.items, [a, config_map("b", "2", &[])]);
    assert_eq!(list.encode_protobuf(&codec()), envelope.raw, "written back as Go writes it");

    let skipped = ObjectList::decode_protobuf(envelope.raw, &codec(), DecodeOptions::WITHOUT_MANAGED_FIELDS).unwrap();
    assert_eq!(skipped.items[0].metadata.managed_fields, None, "the options reach every item");

    let bytes = hex(STATUS_NOT_FOUND);
    let status = Status::from_protobuf(&bytes).unwrap();
    let expected = Status {
        api_version: Some("v1".into()),
        kind: Some("Status".into()),
        status: Some("Failure".into()),
        message: "configmaps \"missing\" not found".into(),
        reason: "NotFound".into(),
        details: Some(StatusDetails {
            name: "missing".into(),
            kind: "configmaps".into(),
            causes: vec![StatusCause {
                reason: "FieldValueRequired".into(),
                message: "Required value".into(),
                field: "data".into(),
            }],
            retry_after_seconds: Some(3),
            ..StatusDetails::default()
        }),
        code: 404,
    };
    assert_eq!(status, expected);
    assert_eq!(crate::protobuf::encode_object("v1", "Status", &status), bytes, "written back as Go writes it");
    assert!(Status::from_protobuf(&hex(CONFIGMAP)).is_none(), "not a Status");
    assert!(Status::from_protobuf(b"{\"kind\":\"Status\"}").is_none(), "not protobuf");
}

#[tokio::test]
async fn get_accepts_protobuf_and_decodes_each_answer_by_its_content_type() {
    let server = TestServer::start(|r, _| match r.path.rsplit('/').next().unwrap_or_default() {
        "proto" => protobuf(200, hex(CONFIGMAP)),
        // An aggregated API may answer JSON whatever was accepted.
        "json" => Reply::json(
            200,
            json!({"metadata": {"name": "a", "namespace": "ns", "resourceVersion": "1"},
            "data": {"k": "v"}}),
        ),
        _ => Reply::Respond {
            status: 200,
            headers: vec![("Content-Type".into(), "text/html".into())],
            body: b"<html></html>".to_vec(),
        },
    })
    .await;
    let config_maps = config_maps(&server);
    assert_eq!(config_maps.content_type(), ContentType::Protobuf);

    let expected = config_map("a", "1", &[("k", "v")]);
    assert_eq!(config_maps.get("proto", &GetOptions::default()).await.unwrap(), expected);
    assert_eq!(config_maps.get("json", &GetOptions::default()).await.unwrap(), expected);
    let err = config_maps.get("html", &GetOptions::default()).await.unwrap_err();
    assert!(
        matches!(&err, Error::UnexpectedContentType { content_type, .. } if content_type == "text/html"),
        "{err:?}"
    );
    assert!(err.to_string().contains("/api/v1/namespaces/ns/configmaps/html"), "{err}");

    for request in server.requests() {
        assert_eq!(request.header("accept"), Some(ACCEPT));
    }
}

#[tokio::test]
async fn a_protobuf_error_status_is_decoded_into_an_api_error() {
    let server = TestServer::start(|_, _| protobuf(404, hex(STATUS_NOT_FOUND))).await;
    let err = config_maps(&server).get("missing", &GetOptions::default()).await.unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    let status = err.status().unwrap();
    assert_eq!((status.reason.as_str(), status.code), ("NotFound", 404));
    assert_eq!(status.message, "configmaps \"missing\" not found");
    assert_eq!(status.details.as_ref().unwrap().causes[0].field, "data");
    assert_eq!(status.retry_after(), Some(std::time::Duration::from_secs(3)));
}

#[tokio::test]
async fn create_and_update_send_protobuf_envelopes() {
    // Echoes the body back, as protobuf.
    let server = TestServer::start(|r, _| protobuf(201, r.body.clone())).await;
    let config_maps = config_maps(&server);
    let object = config_map("c", "", &[("x", "y")]);
    assert_eq!(config_maps.create(&object, &CreateOptions::default()).await.unwrap(), object);
    assert_eq!(config_maps.update(&object, &UpdateOptions::default()).await.unwrap(), object);
    assert_eq!(config_maps.update_status(&object, &UpdateOptions::default()).await.unwrap(), object);

    let requests = server.requests();
    let paths: Vec<_> = requests.iter().map(|r| (r.method.as_str(), r.path.as_str())).collect();
    assert_eq!(
        paths,
        [
            ("POST", "/api/v1/namespaces/ns/configmaps"),
            ("PUT", "/api/v1/namespaces/ns/configmaps/c"),
            ("PUT", "/api/v1/namespaces/ns/configmaps/c/status")
        ]
    );
    for request in &requests {
        assert_eq!((request.header("content-type"), request.header("accept")), (Some(PROTOBUF), Some(ACCEPT)));
        let envelope = Envelope::decode(&request.body).unwrap();
        assert_eq!((envelope.api_version, envelope.kind), ("v1", "ConfigMap"));
        assert_eq!(envelope.raw, codec().encode_to_vec(&object));
    }
}

#[tokio::test]
async fn lists_page_over_protobuf_with_the_decode_options() {
    let last_page = ObjectList {
        metadata: ListMeta { resource_version: Some("10".into()), ..ListMeta::default() },
        items: vec![config_map("c", "3", &[])],
    };
    let last_page = crate::protobuf::encode_object("v1", "ConfigMapList", &Raw(last_page.encode_protobuf(&codec())));
    let server = TestServer::start(move |r, _| {
        if r.path.contains("continue=next") {
            protobuf(200, last_page.clone())
        } else {
            protobuf(200, hex(CONFIGMAP_LIST))
        }
    })
    .await;
    let config_maps = config_maps(&server);
    let all = config_maps.list_all(&ListOptions::default().limit(2)).await.unwrap();
    let names: Vec<_> = all.items.iter().map(|c| c.metadata.name.as_deref().unwrap()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(all.metadata.resource_version.as_deref(), Some("10"));
    assert!(all.items[0].metadata.managed_fields.is_some(), "kept by default");
    let paths: Vec<_> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        paths,
        ["/api/v1/namespaces/ns/configmaps?limit=2", "/api/v1/namespaces/ns/configmaps?limit=2&continue=next"]
    );

    // What a reflector asks for reaches the protobuf decoder.
    let lw: &dyn crate::cache::ListWatch<ConfigMap> = &config_maps;
    let page = lw.list_with(&ListOptions::default(), DecodeOptions::WITHOUT_MANAGED_FIELDS).await.unwrap();
    assert_eq!(page.items[0].metadata.managed_fields, None);
    let page = config_maps.clone().without_managed_fields().list(&ListOptions::default()).await.unwrap();
    assert_eq!(page.items[0].metadata.managed_fields, None);
}

/// A message already encoded, to put in an envelope.
struct Raw(Vec<u8>);

impl crate::protobuf::EncodeProto for Raw {
    fn encode_fields(&self, writer: &mut crate::protobuf::Writer) {
        writer.raw(&self.0);
    }
}

#[tokio::test]
async fn patches_and_applies_send_json_and_read_protobuf_answers() {
    let server = TestServer::start(|_, _| protobuf(200, hex(CONFIGMAP))).await;
    let config_maps = config_maps(&server);
    let expected = config_map("a", "1", &[("k", "v")]);
    let merge = Patch::Merge(json!({"data": {"k": "v"}}));
    let apply = ApplyOptions::new("test");
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}});
    assert_eq!(config_maps.patch("a", &merge, &PatchOptions::default()).await.unwrap(), expected);
    assert_eq!(config_maps.apply("a", &config, &apply).await.unwrap(), expected);
    assert_eq!(config_maps.patch_status("a", &merge, &PatchOptions::default()).await.unwrap(), expected);
    assert_eq!(config_maps.apply_status("a", &config, &apply).await.unwrap(), expected);

    let requests = server.requests();
    let sent: Vec<_> =
        requests.iter().map(|r| (r.path.as_str(), r.header("content-type"), r.header("accept"))).collect();
    let (merge_type, apply_type) = (Some("application/merge-patch+json"), Some("application/apply-patch+yaml"));
    let object = "/api/v1/namespaces/ns/configmaps/a";
    let status = "/api/v1/namespaces/ns/configmaps/a/status";
    assert_eq!(
        sent,
        [
            (object, merge_type, Some(ACCEPT)),
            (&*format!("{object}?fieldManager=test"), apply_type, Some(ACCEPT)),
            (status, merge_type, Some(ACCEPT)),
            (&*format!("{status}?fieldManager=test"), apply_type, Some(ACCEPT)),
        ]
    );
    // The bodies stay JSON.
    for request in &requests {
        assert!(serde_json::from_slice::<serde_json::Value>(&request.body).is_ok());
    }
}

#[tokio::test]
async fn deletes_read_a_protobuf_status_or_object() {
    let success = Status { status: Some("Success".into()), code: 200, ..Status::default() };
    let success = crate::protobuf::encode_object("v1", "Status", &success);
    let server = TestServer::start(move |r, _| {
        if r.path.contains("/gone") { protobuf(200, success.clone()) } else { protobuf(200, hex(CONFIGMAP)) }
    })
    .await;
    let config_maps = config_maps(&server);
    let gone = config_maps.delete("gone", &DeleteOptions::default()).await.unwrap();
    assert!(
        matches!(&gone, DeleteResult::Status(s) if s.is_success() && s.kind.as_deref() == Some("Status")),
        "{gone:?}"
    );
    let kept = config_maps.delete("a", &DeleteOptions::default()).await.unwrap();
    assert_eq!(kept.object(), Some(config_map("a", "1", &[("k", "v")])));
    assert_eq!(server.requests()[0].header("accept"), Some(ACCEPT));
}

/// One watch frame of `event_type` with `object_envelope`.
fn frame(event_type: &str, object_envelope: &[u8]) -> Vec<u8> {
    encode_frame(&encode_watch_event(event_type, object_envelope))
}

fn object_envelope(object: &ConfigMap) -> Vec<u8> {
    codec().encode_object("v1", "ConfigMap", object)
}

#[tokio::test]
async fn watches_read_protobuf_frames_however_they_are_chunked() {
    let mut bookmark = ConfigMap::default();
    bookmark.metadata.resource_version = Some("12".into());
    bookmark.metadata.annotations = Some([("k8s.io/initial-events-end", "true")].into_iter().collect());
    let frames = [
        frame("ADDED", &object_envelope(&config_map("a", "10", &[]))),
        frame("MODIFIED", &object_envelope(&config_map("a", "11", &[("k", "v")]))),
        frame("SOMETHING_NEW", &object_envelope(&config_map("a", "11", &[]))),
        frame("BOOKMARK", &object_envelope(&bookmark)),
        frame("DELETED", &object_envelope(&config_map("a", "13", &[]))),
        frame("ERROR", &hex(STATUS_EXPIRED)),
    ];
    let body = frames.concat();
    // Two whole frames and part of the third in one chunk, then the rest
    // cut inside a length header and inside a frame.
    let cuts =
        [0, frames[0].len() + frames[1].len() + 5, body.len() - frames[5].len() + 2, body.len() - 40, body.len()];
    let chunks: Vec<Vec<u8>> = cuts.windows(2).map(|w| body[w[0]..w[1]].to_vec()).collect();
    let server = TestServer::start(move |_, _| Reply::TypedChunks {
        status: 200,
        content_type: "application/vnd.kubernetes.protobuf;stream=watch".into(),
        chunks: chunks.clone(),
    })
    .await;
    let config_maps = config_maps(&server);
    let events: Vec<_> = config_maps.watch(&ListOptions::default()).await.unwrap().collect().await;
    assert_eq!(events.len(), 5, "the unknown event type is skipped: {events:?}");
    assert!(matches!(&events[0], Ok(WatchEvent::Added(c)) if c.metadata.resource_version.as_deref() == Some("10")));
    assert!(matches!(&events[1], Ok(WatchEvent::Modified(c)) if c.data["k"] == "v"));
    let Ok(WatchEvent::Bookmark(bookmark)) = &events[2] else { panic!("{:?}", events[2]) };
    assert_eq!(bookmark.resource_version, "12");
    assert!(bookmark.is_initial_events_end());
    assert!(matches!(&events[3], Ok(WatchEvent::Deleted(c)) if c.metadata.resource_version.as_deref() == Some("13")));
    let Err(err) = &events[4] else { panic!("{:?}", events[4]) };
    assert!(err.is_resource_expired() && err.is_gone() && err.code() == Some(410), "{err:?}");

    let request = &server.requests()[0];
    assert_eq!(request.header("accept"), Some(ACCEPT));
    assert_eq!(request.path, "/api/v1/namespaces/ns/configmaps?watch=true");
}

#[tokio::test]
async fn a_protobuf_watch_cut_inside_a_frame_ended_with_the_connection() {
    let whole = frame("ADDED", &object_envelope(&config_map("a", "10", &[])));
    let cut = whole[..whole.len() - 3].to_vec();
    let server = TestServer::start(move |_, _| Reply::TypedChunks {
        status: 200,
        content_type: "application/vnd.kubernetes.protobuf;stream=watch".into(),
        chunks: vec![whole.clone(), cut.clone()],
    })
    .await;
    let events: Vec<_> = config_maps(&server).watch(&ListOptions::default()).await.unwrap().collect().await;
    assert!(matches!(&events[0], Ok(WatchEvent::Added(_))));
    let Err(err) = &events[1] else { panic!("{:?}", events[1]) };
    assert!(matches!(err, Error::WatchTruncated { .. }) && err.is_probable_eof(), "{err:?}");
}

#[tokio::test]
async fn a_watch_answered_in_json_is_read_as_json() {
    let server = TestServer::start(|_, _| Reply::TypedChunks {
        status: 200,
        content_type: "application/json;stream=watch".into(),
        chunks: vec![br#"{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"4"}}}"#.to_vec()],
    })
    .await;
    let events: Vec<_> = config_maps(&server).watch(&ListOptions::default()).await.unwrap().collect().await;
    assert!(matches!(&events[..], [Ok(WatchEvent::Added(c))] if c.metadata.resource_version.as_deref() == Some("4")));
}

#[tokio::test]
async fn content_type_json_forces_json() {
    let server = TestServer::start(|r, _| match r.method.as_str() {
        "POST" => Reply::Respond { status: 201, headers: vec![], body: r.body.clone() },
        _ => Reply::json(200, json!({"metadata": {"name": "a"}})),
    })
    .await;
    let config_maps: ResourceClient<ConfigMap> =
        ResourceClient::namespaced(client_for(&server, ContentType::Json), "ns");
    assert_eq!(config_maps.content_type(), ContentType::Json);
    config_maps.get("a", &GetOptions::default()).await.unwrap();
    let object = config_map("c", "", &[]);
    assert_eq!(config_maps.create(&object, &CreateOptions::default()).await.unwrap(), object);
    let requests = server.requests();
    assert_eq!(requests[0].header("accept"), Some("application/json"));
    assert_eq!(
        (requests[1].header("content-type"), requests[1].header("accept")),
        (Some("application/json"), Some("application/json"))
    );

    // A kind without a codec, and a client made for a resource, speak JSON
    // whatever the configuration.
    let pods: ResourceClient<crate::testing::Pod> = ResourceClient::namespaced(server.client(), "ns");
    assert_eq!(pods.content_type(), ContentType::Json);
    let dynamic = ResourceClient::<ConfigMap>::for_resource(
        server.client(),
        &crate::object::DynamicResource::of::<ConfigMap>(),
        Some("ns"),
    );
    assert_eq!(dynamic.content_type(), ContentType::Json);
}
