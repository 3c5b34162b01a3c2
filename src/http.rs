//! The front door: every TCP connection starts here. The request head is read and parsed
//! (httparse); `GET /ws` with an upgrade is handed, bytes and all, to tokio-tungstenite, which
//! does the WebSocket handshake and framing; anything else is answered as plain HTTP/1.1 and
//! closed. Routes: `/healthz`, `/api/rooms`, `/api/bots`, the replay API under `/api/games`
//! (read from the store in `spawn_blocking`), `/metrics`, and the browser client under `/`
//! ([`static_file`]).

use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::Server;

/// Longest request head accepted.
const MAX_HEAD: usize = 8192;

/// Serves one TCP connection.
pub async fn handle(server: Arc<Server>, mut stream: TcpStream, peer: SocketAddr) {
    let Ok(_permit) = server.connection_permits.clone().try_acquire_owned() else {
        server
            .metrics
            .connections_refused_total
            .fetch_add(1, Relaxed);
        respond(&mut stream, 503, "text/plain", b"too many connections\n").await;
        return;
    };
    let head = tokio::select! {
        _ = server.shutdown.cancelled() => return,
        r = tokio::time::timeout(server.config.server.handshake_timeout, read_head(&mut stream)) => match r {
            Ok(Ok(Some(head))) => head,
            Ok(Ok(None)) => {
                respond(&mut stream, 431, "text/plain", b"request head too large\n").await;
                return;
            }
            _ => return,
        },
    };
    let Some(Head {
        method,
        path,
        query,
        upgrade,
    }) = parse_head(&head)
    else {
        respond(&mut stream, 400, "text/plain", b"bad request\n").await;
        return;
    };
    tracing::debug!(%peer, %method, %path, "request");
    if path == "/ws" {
        if !upgrade {
            respond(
                &mut stream,
                426,
                "text/plain",
                b"WebSocket upgrade required\n",
            )
            .await;
            return;
        }
        let ws_config = ws_config(server.config.limits.max_frame_bytes);
        let accept = tokio_tungstenite::accept_hdr_async_with_config(
            Rewind::new(head, stream),
            accept_any,
            Some(ws_config),
        );
        match tokio::time::timeout(server.config.server.handshake_timeout, accept).await {
            Ok(Ok(ws)) => crate::connection::serve(server, ws).await,
            Ok(Err(e)) => tracing::debug!(%peer, "websocket handshake failed: {e}"),
            Err(_) => tracing::debug!(%peer, "websocket handshake timed out"),
        }
        return;
    }
    if method != "GET" && method != "HEAD" {
        respond(&mut stream, 405, "text/plain", b"method not allowed\n").await;
        return;
    }
    if let Some(rest) = path.strip_prefix("/api/games") {
        let reply = games_api(&server, rest, &query).await;
        let body = if method == "HEAD" {
            Vec::new()
        } else {
            reply.body
        };
        respond_with(&mut stream, reply.status, reply.ctype, &reply.extra, &body).await;
        return;
    }
    let (status, ctype, body): (u16, &str, Vec<u8>) = match path.as_str() {
        "/healthz" => (200, "text/plain", b"ok\n".to_vec()),
        "/api/rooms" => (
            200,
            "application/json",
            json_body(&serde_json::json!({ "rooms": server.lobby.summaries() })),
        ),
        "/api/bots" => (
            200,
            "application/json",
            json_body(&serde_json::json!({ "bots": server.bots.infos() })),
        ),
        "/metrics" => (
            200,
            "text/plain; version=0.0.4; charset=utf-8",
            server.metrics.render().into_bytes(),
        ),
        other => match static_file(other, server.config.server.client_dir.as_deref()).await {
            Some((ctype, body)) => (200, ctype, body),
            None => (404, "text/plain", b"not found\n".to_vec()),
        },
    };
    let body = if method == "HEAD" { Vec::new() } else { body };
    respond(&mut stream, status, ctype, &body).await;
}

