//! `[server]`: where the server listens, how it logs, and the connection timings that belong to
//! no room.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use axum::http::uri::{Authority, Uri};
use serde::Deserialize;

use super::{invalid, ms, ConfigError};

/// `[server]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RawServer {
    /// Listen address.
    pub bind: String,
    /// tracing filter.
    pub log: String,
    /// How long shutdown waits for tasks.
    pub shutdown_timeout_ms: u64,
    /// WebSocket ping interval.
    pub heartbeat_ms: u64,
    /// A connection silent this long is dead.
    pub idle_timeout_ms: u64,
    /// Time allowed to send `hello` / the HTTP request head.
    pub handshake_timeout_ms: u64,
    /// Tokens of sessions without a connection or a seat are forgotten after this.
    pub session_ttl_ms: u64,
    /// The same for sessions that never took a seat (memory only, never written).
    pub session_idle_ttl_ms: u64,
    /// Serve the browser client from this directory instead of the embedded copy ("": embedded).
    pub client_dir: String,
    /// Pages (origins) besides the server's own that may open a WebSocket; "*": any.
    pub allowed_origins: Vec<String>,
}

impl Default for RawServer {
    fn default() -> Self {
        RawServer {
            bind: "127.0.0.1:8080".into(),
            log: "info".into(),
            shutdown_timeout_ms: 10_000,
            heartbeat_ms: 15_000,
            idle_timeout_ms: 45_000,
            handshake_timeout_ms: 10_000,
            session_ttl_ms: 3_600_000,
            session_idle_ttl_ms: 300_000,
            client_dir: String::new(),
            allowed_origins: Vec::new(),
        }
    }
}

/// `[server]`, validated.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Listen address.
    pub bind: SocketAddr,
    /// tracing filter directive (checked to parse).
    pub log: String,
    /// How long shutdown waits for tasks.
    pub shutdown_timeout: Duration,
    /// WebSocket ping interval.
    pub heartbeat: Duration,
    /// Silence after which a connection is dead.
    pub idle_timeout: Duration,
    /// Time for the HTTP head and `hello`.
    pub handshake_timeout: Duration,
    /// Session token lifetime without connection or seat.
    pub session_ttl: Duration,
    /// The same for a session that never took a seat (at most `session_ttl`).
    pub session_idle_ttl: Duration,
    /// Where the browser client is read from; `None`: the copy embedded in the binary.
    pub client_dir: Option<PathBuf>,
    /// Which pages may open a WebSocket besides the server's own.
    pub allowed_origins: AllowedOrigins,
}

/// `server.allowed_origins`: the pages, besides those the server serves itself (an `Origin`
/// naming the `Host` the request was sent to) and clients that send no `Origin` at all, whose
/// scripts may open a WebSocket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowedOrigins {
    /// `["*"]`: every page.
    Any,
    /// These origins only (empty: the server's own pages only).
    Listed(Vec<Origin>),
}

impl AllowedOrigins {
    /// Whether a page of `origin` may open a WebSocket (the same-host rule aside).
    pub fn allows(&self, origin: &Origin) -> bool {
        match self {
            AllowedOrigins::Any => true,
            AllowedOrigins::Listed(list) => list.contains(origin),
        }
    }
}

/// A web origin (RFC 6454): scheme, host and port, compared without case and with the scheme's
/// default port written out, so that `https://Example.com` and `https://example.com:443` are one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// `http` or `https`.
    pub scheme: String,
    /// Lower case; an IPv6 address in brackets.
    pub host: String,
    /// Explicit, or the scheme's default.
    pub port: u16,
}

impl Origin {
    /// Whether this origin names the host a request was sent to, given its `Host` header. A
    /// `Host` without a port was sent to the default port of whichever scheme the page used
    /// (TLS may have ended at a proxy), so it matches that scheme's default port.
    pub fn is_host(&self, host_header: &str) -> bool {
        let Ok(host) = Authority::from_str(host_header) else {
            return false;
        };
        if !host.host().eq_ignore_ascii_case(&self.host) {
            return false;
        }
        match host.port_u16() {
            Some(port) => port == self.port,
            None => Some(self.port) == default_port(&self.scheme),
        }
    }
}

/// Port 80 for `http`, 443 for `https`; the only schemes a page with a WebSocket has.
fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

/// Why a string is not an origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAnOrigin;

impl FromStr for Origin {
    type Err = NotAnOrigin;

    /// `scheme://host[:port]`, as browsers send it (no path, no user); "null" is not an origin.
    fn from_str(s: &str) -> Result<Origin, NotAnOrigin> {
        let uri = Uri::from_str(s).map_err(|_| NotAnOrigin)?;
        let scheme = uri.scheme_str().ok_or(NotAnOrigin)?.to_ascii_lowercase();
        let authority = uri.authority().ok_or(NotAnOrigin)?;
        let default = default_port(&scheme).ok_or(NotAnOrigin)?;
        let bare = uri.path_and_query().map_or(true, |p| p.as_str() == "/");
        if !bare || authority.as_str().contains('@') || authority.host().is_empty() {
            return Err(NotAnOrigin);
        }
        Ok(Origin {
            scheme,
            host: authority.host().to_ascii_lowercase(),
            port: authority.port_u16().unwrap_or(default),
        })
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
    }
}

