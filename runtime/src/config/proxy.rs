//! Which proxy a connection to the apiserver goes through: the kubeconfig's
//! `proxy-url`, else `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` as Go's
//! `http.ProxyFromEnvironment` (golang.org/x/net/http/httpproxy) reads them,
//! which is what kubectl and client-go do.
//!
//! Proxy URLs often carry a password (`http://user:password@proxy:3128`).
//! Every error, log line and `Debug` output that names one shows it as Go's
//! `url.Redacted` does: `http://user:xxxxx@proxy:3128`.
//!
//! A kubeconfig `proxy-url` that cannot be used is an error when the
//! kubeconfig is loaded. An environment value that cannot be parsed at all
//! is ignored, as Go ignores it, with one warning when a client is built;
//! one that parses but cannot be used (an unknown scheme) fails the
//! requests it applies to, as it does in Go.

use std::borrow::Cow;
use std::fmt;

use base64::Engine as _;
use http::HeaderValue;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC};

use super::Error;
use super::no_proxy::NoProxy;

/// Where the proxy setting of a [`Config`](super::Config) comes from.
#[derive(Clone, Default, PartialEq, Eq)]
pub enum Proxy {
    /// The process environment, read when the client is built (kubectl's
    /// behaviour when the kubeconfig has no `proxy-url`).
    #[default]
    FromEnvironment,
    /// Environment values given explicitly instead of read from the process
    /// (tests, programs that manage their own settings).
    Environment(ProxyEnv),
    /// Always this proxy (kubeconfig `proxy-url`); the environment is not
    /// consulted, and loopback targets are proxied too, as in client-go.
    Url(ProxyUrl),
    /// Connect directly.
    None,
}

impl fmt::Debug for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Proxy::FromEnvironment => f.write_str("FromEnvironment"),
            Proxy::Environment(env) => f.debug_tuple("Environment").field(env).finish(),
            Proxy::Url(url) => f.debug_tuple("Url").field(url).finish(),
            Proxy::None => f.write_str("None"),
        }
    }
}

/// The protocol spoken to a proxy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProxyScheme {
    /// `http://`: plain `CONNECT` (or absolute-form requests for `http` servers).
    Http,
    /// `https://`: `CONNECT` inside TLS to the proxy.
    Https,
    /// `socks5://`, or `socks5h://` in the environment: the server's host
    /// name is resolved by the proxy (for both, as in Go).
    Socks5,
}

impl ProxyScheme {
    fn as_str(self) -> &'static str {
        match self {
            ProxyScheme::Http => "http",
            ProxyScheme::Https => "https",
            ProxyScheme::Socks5 => "socks5",
        }
    }

    fn default_port(self) -> u16 {
        match self {
            ProxyScheme::Http => 80,
            ProxyScheme::Https => 443,
            ProxyScheme::Socks5 => 1080,
        }
    }
}

/// A parsed proxy URL. `Debug` and `Display` show the URL with its password
/// replaced by `xxxxx`.
#[derive(Clone, PartialEq, Eq)]
pub struct ProxyUrl {
    /// How to talk to the proxy.
    pub scheme: ProxyScheme,
    /// The proxy's host name or IP address (without brackets).
    pub host: String,
    /// The proxy's port (the scheme's default when the URL has none).
    pub port: u16,
    /// `user:password@` of the URL, percent-decoded.
    pub credentials: Option<(String, super::Secret)>,
}

/// What stays unescaped of a user name when it is shown again.
const USERINFO: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

