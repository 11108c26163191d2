//! Domain patterns, verdicts, and the private-address check.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What a name or address is matched against: one entry of `allowedDomains` or
/// `deniedDomains`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    /// `github.com`: that name only.
    Exact(String),
    /// `*.npmjs.org`: any name below `npmjs.org`, not `npmjs.org` itself.
    Subdomains(String),
    /// `10.1.2.3`, `[::1]`: a literal address, matched only by that literal.
    Ip(IpAddr),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    host: HostPattern,
    /// `example.com:8443`: that port only; none: every port.
    port: Option<u16>,
}

impl Pattern {
    fn parse(text: &str) -> Result<Pattern, String> {
        let bad = |why: &str| format!("malformed domain pattern {text:?}: {why}");
        let t = text.trim();
        if t.is_empty() {
            return Err(bad("empty"));
        }
        // `[v6]` or `[v6]:port`
        if let Some(rest) = t.strip_prefix('[') {
            let (ip, after) = rest.split_once(']').ok_or_else(|| bad("no closing ']'"))?;
            let ip: Ipv6Addr = ip.parse().map_err(|_| bad("not an IPv6 address"))?;
            let port = match after {
                "" => None,
                p => Some(
                    parse_port(p.strip_prefix(':').ok_or_else(|| bad("junk after ']'"))?)
                        .ok_or_else(|| bad("bad port"))?,
                ),
            };
            return Ok(Pattern {
                host: HostPattern::Ip(IpAddr::V6(ip)),
                port,
            });
        }
        if let Ok(ip) = t.parse::<IpAddr>() {
            return Ok(Pattern {
                host: HostPattern::Ip(ip),
                port: None,
            });
        }
        let (host, port) = match t.rsplit_once(':') {
            Some((h, p)) => (h, Some(parse_port(p).ok_or_else(|| bad("bad port"))?)),
            None => (t, None),
        };
        if let Ok(ip) = host.parse::<Ipv4Addr>() {
            return Ok(Pattern {
                host: HostPattern::Ip(IpAddr::V4(ip)),
                port,
            });
        }
        let host = normalize(host).map_err(|why| bad(&why))?;
        let host = if let Some(base) = host.strip_prefix("*.") {
            if base.contains('*') || base.is_empty() {
                return Err(bad("'*' only as the whole first label"));
            }
            HostPattern::Subdomains(base.to_string())
        } else if host.contains('*') {
            return Err(bad(
                "'*' only as the whole first label, as in *.example.com",
            ));
        } else {
            HostPattern::Exact(host)
        };
        Ok(Pattern { host, port })
    }

    fn matches(&self, host: &Host, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        match (&self.host, host) {
            (HostPattern::Ip(a), Host::Ip(b)) => a == b || canonical(*a) == canonical(*b),
            (HostPattern::Exact(a), Host::Name(b)) => a == b,
            (HostPattern::Subdomains(base), Host::Name(b)) => {
                b.len() > base.len() + 1
                    && b.ends_with(base.as_str())
                    && b.as_bytes()[b.len() - base.len() - 1] == b'.'
            }
            _ => false,
        }
    }
}

fn parse_port(p: &str) -> Option<u16> {
    if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    p.parse().ok().filter(|&p| p != 0)
}

/// An IPv4-mapped IPv6 address as its IPv4 form; anything else as is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// A destination as the client named it, normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Host {
    Name(String),
    Ip(IpAddr),
}

impl Host {
    /// Lowercase, trailing dot removed, `[v6]` unbracketed; names with spaces,
    /// control characters or URL punctuation refused.
    pub(crate) fn parse(raw: &str) -> Result<Host, String> {
        let unbracketed = raw.strip_prefix('[').and_then(|r| r.strip_suffix(']'));
        if let Some(inner) = unbracketed {
            return inner
                .parse::<Ipv6Addr>()
                .map(|ip| Host::Ip(IpAddr::V6(ip)))
                .map_err(|_| format!("malformed address {}", printable(raw)));
        }
        if let Ok(ip) = raw.parse::<IpAddr>() {
            return Ok(Host::Ip(ip));
        }
        let name = normalize(raw)?;
        if name.contains('*') {
            return Err(format!("malformed host name {}", printable(raw)));
        }
        match name.parse::<IpAddr>() {
            Ok(ip) => Ok(Host::Ip(ip)),
            Err(_) => Ok(Host::Name(name)),
        }
    }