impl TryFrom<RawServer> for ServerConfig {
    type Error = ConfigError;

    fn try_from(raw: RawServer) -> Result<Self, ConfigError> {
        let RawServer {
            bind,
            log,
            shutdown_timeout_ms,
            heartbeat_ms,
            idle_timeout_ms,
            handshake_timeout_ms,
            session_ttl_ms,
            session_idle_ttl_ms,
            client_dir,
            allowed_origins,
        } = raw;
        let bind = bind.parse::<SocketAddr>().map_err(|e| {
            invalid(
                "server.bind",
                format!("{e} (expected e.g. \"127.0.0.1:8080\")"),
            )
        })?;
        if log.trim().is_empty() {
            return Err(invalid("server.log", "must not be empty"));
        }
        tracing_subscriber::EnvFilter::try_new(&log)
            .map_err(|e| invalid("server.log", e.to_string()))?;
        let allowed_origins = if allowed_origins.iter().any(|o| o == "*") {
            AllowedOrigins::Any
        } else {
            let parsed = allowed_origins.iter().map(|o| {
                o.parse::<Origin>().map_err(|_| {
                    invalid(
                        "server.allowed_origins",
                        format!(
                            "{o:?} is not an origin (expected \"*\" or e.g. \"https://example.com\" \
                             or \"http://example.com:8080\", without a path)"
                        ),
                    )
                })
            });
            AllowedOrigins::Listed(parsed.collect::<Result<_, _>>()?)
        };
        Ok(ServerConfig {
            bind,
            log,
            shutdown_timeout: ms("server.shutdown_timeout_ms", shutdown_timeout_ms, 0)?,
            heartbeat: ms("server.heartbeat_ms", heartbeat_ms, 10)?,
            idle_timeout: ms("server.idle_timeout_ms", idle_timeout_ms, 20)?,
            handshake_timeout: ms("server.handshake_timeout_ms", handshake_timeout_ms, 10)?,
            session_ttl: ms("server.session_ttl_ms", session_ttl_ms, 0)?,
            // A session that never sat is never kept longer than one that did.
            session_idle_ttl: ms("server.session_idle_ttl_ms", session_idle_ttl_ms, 0)?
                .min(Duration::from_millis(session_ttl_ms)),
            client_dir: match client_dir.as_str() {
                "" => None,
                dir if Path::new(dir).join("index.html").is_file() => Some(dir.into()),
                _ => {
                    return Err(invalid(
                        "server.client_dir",
                        "must be a directory holding index.html (or \"\" for the embedded client)",
                    ))
                }
            },
            allowed_origins,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(raw: RawServer) -> String {
        ServerConfig::try_from(raw).unwrap_err().to_string()
    }

    #[test]
    fn server_errors_name_the_key() {
        let d = RawServer::default;
        assert!(err(RawServer {
            bind: "localhost".into(),
            ..d()
        })
        .starts_with("server.bind: "),);
        assert_eq!(
            err(RawServer {
                log: " ".into(),
                ..d()
            }),
            "server.log: must not be empty"
        );
        assert_eq!(
            err(RawServer {
                heartbeat_ms: 9,
                ..d()
            }),
            "server.heartbeat_ms: must be at least 10"
        );
        assert_eq!(
            err(RawServer {
                client_dir: "no/such/dir".into(),
                ..d()
            }),
            "server.client_dir: must be a directory holding index.html (or \"\" for the \
             embedded client)"
        );
        assert!(err(RawServer {
            allowed_origins: vec!["https://example.com/page".into()],
            ..d()
        })
        .starts_with("server.allowed_origins: \"https://example.com/page\" is not an origin"));
    }

    #[test]
    fn origins_compare_without_case_and_with_default_ports() {
        let o = |s: &str| s.parse::<Origin>();
        assert_eq!(o("https://Example.COM"), o("https://example.com:443"));
        assert_ne!(o("http://example.com"), o("https://example.com"));
        for bad in [
            "null",
            "example.com",
            "ftp://example.com",
            "https://u@example.com",
        ] {
            assert_eq!(o(bad), Err(NotAnOrigin), "{bad}");
        }
        let page = o("http://127.0.0.1:8080").unwrap();
        assert!(page.is_host("127.0.0.1:8080"));
        assert!(!page.is_host("127.0.0.1:8081"));
        assert!(!page.is_host("127.0.0.1"));
        let tls = o("https://caro.example").unwrap();
        assert!(tls.is_host("Caro.Example"));
        assert!(tls.is_host("caro.example:443"));
        assert!(!tls.is_host("evil.example"));
        assert!(o("http://[::1]:9000").unwrap().is_host("[::1]:9000"));
        let list = AllowedOrigins::Listed(vec![tls.clone()]);
        assert!(list.allows(&tls) && !list.allows(&page));
        assert!(AllowedOrigins::Any.allows(&page));
    }
}
