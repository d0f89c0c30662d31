//! Credentials at run time: what goes into `Authorization` for the next
//! request, re-reading token files and re-running exec plugins as needed.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use http::HeaderValue;
use tokio::time::Instant;

use super::exec::ExecAuth;
use super::secret::bearer_header;
use super::{Config, Error, ExecConfig, Secret};

/// How requests authenticate, as configured. Client certificates are in
/// [`Config`] itself since they belong to the TLS layer.
#[derive(Debug, Clone, Default)]
pub enum Auth {
    /// No credentials: anonymous, or authenticated by a client certificate
    /// alone.
    #[default]
    None,
    /// A fixed bearer token.
    Bearer(Secret),
    /// A bearer token read from a file and re-read every minute, so rotated
    /// (projected service account) tokens are picked up.
    TokenFile(PathBuf),
    /// HTTP basic authentication (kubeconfig `username`/`password`), which
    /// current apiservers no longer accept but proxies in front of them may.
    Basic {
        /// The user name.
        username: String,
        /// The password.
        password: Secret,
    },
    /// An exec credential plugin (token or client certificate); a run that
    /// takes longer than [`Config::exec_timeout`] is killed.
    Exec(Box<ExecConfig>),
}

/// How long a token read from a file is used before reading the file
/// again (client-go's `cachingTokenSource` for `BearerTokenFile`).
pub const TOKEN_FILE_REFRESH: Duration = Duration::from_secs(60);

/// The run-time side of [`Auth`]; cheap to clone, shared by every request
/// of a client.
#[derive(Clone, Debug)]
pub struct Authenticator {
    inner: Arc<Inner>,
}

#[derive(Debug)]
enum Inner {
    None,
    Static(HeaderValue),
    TokenFile(TokenFile),
    Exec(Box<ExecAuth>),
}

#[derive(Debug)]
struct TokenFile {
    path: PathBuf,
    refresh: Duration,
    cached: Mutex<Option<(HeaderValue, Instant)>>,
}

impl Authenticator {
    /// The authenticator of `config`'s [`Auth`]; fails only when a fixed
    /// token or basic credentials cannot be put in a header.
    pub fn new(config: &Config) -> Result<Authenticator, Error> {
        let inner = match &config.auth {
            Auth::None => Inner::None,
            Auth::Bearer(token) => Inner::Static(bearer_header(token.expose())?),
            Auth::Basic { username, password } => {
                let raw = format!("{username}:{}", password.expose());
                let mut v =
                    HeaderValue::try_from(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(raw)))
                        .map_err(|_| Error::InvalidValue { what: "basic auth", message: "not a valid header".into() })?;
                v.set_sensitive(true);
                Inner::Static(v)
            }
            Auth::TokenFile(path) => Inner::TokenFile(TokenFile {
                path: path.clone(),
                refresh: TOKEN_FILE_REFRESH,
                cached: Mutex::new(None),
            }),
            Auth::Exec(exec) => Inner::Exec(Box::new(ExecAuth::new((**exec).clone(), config))),
        };
        Ok(Authenticator { inner: Arc::new(inner) })
    }

    /// The `Authorization` header for the next request, if any (marked
    /// sensitive so `http`'s Debug hides it).
    ///
    /// # Cancel safety
    /// Cancel safe: an exec plugin cut short is killed and its result never
    /// cached; the next call runs it again.
    pub async fn authorization(&self) -> Result<Option<HeaderValue>, Error> {
        match &*self.inner {
            Inner::None => Ok(None),
            Inner::Static(v) => Ok(Some(v.clone())),
            Inner::TokenFile(tf) => tf.header().map(Some),
            Inner::Exec(exec) => exec.authorization().await,
        }
    }

    /// Called after a 401 answer to a request sent with `used`. Returns
    /// whether new credentials may now be obtained, i.e. whether sending the
    /// request again can help.
    pub fn unauthorized(&self, used: Option<&HeaderValue>) -> bool {
        match &*self.inner {
            Inner::Exec(exec) => exec.invalidate(used),
            Inner::TokenFile(tf) => {
                // The file may have been rotated since we last read it.
                let mut cached = tf.cached.lock().unwrap_or_else(|e| e.into_inner());
                *cached = None;
                false
            }
            _ => false,
        }
    }

    /// The TLS client certificate resolver fed by an exec plugin, if the
    /// credentials come from one.
    pub(crate) fn exec_cert_resolver(&self) -> Option<Arc<dyn rustls::client::ResolvesClientCert>> {
        match &*self.inner {
            Inner::Exec(exec) => Some(exec.cert_resolver()),
            _ => None,
        }
    }

    /// Changes whenever the client certificate the credentials present
    /// changes (a new one from an exec plugin); connections made before
    /// must then be closed.
    pub(crate) fn cert_generation(&self) -> u64 {
        match &*self.inner {
            Inner::Exec(exec) => exec.cert_generation(),
            _ => 0,
        }
    }

    #[cfg(test)]
    fn with_token_file_refresh(self, refresh: Duration) -> Self {
        match &*self.inner {
            Inner::TokenFile(tf) => Authenticator {
                inner: Arc::new(Inner::TokenFile(TokenFile {
                    path: tf.path.clone(),
                    refresh,
                    cached: Mutex::new(None),
                })),
            },
            _ => self,
        }
    }
}

