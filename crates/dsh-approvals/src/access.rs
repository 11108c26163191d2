//! Who may see and answer the page: the one-time browser tokens, the
//! cookie they are exchanged for, the terminal's bearer token, and the
//! `Host` and `Origin` checks. Pure functions and a small store, tested
//! without a server.

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;

/// How many one-time browser links may be outstanding; minting one more
/// forgets the oldest.
const MAX_LINKS: usize = 32;
/// How many browser sessions are kept; one more forgets the oldest.
const MAX_SESSIONS: usize = 64;

/// 32 random bytes as hex.
pub(crate) fn random_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for a token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Equal bytes, in time that depends on the lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    let mut differ = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        differ |= usize::from(a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0));
    }
    differ == 0
}

/// How a request proved who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Credential {
    /// The browser's session cookie.
    Cookie,
    /// The terminal's bearer token (`dsh approvals`).
    Bearer,
}

/// The tokens and sessions of one page server.
pub(crate) struct Access {
    port: u16,
    cli_token: String,
    links: Mutex<VecDeque<String>>,
    sessions: Mutex<VecDeque<String>>,
}

impl Access {
    pub(crate) fn new(port: u16) -> Result<Access, String> {
        Ok(Access {
            port,
            cli_token: random_token()?,
            links: Mutex::default(),
            sessions: Mutex::default(),
        })
    }

    pub(crate) fn cli_token(&self) -> &str {
        &self.cli_token
    }

    /// The name of the session cookie. Cookies do not keep ports apart, so
    /// the port is in the name: two servers on one host keep their own.
    pub(crate) fn cookie_name(&self) -> String {
        format!("dsh_approvals_{}", self.port)
    }

    /// A new one-time token for a browser link.
    pub(crate) fn mint_link(&self) -> Result<String, String> {
        let token = random_token()?;
        let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        if links.len() >= MAX_LINKS {
            links.pop_front();
        }
        links.push_back(token.clone());
        Ok(token)
    }

    /// Exchanges a one-time token for a new session id; `None` when the
    /// token is unknown or was used already.
    pub(crate) fn redeem(&self, token: &str) -> Option<String> {
        let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        let position = links
            .iter()
            .position(|known| same(known.as_bytes(), token.as_bytes()))?;
        links.remove(position);
        drop(links);
        let session = random_token().ok()?;
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        if sessions.len() >= MAX_SESSIONS {
            sessions.pop_front();
        }
        sessions.push_back(session.clone());
        Some(session)
    }

    /// The `Set-Cookie` value for a session: HttpOnly (no script reads it),
    /// SameSite=Strict (no other site's page sends it).
    pub(crate) fn set_cookie(&self, session: &str) -> String {
        format!(
            "{}={session}; HttpOnly; SameSite=Strict; Path=/",
            self.cookie_name()
        )
    }

