//! Subresources: generic calls for any `name/subresource` path, and the
//! marker traits that give a kind typed methods for the regular ones.
//!
//! - [`ResourceClient::get_subresource`] and its siblings reach any
//!   subresource with any body and answer types.
//! - A kind that implements [`HasStatus`] gets `get_status`,
//!   `update_status`, `patch_status` and `apply_status`; one that
//!   implements [`HasScale`] gets `get_scale`, `update_scale`, `patch_scale`
//!   and `apply_scale`. The generator implements them for every kind whose
//!   spec (or CRD) declares the subresource.
//! - Irregular subresources (pod `log`, `eviction`, `binding`, ...) get a
//!   small generated extension trait on the kind's client instead.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::error::Error;
use super::options::{ApplyOptions, CreateOptions, Patch, PatchOptions, UpdateOptions, WriteOptions};
use super::request::Request;
use super::resource::{ClientObject, ResourceClient};
use super::watch::ByteStream;
use crate::apply::ApplyConfiguration;

impl<K: ClientObject> ResourceClient<K> {
    /// `GET .../name/subresource` with query `params` (a flat struct such as
    /// a generated `*Params`, a slice of pairs, or `&()`).
    pub async fn get_subresource<R: DeserializeOwned, P: Serialize + ?Sized>(
        &self,
        name: &str,
        subresource: &str,
        params: &P,
    ) -> Result<R, Error> {
        self.target.item(http::Method::GET, name, subresource, None)?.params_from(params).json().await
    }

    /// `POST .../name/subresource` (eviction, token, binding).
    pub async fn create_subresource<B: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: &str,
        body: &B,
        opts: &CreateOptions,
    ) -> Result<R, Error> {
        self.write(http::Method::POST, name, subresource, None, body, opts).await
    }

    /// `PUT .../name/subresource` (status, scale, finalize).
    pub async fn update_subresource<B: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: &str,
        body: &B,
        opts: &UpdateOptions,
    ) -> Result<R, Error> {
        self.write(http::Method::PUT, name, subresource, None, body, opts).await
    }

    /// `PATCH .../name/subresource` with a JSON, merge or strategic-merge patch.
    pub async fn patch_subresource<R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: &str,
        patch: &Patch,
        opts: &PatchOptions,
    ) -> Result<R, Error> {
        self.patch_request(name, subresource, patch, opts)?.json().await
    }

    /// The request of a patch, its answer not read yet.
    pub(super) fn patch_request(
        &self,
        name: &str,
        subresource: &str,
        patch: &Patch,
        opts: &PatchOptions,
    ) -> Result<Request, Error> {
        if matches!(patch, Patch::Apply(_)) && opts.field_manager.is_none() {
            return Err(missing_field_manager("apply patches"));
        }
        Ok(self
            .target
            .item(http::Method::PATCH, name, subresource, None)?
            .params(opts.query_pairs())
            .json_body_as(patch.body(), patch.content_type()))
    }

    /// Server-side apply of `config` to a subresource (`""`: the object).
    pub async fn apply_subresource<B: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: &str,
        config: &B,
        opts: &ApplyOptions,
    ) -> Result<R, Error> {
        self.apply_request(name, subresource, config, opts)?.json().await
    }

    /// The request of a server-side apply, its answer not read yet.
    pub(super) fn apply_request<B: Serialize + ?Sized>(
        &self,
        name: &str,
        subresource: &str,
        config: &B,
        opts: &ApplyOptions,
    ) -> Result<Request, Error> {
        if opts.field_manager.is_empty() {
            return Err(missing_field_manager("apply"));
        }
        Ok(self
            .target
            .item(http::Method::PATCH, name, subresource, None)?
            .params(opts.query_pairs())
            .json_body_as(config, "application/apply-patch+yaml"))
    }

    /// A subresource's answer as text (pod `log`), invalid UTF-8 replaced.
    pub async fn get_subresource_text<P: Serialize + ?Sized>(
        &self,
        name: &str,
        subresource: &str,
        params: &P,
    ) -> Result<String, Error> {
        use futures_util::TryStreamExt as _;
        let chunks: Vec<bytes::Bytes> = self.stream_subresource(name, subresource, params).await?.try_collect().await?;
        let mut bytes = Vec::with_capacity(chunks.iter().map(|c| c.len()).sum());
        for chunk in &chunks {
            bytes.extend_from_slice(chunk);
        }
        Ok(String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }

    /// A subresource's body as a byte stream (`log` with `follow=true`);
    /// no client-side timeout.
    pub async fn stream_subresource<P: Serialize + ?Sized>(
        &self,
        name: &str,
        subresource: &str,
        params: &P,
    ) -> Result<ByteStream, Error> {
        self.target.item(http::Method::GET, name, subresource, None)?.params_from(params).no_timeout().stream().await
    }

    /// `method` (`POST`, `PUT`) with a JSON body to the object or a
    /// subresource, in the object's namespace when this client is for all
    /// namespaces.
    pub(super) async fn write<B: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        method: http::Method,
        name: &str,
        subresource: &str,
        object_ns: Option<&str>,
        body: &B,
        opts: &WriteOptions,
    ) -> Result<R, Error> {
        self.target.item(method, name, subresource, object_ns)?.params(opts.query_pairs()).json_body(body).json().await
    }
}

