//! `NO_PROXY` matching, rule for rule as golang.org/x/net/http/httpproxy
//! (`config.init` and `useProxy`) applies it, so a host kubectl reaches
//! directly is reached directly here too.
//!
//! Go compares IP addresses as `net.IP`, where an IPv4-mapped IPv6 address
//! (`::ffff:10.0.0.1`) is the same address as `10.0.0.1`; this module
//! compares canonical forms ([`IpAddr::to_canonical`]) to the same effect.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A parsed `NO_PROXY` list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct NoProxy {
    /// `*`: nothing is proxied.
    all: bool,
    ips: Vec<IpRule>,
    domains: Vec<DomainRule>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum IpRule {
    /// `10.0.0.0/8`, `fd00::/8`: any port.
    Network { net: IpAddr, bits: u8 },
    /// `10.0.0.1`, `10.0.0.1:443`, `[2001:db8::1]:443`.
    Addr { ip: IpAddr, port: Option<String> },
}

/// `example.com` (the name and its subdomains), `.example.com` and
/// `*.example.com` (subdomains only), each optionally with `:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DomainRule {
    /// Always starts with `.`.
    suffix: String,
    /// Whether the name without the leading dot matches as well.
    match_host: bool,
    port: Option<String>,
}

impl NoProxy {
    /// Parses a comma-separated list. Entries that mean nothing (`:80`,
    /// empty ones) are skipped, as Go skips them: the variable is a best
    /// effort, never an error.
    pub(super) fn parse(list: &str) -> NoProxy {
        let mut rules = NoProxy::default();
        for entry in list.split(',') {
            let entry = entry.trim().to_ascii_lowercase();
            if entry.is_empty() {
                continue;
            }
            if entry == "*" {
                return NoProxy { all: true, ..NoProxy::default() };
            }
            if let Some((net, bits)) = parse_cidr(&entry) {
                rules.ips.push(IpRule::Network { net, bits });
                continue;
            }
            let (host, port) = match split_host_port(&entry) {
                Some(("", _)) => continue,
                // `host:` restricts to no port, as in Go.
                Some((host, port)) => (host, Some(port).filter(|p| !p.is_empty()).map(str::to_owned)),
                None => (entry.as_str(), None),
            };
            if let Ok(ip) = host.parse::<IpAddr>() {
                rules.ips.push(IpRule::Addr { ip: ip.to_canonical(), port });
                continue;
            }
            // `*.x` is `.x`; `x` matches `x` itself and its subdomains, `.x`
            // only subdomains. Go also maps Unicode names to punycode here;
            // hosts reaching this check are ASCII (a URL's host is), so only
            // a Unicode entry would differ, and it then never matches.
            let host = host.strip_prefix('*').filter(|h| h.starts_with('.')).unwrap_or(host);
            let (suffix, match_host) = match host.starts_with('.') {
                true => (host.to_owned(), false),
                false => (format!(".{host}"), true),
            };
            rules.domains.push(DomainRule { suffix, match_host, port });
        }
        rules
    }

    /// Whether a connection to `host:port` goes through the proxy:
    /// false for `localhost`, loopback addresses and hosts the list
    /// exempts. `host` may carry brackets and, for IPv6, a `%zone`.
    pub(super) fn use_proxy(&self, host: &str, port: u16) -> bool {
        let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        // Case-sensitive, as in Go: `LOCALHOST` is proxied.
        if host == "localhost" {
            return false;
        }
        let ip = parse_host_ip(host);
        if ip.is_some_and(|ip| ip.is_loopback()) {
            return false;
        }
        if self.all {
            return false;
        }
        let port = port.to_string();
        let port_ok = |rule: &Option<String>| rule.as_ref().is_none_or(|p| *p == port);
        if let Some(ip) = ip {
            let exempt = self.ips.iter().any(|rule| match rule {
                IpRule::Network { net, bits } => network_contains(*net, *bits, ip),
                IpRule::Addr { ip: rule_ip, port } => *rule_ip == ip && port_ok(port),
            });
            // Domain entries never match IP addresses.
            return !exempt;
        }
        let host = host.trim().to_ascii_lowercase();
        !self.domains.iter().any(|rule| {
            (host.ends_with(&rule.suffix) || (rule.match_host && host == rule.suffix[1..])) && port_ok(&rule.port)
        })
    }
}