impl fmt::Display for ProxyUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://", self.scheme.as_str())?;
        if let Some((user, password)) = &self.credentials {
            write!(f, "{}", percent_encoding::utf8_percent_encode(user, USERINFO))?;
            if !password.is_empty() {
                f.write_str(":xxxxx")?;
            }
            f.write_str("@")?;
        }
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl fmt::Debug for ProxyUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// `raw` with the password of its `user:password@` replaced by `xxxxx`, as
/// Go's `url.Redacted` shows a URL. It works on text that does not parse as
/// well, redacting generously rather than too little: everything from the
/// first `:` after the scheme to the last `@` counts as the password.
pub(crate) fn redact_url(raw: &str) -> Cow<'_, str> {
    // Only a real scheme (`[A-Za-z][A-Za-z0-9+.-]*://`) ends at `://`; a
    // password may contain `://` too.
    let after_scheme = raw
        .find("://")
        .filter(|&i| {
            let scheme = &raw[..i];
            scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        })
        .map_or(0, |i| i + 3);
    let rest = &raw[after_scheme..];
    let Some(at) = rest.rfind('@') else { return Cow::Borrowed(raw) };
    let Some(colon) = rest[..at].find(':') else { return Cow::Borrowed(raw) };
    Cow::Owned(format!("{}{}:xxxxx{}", &raw[..after_scheme], &rest[..colon], &rest[at..]))
}

/// Why Go's `url.Parse` refuses `raw` in any form: control characters, or a
/// `%` not followed by two hex digits outside the query (Go checks escapes
/// in the user info, host, path and fragment).
fn refused_by_go(raw: &str) -> Option<&'static str> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Some("contains a control character");
    }
    let (before_fragment, fragment) = raw.split_once('#').unwrap_or((raw, ""));
    let before_query = before_fragment.split_once('?').map_or(before_fragment, |(b, _)| b);
    let bad_escape = |s: &str| {
        let b = s.as_bytes();
        let hex = |i: usize| b.get(i).is_some_and(u8::is_ascii_hexdigit);
        b.iter().enumerate().any(|(i, c)| *c == b'%' && !(hex(i + 1) && hex(i + 2)))
    };
    (bad_escape(before_query) || bad_escape(fragment)).then_some("contains an invalid %-escape")
}

/// Which schemes a proxy URL may have where it comes from.
#[derive(Clone, Copy)]
enum Source {
    /// kubeconfig `proxy-url`: client-go's `parseProxyURL`.
    Kubeconfig,
    /// `*_PROXY`: what Go's transport can use (`socks5h` too).
    Environment,
}

impl ProxyUrl {
    /// Parses a proxy URL as client-go's `parseProxyURL` does for the
    /// kubeconfig's `proxy-url`: the scheme must be http, https or socks5.
    /// Errors show the URL with its password redacted.
    pub fn parse(url: &str) -> Result<ProxyUrl, String> {
        if refused_by_go(url).is_some() {
            return Err(format!("could not parse: {}", redact_url(url)));
        }
        let uri: http::Uri = url.parse().map_err(|_| format!("could not parse: {}", redact_url(url)))?;
        ProxyUrl::from_uri(&uri, url, Source::Kubeconfig)
    }

    /// The parts of an already parsed URL; `raw` is its text, for errors.
    fn from_uri(uri: &http::Uri, raw: &str, source: Source) -> Result<ProxyUrl, String> {
        let scheme_name = uri.scheme_str().unwrap_or_default().to_ascii_lowercase();
        let scheme = match (scheme_name.as_str(), source) {
            ("http", _) => ProxyScheme::Http,
            ("https", _) => ProxyScheme::Https,
            ("socks5", _) | ("socks5h", Source::Environment) => ProxyScheme::Socks5,
            (other, Source::Kubeconfig) => {
                return Err(format!("unsupported scheme {other:?}, must be http, https, or socks5"));
            }
            (other, Source::Environment) => {
                return Err(format!("unsupported scheme {other:?}, must be http, https, socks5 or socks5h"));
            }
        };
        let authority = uri.authority().ok_or_else(|| format!("could not parse: {}", redact_url(raw)))?;
        let host = authority.host().trim_start_matches('[').trim_end_matches(']').to_owned();
        if host.is_empty() {
            return Err(format!("{}: the URL has no host", redact_url(raw)));
        }
        // `http::Uri` accepts any digits as a port, and then reports none
        // when they do not fit a u16: read it from the text.
        let host_port = authority.as_str().rsplit('@').next().unwrap_or_default();
        let port = match host_port.rsplit_once(':').filter(|_| !host_port.ends_with(']')) {
            Some((_, "")) | None => scheme.default_port(),
            Some((_, port)) => port.parse().map_err(|_| {
                // Not echoed unless numeric: a misplaced `:` may have put
                // part of a password here.
                let shown = if port.bytes().all(|b| b.is_ascii_digit()) { port } else { "" };
                format!("could not parse: {}: invalid port {shown:?}", redact_url(raw))
            })?,
        };
        let credentials = authority.as_str().rsplit_once('@').map(|(userinfo, _)| {
            let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
            match userinfo.split_once(':') {
                Some((u, p)) => (decode(u), super::Secret::new(decode(p))),
                None => (decode(userinfo), super::Secret::default()),
            }
        });
        Ok(ProxyUrl { scheme, host, port, credentials })
    }

