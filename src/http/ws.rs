//! The WebSocket upgrade at `/ws`: the handshake is checked and answered here (RFC 6455
//! section 4.2), then hyper gives the socket up and tokio-tungstenite frames it for
//! [`crate::connection::serve`]. A request that is not a valid upgrade gets an HTTP error with
//! a body, never a silent close.
//!
//! Two checks come before a socket is served, because every WebSocket says `hello` and a
//! session costs the server: its `Origin` (RFC 6455 section 10.2), so that a page of another
//! site cannot open a socket in a player's browser (`server.allowed_origins`), then the upgrade
//! rate of its address (`limits.upgrades_per_ip_per_sec`).

use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Version};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::WebSocketStream;

use super::{plain, AppState, Permit};
use crate::config::{AllowedOrigins, Origin};

/// Per-connection WebSocket buffers, sized for 10,000 connections (docs/performance.md).
/// tungstenite's default read buffer is 128 KiB, allocated and zero-filled on the first read:
/// 142 KiB of resident memory per idle connection. tungstenite zero-fills the free part of the
/// read buffer before every read, so its size is also paid per frame received. Client messages
/// are small (a move is about 100 bytes; a frame larger than the buffer, up to
/// `max_frame_bytes`, grows it and is read in several reads), so 512 bytes does. Writes are
/// buffered up to 8 KiB, so the writer can queue several messages and send them in one system
/// call (`write_loop` in `connection/writer.rs`).
pub fn ws_config(max_frame_bytes: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(512)
        .write_buffer_size(8192)
        .max_frame_size(Some(max_frame_bytes))
        .max_message_size(Some(max_frame_bytes))
}

/// Why an upgrade was refused.
#[derive(Debug)]
pub enum UpgradeError {
    /// Not GET.
    Method,
    /// No `Upgrade: websocket`: a plain HTTP request for the WebSocket's address.
    NotUpgrade,
    /// HTTP/1.0 cannot upgrade.
    Version,
    /// `Connection` without the `upgrade` token.
    Connection,
    /// A `Sec-WebSocket-Version` other than 13.
    WsVersion,
    /// No `Sec-WebSocket-Key`.
    NoKey,
    /// An `Origin` that is neither the server's own nor in `server.allowed_origins`.
    Origin,
    /// Past the address's upgrade burst; a token comes back after this long.
    TooMany(Duration),
}

impl IntoResponse for UpgradeError {
    fn into_response(self) -> Response {
        let bad = StatusCode::BAD_REQUEST;
        let (status, text, extra) = match self {
            UpgradeError::Method => (
                StatusCode::METHOD_NOT_ALLOWED,
                "method not allowed\n",
                Some((header::ALLOW, "GET")),
            ),
            // RFC 9110 section 15.5.22: a 426 names the protocol to upgrade to.
            UpgradeError::NotUpgrade => (
                StatusCode::UPGRADE_REQUIRED,
                "WebSocket upgrade required\n",
                Some((header::UPGRADE, "websocket")),
            ),
            UpgradeError::Version => (bad, "WebSocket upgrade needs HTTP/1.1\n", None),
            UpgradeError::Connection => (bad, "Connection header must include upgrade\n", None),
            // RFC 6455 section 4.2.2: the refusal names the versions the server speaks.
            UpgradeError::WsVersion => (
                bad,
                "unsupported Sec-WebSocket-Version\n",
                Some((header::SEC_WEBSOCKET_VERSION, "13")),
            ),
            UpgradeError::NoKey => (bad, "missing Sec-WebSocket-Key\n", None),
            UpgradeError::Origin => (
                StatusCode::FORBIDDEN,
                "WebSocket connections from this page's origin are not allowed\n",
                None,
            ),
            UpgradeError::TooMany(wait) => {
                let mut response = plain(
                    StatusCode::TOO_MANY_REQUESTS,
                    "too many new WebSocket connections from your address\n",
                );
                // Whole seconds (RFC 9110 section 10.2.3), rounded up so that a client that
                // waits as told finds a token.
                let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(secs.max(1)));
                return response;
            }
        };
        let mut response = plain(status, text);
        if let Some((name, value)) = extra {
            response
                .headers_mut()
                .insert(name, HeaderValue::from_static(value));
        }
        response
    }
}