impl TokenFile {
    fn header(&self) -> Result<HeaderValue, Error> {
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((v, read_at)) = cached.as_ref()
            && read_at.elapsed() < self.refresh
        {
            return Ok(v.clone());
        }
        match std::fs::read_to_string(&self.path) {
            Ok(token) if !token.trim().is_empty() => {
                let v = bearer_header(&token)?;
                *cached = Some((v.clone(), Instant::now()));
                Ok(v)
            }
            // A failed re-read keeps the previous token, as client-go does:
            // rotation writes files non-atomically on some platforms.
            result => match cached.as_mut() {
                Some((v, read_at)) => {
                    tracing::warn!(path = %self.path.display(), "re-reading token file failed; using the previous token");
                    *read_at = Instant::now();
                    Ok(v.clone())
                }
                None => Err(match result {
                    Err(source) => Error::ReadFile { what: "token file", path: self.path.clone(), source },
                    Ok(_) => {
                        Error::InvalidValue { what: "token file", message: format!("{} is empty", self.path.display()) }
                    }
                }),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn token_file_is_reread_after_refresh_period() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "one\n").unwrap();
        let mut c = Config::new("https://h".parse().unwrap());
        c.auth = Auth::TokenFile(path.clone());
        let a = Authenticator::new(&c).unwrap().with_token_file_refresh(Duration::from_secs(60));
        assert_eq!(a.authorization().await.unwrap().unwrap(), "Bearer one");
        std::fs::write(&path, "two").unwrap();
        assert_eq!(a.authorization().await.unwrap().unwrap(), "Bearer one", "cached");
        tokio::time::advance(Duration::from_secs(61)).await;
        assert_eq!(a.authorization().await.unwrap().unwrap(), "Bearer two");
        std::fs::remove_file(&path).unwrap();
        tokio::time::advance(Duration::from_secs(61)).await;
        assert_eq!(a.authorization().await.unwrap().unwrap(), "Bearer two", "keeps last good token");
    }

    #[tokio::test]
    async fn static_and_basic_headers_are_sensitive() {
        let mut c = Config::new("https://h".parse().unwrap());
        c.auth = Auth::Basic { username: "u".into(), password: "p".into() };
        let v = Authenticator::new(&c).unwrap().authorization().await.unwrap().unwrap();
        assert_eq!(v, "Basic dTpw");
        assert!(v.is_sensitive());
        assert!(!format!("{v:?}").contains("dTpw"));
        c.auth = Auth::Bearer("abc".into());
        let a = Authenticator::new(&c).unwrap();
        assert!(!format!("{a:?}").contains("abc"));
        assert!(!format!("{c:?}").contains("abc"));
        assert_eq!(a.authorization().await.unwrap().unwrap(), "Bearer abc");
        assert!(!a.unauthorized(None));
    }
}
