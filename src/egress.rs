//! The service's egress allowlist (`sparring serve --allow-url PATTERN`): when
//! the operator gives one, every URL a submitted config names (its endpoints'
//! `base_url`, an MCP server's `url`, a NeMo Gym server's `base_url`, in job,
//! judging and synthesis configs alike) must match a pattern, or the config is
//! refused with a problem naming the field. Operator endpoints are the
//! operator's own and are not checked.
//!
//! A pattern is `SCHEME://HOST[:PORT][/PATH]`:
//! - `SCHEME` is `http` or `https`;
//! - `HOST` is a name, an IPv4 address or a bracketed IPv6 address, compared
//!   as URL parsers normalize it (lower case, punycode); `*.NAME` matches any
//!   name ending in `.NAME` (not `NAME` itself);
//! - `PORT` is a number from 1 to 65535 or `*` (any); without one, only the
//!   scheme's default port (80, 443) matches;
//! - `PATH` is a prefix of whole segments: `/v1` matches `/v1` and `/v1/…`,
//!   not `/v10`; without one, any path matches.
//!
//! A URL is read the way the clients that will reach it read it (WHATWG
//! parsing, as reqwest does), and is refused when it carries user info
//! (`user@host`) or when the lean HTTP/1.1 client (`http::Uri`) would read
//! another host, port or path from it, so that the host checked is the host
//! connected to. Patterns match the URL as written, not the address its name
//! resolves to.

use std::fmt;

use url::{Host, Url};

/// One `--allow-url` pattern, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlPattern {
    text: String,
    https: bool,
    host: HostPattern,
    /// `None`: any port.
    port: Option<u16>,
    /// Segments the path starts with (empty: any path).
    path: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    /// As the URL parser normalizes it (`Host::to_string`: lower-case name,
    /// dotted IPv4, bracketed IPv6).
    Exact(String),
    /// `*.example.com`: names ending in `.example.com`.
    Subdomains(String),
}

impl fmt::Display for UrlPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

const SYNTAX: &str = "write SCHEME://HOST[:PORT][/PATH], e.g. http://127.0.0.1:8000/v1, \
                      https://*.example.com or http://10.0.0.5:*";

impl UrlPattern {
    /// Read a pattern; the error says what is wrong and what would be right.
    pub fn parse(text: &str) -> Result<UrlPattern, String> {
        let fail = |why: String| Err(format!("'{text}' is not a URL pattern: {why}; {SYNTAX}"));
        let Some((scheme, rest)) = text.split_once("://") else {
            return fail("it has no scheme".into());
        };
        let https = match scheme {
            "http" => false,
            "https" => true,
            other => return fail(format!("the scheme '{other}' is not http or https")),
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return fail("a pattern has no user info (`user@`)".into());
        }
        if path.contains(['?', '#']) || authority.contains(['?', '#']) {
            return fail("a pattern has no query or fragment".into());
        }
        let (host, port) = split_port(authority);
        let port = match port {
            None => Some(if https { 443 } else { 80 }),
            Some("*") => None,
            Some(number) => match number.parse::<u16>() {
                Ok(n) if n >= 1 => Some(n),
                _ => return fail(format!("the port '{number}' is not 1 to 65535 or *")),
            },
        };
        let (wildcard, name) = match host.strip_prefix("*.") {
            Some(name) => (true, name),
            None => (false, host),
        };
        if name.is_empty() {
            return fail("it names no host".into());
        }
        if name.contains('*') {
            return fail("`*` may only begin the host, as `*.NAME`".into());
        }
        // The host as a URL parser reads it, so that both sides compare alike.
        let parsed = match Url::parse(&format!("{scheme}://{name}/")) {
            Ok(url) => url,
            Err(e) => return fail(format!("the host '{name}' does not parse ({e})")),
        };
        let host = match parsed.host() {
            Some(Host::Domain(domain)) => domain.to_string(),
            Some(other) if !wildcard => other.to_string(),
            Some(_) => return fail("`*.` goes before a name, not an address".into()),
            None => return fail("it names no host".into()),
        };
        let segments = segments(path);
        if segments.iter().any(|s| s == "." || s == "..") {
            return fail("its path has `.` or `..` segments".into());
        }
        Ok(UrlPattern {
            text: text.to_string(),
            https,
            host: if wildcard {
                HostPattern::Subdomains(host)
            } else {
                HostPattern::Exact(host)
            },
            port,
            path: segments,
        })
    }