/// What the server needs of a request head.
struct Head {
    method: String,
    path: String,
    query: String,
    upgrade: bool,
}

/// Parses a request head. A function of its own so that httparse's header array (2 KiB) is
/// never held across an `.await`: it would sit in every connection's task for the life of the
/// connection (docs/performance.md).
fn parse_head(head: &[u8]) -> Option<Head> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    if !matches!(req.parse(head), Ok(httparse::Status::Complete(_))) {
        return None;
    }
    let method = req.method.unwrap_or("").to_string();
    let full = req.path.unwrap_or("/");
    let (path, query) = match full.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (full.to_string(), String::new()),
    };
    let upgrade = req.headers.iter().any(|h| {
        h.name.eq_ignore_ascii_case("upgrade")
            && String::from_utf8_lossy(h.value)
                .to_ascii_lowercase()
                .contains("websocket")
    });
    Some(Head {
        method,
        path,
        query,
        upgrade,
    })
}

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

// The signature is tungstenite's handshake callback; its error type is theirs.
#[allow(clippy::result_large_err)]
fn accept_any(
    _req: &Request,
    resp: Response,
) -> Result<Response, tokio_tungstenite::tungstenite::handshake::server::ErrorResponse> {
    Ok(resp)
}

/// The browser client (`client/`), embedded in every build (rust-embed's `debug-embed`), so a
/// copied binary serves it and the tests exercise the very bytes a release serves.
/// `server.client_dir` serves a directory from disk instead, for editing the client.
#[derive(rust_embed::Embed)]
#[folder = "client/"]
struct Client;

/// A file of the browser client: `/` is `index.html`; read from `dir` when one is configured,
/// else from the embedded copy. `None` for anything else.
pub async fn static_file(path: &str, dir: Option<&Path>) -> Option<(&'static str, Vec<u8>)> {
    let name = match path.trim_start_matches('/') {
        "" => "index.html",
        other => other,
    };
    if name
        .split('/')
        .any(|segment| segment == ".." || segment.is_empty() || segment.contains('\\'))
    {
        return None;
    }
    let data = match dir {
        Some(dir) => tokio::fs::read(dir.join(name)).await.ok()?,
        None => Client::get(name)?.data.into_owned(),
    };
    let ctype = match name.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        _ => "application/octet-stream",
    };
    Some((ctype, data))
}

fn json_body(v: &serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}

/// Reads up to the end of the request head; `None` if it is too large.
async fn read_head(stream: &mut TcpStream) -> std::io::Result<Option<Vec<u8>>> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.windows(4).any(|w| w == b"\r\n\r\n") {
            return Ok(Some(buf));
        }
        if buf.len() > MAX_HEAD {
            return Ok(None);
        }
    }
}

/// An answer of the replay API.
struct Reply {
    status: u16,
    ctype: &'static str,
    extra: String,
    body: Vec<u8>,
}

fn json_reply(status: u16, v: &serde_json::Value) -> Reply {
    Reply {
        status,
        ctype: "application/json",
        extra: String::new(),
        body: json_body(v),
    }
}

fn api_error(status: u16, code: &str, message: &str) -> Reply {
    json_reply(
        status,
        &serde_json::json!({"error": {"code": code, "message": message}}),
    )
}