    pub(crate) fn as_string(&self) -> String {
        match self {
            Host::Name(n) => n.clone(),
            Host::Ip(ip) => ip.to_string(),
        }
    }
}

/// Lowercase, one trailing dot removed, no empty labels, no whitespace,
/// control characters or URL punctuation. Non-ASCII (IDN) left as given.
fn normalize(raw: &str) -> Result<String, String> {
    let name = raw.strip_suffix('.').unwrap_or(raw).to_lowercase();
    if name.is_empty() || name.len() > 253 {
        return Err(format!("malformed host name {}", printable(raw)));
    }
    if name
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || "/\\@?#%[]:,;\"'<>`|{}^".contains(c))
    {
        return Err(format!("malformed host name {}", printable(raw)));
    }
    if name.split('.').any(str::is_empty) {
        return Err(format!("malformed host name {}", printable(raw)));
    }
    Ok(name)
}

/// `raw` quoted, with anything unprintable escaped: safe in a header and a log line.
pub(crate) fn printable(raw: &str) -> String {
    let mut out: String = raw
        .chars()
        .take(200)
        .flat_map(char::escape_default)
        .collect();
    if raw.chars().count() > 200 {
        out.push('…');
    }
    format!("\"{out}\"")
}

/// The allowed and denied domain lists of Claude Code's `sandbox.network`,
/// compiled.
#[derive(Debug, Clone)]
pub struct DomainRules {
    allowed: Vec<Pattern>,
    denied: Vec<Pattern>,
    allow_local: bool,
}

/// What the proxy does with one connection attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Listed in `allowedDomains` (and not in `deniedDomains`).
    Allow,
    /// Refused, and why.
    Deny(DenyReason),
    /// Neither listed nor denied, and the configuration says to ask.
    Ask,
}

/// Why a connection was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DenyReason {
    /// Not in `allowedDomains`.
    NotAllowed,
    /// In `deniedDomains`.
    Denied,
    /// The name resolves to (or is) a private, loopback, link-local or
    /// otherwise local address, and local connections are not allowed.
    PrivateAddress(IpAddr),
    /// The request itself was malformed.
    BadRequest(String),
    /// A person was asked and refused.
    Refused,
    /// Clients must name themselves ([`crate::ProxyConfig::require_client`])
    /// and the request named no client with its password, or one whose
    /// password was forgotten ([`crate::NetProxy::forget`]: its call ended).
    NoClient,
}

impl DenyReason {
    /// The reason as a short sentence fragment, e.g. `not in allowedDomains`.
    pub fn as_sentence(&self) -> String {
        match self {
            DenyReason::NotAllowed => "not in allowedDomains".to_string(),
            DenyReason::Denied => "in deniedDomains".to_string(),
            DenyReason::PrivateAddress(ip) => format!("resolves to a private address {ip}"),
            DenyReason::BadRequest(why) => format!("bad request: {why}"),
            DenyReason::Refused => "refused when asked".to_string(),
            DenyReason::NoClient => {
                "the proxy URL names no running call (no password, or its call has ended)"
                    .to_string()
            }
        }
    }
}