    fn matches(&self, url: &Url) -> bool {
        let https = url.scheme() == "https";
        let host = url.host().map(|h| h.to_string()).unwrap_or_default();
        let host_matches = match &self.host {
            HostPattern::Exact(name) => host == *name,
            HostPattern::Subdomains(name) => host
                .strip_suffix(name.as_str())
                .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.')),
        };
        let path = segments(url.path());
        https == self.https
            && host_matches
            && self
                .port
                .is_none_or(|p| url.port_or_known_default() == Some(p))
            && path.len() >= self.path.len()
            && path.iter().zip(&self.path).all(|(a, b)| a == b)
    }
}

/// `host` and the text after its `:` (an IPv6 host keeps its brackets).
fn split_port(authority: &str) -> (&str, Option<&str>) {
    let after_host = if authority.starts_with('[') {
        authority.find(']').map_or(authority.len(), |i| i + 1)
    } else {
        0
    };
    match authority[after_host..].rfind(':') {
        Some(i) => (
            &authority[..after_host + i],
            Some(&authority[after_host + i + 1..]),
        ),
        None => (authority, None),
    }
}

/// A path's non-empty segments: `/v1/` and `/v1` are the same prefix.
fn segments(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The operator's allowlist; empty: any URL may be reached.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EgressAllowlist {
    patterns: Vec<UrlPattern>,
}

impl EgressAllowlist {
    /// Every pattern read; every one that does not parse is one message.
    pub fn parse<S: AsRef<str>>(patterns: &[S]) -> Result<EgressAllowlist, Vec<String>> {
        let mut parsed = Vec::new();
        let mut errors = Vec::new();
        for pattern in patterns {
            match UrlPattern::parse(pattern.as_ref()) {
                Ok(p) => parsed.push(p),
                Err(e) => errors.push(format!("--allow-url {e}")),
            }
        }
        if errors.is_empty() {
            Ok(EgressAllowlist { patterns: parsed })
        } else {
            Err(errors)
        }
    }

    pub fn is_restricted(&self) -> bool {
        !self.patterns.is_empty()
    }

    /// `a, b` for messages, or a note that any URL may be reached.
    pub fn describe(&self) -> String {
        if self.patterns.is_empty() {
            "any URL (no --allow-url)".to_string()
        } else {
            self.patterns
                .iter()
                .map(|p| p.text.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        }
    }

    /// Whether the service may connect to `url`; the error says why not and
    /// what would do (the caller names the field).
    pub fn check(&self, url: &str) -> Result<(), String> {
        if self.patterns.is_empty() {
            return Ok(());
        }
        let allowed = || format!("this server allows only: {}", self.describe());
        let parsed =
            Url::parse(url).map_err(|e| format!("'{url}' does not parse as a URL ({e})"))?;
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(format!(
                "'{url}' carries user info (`…@` before the host), which the egress allowlist \
                 does not accept; give the server's URL without it ({})",
                allowed()
            ));
        }
        if let Some(normal) = read_differently(url, &parsed) {
            return Err(format!(
                "'{url}' is not in normal form (the clients could read different hosts or \
                 paths from it); write it as {normal} ({})",
                allowed()
            ));
        }
        if self.patterns.iter().any(|p| p.matches(&parsed)) {
            Ok(())
        } else {
            Err(format!(
                "'{url}' is not a URL the service may reach; {}",
                allowed()
            ))
        }
    }
}

