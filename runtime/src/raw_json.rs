//! [`RawJson`]: a JSON value kept as its text. Below both the codec, which
//! decodes `FieldsV1` into it, and `intern`, which shares equal texts.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A JSON value kept as its text, for opaque payloads such as
/// `metav1.FieldsV1` (managedFields): decoding copies the bytes instead of
/// building a tree, and encoding writes them back unchanged.
#[derive(Clone)]
pub struct RawJson(Box<serde_json::value::RawValue>);

impl RawJson {
    /// Wraps JSON text, checking that it is one valid JSON value.
    pub fn from_text(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::value::RawValue::from_string(text.to_owned()).map(RawJson)
    }
    /// The JSON text of `value`.
    pub fn from_value(value: &serde_json::Value) -> Self {
        RawJson(serde_json::value::to_raw_value(value).expect("a Value always serializes"))
    }
    /// The JSON text, exactly as read.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }
    /// The value parsed into a JSON tree.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::from_str(self.0.get()).unwrap_or(serde_json::Value::Null)
    }
}

impl Default for RawJson {
    /// `{}`, copied from one parsed once: a decoder makes the default of a
    /// `FieldsV1` before reading the text that replaces it.
    fn default() -> Self {
        static EMPTY: std::sync::OnceLock<RawJson> = std::sync::OnceLock::new();
        EMPTY.get_or_init(|| RawJson::from_text("{}").expect("literal is valid JSON")).clone()
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get() || self.to_value() == other.to_value()
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.get())
    }
}

impl Serialize for RawJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Box::<serde_json::value::RawValue>::deserialize(d).map(RawJson)
    }
}