fn missing_field_manager(what: &str) -> Error {
    Error::InvalidRequest { what: format!("fieldManager (required for {what})"), message: "must not be empty".into() }
}

/// Kinds served with a `status` subresource (client-go's `UpdateStatus`
/// and `ApplyStatus`), whose body is the object itself.
pub trait HasStatus: ClientObject {}

impl<K: HasStatus> ResourceClient<K> {
    /// Reads the object `name` through its `status` subresource.
    pub async fn get_status(&self, name: &str) -> Result<K, Error> {
        self.get_subresource(name, "status", &()).await
    }

    /// Replaces the status of the object named by `obj.metadata.name`
    /// (the server ignores changes outside `status`).
    pub async fn update_status(&self, obj: &K, opts: &UpdateOptions) -> Result<K, Error> {
        self.write_object(http::Method::PUT, "status", obj, opts).await
    }

    /// Patches the status of the object `name`.
    pub async fn patch_status(&self, name: &str, patch: &Patch, opts: &PatchOptions) -> Result<K, Error> {
        self.object_answer(self.patch_request(name, "status", patch, opts)?).await
    }

    /// Server-side apply of `config` to the status of the object `name`:
    /// `K`'s generated apply configuration, `K` itself, or raw JSON, as
    /// [`apply`](ResourceClient::apply).
    pub async fn apply_status<B: ApplyConfiguration<K> + ?Sized>(
        &self,
        name: &str,
        config: &B,
        opts: &ApplyOptions,
    ) -> Result<K, Error> {
        self.object_answer(self.apply_request(name, "status", config, opts)?).await
    }
}

/// Kinds served with a `scale` subresource (deployments, stateful sets,
/// custom resources that declare one).
pub trait HasScale: ClientObject {
    /// The body of the subresource: `autoscaling/v1` `Scale` for every
    /// built-in kind and every CRD.
    type Scale: Serialize + DeserializeOwned;
}

impl<K: HasScale> ResourceClient<K> {
    /// Reads the `scale` subresource of the object `name`.
    pub async fn get_scale(&self, name: &str) -> Result<K::Scale, Error> {
        self.get_subresource(name, "scale", &()).await
    }

    /// Replaces the `scale` subresource of the object `name`.
    pub async fn update_scale(&self, name: &str, scale: &K::Scale, opts: &UpdateOptions) -> Result<K::Scale, Error> {
        self.update_subresource(name, "scale", scale, opts).await
    }

    /// Patches the `scale` subresource of the object `name`.
    pub async fn patch_scale(&self, name: &str, patch: &Patch, opts: &PatchOptions) -> Result<K::Scale, Error> {
        self.patch_subresource(name, "scale", patch, opts).await
    }

    /// Server-side apply of `config` to the `scale` subresource of the object `name`.
    pub async fn apply_scale<B: Serialize + ?Sized>(
        &self,
        name: &str,
        config: &B,
        opts: &ApplyOptions,
    ) -> Result<K::Scale, Error> {
        self.apply_subresource(name, "scale", config, opts).await
    }
}