/// Percent-decoding for query values (`+` is a space, as browsers send forms).
fn decode(v: &str) -> String {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or(""), 16) {
                    Ok(c) => {
                        out.push(c);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `GET /api/games?player=&limit=&before=`, `GET /api/games/{id}` (JSON with moves),
/// `/api/games/{id}.json` and `/api/games/{id}.psq` (downloads). Reads run in
/// `spawn_blocking`: they do file I/O.
async fn games_api(server: &Arc<Server>, rest: &str, query: &str) -> Reply {
    if rest.is_empty() || rest == "/" {
        let mut q = crate::store::GameQuery {
            limit: 20,
            ..Default::default()
        };
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let v = decode(v);
            match k {
                "player" if !v.is_empty() => q.player = Some(v),
                "player" => {}
                "limit" => match v.parse::<u32>() {
                    Ok(n) if (1..=100).contains(&n) => q.limit = n,
                    _ => return api_error(400, "bad_query", "limit must be 1..=100"),
                },
                "before" => match v.parse() {
                    Ok(c) => q.before = Some(c),
                    _ => {
                        return api_error(
                            400,
                            "bad_query",
                            "before must be a time in unix milliseconds or a page's `next`",
                        )
                    }
                },
                _ => {}
            }
        }
        let store = server.store.clone();
        let limit = q.limit as usize;
        return match tokio::task::spawn_blocking(move || store.list_games(&q)).await {
            Ok(Ok(games)) => {
                // A full page may have a successor: its cursor continues exactly after the last
                // game. A short page is the last one.
                let next = (games.len() == limit)
                    .then(|| games.last().and_then(crate::store::Cursor::after))
                    .flatten()
                    .map(|c| c.to_string());
                json_reply(200, &serde_json::json!({ "games": games, "next": next }))
            }
            _ => api_error(500, "store", "the game database could not be read"),
        };
    }
    let Some(name) = rest.strip_prefix('/').filter(|n| !n.contains('/')) else {
        return api_error(404, "not_found", "no such game");
    };
    let (id, format) = match name.rsplit_once('.') {
        Some((id, "psq")) => (id.to_string(), "psq"),
        Some((id, "json")) => (id.to_string(), "json"),
        _ => (name.to_string(), ""),
    };
    let store = server.store.clone();
    let lookup = id.clone();
    let game = match tokio::task::spawn_blocking(move || store.game(&lookup)).await {
        Ok(Ok(Some(g))) => g,
        Ok(Ok(None)) => return api_error(404, "not_found", "no such game"),
        _ => return api_error(500, "store", "the game database could not be read"),
    };
    // Ids are ours (hex), but never put client bytes in a header unchecked.
    let safe: String = id.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    match format {
        "psq" => Reply {
            status: 200,
            ctype: "text/plain; charset=utf-8",
            extra: format!("Content-Disposition: attachment; filename=\"caro-{safe}.psq\"\r\n"),
            body: crate::store::psq::write(&game).into_bytes(),
        },
        "json" => Reply {
            extra: format!("Content-Disposition: attachment; filename=\"caro-{safe}.json\"\r\n"),
            ..json_reply(200, &serde_json::to_value(&game).unwrap_or_default())
        },
        _ => json_reply(200, &serde_json::to_value(&game).unwrap_or_default()),
    }
}

async fn respond(stream: &mut TcpStream, status: u16, ctype: &str, body: &[u8]) {
    respond_with(stream, status, ctype, "", body).await
}

/// `extra`: more header lines, each ending in CRLF.
async fn respond_with(stream: &mut TcpStream, status: u16, ctype: &str, extra: &str, body: &[u8]) {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        426 => "Upgrade Required",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let write = async {
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body).await?;
        stream.shutdown().await
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), write).await;
}

/// A stream that first replays bytes already read (the request head), so tokio-tungstenite can
/// parse the handshake itself.
pub struct Rewind<S> {
    prefix: Vec<u8>,
    pos: usize,
    inner: S,
}

impl<S> Rewind<S> {
    /// `prefix` is read before `inner`.
    pub fn new(prefix: Vec<u8>, inner: S) -> Rewind<S> {
        Rewind {
            prefix,
            pos: 0,
            inner,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Rewind<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.pos < self.prefix.len() {
            let n = (self.prefix.len() - self.pos).min(buf.remaining());
            let start = self.pos;
            buf.put_slice(&self.prefix[start..start + n]);
            self.pos += n;
            if self.pos == self.prefix.len() {
                self.prefix = Vec::new();
                self.pos = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Rewind<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