/// Whether the comma-separated header `name` has `token` (case-insensitive).
fn has_token(headers: &HeaderMap, name: HeaderName, token: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().eq_ignore_ascii_case(token))
}

/// Whether a WebSocket may be opened by a request with these headers: without `Origin` (not a
/// browser: browsers always send it on a WebSocket handshake), from the page's own host, or
/// from an allowed origin.
fn origin_allowed(headers: &HeaderMap, allowed: &AllowedOrigins) -> bool {
    let mut origins = headers.get_all(header::ORIGIN).iter();
    let (Some(origin), None) = (origins.next(), origins.next()) else {
        // None at all, or several: a browser sends exactly one.
        return headers.get(header::ORIGIN).is_none();
    };
    if *allowed == AllowedOrigins::Any {
        return true;
    }
    let Some(origin) = origin.to_str().ok().and_then(|o| o.parse::<Origin>().ok()) else {
        // "null" (a sandboxed page, a file) and garbage.
        return false;
    };
    let own = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|host| origin.is_host(host));
    own || allowed.allows(&origin)
}

/// `/ws`: answers a valid upgrade with 101 and serves the socket in a task of its own, which
/// keeps the connection's permit.
pub(super) async fn upgrade(
    State(state): State<AppState>,
    mut req: Request,
) -> Result<Response, UpgradeError> {
    if req.method() != Method::GET {
        return Err(UpgradeError::Method);
    }
    let headers = req.headers();
    if !has_token(headers, header::UPGRADE, "websocket") {
        return Err(UpgradeError::NotUpgrade);
    }
    if req.version() != Version::HTTP_11 {
        return Err(UpgradeError::Version);
    }
    if !has_token(headers, header::CONNECTION, "upgrade") {
        return Err(UpgradeError::Connection);
    }
    if headers.get(header::SEC_WEBSOCKET_VERSION) != Some(&HeaderValue::from_static("13")) {
        return Err(UpgradeError::WsVersion);
    }
    let Some(key) = headers.get(header::SEC_WEBSOCKET_KEY) else {
        return Err(UpgradeError::NoKey);
    };
    let server = state.server;
    if !origin_allowed(headers, &server.config.server.allowed_origins) {
        server
            .metrics
            .upgrades_forbidden_origin_total
            .fetch_add(1, Relaxed);
        return Err(UpgradeError::Origin);
    }
    // Only a valid upgrade from an allowed page spends a token.
    if let Some(ConnectInfo(peer)) = req.extensions().get::<ConnectInfo<SocketAddr>>() {
        if let Err(wait) = server.peers.upgrade(peer.ip()) {
            server
                .metrics
                .upgrades_rate_limited_total
                .fetch_add(1, Relaxed);
            return Err(UpgradeError::TooMany(wait));
        }
    }
    let ip = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(peer)| peer.ip());
    let accept = derive_accept_key(key.as_bytes());
    let permit = req.extensions_mut().remove::<Permit>();
    let on_upgrade = hyper::upgrade::on(&mut req);
    server.tracker.clone().spawn(async move {
        let _permit = permit;
        match on_upgrade.await {
            Ok(upgraded) => {
                let config = ws_config(server.config.limits.max_frame_bytes);
                let ws = WebSocketStream::from_raw_socket(
                    TokioIo::new(upgraded),
                    Role::Server,
                    Some(config),
                )
                .await;
                crate::connection::serve_from(server, ws, ip).await;
            }
            Err(e) => tracing::debug!("websocket upgrade failed: {e}"),
        }
    });
    let mut response = StatusCode::SWITCHING_PROTOCOLS.into_response();
    let h = response.headers_mut();
    h.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(
        header::SEC_WEBSOCKET_ACCEPT,
        HeaderValue::from_str(&accept).expect("base64 is a valid header value"),
    );
    Ok(response)
}
