//! One line for an error and its causes, for logs and for `main`.

use std::error::Error;
use std::fmt;

/// Shows an error followed by each of its causes (`source()`), joined by
/// `": "`, leaving out a cause whose text is already written: `listing
/// failed: GET https://10.0.0.1:6443/api/v1/pods: tcp connect error:
/// Connection refused (os error 111)`.
///
/// Use it where an error is reported rather than handled: a log line
/// (`tracing::warn!(error = %ErrorChain(&err))`), the text of a failure
/// kept for later, or the error a program's `main` prints. Every error of
/// this crate names only its own layer in its `Display`, as Rust errors do,
/// and leaves its cause to `source()`; printed alone it says what failed
/// but not why. This names the root cause as well.
#[derive(Clone, Copy)]
pub struct ErrorChain<'a>(pub &'a (dyn Error + 'static));

impl fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Compared with all that is written so far: a layer may quote a
        // cause from further down, not only its own.
        let mut written = self.0.to_string();
        let mut cause = self.0.source();
        while let Some(err) = cause {
            let text = err.to_string();
            if !text.is_empty() && !written.contains(&text) {
                written.push_str(": ");
                written.push_str(&text);
            }
            cause = err.source();
        }
        f.write_str(&written)
    }
}

impl fmt::Debug for ErrorChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// An error a program's `main` returns, printed as one line with its
/// causes ([`ErrorChain`]) rather than as a `Debug` dump of nested enums:
///
/// ```no_run
/// # use k8s_client_runtime::{Client, Report};
/// #[tokio::main]
/// async fn main() -> Result<(), Report> {
///     let client = Client::try_default()?;
///     // ...
/// #   let _ = client;
///     Ok(())
/// }
/// ```
///
/// prints, for a kubeconfig naming a server that is down,
/// `Error: GET https://127.0.0.1:6443/api: tcp connect error: Connection refused (os error 111)`.
/// Any error converts into it with `?`; it is not an error itself (as
/// `anyhow::Error` is not), so it is for the end of the line, not for
/// library signatures.
pub struct Report(Box<dyn Error + Send + Sync + 'static>);

impl Report {
    /// The error reported.
    pub fn error(&self) -> &(dyn Error + Send + Sync + 'static) {
        &*self.0
    }
}

impl<E: Error + Send + Sync + 'static> From<E> for Report {
    fn from(error: E) -> Self {
        Report(Box::new(error))
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&ErrorChain(&*self.0), f)
    }
}

impl fmt::Debug for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&ErrorChain(&*self.0), f)
    }
}

#[cfg(test)]
mod layer_tests;

#[cfg(test)]
mod tests {
    use super::{ErrorChain, Report};

    #[derive(Debug, thiserror::Error)]
    #[error("{message}")]
    struct Layer {
        message: String,
        #[source]
        source: Option<Box<Layer>>,
    }

    fn layers(messages: &[&str]) -> Layer {
        let mut source = None;
        for message in messages.iter().rev() {
            source = Some(Box::new(Layer { message: (*message).to_owned(), source }));
        }
        *source.expect("at least one layer")
    }

    #[test]
    fn every_cause_is_named_once_in_order() {
        let err = layers(&["listing failed", "GET /api/v1/pods", "connection refused"]);
        assert_eq!(ErrorChain(&err).to_string(), "listing failed: GET /api/v1/pods: connection refused");
    }

    #[test]
    fn a_cause_the_message_already_holds_is_left_out() {
        let err = layers(&["GET /api/v1/pods: client error (Connect)", "client error (Connect)", "tcp connect error"]);
        assert_eq!(ErrorChain(&err).to_string(), "GET /api/v1/pods: client error (Connect): tcp connect error");
    }

    #[test]
    fn a_cause_quoted_two_layers_up_is_left_out() {
        let err =
            layers(&["GET /x: tcp connect error: refused", "client error (Connect)", "tcp connect error: refused"]);
        assert_eq!(ErrorChain(&err).to_string(), "GET /x: tcp connect error: refused: client error (Connect)");
    }

    #[test]
    fn an_error_without_causes_is_its_message() {
        let err = layers(&["watch failed"]);
        assert_eq!(ErrorChain(&err).to_string(), "watch failed");
        assert_eq!(format!("{:?}", ErrorChain(&err)), "watch failed");
    }

    #[test]
    fn a_report_prints_the_chain_in_both_forms() {
        let report = Report::from(layers(&["listing failed", "GET /api/v1/pods", "connection refused"]));
        assert_eq!(format!("{report:?}"), "listing failed: GET /api/v1/pods: connection refused");
        assert_eq!(report.to_string(), format!("{report:?}"));
        assert_eq!(report.error().to_string(), "listing failed");
    }
}
