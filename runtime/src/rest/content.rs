//! Content negotiation, as client-go's typed clients do it: a request for a
//! kind that speaks protobuf ([`Resource::PROTOBUF`](crate::object::Resource::PROTOBUF))
//! accepts `application/vnd.kubernetes.protobuf,application/json`, and the
//! response is decoded by its own `Content-Type`, since a server may answer
//! JSON anyway (an aggregated API server that has no protobuf, say).
//! Request bodies of such kinds (create, update) go as protobuf.

use http::HeaderMap;

use super::error::Error;
use crate::protobuf::{Envelope, MAGIC};

/// Kubernetes' protobuf media type (`runtime.ContentTypeProtobuf`).
pub(crate) const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// What a request for a kind that speaks protobuf accepts: protobuf first,
/// JSON as well (client-go's `UseProtobufAsDefault`, byte for byte). Watches
/// send the same; the server answers them with the stream forms
/// (`;stream=watch`).
pub(crate) const ACCEPT_PROTOBUF: &str = "application/vnd.kubernetes.protobuf,application/json";

/// The format of a response body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// `application/json` (and `;stream=watch`).
    Json,
    /// `application/vnd.kubernetes.protobuf` (and `;stream=watch`).
    Protobuf,
}

/// The format of a response from its `Content-Type`, parameters ignored.
/// Without one, a body starting with protobuf's `k8s\0` is protobuf and
/// anything else JSON (as the client assumed before negotiating). Any other
/// type is [`Error::UnexpectedContentType`] naming it.
pub(crate) fn response_format(headers: &HeaderMap, body_start: &[u8], what: &str) -> Result<Format, Error> {
    let Some(value) = headers.get(http::header::CONTENT_TYPE) else {
        return Ok(if body_start.starts_with(&MAGIC) { Format::Protobuf } else { Format::Json });
    };
    let text = String::from_utf8_lossy(value.as_bytes());
    let essence = text.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    match essence.as_str() {
        "application/json" => Ok(Format::Json),
        PROTOBUF => Ok(Format::Protobuf),
        _ => Err(Error::UnexpectedContentType { what: what.to_owned(), content_type: text.into_owned() }),
    }
}

/// The envelope of a protobuf body.
pub(crate) fn envelope<'a>(body: &'a [u8], what: &str) -> Result<Envelope<'a>, Error> {
    Envelope::decode(body).map_err(|source| Error::DecodeProtobuf { what: what.to_owned(), source })
}

/// A protobuf decoding error of `what`.
pub(crate) fn protobuf_error(what: &str) -> impl FnOnce(crate::protobuf::Error) -> Error + '_ {
    move |source| Error::DecodeProtobuf { what: what.to_owned(), source }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(content_type: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::CONTENT_TYPE, content_type.parse().unwrap());
        headers
    }

    #[test]
    fn response_formats_follow_the_content_type() {
        let format = |ct: &str| response_format(&headers(ct), b"", "x");
        assert_eq!(format("application/json").unwrap(), Format::Json);
        assert_eq!(format("application/json;stream=watch").unwrap(), Format::Json);
        assert_eq!(format("application/vnd.kubernetes.protobuf").unwrap(), Format::Protobuf);
        assert_eq!(format("Application/Vnd.Kubernetes.Protobuf ; stream=watch").unwrap(), Format::Protobuf);
        let err = format("text/html; charset=utf-8").unwrap_err();
        assert!(
            matches!(&err, Error::UnexpectedContentType { content_type, .. } if content_type == "text/html; charset=utf-8")
        );
        assert!(err.to_string().contains("text/html"), "{err}");
        assert_eq!(response_format(&HeaderMap::new(), b"k8s\0\n", "x").unwrap(), Format::Protobuf);
        assert_eq!(response_format(&HeaderMap::new(), b"{}", "x").unwrap(), Format::Json);
    }
}
