//! Proxy selection and redaction. Tables marked "proxy_test.go" are the
//! cases of golang.org/x/net/http/httpproxy's tests (v0.56.0); those
//! marked "checked against httpproxy" are inputs run through that package
//! to learn its answer, for behaviour its tests do not cover.

use super::*;
use crate::config::{Config, Kubeconfig, KubeconfigOptions};

/// `(scheme, host, port)` of a proxy, for comparing with Go's answers.
fn parts(p: &ProxyUrl) -> (ProxyScheme, &str, u16) {
    (p.scheme, p.host.as_str(), p.port)
}

fn env(http: &str, https: &str, no_proxy: &str) -> ProxyEnv {
    ProxyEnv { http_proxy: http.into(), https_proxy: https.into(), no_proxy: no_proxy.into(), cgi: false }
}

/// proxy_test.go TestUseProxy, TestInvalidNoProxy and TestAllNoProxy
/// (every host at port 80).
#[test]
fn use_proxy_follows_go() {
    let no_proxy = "foobar.com, .barbaz.net, *.wildcard.io, 192.168.1.1, 192.168.1.2:81, 192.168.1.3:80, \
                    10.0.0.0/30, 2001:db8::52:0:1, [2001:db8::52:0:2]:443, [2001:db8::52:0:3]:80, 2002:db8:a::45/64";
    // (host, proxied?)
    let cases: &[(&str, bool)] = &[
        ("localhost", false),
        ("127.0.0.1", false),
        ("127.0.0.2", false),
        ("[::1]", false),
        ("[::2]", true),
        ("192.168.1.1", false),
        ("192.168.1.2", true),
        ("192.168.1.3", false),
        ("192.168.1.4", true),
        ("10.0.0.2", false),
        ("[2001:db8::52:0:1]", false),
        ("[2001:db8::52:0:2]", true),
        ("[2001:db8::52:0:3]", false),
        ("[2002:db8:a::123]", false),
        ("[fe80::424b:c8be:1643:a1b6]", true),
        ("barbaz.net", true),
        ("www.barbaz.net", false),
        ("foobar.com", false),
        ("www.foobar.com", false),
        ("foofoobar.com", true),
        ("baz.com", true),
        ("localhost.net", true),
        ("local.localhost", true),
        ("barbarbaz.net", true),
        ("wildcard.io", true),
        ("nested.wildcard.io", false),
        ("awildcard.io", true),
    ];
    let rules = NoProxy::parse(no_proxy);
    let all = NoProxy::parse("*");
    for (host, proxied) in cases {
        assert_eq!(rules.use_proxy(host, 80), *proxied, "TestUseProxy {host}");
        assert!(!all.use_proxy(host, 80), "TestAllNoProxy {host}");
    }
    assert!(NoProxy::parse(":1").use_proxy("example.com", 80), "TestInvalidNoProxy");
}

