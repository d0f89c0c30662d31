//! Kubernetes' protobuf wire format as an input: which message encodes
//! which IR type, and which field number, proto type and Go holding each IR
//! field has.
//!
//! A specs directory captured by `make specs` has, beside its OpenAPI
//! documents, `proto/` with the `generated.proto` files of the built-in API
//! modules (at their Go import paths) and `proto/go-fields.json`, facts
//! about the Go types the `.proto` files do not carry: whether a field is a
//! pointer (left out when nil) or a value (always written), and JSON
//! omission. [`load`] reads them ([`source`]) and maps them onto the IR
//! ([`mapping`]); the result, an [`Encodings`] (of [`crate::ir::proto`]),
//! is kept in [`crate::ir::Api::protobuf`] and the plan hands it to each
//! struct and field. Specs without `proto/` (custom resources, a cluster)
//! have none.

use std::path::Path;

use crate::error::Result;
use crate::ir::Api;
use crate::ir::proto::Encodings;

pub mod mapping;
pub mod source;

/// Reads `<specs>/proto/` and maps it onto `api`; `None` when the specs
/// have no `proto/`. Fails, naming the `.proto` file and the OpenAPI
/// document, when a type reached from a kind has a message that does not
/// fit it ([`mapping`]).
pub fn load(specs: &Path, api: &Api) -> Result<Option<Encodings>> {
    if !specs.join("proto").is_dir() {
        return Ok(None);
    }
    let sources = source::load(specs)?;
    mapping::map(api, &sources).map(Some)
}
