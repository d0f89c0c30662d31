//! Which proxy a connection to the apiserver goes through: the kubeconfig's
//! `proxy-url`, else `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` as Go's
//! `http.ProxyFromEnvironment` (golang.org/x/net/http/httpproxy) reads them,
//! which is what kubectl and client-go do.

use std::fmt;
use std::net::IpAddr;

use super::Error;

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
    /// `socks5://`: the server's host name is resolved by the proxy.
    Socks5,
}

/// A parsed proxy URL. `Debug` hides the password of `user:password@`.
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

impl fmt::Debug for ProxyUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = match self.scheme {
            ProxyScheme::Http => "http",
            ProxyScheme::Https => "https",
            ProxyScheme::Socks5 => "socks5",
        };
        let user = self.credentials.as_ref().map(|(u, _)| format!("{u}:<redacted>@")).unwrap_or_default();
        write!(f, "{scheme}://{user}{}:{}", self.host, self.port)
    }
}

impl ProxyUrl {
    /// Parses a proxy URL as client-go's `parseProxyURL` does for the
    /// kubeconfig's `proxy-url`: the scheme must be http, https or socks5.
    pub fn parse(url: &str) -> Result<ProxyUrl, String> {
        let uri: http::Uri = url.parse().map_err(|_| format!("could not parse: {url}"))?;
        let scheme = match uri.scheme_str().unwrap_or_default() {
            "http" => ProxyScheme::Http,
            "https" => ProxyScheme::Https,
            "socks5" => ProxyScheme::Socks5,
            other => return Err(format!("unsupported scheme {other:?}, must be http, https, or socks5")),
        };
        let authority = uri.authority().ok_or_else(|| format!("could not parse: {url}"))?;
        let host = authority.host().trim_start_matches('[').trim_end_matches(']').to_owned();
        if host.is_empty() {
            return Err(format!("could not parse: {url}"));
        }
        let port = authority.port_u16().unwrap_or(match scheme {
            ProxyScheme::Http => 80,
            ProxyScheme::Https => 443,
            ProxyScheme::Socks5 => 1080,
        });
        let credentials = authority.as_str().rsplit_once('@').map(|(userinfo, _)| {
            let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
            match userinfo.split_once(':') {
                Some((u, p)) => (decode(u), super::Secret::new(decode(p))),
                None => (decode(userinfo), super::Secret::default()),
            }
        });
        Ok(ProxyUrl { scheme, host, port, credentials })
    }

