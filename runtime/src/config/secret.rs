use std::fmt;

use http::HeaderValue;
use serde::{Deserialize, Serialize};

use super::Error;

/// A token, password or private key. `Debug` and `Display` never show it;
/// call [`Secret::expose`] where the value is really needed.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps a sensitive value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }
    /// The value itself, for the few places that must send or parse it.
    pub fn expose(&self) -> &str {
        &self.0
    }
    /// Whether the value is empty (as an unset kubeconfig field reads).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<String> for Secret {
    fn from(s: String) -> Self {
        Secret(s)
    }
}

impl From<&str> for Secret {
    fn from(s: &str) -> Self {
        Secret(s.to_owned())
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// `Authorization: Bearer <token>` (the token trimmed), marked sensitive
/// so that HTTP tooling never logs it; a fixed token, a token file's and an
/// exec plugin's all go through here.
pub(super) fn bearer_header(token: &str) -> Result<HeaderValue, Error> {
    let mut v = HeaderValue::try_from(format!("Bearer {}", token.trim())).map_err(|_| Error::InvalidValue {
        what: "bearer token",
        message: "contains characters not allowed in a header".into(),
    })?;
    v.set_sensitive(true);
    Ok(v)
}