/// IPv4-mapped IPv6 addresses are the IPv4 address they map, on either
/// side, as Go's `net.IP` comparisons make them (checked against
/// httpproxy); plus entries Go reads in ways one might not expect.
#[test]
fn no_proxy_edge_cases_follow_go() {
    // (NO_PROXY, host, port, proxied?)
    let cases: &[(&str, &str, u16, bool)] = &[
        ("10.0.0.1", "::ffff:10.0.0.1", 443, false),
        ("10.0.0.0/8", "::ffff:10.1.2.3", 443, false),
        ("::ffff:10.0.0.1", "10.0.0.1", 443, false),
        ("::ffff:a00:1", "10.0.0.1", 443, false),
        ("[::ffff:10.0.0.1]:443", "10.0.0.1", 443, false),
        ("10.0.0.1:443", "::ffff:10.0.0.1", 443, false),
        ("10.0.0.1:80", "::ffff:10.0.0.1", 443, true),
        ("::ffff:10.0.0.0/104", "10.1.2.3", 443, false),
        ("::ffff:10.0.0.0/104", "11.1.2.3", 443, true),
        ("::ffff:0:0/96", "10.1.2.3", 443, false),
        ("::ffff:0:0/96", "::ffff:10.1.2.3", 443, false),
        // Below /96 the mask cuts into ffff: an IPv6 network, no IPv4 in it.
        ("::ffff:0:0/80", "10.1.2.3", 443, true),
        ("::/0", "10.1.2.3", 443, true),
        ("::/0", "::ffff:10.1.2.3", 443, true),
        ("::/0", "2001:db8::1", 443, false),
        ("0.0.0.0/0", "::ffff:10.1.2.3", 443, false),
        ("0.0.0.0/0", "2001:db8::1", 443, true),
        // IPv4-compatible (not mapped) addresses are IPv6 ones.
        ("10.0.0.1", "::a00:1", 443, true),
        // Mapped loopback is loopback.
        ("", "::ffff:127.0.0.1", 443, false),
        ("", "[::ffff:7f00:1]", 443, false),
        // Brackets without a port make a name, not an address.
        ("[::ffff:10.0.0.1]", "10.0.0.1", 443, true),
        // An empty port matches any; a port on a CIDR makes it a name.
        ("example.com:", "example.com", 443, false),
        ("10.0.0.0/8:443", "10.0.0.1", 443, true),
        ("10.0.0.0/33", "10.0.0.1", 443, true),
        ("*.example.com:443", "a.example.com", 443, false),
        // Names compare case-insensitively, but `localhost` is only that.
        ("EXAMPLE.com", "Example.COM", 443, false),
        ("", "LOCALHOST", 443, true),
        // An address with a zone is an address: names never match it.
        ("example.com", "fe80::1%example.com", 443, true),
    ];
    for (no_proxy, host, port, proxied) in cases {
        assert_eq!(NoProxy::parse(no_proxy).use_proxy(host, *port), *proxied, "NO_PROXY={no_proxy:?} host={host}");
    }
}

