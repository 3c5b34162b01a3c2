//! The WebSocket upgrade at `/ws`: the handshake is checked and answered here (RFC 6455
//! section 4.2), then hyper gives the socket up and tokio-tungstenite frames it for
//! [`crate::connection::serve`]. A request that is not a valid upgrade gets an HTTP error with
//! a body, never a silent close.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Version};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::WebSocketStream;

use super::{plain, AppState, Permit};

/// Per-connection WebSocket buffers, sized for 10,000 connections (docs/performance.md).
/// tungstenite's default read buffer is 128 KiB, allocated and zero-filled on the first read:
/// 142 KiB of resident memory per idle connection. tungstenite zero-fills the free part of the
/// read buffer before every read, so its size is also paid per frame received. Client messages
/// are small (a move is about 100 bytes; a frame larger than the buffer, up to
/// `max_frame_bytes`, grows it and is read in several reads), so 512 bytes does. Writes are
/// buffered up to 8 KiB, so the writer can queue several messages and send them in one system
/// call (`connection::write_loop`).
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
    let accept = derive_accept_key(key.as_bytes());
    let permit = req.extensions_mut().remove::<Permit>();
    let on_upgrade = hyper::upgrade::on(&mut req);
    let server = state.server;
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
                crate::connection::serve(server, ws).await;
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