impl DomainRules {
    /// Compiles the lists. An entry is a host name (`github.com`), a wildcard
    /// (`*.npmjs.org`: every name below `npmjs.org`, not `npmjs.org` itself), or a
    /// literal address (`10.0.0.5`, `[::1]`), each optionally with a port
    /// (`example.com:8443`: that port only). Names compare case-insensitively,
    /// a trailing dot ignored. `denied` wins over `allowed`. `allow_local` lets
    /// connections reach private, loopback and link-local addresses.
    ///
    /// A malformed entry is an error naming it.
    pub fn new(
        allowed: &[String],
        denied: &[String],
        allow_local: bool,
    ) -> Result<DomainRules, String> {
        let parse = |list: &[String]| {
            list.iter()
                .map(|p| Pattern::parse(p))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(DomainRules {
            allowed: parse(allowed)?,
            denied: parse(denied)?,
            allow_local,
        })
    }

    /// Whether connections to local and private addresses are allowed.
    pub fn allows_local(&self) -> bool {
        self.allow_local
    }

    /// The verdict on a destination by name, before resolution: `Allow`,
    /// `Deny(Denied)`, `Deny(BadRequest)` for a malformed name, or
    /// `Deny(NotAllowed)` for an unlisted one (the proxy turns that into `Ask`
    /// when its configuration says to ask). A literal address matches only an
    /// entry written as that address.
    pub fn check_name(&self, host: &str, port: u16) -> Verdict {
        match Host::parse(host) {
            Ok(h) => self.check_host(&h, port),
            Err(why) => Verdict::Deny(DenyReason::BadRequest(why)),
        }
    }

    /// Whether an allowed entry names this host itself (a name or an
    /// address, not a wildcard), and no denied one matches: a host the user
    /// named may be a private or loopback one (an internal registry); a
    /// name allowed only by a wildcard may not, so a rebinding name cannot
    /// reach the inside.
    pub(crate) fn names_exactly(&self, host: &Host, port: u16) -> bool {
        !self.denied.iter().any(|p| p.matches(host, port))
            && self
                .allowed
                .iter()
                .any(|p| !matches!(p.host, HostPattern::Subdomains(_)) && p.matches(host, port))
    }

    pub(crate) fn check_host(&self, host: &Host, port: u16) -> Verdict {
        if self.denied.iter().any(|p| p.matches(host, port)) {
            Verdict::Deny(DenyReason::Denied)
        } else if self.allowed.iter().any(|p| p.matches(host, port)) {
            Verdict::Allow
        } else {
            Verdict::Deny(DenyReason::NotAllowed)
        }
    }
}

/// Whether `ip` is an address a sandboxed command must not reach unless local
/// connections are allowed: private (RFC 1918, CGNAT 100.64/10, ULA fc00::/7),
/// loopback, link-local, unspecified, "this network" 0/8, multicast, broadcast,
/// and the IPv4-mapped and IPv4-compatible forms of these.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => private_v4(v4),
        IpAddr::V6(v6) => {
            if v6.is_loopback() || v6.is_unspecified() || v6.is_multicast() {
                return true;
            }
            let s = v6.segments();
            if (s[0] & 0xfe00) == 0xfc00 || (s[0] & 0xffc0) == 0xfe80 || (s[0] & 0xffc0) == 0xfec0 {
                return true;
            }
            if let Some(v4) = v6.to_ipv4_mapped() {
                return private_v4(v4);
            }
            // IPv4-compatible ::a.b.c.d (deprecated, still routed by some stacks)
            if s[..6].iter().all(|&x| x == 0) {
                return private_v4(Ipv4Addr::new(
                    (s[6] >> 8) as u8,
                    s[6] as u8,
                    (s[7] >> 8) as u8,
                    s[7] as u8,
                ));
            }
            false
        }
    }
}