    /// How the request is authenticated, if it is.
    pub(crate) fn credential(&self, headers: &http::HeaderMap) -> Option<Credential> {
        if let Some(presented) = headers
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
        {
            return same(presented.trim().as_bytes(), self.cli_token.as_bytes())
                .then_some(Credential::Bearer);
        }
        let name = self.cookie_name();
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        let known: HashSet<&str> = sessions.iter().map(String::as_str).collect();
        let found = headers
            .get_all(http::header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .any(|(key, value)| {
                key == name && known.iter().any(|s| same(s.as_bytes(), value.as_bytes()))
            });
        found.then_some(Credential::Cookie)
    }

    /// Whether `host` (the `Host` header) names this server on loopback:
    /// a DNS-rebinding page reaches us under its own name, and is refused.
    pub(crate) fn host_allowed(&self, host: Option<&str>) -> bool {
        let Some(host) = host else { return false };
        let port = self.port.to_string();
        ["127.0.0.1", "localhost", "[::1]"]
            .iter()
            .any(|name| host.eq_ignore_ascii_case(&format!("{name}:{port}")))
    }
}

/// Whether a write may go on, from where the browser says it comes from:
/// an `Origin` must be this page's own (`http://` and the `Host`); without
/// one, `Sec-Fetch-Site` must say `same-origin`; a request with neither is a
/// program's, not a browser's, and may write only with the bearer token.
pub(crate) fn write_allowed(
    host: &str,
    origin: Option<&str>,
    fetch_site: Option<&str>,
    bearer: bool,
) -> bool {
    match (origin, fetch_site) {
        (Some(origin), _) => origin.eq_ignore_ascii_case(&format!("http://{host}")),
        (None, Some(site)) => site.eq_ignore_ascii_case("same-origin"),
        (None, None) => bearer,
    }
}

/// The value of `key` in a query string.
pub(crate) fn query_value<'a>(query: &'a str, key: &str) -> Option<&'a str> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> http::HeaderMap {
        let mut map = http::HeaderMap::new();
        for (k, v) in pairs {
            map.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                http::HeaderValue::from_str(v).unwrap(),
            );
        }
        map
    }

    #[test]
    fn a_link_is_good_for_one_session_only() {
        let access = Access::new(4242).unwrap();
        let link = access.mint_link().unwrap();
        assert_eq!(link.len(), 64);
        let session = access.redeem(&link).expect("a fresh link redeems");
        assert!(
            access.redeem(&link).is_none(),
            "a used link must not redeem"
        );
        assert!(access.redeem("").is_none());
        assert!(access.redeem(&link[..63]).is_none());
        let cookie = access.set_cookie(&session);
        assert!(cookie.starts_with("dsh_approvals_4242="), "{cookie}");
        assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
        let with = format!("other=1; dsh_approvals_4242={session}");
        assert_eq!(
            access.credential(&headers(&[("cookie", &with)])),
            Some(Credential::Cookie)
        );
        // Another server's cookie of the same value, a made-up session, none.
        let other_port = format!("dsh_approvals_4243={session}");
        assert_eq!(
            access.credential(&headers(&[("cookie", &other_port)])),
            None
        );
        assert_eq!(
            access.credential(&headers(&[("cookie", "dsh_approvals_4242=abc")])),
            None
        );
        assert_eq!(access.credential(&headers(&[])), None);
        // The link itself is not a credential.
        let as_cookie = format!("dsh_approvals_4242={link}");
        assert_eq!(access.credential(&headers(&[("cookie", &as_cookie)])), None);
    }

    #[test]
    fn links_beyond_the_limit_forget_the_oldest() {
        let access = Access::new(1).unwrap();
        let first = access.mint_link().unwrap();
        for _ in 0..MAX_LINKS {
            access.mint_link().unwrap();
        }
        assert!(access.redeem(&first).is_none());
    }

    #[test]
    fn the_bearer_token_is_the_terminals_alone() {
        let access = Access::new(1).unwrap();
        let good = format!("Bearer {}", access.cli_token());
        assert_eq!(
            access.credential(&headers(&[("authorization", &good)])),
            Some(Credential::Bearer)
        );
        assert_eq!(
            access.credential(&headers(&[("authorization", "Bearer nope")])),
            None
        );
        // A wrong bearer token is not rescued by a cookie.
        let link = access.mint_link().unwrap();
        let session = access.redeem(&link).unwrap();
        let cookie = format!("dsh_approvals_1={session}");
        assert_eq!(
            access.credential(&headers(&[
                ("authorization", "Bearer nope"),
                ("cookie", &cookie)
            ])),
            None
        );
        assert_ne!(access.cli_token(), link);
    }

    #[test]
    fn only_loopback_names_of_this_port_are_hosts() {
        let access = Access::new(8123).unwrap();
        for good in [
            "127.0.0.1:8123",
            "localhost:8123",
            "LOCALHOST:8123",
            "[::1]:8123",
        ] {
            assert!(access.host_allowed(Some(good)), "{good}");
        }
        for bad in [
            "evil.example:8123",
            "127.0.0.1",
            "127.0.0.1:8124",
            "127.0.0.2:8123",
            "localhost.evil.example:8123",
            "",
        ] {
            assert!(!access.host_allowed(Some(bad)), "{bad}");
        }
        assert!(!access.host_allowed(None));
    }

    #[test]
    fn writes_come_from_the_page_itself() {
        let host = "127.0.0.1:8123";
        assert!(write_allowed(
            host,
            Some("http://127.0.0.1:8123"),
            None,
            false
        ));
        assert!(write_allowed(host, None, Some("same-origin"), false));
        for origin in [
            "http://evil.example",
            "null",
            "http://127.0.0.1:8124",
            "https://127.0.0.1:8123",
            "http://localhost:8123",
        ] {
            assert!(!write_allowed(host, Some(origin), None, false), "{origin}");
            // A bearer token does not excuse a foreign origin either.
            assert!(!write_allowed(host, Some(origin), None, true), "{origin}");
        }
        assert!(!write_allowed(host, None, Some("cross-site"), false));
        assert!(!write_allowed(host, None, Some("same-site"), false));
        assert!(!write_allowed(host, None, None, false));
        assert!(write_allowed(host, None, None, true));
    }

    #[test]
    fn query_values() {
        assert_eq!(query_value("token=abc&x=1", "token"), Some("abc"));
        assert_eq!(query_value("x=1&token=", "token"), Some(""));
        assert_eq!(query_value("tokens=abc", "token"), None);
    }
}