/// The host as an IP address in canonical form (IPv4-mapped IPv6 as IPv4),
/// ignoring an IPv6 zone (`fe80::1%eth0`) as Go's `netip.ParseAddr` does.
fn parse_host_ip(host: &str) -> Option<IpAddr> {
    let ip = match host.split_once('%') {
        Some((addr, zone)) if !zone.is_empty() => IpAddr::V6(addr.parse().ok()?),
        _ => host.parse().ok()?,
    };
    Some(ip.to_canonical())
}

/// `net.ParseCIDR`: an address without zone, `/`, decimal prefix length.
/// The network is masked and, when it is an IPv4-mapped IPv6 network
/// (`::ffff:10.0.0.0/104`), turned into the IPv4 network it covers
/// (`10.0.0.0/8`), which is how Go's `IPNet.Contains` treats it.
fn parse_cidr(entry: &str) -> Option<(IpAddr, u8)> {
    let (addr, bits) = entry.split_once('/')?;
    if bits.is_empty() || !bits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let bits: u8 = bits.parse().ok()?;
    match addr.parse::<IpAddr>().ok()? {
        IpAddr::V4(v4) if bits <= 32 => Some((IpAddr::V4(prefix_v4(v4, bits).into()), bits)),
        IpAddr::V6(v6) if bits <= 128 => {
            let net = Ipv6Addr::from(prefix_v6(v6, bits));
            match net.to_ipv4_mapped() {
                Some(v4) if bits >= 96 => Some((IpAddr::V4(v4), bits - 96)),
                _ => Some((IpAddr::V6(net), bits)),
            }
        }
        _ => None,
    }
}

/// The first `bits` bits of `ip`, the rest cleared.
fn prefix_v4(ip: Ipv4Addr, bits: u8) -> u32 {
    let shift = 32 - u32::from(bits.min(32));
    u32::from(ip).checked_shr(shift).unwrap_or(0).checked_shl(shift).unwrap_or(0)
}

/// The first `bits` bits of `ip`, the rest cleared.
fn prefix_v6(ip: Ipv6Addr, bits: u8) -> u128 {
    let shift = 128 - u32::from(bits.min(128));
    u128::from(ip).checked_shr(shift).unwrap_or(0).checked_shl(shift).unwrap_or(0)
}

fn network_contains(net: IpAddr, bits: u8, ip: IpAddr) -> bool {
    match (net, ip) {
        (IpAddr::V4(n), IpAddr::V4(i)) => prefix_v4(i, bits) == u32::from(n),
        (IpAddr::V6(n), IpAddr::V6(i)) => prefix_v6(i, bits) == u128::from(n),
        _ => false,
    }
}

/// `net.SplitHostPort`: `host:port` or `[host]:port` (brackets removed);
/// `None` where Go reports an error (no port, too many colons, misplaced
/// brackets). The port may be empty.
fn split_host_port(s: &str) -> Option<(&str, &str)> {
    let colon = s.rfind(':')?;
    let (host, not_open_from, not_close_from) = if s.starts_with('[') {
        let end = s.find(']')?;
        if end + 1 != colon {
            return None;
        }
        (&s[1..end], 1, end + 1)
    } else {
        let host = &s[..colon];
        if host.contains(':') {
            return None;
        }
        (host, 0, 0)
    };
    if s[not_open_from..].contains('[') || s[not_close_from..].contains(']') {
        return None;
    }
    Some((host, &s[colon + 1..]))
}