    /// An environment value as httpproxy's `parseProxy` reads it: a URL
    /// with scheme and host, else `host[:port]` (with optional
    /// `user:password@`) meaning an `http://` proxy.
    fn parse_env(value: &str) -> EnvProxy {
        if value.is_empty() {
            return EnvProxy::Unset;
        }
        if let Some(why) = refused_by_go(value) {
            return EnvProxy::Unparsable(why);
        }
        let with_host = |s: &str| s.parse::<http::Uri>().ok().filter(|u| u.host().is_some_and(|h| !h.is_empty()));
        let uri = match with_host(value).filter(|u| u.scheme().is_some()) {
            Some(uri) => uri,
            // A value with a scheme whose rest does not parse: Go's retry
            // with `http://` in front yields a URL for the host `scheme:`,
            // which then fails every request; so do we, with a clearer
            // message.
            None if value.contains("://") => {
                return EnvProxy::Invalid(format!("{}: not a URL with a host", redact_url(value)));
            }
            None => match with_host(&format!("http://{value}")) {
                Some(uri) => uri,
                None => return EnvProxy::Invalid(format!("{}: neither a URL nor host:port", redact_url(value))),
            },
        };
        match ProxyUrl::from_uri(&uri, value, Source::Environment) {
            Ok(url) => EnvProxy::Use(url),
            Err(message) => EnvProxy::Invalid(message),
        }
    }

    /// `Proxy-Authorization: Basic ...` for the URL's `user:password@`, as
    /// Go's transport sends it (also for a user without password); marked
    /// sensitive so `http`'s `Debug` hides it.
    pub(crate) fn authorization(&self) -> Option<HeaderValue> {
        let (user, password) = self.credentials.as_ref()?;
        let basic = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{}", password.expose()));
        let mut value = HeaderValue::try_from(format!("Basic {basic}")).ok()?;
        value.set_sensitive(true);
        Some(value)
    }
}

/// Proxy environment variables (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`,
/// upper case first, then lower case; `REQUEST_METHOD` marks a CGI process,
/// where `HTTP_PROXY` may come from a request header and is ignored).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ProxyEnv {
    /// Proxy for `http://` servers.
    pub http_proxy: String,
    /// Proxy for `https://` servers.
    pub https_proxy: String,
    /// Comma-separated exceptions: `*`, IPs and CIDRs, domain suffixes
    /// (`example.com` also matches `a.example.com`), each with an optional
    /// `:port`.
    pub no_proxy: String,
    /// Running as a CGI program (`REQUEST_METHOD` set).
    pub cgi: bool,
}

impl fmt::Debug for ProxyEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxyEnv")
            .field("http_proxy", &redact_url(&self.http_proxy))
            .field("https_proxy", &redact_url(&self.https_proxy))
            .field("no_proxy", &self.no_proxy)
            .field("cgi", &self.cgi)
            .finish()
    }
}

