//! The edge: every TCP connection starts here. [`handle`] is the listener wrapper, the place for
//! what happens before HTTP (the connection limits, in all and per address, then hyper's limits
//! on the request head: its size and the time it may take to arrive); hyper then serves the connection with the axum
//! [`router`] as its service. The router is the whole HTTP surface: the WebSocket upgrade at
//! `/ws` (`ws`, which hands the socket to [`crate::connection::serve`]), the JSON API,
//! `/metrics` and `/healthz` (`api`), and the browser client under `/` (`static_files`).
//! Tracing, compression and the bodies of 405 replies are tower layers, not code in handlers.
//!
//! This module must never hold game state or talk to a room: it reads the lobby's summaries and
//! the store, and hands WebSockets to `connection`.

mod api;
mod players;
mod static_files;
mod ws;

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::http::{header, HeaderValue, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;
use tower::ServiceExt;
use tower_http::compression::predicate::{NotForContentType, Predicate, SizeAbove};
use tower_http::compression::CompressionLayer;
use tower_http::trace::TraceLayer;

pub use ws::ws_config;

use crate::metrics::Metrics;
use crate::peers::PeerSlot;
use crate::Server;

/// Longest request head accepted; a longer one gets 431. hyper's read buffer limit, whose
/// smallest allowed value this is.
const MAX_HEAD: usize = 8192;

/// Responses smaller than this go out uncompressed: below about a packet, gzip saves nothing
/// the client notices and costs a compressor per response.
const COMPRESS_ABOVE: u64 = 1024;

/// What every handler may reach: the shared server.
#[derive(Clone)]
struct AppState {
    server: Arc<Server>,
}

/// The connection's slots under `limits.max_connections` and `limits.max_connections_per_ip`
/// and its place in `caro_tcp_connections`, carried in each request's extensions so that a
/// WebSocket keeps them for its whole life after the HTTP connection has handed it over.
#[derive(Clone)]
struct Permit {
    /// Held, never read: the slots are free again when the last copy is dropped.
    _slots: Arc<(OwnedSemaphorePermit, PeerSlot, OpenTcp)>,
}

/// One open TCP connection in `caro_tcp_connections`, from accept until dropped.
struct OpenTcp(Arc<Metrics>);

impl OpenTcp {
    fn new(metrics: &Arc<Metrics>) -> OpenTcp {
        metrics.tcp_connections.fetch_add(1, Relaxed);
        OpenTcp(metrics.clone())
    }
}

impl Drop for OpenTcp {
    fn drop(&mut self) {
        self.0.tcp_connections.fetch_sub(1, Relaxed);
    }
}

/// The whole HTTP surface as one axum `Router`.
pub fn router(server: Arc<Server>) -> Router {
    let state = AppState { server };
    let compress = SizeAbove::new(COMPRESS_ABOVE)
        .and(NotForContentType::IMAGES)
        .and(NotForContentType::GRPC)
        .and(NotForContentType::SSE);
    Router::new()
        .route("/healthz", get(api::healthz))
        .route("/metrics", get(api::metrics))
        .route("/api/rooms", get(api::rooms))
        .route("/api/bots", get(api::bots))
        .route("/api/players/{name}", get(players::player))
        .route("/api/players/{name}/games", get(players::games))
        .route("/api/leaderboard", get(players::leaderboard))
        .route("/api/ratings", get(players::ratings))
        .route("/api/games", get(api::list_games))
        .route("/api/games/", get(api::list_games))
        // `{id}/analysis` is served by the same catch-all (axum cannot route both).
        .route(
            "/api/games/{*name}",
            get(api::game).post(api::start_analysis),
        )
        .fallback(static_files::serve)
        .layer(axum::middleware::map_response(method_not_allowed_body))
        .layer(CompressionLayer::new().compress_when(compress))
        // After the compression layer, so that it never sees the upgrade.
        .route("/ws", any(ws::upgrade))
        .layer(axum::middleware::map_response(close_after))
        .layer(
            TraceLayer::new_for_http().make_span_with(|req: &Request<_>| {
                let peer = req
                    .extensions()
                    .get::<ConnectInfo<SocketAddr>>()
                    .map(|c| c.0);
                tracing::debug_span!("request", method = %req.method(), uri = %req.uri(), ?peer)
            }),
        )
        .with_state(state)
}

/// axum answers a method a route does not have with 405, its `Allow` header and no body;
/// clients get the same plain-text body as every other refusal.
async fn method_not_allowed_body(response: Response) -> Response {
    if response.status() != StatusCode::METHOD_NOT_ALLOWED
        || response.headers().contains_key(header::CONTENT_TYPE)
    {
        return response;
    }
    let mut with_body = plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
    if let Some(allow) = response.headers().get(header::ALLOW) {
        with_body.headers_mut().insert(header::ALLOW, allow.clone());
    }
    with_body
}

/// One request per connection, as clients of this server expect (they read a reply to the end
/// of the stream). Said in the reply rather than by disabling hyper's keep-alive, which would
/// add `close` to the 101 of an upgrade too.
async fn close_after(mut response: Response) -> Response {
    if response.status() != StatusCode::SWITCHING_PROTOCOLS {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// A `text/plain` reply.
fn plain(status: StatusCode, body: &'static str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"))],
        body,
    )
        .into_response()
}

/// The whole reply to a connection refused at `limits.max_connections`: the server is full.
const FULL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n\
    Content-Length: 21\r\nConnection: close\r\n\r\ntoo many connections\n";

/// The whole reply to a connection refused at `limits.max_connections_per_ip`: this client
/// holds too many, others may still come in.
const FULL_FOR_ADDRESS: &[u8] = b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain\r\n\
    Content-Length: 39\r\nConnection: close\r\n\r\ntoo many connections from your address\n";

/// Serves one TCP connection: refused with 503 beyond `limits.max_connections` and 429 beyond
/// `limits.max_connections_per_ip`, else HTTP/1.1 through hyper with `app` until the reply is
/// sent (one request per connection, see `close_after`) or the WebSocket upgrade takes the
/// socket over.
pub async fn handle(server: Arc<Server>, app: Router, mut stream: TcpStream, peer: SocketAddr) {
    let open = OpenTcp::new(&server.metrics);
    let admitted = match server.connection_permits.clone().try_acquire_owned() {
        Err(_) => Err((&server.metrics.connections_refused_total, FULL)),
        Ok(permit) => match server.peers.admit(peer.ip()) {
            None => Err((
                &server.metrics.connections_refused_per_ip_total,
                FULL_FOR_ADDRESS,
            )),
            Some(slot) => Ok((permit, slot)),
        },
    };
    let (permit, slot) = match admitted {
        Ok(slots) => slots,
        Err((counter, reply)) => {
            counter.fetch_add(1, Relaxed);
            // Before any HTTP: refusing must cost less than serving, so the head is not even
            // read.
            let refuse = async {
                stream.write_all(reply).await?;
                stream.shutdown().await
            };
            let _ = tokio::time::timeout(Duration::from_secs(5), refuse).await;
            return;
        }
    };
    let permit = Permit {
        _slots: Arc::new((permit, slot, open)),
    };
    // Whether a whole request head has arrived: until then there is nothing to finish at shutdown.
    let started = Arc::new(AtomicBool::new(false));
    let service = {
        let started = started.clone();
        hyper::service::service_fn(move |mut req: Request<Incoming>| {
            started.store(true, Relaxed);
            req.extensions_mut().insert(ConnectInfo(peer));
            req.extensions_mut().insert(permit.clone());
            app.clone().oneshot(req)
        })
    };
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        // The whole head within the handshake timeout, or the connection is closed: a client
        // that sends half a head holds a connection slot no longer than this.
        .header_read_timeout(server.config.server.handshake_timeout)
        .max_buf_size(MAX_HEAD)
        .title_case_headers(true)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::pin!(conn);
    let result = tokio::select! {
        r = conn.as_mut() => r,
        _ = server.shutdown.cancelled() => {
            // hyper's graceful shutdown would wait for a head being sent: drop those at once,
            // finish the request being answered.
            if !started.load(Relaxed) {
                return;
            }
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = result {
        tracing::debug!(%peer, "http connection: {e}");
    }
}