    /// An environment value: like [`ProxyUrl::parse`], but a bare
    /// `host:port` means an HTTP proxy (httpproxy's `parseProxy`).
    fn parse_env(value: &str) -> Result<ProxyUrl, String> {
        let has_scheme = value.parse::<http::Uri>().is_ok_and(|u| u.scheme().is_some() && u.host().is_some());
        if has_scheme { ProxyUrl::parse(value) } else { ProxyUrl::parse(&format!("http://{value}")) }
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
        // Proxy URLs may carry a password.
        let show = |v: &str| match ProxyUrl::parse_env(v) {
            Ok(u) if !v.is_empty() => format!("{u:?}"),
            _ if v.is_empty() => String::new(),
            _ => "<unparsable>".into(),
        };
        f.debug_struct("ProxyEnv")
            .field("http_proxy", &show(&self.http_proxy))
            .field("https_proxy", &show(&self.https_proxy))
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
    /// and loopback addresses are never proxied.
    pub fn proxy_for(&self, scheme: &str, host: &str, port: u16) -> Result<Option<ProxyUrl>, Error> {
        let (var, value) = match scheme {
            "https" => ("HTTPS_PROXY", &self.https_proxy),
            "http" => ("HTTP_PROXY", &self.http_proxy),
            _ => return Ok(None),
        };
        if value.is_empty() {
            return Ok(None);
        }
        if scheme == "http" && self.cgi {
            return Err(Error::InvalidValue {
                what: "HTTP_PROXY",
                message: "refusing to use HTTP_PROXY in a CGI environment (REQUEST_METHOD is set)".into(),
            });
        }
        if !self.use_proxy(host, port) {
            return Ok(None);
        }
        ProxyUrl::parse_env(value).map(Some).map_err(|message| Error::InvalidValue { what: var, message })
    }

    /// httpproxy's `useProxy`: false when `NO_PROXY` (or loopback) exempts
    /// the host.
    fn use_proxy(&self, host: &str, port: u16) -> bool {
        let host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        if host == "localhost" {
            return false;
        }
        let ip: Option<IpAddr> = host.parse().ok();
        if ip.is_some_and(|ip| ip.is_loopback()) {
            return false;
        }
        let port = port.to_string();
        for entry in self.no_proxy.split(',') {
            let entry = entry.trim().to_ascii_lowercase();
            if entry.is_empty() {
                continue;
            }
            if entry == "*" {
                return false;
            }
            if let Some((net, bits)) = parse_cidr(&entry) {
                if ip.is_some_and(|ip| cidr_contains(net, bits, ip)) {
                    return false;
                }
                continue;
            }
            let (ehost, eport) = split_host_port(&entry);
            if ehost.is_empty() {
                continue;
            }
            let port_ok = eport.is_none_or(|p| p == port);
            if let Ok(eip) = ehost.parse::<IpAddr>() {
                if ip == Some(eip) && port_ok {
                    return false;
                }
                continue;
            }
            // Domains never match IP addresses; `*.x` is `.x`; `x` matches
            // `x` itself and its subdomains, `.x` only subdomains.
            if ip.is_some() {
                continue;
            }
            let ehost = ehost.strip_prefix('*').filter(|h| h.starts_with('.')).unwrap_or(ehost);
            let (suffix, match_host) = match ehost.strip_prefix('.') {
                Some(_) => (ehost.to_owned(), false),
                None => (format!(".{ehost}"), true),
            };
            if (host.ends_with(&suffix) || (match_host && host == suffix[1..])) && port_ok {
                return false;
            }
        }
        true
    }
}

/// `host:port` or `[v6]:port` into its parts; anything else is a host.
fn split_host_port(entry: &str) -> (&str, Option<&str>) {
    if let Some(rest) = entry.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((h, tail)) => (h, tail.strip_prefix(':')),
            None => (entry, None),
        };
    }
    match entry.rsplit_once(':') {
        // More than one colon without brackets: a bare IPv6 address.
        Some((h, p)) if !h.contains(':') => (h, Some(p)),
        _ => (entry, None),
    }
}

fn parse_cidr(entry: &str) -> Option<(IpAddr, u8)> {
    let (net, bits) = entry.split_once('/')?;
    let net: IpAddr = net.parse().ok()?;
    let bits: u8 = bits.parse().ok()?;
    let max = if net.is_ipv4() { 32 } else { 128 };
    (bits <= max).then_some((net, bits))
}

