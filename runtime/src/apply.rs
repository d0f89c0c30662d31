//! Server-side apply: what [`ResourceClient::apply`](crate::ResourceClient::apply)
//! sends, and [`extract`], client-go's `Extract<Kind>`.
//!
//! # When to use what
//! - **A generated apply configuration** (`DeploymentApply`, with the
//!   generated crate's `apply` feature): every field optional, so only what
//!   you set is sent and owned by your field manager. The right body for
//!   server-side apply; build it with `with_*` methods or a struct literal.
//! - **The kind itself** (`Deployment`): every required field is sent, empty
//!   ones included, so your manager claims them all and conflicts with
//!   whoever else owns them. Only for objects your manager owns whole.
//! - **`serde_json::Value`**: raw JSON, for what no generated type describes.
//!
//! # Read, modify, apply
//! A controller that applies only what it means to change reads the object
//! (with its managedFields: a client's `get`, not an informer's cache,
//! which drops them), extracts what its manager owns, changes that and
//! applies it back; fields it stopped setting are released, fields others
//! own are never sent:
//! ```ignore
//! let deployment = deployments.get("web").await?;
//! let mut config = DeploymentApply::extract(&deployment, "my-controller")?;
//! config = config.with_spec(DeploymentSpecApply::default().with_replicas(3));
//! deployments.apply("web", &config, &ApplyOptions::new("my-controller")).await?;
//! ```

mod extract;
mod fields_v1;

pub use extract::{ExtractError, extract};

use serde::Serialize;

use crate::object::Object;

/// A body [`ResourceClient<K>::apply`](crate::ResourceClient::apply)
/// accepts for kind `K`: `K`'s generated apply configuration, `K` itself,
/// or raw JSON ([`serde_json::Value`]). See the [module docs](self) for
/// when to use which.
pub trait ApplyConfiguration<K>: Serialize {}

impl<K> ApplyConfiguration<K> for serde_json::Value {}

impl<K: Object + Serialize> ApplyConfiguration<K> for K {}