/// The URL in normal form when `http::Uri` (the lean client's reader) reads
/// another host, port or path from `url` than the WHATWG parser did.
fn read_differently(url: &str, parsed: &Url) -> Option<String> {
    let normal = parsed.as_str().to_string();
    let Ok(uri) = url.parse::<http::Uri>() else {
        return Some(normal);
    };
    let host = |h: &str| {
        h.trim_start_matches('[')
            .trim_end_matches(']')
            .to_lowercase()
    };
    let same_host = uri.host().map(host) == parsed.host_str().map(host);
    let default = if parsed.scheme() == "https" { 443 } else { 80 };
    let same_port =
        uri.port_u16().unwrap_or(default) == parsed.port_or_known_default().unwrap_or(0);
    let same_path = uri.path() == parsed.path() || (uri.path().is_empty() && parsed.path() == "/");
    (!(same_host && same_port && same_path)).then_some(normal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allow(patterns: &[&str]) -> EgressAllowlist {
        EgressAllowlist::parse(patterns).unwrap()
    }

    #[test]
    fn no_pattern_allows_every_url() {
        let open = EgressAllowlist::default();
        assert!(!open.is_restricted());
        assert_eq!(open.check("http://anything:1/x"), Ok(()));
    }

    #[test]
    fn a_pattern_matches_its_scheme_host_port_and_path_prefix() {
        let list = allow(&[
            "http://127.0.0.1:8000/v1",
            "https://*.example.com",
            "http://Models.Internal:*",
        ]);
        for ok in [
            "http://127.0.0.1:8000/v1",
            "http://127.0.0.1:8000/v1/",
            "http://127.0.0.1:8000/v1/chat",
            "https://api.example.com/v1",
            "https://a.b.example.com:443/",
            "https://API.EXAMPLE.COM",
            "http://models.internal:9999/mcp",
            "http://models.internal/x",
        ] {
            assert_eq!(list.check(ok), Ok(()), "{ok}");
        }
        for refused in [
            "https://127.0.0.1:8000/v1",
            "http://127.0.0.1:8001/v1",
            "http://127.0.0.1/v1",
            "http://127.0.0.1:8000/v10",
            "http://127.0.0.1:8000/",
            "http://localhost:8000/v1",
            "https://example.com",
            "https://evilexample.com",
            "https://api.example.com:8443",
            "http://api.example.com",
            "https://models.internal",
        ] {
            let err = list.check(refused).unwrap_err();
            assert!(
                err.contains("is not a URL the service may reach"),
                "{refused}: {err}"
            );
            assert!(
                err.contains("http://127.0.0.1:8000/v1, https://*.example.com"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_url_that_hides_its_host_or_path_is_refused() {
        let list = allow(&["http://allowed.example", "http://127.0.0.1:8000/v1"]);
        let userinfo = list
            .check("http://allowed.example@evil.example/")
            .unwrap_err();
        assert!(userinfo.contains("user info"), "{userinfo}");
        assert!(list.check("http://evil.example#@allowed.example").is_err());
        assert!(list
            .check("http://evil.example\\@allowed.example/")
            .is_err());
        let dots = list.check("http://127.0.0.1:8000/v1/../admin").unwrap_err();
        assert!(
            dots.contains("write it as http://127.0.0.1:8000/admin"),
            "{dots}"
        );
        assert!(list.check("http://127.0.0.1:8000/v1/%2e%2e/admin").is_err());
        // 0x7f.1 is 127.0.0.1 to one parser and a name to the other.
        assert!(list.check("http://0x7f.0.0.1:8000/v1").is_err());
        assert!(list
            .check("not a url")
            .unwrap_err()
            .contains("does not parse"));
    }

    #[test]
    fn every_bad_pattern_says_what_is_wrong() {
        let errors = EgressAllowlist::parse(&[
            "127.0.0.1:8000",
            "ftp://h",
            "http://u@h",
            "http://h:0",
            "http://h:99999",
            "http://h:x",
            "http://*",
            "http://a.*.com",
            "http://*.10.0.0.1",
            "http://h/v1?x=1",
            "http://h/../x",
            "http://",
            "http://[::1",
        ])
        .unwrap_err();
        assert_eq!(errors.len(), 13, "{errors:#?}");
        for (error, why) in errors.iter().zip([
            "no scheme",
            "'ftp' is not http or https",
            "no user info",
            "port '0'",
            "port '99999'",
            "port 'x'",
            "`*` may only begin the host",
            "`*` may only begin the host",
            "not an address",
            "no query or fragment",
            "`.` or `..`",
            "names no host",
            "does not parse",
        ]) {
            assert!(error.starts_with("--allow-url '"), "{error}");
            assert!(error.contains(why), "{error} lacks {why}");
            assert!(error.contains("SCHEME://HOST[:PORT][/PATH]"), "{error}");
        }
        let ipv6 = allow(&["http://[::1]:*"]);
        assert_eq!(ipv6.check("http://[::1]:9000/v1"), Ok(()));
        assert!(ipv6.check("http://[::2]:9000/v1").is_err());
    }
}