fn cidr_contains(net: IpAddr, bits: u8, ip: IpAddr) -> bool {
    fn prefix(a: u128, b: u128, bits: u8, width: u8) -> bool {
        let shift = width - bits;
        bits == 0 || (a >> shift) == (b >> shift)
    }
    match (net, ip) {
        (IpAddr::V4(n), IpAddr::V4(i)) => prefix(u32::from(n).into(), u32::from(i).into(), bits, 32),
        (IpAddr::V6(n), IpAddr::V6(i)) => prefix(u128::from(n), u128::from(i), bits, 128),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cases from golang.org/x/net/http/httpproxy proxy_test.go
    /// (TestUseProxy-style tables) and net/http's TestProxyFromEnvironment.
    #[test]
    fn no_proxy_rules_follow_go() {
        let env = |no_proxy: &str| ProxyEnv {
            https_proxy: "proxy.corp:3128".into(),
            http_proxy: "http://user:pw@proxy.corp".into(),
            no_proxy: no_proxy.into(),
            cgi: false,
        };
        // (NO_PROXY, host, port, proxied?)
        let cases: &[(&str, &str, u16, bool)] = &[
            ("", "example.com", 443, true),
            ("", "localhost", 443, false),
            ("", "127.0.0.1", 443, false),
            ("", "127.1.2.3", 443, false),
            ("", "::1", 443, false),
            ("*", "example.com", 443, false),
            ("*", "10.0.0.1", 443, false),
            ("example.com", "example.com", 443, false),
            ("example.com", "sub.example.com", 443, false),
            ("example.com", "notexample.com", 443, true),
            (".example.com", "example.com", 443, true),
            (".example.com", "sub.example.com", 443, false),
            ("*.example.com", "example.com", 443, true),
            ("*.example.com", "a.b.example.com", 443, false),
            ("example.com:443", "example.com", 443, false),
            ("example.com:80", "example.com", 443, true),
            ("10.0.0.0/8", "10.1.2.3", 443, false),
            ("10.0.0.0/8", "11.1.2.3", 443, true),
            ("10.0.0.0/8", "ten.example", 443, true),
            ("fd00::/8", "fd12::1", 443, false),
            ("192.168.1.1", "192.168.1.1", 443, false),
            ("192.168.1.1:80", "192.168.1.1", 443, true),
            ("[2001:db8::1]:443", "2001:db8::1", 443, false),
            ("2001:db8::1", "2001:db8::1", 443, false),
            (" Foo.COM , bar.com", "www.foo.com", 443, false),
            ("bar.com,foo.com", "foo.com", 443, false),
            ("example.com", "10.0.0.1", 443, true),
        ];
        for (no_proxy, host, port, proxied) in cases {
            let got = env(no_proxy).proxy_for("https", host, *port).unwrap();
            assert_eq!(got.is_some(), *proxied, "NO_PROXY={no_proxy:?} host={host}:{port}");
        }
        let p = env("").proxy_for("https", "example.com", 443).unwrap().unwrap();
        assert_eq!((p.scheme, p.host.as_str(), p.port), (ProxyScheme::Http, "proxy.corp", 3128));
        let p = env("").proxy_for("http", "example.com", 80).unwrap().unwrap();
        assert_eq!(p.credentials.as_ref().map(|(u, p)| (u.as_str(), p.expose())), Some(("user", "pw")));
        assert!(!format!("{:?}", env("")).contains("pw"), "{:?}", env(""));
        let cgi = ProxyEnv { cgi: true, ..env("") };
        assert!(cgi.proxy_for("http", "example.com", 80).is_err());
        assert!(cgi.proxy_for("https", "example.com", 443).unwrap().is_some());
    }

    #[test]
    fn upper_case_wins_and_empty_is_unset() {
        let vars = [("HTTPS_PROXY", ""), ("https_proxy", "http://lower:1"), ("NO_PROXY", "a"), ("no_proxy", "b")];
        let env = ProxyEnv::from_lookup(|n| vars.iter().find(|(k, _)| *k == n).map(|(_, v)| v.to_string()));
        assert_eq!(env.https_proxy, "http://lower:1");
        assert_eq!(env.no_proxy, "a");
        assert!(!env.cgi);
    }

    #[test]
    fn proxy_url_schemes() {
        assert_eq!(ProxyUrl::parse("socks5://127.0.0.1").unwrap().port, 1080);
        assert_eq!(ProxyUrl::parse("https://[::1]:8443").unwrap().host, "::1");
        let err = ProxyUrl::parse("ftp://proxy:21").unwrap_err();
        assert_eq!(err, "unsupported scheme \"ftp\", must be http, https, or socks5");
        assert!(ProxyUrl::parse("proxy:3128").is_err(), "proxy-url needs a scheme");
        assert_eq!(ProxyUrl::parse_env("proxy:3128").unwrap().scheme, ProxyScheme::Http);
    }
}