impl ProxyEnv {
    /// Reads the variables through `lookup` (so tests need not touch the
    /// process environment).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> ProxyEnv {
        let any = |names: [&str; 2]| names.iter().find_map(|n| lookup(n).filter(|v| !v.is_empty())).unwrap_or_default();
        ProxyEnv {
            http_proxy: any(["HTTP_PROXY", "http_proxy"]),
            https_proxy: any(["HTTPS_PROXY", "https_proxy"]),
            no_proxy: any(["NO_PROXY", "no_proxy"]),
            cgi: lookup("REQUEST_METHOD").is_some_and(|v| !v.is_empty()),
        }
    }

    /// The variables of this process.
    pub fn from_process() -> ProxyEnv {
        ProxyEnv::from_lookup(|name| std::env::var(name).ok())
    }

    /// The proxy for a server at `scheme://host:port`, if any. `localhost`
    /// and loopback addresses are never proxied; a proxy variable that
    /// cannot be parsed counts as unset (a client built from this
    /// environment warns about it once).
    pub fn proxy_for(&self, scheme: &str, host: &str, port: u16) -> Result<Option<ProxyUrl>, Error> {
        self.parse().proxy_for(scheme, host, port)
    }

    /// The variables parsed once, as httpproxy's `ProxyFunc` does; a
    /// variable that cannot be parsed is logged here, then ignored.
    pub(crate) fn resolve(&self) -> EnvProxies {
        let parsed = self.parse();
        for (name, raw, value) in
            [("HTTPS_PROXY", &self.https_proxy, &parsed.https), ("HTTP_PROXY", &self.http_proxy, &parsed.http)]
        {
            if let EnvProxy::Unparsable(why) = value {
                tracing::warn!(
                    variable = name,
                    value = ?redact_url(raw),
                    "ignoring the proxy setting: it {why}, so it cannot be parsed as a URL"
                );
            }
        }
        parsed
    }

    fn parse(&self) -> EnvProxies {
        EnvProxies {
            http: ProxyUrl::parse_env(&self.http_proxy),
            https: ProxyUrl::parse_env(&self.https_proxy),
            no_proxy: NoProxy::parse(&self.no_proxy),
            cgi: self.cgi,
        }
    }
}

/// One proxy variable, parsed.
#[derive(Debug, Clone)]
enum EnvProxy {
    Unset,
    Use(ProxyUrl),
    /// Refused by Go's URL parser in every form: ignored.
    Unparsable(&'static str),
    /// Parsed, but no proxy can be reached through it: requests fail with
    /// this (password-free) message.
    Invalid(String),
}

/// [`ProxyEnv`] parsed, ready to answer per connection.
#[derive(Debug, Clone)]
pub(crate) struct EnvProxies {
    http: EnvProxy,
    https: EnvProxy,
    no_proxy: NoProxy,
    cgi: bool,
}

impl EnvProxies {
    /// httpproxy's `proxyForURL`.
    pub(crate) fn proxy_for(&self, scheme: &str, host: &str, port: u16) -> Result<Option<ProxyUrl>, Error> {
        let (var, value) = match scheme {
            "https" => ("HTTPS_PROXY", &self.https),
            "http" => ("HTTP_PROXY", &self.http),
            _ => return Ok(None),
        };
        if matches!(value, EnvProxy::Unset | EnvProxy::Unparsable(_)) {
            return Ok(None);
        }
        if scheme == "http" && self.cgi {
            return Err(Error::InvalidValue {
                what: "HTTP_PROXY",
                message: "refusing to use HTTP_PROXY in a CGI environment (REQUEST_METHOD is set)".into(),
            });
        }
        if !self.no_proxy.use_proxy(host, port) {
            return Ok(None);
        }
        match value {
            EnvProxy::Use(url) => Ok(Some(url.clone())),
            EnvProxy::Invalid(message) => Err(Error::InvalidValue { what: var, message: message.clone() }),
            EnvProxy::Unset | EnvProxy::Unparsable(_) => Ok(None),
        }
    }
}

#[cfg(test)]
#[path = "proxy_tests.rs"]
mod tests;
