//! `[server]`: where the server listens, how it logs, and the connection timings that belong to
//! no room.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    }
}
