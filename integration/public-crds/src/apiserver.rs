//! What the real kube-apiserver says of each CRD: every document is created
//! with `dryRun=All` (validated and admitted, nothing stored) through the
//! runtime's dynamic client, so CRDs of one name from two operators never
//! meet, and nothing has to be cleaned up.

use futures_util::StreamExt;
use k8s_client_runtime::config::{Config, KubeconfigOptions};
use k8s_client_runtime::dynamic::{DynamicClient, DynamicObject};
use k8s_client_runtime::object::DynamicResource;
use k8s_client_runtime::rest::{Client, CreateOptions};

use crate::corpus::{Body, Crd};

/// Reaching the apiserver at all (a refusal is a [`Verdict`], not an error).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The testenv's kubeconfig does not make a client.
    #[error("client from the testenv's kubeconfig: {0}")]
    Client(String),
    /// A request failed without an answer from the apiserver.
    #[error("dry-run create of {crd}: {message}")]
    Request {
        /// The CRD being sent.
        crd: String,
        /// What went wrong on the way.
        message: String,
    },
}

/// The apiserver's answer to creating one CRD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Created (dry run).
    Accepted,
    /// Refused, with the apiserver's message (it lists the fields at fault).
    Refused(String),
}

/// How many creates are in flight at once: the apiserver compiles every
/// CEL rule of a CRD on create, so a few in parallel keep both cores busy.
const IN_FLIGHT: usize = 4;

/// A client for the admin user of the testenv whose kubeconfig is `path`.
pub fn client(path: &std::path::Path) -> Result<Client, Error> {
    let config =
        Config::from_kubeconfig_file(path, &KubeconfigOptions::default()).map_err(|e| Error::Client(e.to_string()))?;
    Client::new(config).map_err(|e| Error::Client(e.to_string()))
}

/// The verdict on each of `crds`, in their order.
pub async fn dry_run(client: &Client, crds: &[&Crd]) -> Result<Vec<Verdict>, Error> {
    let resource = DynamicResource {
        group: "apiextensions.k8s.io".into(),
        version: "v1".into(),
        kind: "CustomResourceDefinition".into(),
        plural: "customresourcedefinitions".into(),
        namespaced: false,
    };
    let crd_client = DynamicClient::all_with(client.clone(), &resource);
    let options = CreateOptions { dry_run: true, ..CreateOptions::default() };
    let mut verdicts: Vec<(usize, Result<Verdict, Error>)> = futures_util::stream::iter(crds.iter().enumerate())
        .map(|(i, crd)| {
            let (crd_client, options) = (&crd_client, &options);
            async move { (i, verdict(crd_client, options, crd).await) }
        })
        .buffer_unordered(IN_FLIGHT)
        .collect()
        .await;
    verdicts.sort_by_key(|(i, _)| *i);
    verdicts.into_iter().map(|(_, v)| v).collect()
}

async fn verdict(client: &DynamicClient, options: &CreateOptions, crd: &Crd) -> Result<Verdict, Error> {
    let value = match &crd.body {
        Body::Object(value) => value,
        Body::Unreadable { error, .. } => return Ok(Verdict::Refused(format!("not YAML, nothing to send: {error}"))),
    };
    let object: DynamicObject = match serde_json::from_value(value.clone()) {
        Ok(object) => object,
        // kubectl would stop here too: the document is not an object.
        Err(e) => return Ok(Verdict::Refused(format!("not a Kubernetes object, nothing to send: {e}"))),
    };
    match client.create(&object, options).await {
        Ok(_) => Ok(Verdict::Accepted),
        Err(e) => match e.status() {
            Some(status) if (400..500).contains(&status.code) => Ok(Verdict::Refused(refusal(status))),
            _ => Err(Error::Request { crd: crd.origin.clone(), message: e.to_string() }),
        },
    }
}

/// The apiserver's message, which already lists every cause; the reason
/// first when the message alone does not say what kind of no it is.
fn refusal(status: &k8s_client_runtime::rest::Status) -> String {
    let message = status.message.replace('\n', " ");
    if status.reason.is_empty() { message } else { format!("{}: {message}", status.reason) }
}