fn private_v4(ip: Ipv4Addr) -> bool {
    let o = ip.octets();
    ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_multicast()
        || ip.is_broadcast()
        || o[0] == 0
        || (o[0] == 100 && (o[1] & 0xc0) == 64)
        || o[0] >= 240
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(allowed: &[&str], denied: &[&str]) -> DomainRules {
        let s = |l: &[&str]| l.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        DomainRules::new(&s(allowed), &s(denied), false).unwrap()
    }

    #[test]
    fn exact_and_wildcard() {
        let r = rules(&["github.com", "*.npmjs.org"], &[]);
        assert_eq!(r.check_name("github.com", 443), Verdict::Allow);
        assert_eq!(r.check_name("GitHub.COM.", 80), Verdict::Allow);
        assert_eq!(
            r.check_name("api.github.com", 443),
            Verdict::Deny(DenyReason::NotAllowed)
        );
        assert_eq!(r.check_name("registry.npmjs.org", 443), Verdict::Allow);
        assert_eq!(r.check_name("a.b.npmjs.org", 443), Verdict::Allow);
        assert_eq!(
            r.check_name("npmjs.org", 443),
            Verdict::Deny(DenyReason::NotAllowed)
        );
        assert_eq!(
            r.check_name("evilnpmjs.org", 443),
            Verdict::Deny(DenyReason::NotAllowed)
        );
        assert_eq!(
            r.check_name("github.com.evil", 443),
            Verdict::Deny(DenyReason::NotAllowed)
        );
    }

    #[test]
    fn ports() {
        let r = rules(&["example.com:8443", "[::1]:9000", "10.0.0.5:22"], &[]);
        assert_eq!(r.check_name("example.com", 8443), Verdict::Allow);
        assert_eq!(
            r.check_name("example.com", 443),
            Verdict::Deny(DenyReason::NotAllowed)
        );
        assert_eq!(r.check_name("[::1]", 9000), Verdict::Allow);
        assert_eq!(
            r.check_name("::1", 9001),
            Verdict::Deny(DenyReason::NotAllowed)
        );
        assert_eq!(r.check_name("10.0.0.5", 22), Verdict::Allow);
    }

    #[test]
    fn denied_wins() {
        let r = rules(
            &["*.example.com"],
            &[
                "secret.example.com",
                "*.internal.example.com",
                "x.example.com:80",
            ],
        );
        assert_eq!(r.check_name("www.example.com", 443), Verdict::Allow);
        assert_eq!(
            r.check_name("secret.example.com", 443),
            Verdict::Deny(DenyReason::Denied)
        );
        assert_eq!(
            r.check_name("a.internal.example.com", 443),
            Verdict::Deny(DenyReason::Denied)
        );
        assert_eq!(
            r.check_name("x.example.com", 80),
            Verdict::Deny(DenyReason::Denied)
        );
        assert_eq!(r.check_name("x.example.com", 443), Verdict::Allow);
    }

    #[test]
    fn literal_ip_only_matches_ip_entries() {
        let r = rules(&["github.com", "140.82.112.3"], &[]);
        assert_eq!(r.check_name("140.82.112.3", 443), Verdict::Allow);
        assert_eq!(
            r.check_name("140.82.112.4", 443),
            Verdict::Deny(DenyReason::NotAllowed)
        );
        assert_eq!(r.check_name("::ffff:140.82.112.3", 443), Verdict::Allow);
    }

    #[test]
    fn malformed() {
        for bad in [
            "",
            "a b.com",
            "*.",
            "foo.*.com",
            "*",
            "ex*ample.com",
            "example.com:",
            "example.com:99999",
            "a..b",
            "[::1",
            "[zz]",
        ] {
            let err = DomainRules::new(&[bad.to_string()], &[], false).unwrap_err();
            assert!(err.contains("malformed domain pattern"), "{bad}: {err}");
        }
        let r = rules(&["github.com"], &[]);
        for bad in ["git hub.com", "a\u{0}b", "", "a/b", "x..y"] {
            assert!(
                matches!(
                    r.check_name(bad, 80),
                    Verdict::Deny(DenyReason::BadRequest(_))
                ),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn private_addresses() {
        for p in [
            "10.0.0.1",
            "127.0.0.1",
            "172.16.3.4",
            "192.168.1.1",
            "100.64.0.1",
            "169.254.169.254",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.1.1.1",
            "ff02::1",
        ] {
            assert!(is_private(p.parse().unwrap()), "{p}");
        }
        for p in [
            "8.8.8.8",
            "140.82.112.3",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(!is_private(p.parse().unwrap()), "{p}");
        }
    }

    #[test]
    fn sentences() {
        assert_eq!(
            DenyReason::NotAllowed.as_sentence(),
            "not in allowedDomains"
        );
        assert_eq!(DenyReason::Denied.as_sentence(), "in deniedDomains");
        assert_eq!(
            DenyReason::PrivateAddress("127.0.0.1".parse().unwrap()).as_sentence(),
            "resolves to a private address 127.0.0.1"
        );
    }
}