/// proxy_test.go TestProxyForURL (the request is `http://example.com`
/// unless given).
#[test]
fn proxy_for_url_follows_go() {
    use ProxyScheme::*;
    type Want = Result<Option<(ProxyScheme, &'static str, u16)>, &'static str>;
    // (HTTP_PROXY, HTTPS_PROXY, NO_PROXY, CGI, request (scheme, host, port), want)
    let example = ("http", "example.com", 80);
    type Request = (&'static str, &'static str, u16);
    let cases: &[(&str, &str, &str, bool, Request, Want)] = &[
        ("127.0.0.1:8080", "", "", false, example, Ok(Some((Http, "127.0.0.1", 8080)))),
        ("cache.corp.example.com:1234", "", "", false, example, Ok(Some((Http, "cache.corp.example.com", 1234)))),
        ("cache.corp.example.com", "", "", false, example, Ok(Some((Http, "cache.corp.example.com", 80)))),
        ("localhost", "", "", false, example, Ok(Some((Http, "localhost", 80)))),
        ("https://cache.corp.example.com", "", "", false, example, Ok(Some((Https, "cache.corp.example.com", 443)))),
        ("http://127.0.0.1:8080", "", "", false, example, Ok(Some((Http, "127.0.0.1", 8080)))),
        ("https://127.0.0.1:8080", "", "", false, example, Ok(Some((Https, "127.0.0.1", 8080)))),
        ("socks5://127.0.0.1", "", "", false, example, Ok(Some((Socks5, "127.0.0.1", 1080)))),
        // httpproxy keeps unknown schemes and Go's transport then fails the
        // request; here the request fails with the reason.
        ("foo://host", "", "", false, example, Err("unsupported scheme \"foo\"")),
        (
            "http.proxy.tld",
            "secure.proxy.tld",
            "",
            false,
            ("http", "insecure.tld", 80),
            Ok(Some((Http, "http.proxy.tld", 80))),
        ),
        (
            "http.proxy.tld",
            "secure.proxy.tld",
            "",
            false,
            ("https", "secure.tld", 443),
            Ok(Some((Http, "secure.proxy.tld", 80))),
        ),
        (
            "http.proxy.tld",
            "https://secure.proxy.tld",
            "",
            false,
            ("https", "secure.tld", 443),
            Ok(Some((Https, "secure.proxy.tld", 443))),
        ),
        ("http.proxy.tld", "", "", false, ("https", "secure.tld", 443), Ok(None)),
        ("http.proxy.tld", "", "", false, ("ftp", "insecure.tld", 21), Ok(None)),
        ("http://10.1.2.3:8080", "", "", true, example, Err("refusing to use HTTP_PROXY in a CGI environment")),
        (
            "",
            "https://secure.proxy.tld",
            "",
            true,
            ("https", "secure.tld", 443),
            Ok(Some((Https, "secure.proxy.tld", 443))),
        ),
        ("", "", "", false, example, Ok(None)),
        ("proxy", "", "example.com", false, example, Ok(None)),
        ("proxy", "", ".example.com", false, example, Ok(Some((Http, "proxy", 80)))),
        ("proxy", "", "ample.com", false, example, Ok(Some((Http, "proxy", 80)))),
        ("proxy", "", "example.com", false, ("http", "foo.example.com", 80), Ok(None)),
        ("proxy", "", ".foo.com", false, example, Ok(Some((Http, "proxy", 80)))),
        // {".示例.com", "http://www.示例.com"}, {"xn--fsq092h.com",
        // "http://www.示例.com"}, {"示例.com", "http://www.xn--fsq092h.com"}:
        // Go maps Unicode names to punycode. A server URL here has an ASCII
        // host (`http::Uri` holds no other), and Unicode NO_PROXY entries
        // are compared as written, so they never match.
        ("proxy", "", "example.com", false, ("http", "1000::%.example.com", 123), Ok(Some((Http, "proxy", 80)))),
    ];
    for (http, https, no_proxy, cgi, (scheme, host, port), want) in cases {
        let env = ProxyEnv { cgi: *cgi, ..env(http, https, no_proxy) };
        let got = env.proxy_for(scheme, host, *port);
        let case =
            format!("http_proxy={http:?} https_proxy={https:?} no_proxy={no_proxy:?} cgi={cgi} {scheme}://{host}");
        match (got, want) {
            (Ok(got), Ok(want)) => assert_eq!(got.as_ref().map(parts), *want, "{case}"),
            (Err(e), Err(w)) => assert!(e.to_string().contains(w), "{case}: {e}"),
            (got, want) => panic!("{case}: got {got:?}, want {want:?}"),
        }
    }
}

/// How an environment value is read (checked against httpproxy):
/// `Some(Ok)`: this proxy; `Some(Err)`: requests fail with this message,
/// as they fail in Go; `None`: ignored, since Go's URL parser refuses it in
/// every form and httpproxy then acts as if it were unset.
#[test]
fn environment_values_follow_go() {
    use ProxyScheme::*;
    type Want = Option<Result<(ProxyScheme, &'static str, u16, Option<(&'static str, &'static str)>), &'static str>>;
    let cases: &[(&str, Want)] = &[
        ("proxy.corp:3128", Some(Ok((Http, "proxy.corp", 3128, None)))),
        ("user:pass@proxy.corp:3128", Some(Ok((Http, "proxy.corp", 3128, Some(("user", "pass")))))),
        ("user@proxy:1", Some(Ok((Http, "proxy", 1, Some(("user", "")))))),
        ("[::1]:3128", Some(Ok((Http, "::1", 3128, None)))),
        ("http://user:@host", Some(Ok((Http, "host", 80, Some(("user", "")))))),
        ("HTTP://proxy:1", Some(Ok((Http, "proxy", 1, None)))),
        ("http://proxy:3128/path?q#f", Some(Ok((Http, "proxy", 3128, None)))),
        ("socks5h://u:p@h", Some(Ok((Socks5, "h", 1080, Some(("u", "p")))))),
        ("socks5h://h:9", Some(Ok((Socks5, "h", 9, None)))),
        ("http://proxy/%zz", None),
        ("http://user:p%zz@proxy", None),
        ("http://user:pa\u{1}ss@proxy", None),
        ("http://proxy:3128#%z", None),
        ("http://proxy:3128/?%zz", Some(Ok((Http, "proxy", 3128, None)))),
        ("http://proxy:abc", Some(Err("invalid port"))),
        ("proxy.corp:abc", Some(Err("invalid port"))),
        ("http://:3128", Some(Err("not a URL"))),
        ("http://proxy:99999", Some(Err("invalid port \"99999\""))),
        ("socks4://proxy", Some(Err("unsupported scheme \"socks4\""))),
    ];
    for (value, want) in cases {
        let got = match ProxyUrl::parse_env(value) {
            EnvProxy::Use(p) => Some(Ok(p)),
            EnvProxy::Invalid(m) => Some(Err(m)),
            EnvProxy::Unparsable(_) => None,
            EnvProxy::Unset => panic!("{value:?}: unset"),
        };
        match (got, want) {
            (None, None) => {}
            (Some(Ok(p)), Some(Ok((scheme, host, port, creds)))) => {
                assert_eq!(parts(&p), (*scheme, *host, *port), "{value:?}");
                let got_creds = p.credentials.as_ref().map(|(u, pw)| (u.as_str(), pw.expose()));
                assert_eq!(got_creds, *creds, "{value:?}");
            }
            (Some(Err(m)), Some(Err(w))) => assert!(m.contains(w), "{value:?}: {m}"),
            (got, want) => panic!("{value:?}: got {got:?}, want {want:?}"),
        }
    }
    // Ignored means unset, also for hosts the proxy would serve.
    let ignored = env("http://proxy/%zz", "http://proxy\u{7f}:1", "");
    assert!(ignored.proxy_for("http", "example.com", 80).unwrap().is_none());
    assert!(ignored.proxy_for("https", "example.com", 443).unwrap().is_none());
}

#[test]
fn upper_case_wins_and_empty_is_unset() {
    let vars = [("HTTPS_PROXY", ""), ("https_proxy", "http://lower:1"), ("NO_PROXY", "a"), ("no_proxy", "b")];
    let env = ProxyEnv::from_lookup(|n| vars.iter().find(|(k, _)| *k == n).map(|(_, v)| v.to_string()));
    assert_eq!(env.https_proxy, "http://lower:1");
    assert_eq!(env.no_proxy, "a");
    assert!(!env.cgi);
}

/// client-go's `parseProxyURL` (kubeconfig `proxy-url`).
#[test]
fn kubeconfig_proxy_urls() {
    assert_eq!(ProxyUrl::parse("socks5://127.0.0.1").unwrap().port, 1080);
    assert_eq!(ProxyUrl::parse("https://[::1]:8443").unwrap().host, "::1");
    let err = ProxyUrl::parse("ftp://proxy:21").unwrap_err();
    assert_eq!(err, "unsupported scheme \"ftp\", must be http, https, or socks5");
    // client-go accepts socks5h only from the environment (Go's transport).
    assert!(ProxyUrl::parse("socks5h://proxy").unwrap_err().contains("unsupported scheme \"socks5h\""));
    assert!(ProxyUrl::parse("proxy:3128").is_err(), "proxy-url needs a scheme");
    // Go's url.Parse refuses these, so client-go cannot parse them.
    for bad in ["http://proxy/%zz", "http://pro\u{1}xy", "http://proxy:abc"] {
        assert!(ProxyUrl::parse(bad).unwrap_err().starts_with("could not parse"), "{bad:?}");
    }
}

#[test]
fn redact_url_shows_urls_as_go_does() {
    let cases = [
        ("http://user:pass@host:3128", "http://user:xxxxx@host:3128"),
        ("http://user@host:3128", "http://user@host:3128"),
        ("http://user:@host", "http://user:xxxxx@host"),
        ("http://host:3128", "http://host:3128"),
        ("user:pass@proxy:1", "user:xxxxx@proxy:1"),
        // Text that does not parse is redacted generously.
        ("http://user:pa/ss@host:1", "http://user:xxxxx@host:1"),
        ("http://user:p@ss@host:abc", "http://user:xxxxx@host:abc"),
        ("user:pa://ss@host", "user:xxxxx@host"),
        ("", ""),
    ];
    for (raw, shown) in cases {
        assert_eq!(redact_url(raw), shown, "{raw:?}");
    }
}

/// Every error, log and `Debug` path that names a proxy URL, given URLs
/// with a password: the password never shows.
#[test]
fn proxy_passwords_never_show() {
    let secret = "s3cr3t";
    let bad_urls = [
        "http://user:s3cr3t@proxy:abc",
        "http://user:s3cr3t@proxy/%zz",
        "http://user:s3cr3t@proxy:99999",
        "http://user:s3cr3t/x@proxy:1",
        "http://user:s3cr3t#x@proxy:1",
        "http://user:s3cr3t@:3128",
        "http://user:s3\u{1}cr3t@proxy",
        "foo://user:s3cr3t@proxy",
        "user:s3cr3t@proxy:abc",
    ];
    let mut shown = Vec::new();
    for url in bad_urls {
        shown.push(format!("parse: {:?}", ProxyUrl::parse(url)));
        let env = ProxyEnv { http_proxy: url.into(), https_proxy: url.into(), no_proxy: String::new(), cgi: false };
        shown.push(format!("{env:?}"));
        shown.push(format!("{:?}", Proxy::Environment(env.clone())));
        for scheme in ["http", "https"] {
            match env.proxy_for(scheme, "example.com", 443) {
                Ok(p) => shown.push(format!("{p:?}")),
                Err(e) => shown.push(format!("{} / {e:?}", crate::ErrorChain(&e))),
            }
        }
        let yaml = format!(
            "clusters: [{{name: c, cluster: {{server: 'https://h', proxy-url: '{url}'}}}}]\n\
             contexts: [{{name: c, context: {{cluster: c}}}}]\ncurrent-context: c\n"
        );
        let kc = Kubeconfig::from_yaml(&yaml.replace('\u{1}', "\\x01")).unwrap();
        shown.push(format!("{kc:?}"));
        match Config::from_kubeconfig(&kc, &KubeconfigOptions::default()) {
            Ok(c) => shown.push(format!("{c:?}")),
            Err(e) => shown.push(format!("{} / {e:?}", crate::ErrorChain(&e))),
        }
    }
    let good = ProxyUrl::parse("http://us%40er:s3cr3t@proxy:3128").unwrap();
    assert_eq!(good.to_string(), "http://us%40er:xxxxx@proxy:3128");
    shown.push(format!("{good:?} {:?} {:?}", Proxy::Url(good.clone()), good.authorization()));
    let mut config = Config::new("https://h".parse().unwrap());
    config.proxy = Proxy::Url(good);
    shown.push(format!("{config:?}"));
    for line in &shown {
        assert!(!line.contains(secret) && !line.contains("cr3t"), "password shown: {line}");
    }
    // And the logs: a variable that is ignored is named, without password.
    let logs = crate::testing::LogCapture::start();
    env("", "http://user:s3cr3t@proxy/%zz", "").resolve();
    let text = logs.text();
    assert!(text.contains("HTTPS_PROXY") && text.contains("user:xxxxx@proxy"), "{text}");
    assert!(!text.contains("cr3t"), "{text}");
}
