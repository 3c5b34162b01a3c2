//! The HTTP edge (axum and hyper in front of the WebSocket): HEAD, refusals with bodies and the
//! headers their statuses call for, the WebSocket handshake's errors, what is enforced before
//! HTTP (the connection limit, the time and size allowed for a request head), and compression
//! for clients that ask for it. Raw TCP, so every byte the server sends is seen.

mod common;

use std::net::SocketAddr;

use common::*;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends `request` as is and reads the reply to the end of the stream: (head, body).
async fn raw(addr: SocketAddr, request: &str) -> (String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(WAIT, s.read_to_end(&mut buf))
        .await
        .expect("the server closes after its reply")
        .unwrap();
    let end = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no head in {:?}", String::from_utf8_lossy(&buf)));
    let head = String::from_utf8(buf[..end].to_vec()).unwrap();
    let body = buf[end + 4..].to_vec();
    if header(&head, "transfer-encoding") == Some("chunked") {
        return (head, dechunk(&body));
    }
    (head, body)
}

/// The payload of a chunked body (RFC 9112 section 7.1), without extensions or trailers.
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line = body.windows(2).position(|w| w == b"\r\n").unwrap();
        let size = std::str::from_utf8(&body[..line]).unwrap();
        let size = usize::from_str_radix(size.split(';').next().unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&body[line + 2..line + 2 + size]);
        body = &body[line + 2 + size + 2..];
    }
}

/// `method path` with a Host header and `extra` header lines (each ending in CRLF).
async fn request(addr: SocketAddr, method: &str, path: &str, extra: &str) -> (String, Vec<u8>) {
    raw(
        addr,
        &format!("{method} {path} HTTP/1.1\r\nHost: x\r\n{extra}\r\n"),
    )
    .await
}

/// The value of header `name` in `head` (case-insensitive name).
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn status(head: &str) -> &str {
    head.lines().next().unwrap()
}

/// HEAD once answered `Content-Length: 0`: it must announce the length GET sends, and no body.
#[tokio::test]
async fn head_has_the_length_of_get_and_no_body() {
    let server = start(config()).await;
    for path in ["/", "/app.js", "/api/rooms", "/healthz"] {
        let (get_head, get_body) = request(server.addr, "GET", path, "").await;
        let (head, body) = request(server.addr, "HEAD", path, "").await;
        assert_eq!(status(&head), "HTTP/1.1 200 OK", "{path}: {head}");
        assert_eq!(
            header(&head, "content-length"),
            Some(get_body.len().to_string().as_str()),
            "{path}: {head}"
        );
        assert_eq!(
            header(&head, "content-type"),
            header(&get_head, "content-type"),
            "{path}"
        );
        assert!(body.is_empty(), "{path}: {body:?}");
    }
    server.stop().await;
}

/// A request for `/ws` that is not a valid upgrade once got the connection closed with no
/// reply at all. A request with no upgrade in it gets 426; a broken upgrade, 400; each says why.
#[tokio::test]
async fn malformed_upgrades_are_answered_with_a_reason() {
    let server = start(config()).await;
    let (head, body) = request(server.addr, "GET", "/ws", "").await;
    assert_eq!(status(&head), "HTTP/1.1 426 Upgrade Required", "{head}");
    assert_eq!(header(&head, "upgrade"), Some("websocket"), "{head}");
    assert_eq!(body, b"WebSocket upgrade required\n");

    let upgrade = "Upgrade: websocket\r\nConnection: Upgrade\r\n";
    let key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
    for (extra, reason) in [
        (
            format!("{upgrade}Sec-WebSocket-Version: 13\r\n"),
            "missing Sec-WebSocket-Key\n",
        ),
        (
            format!("{upgrade}{key}Sec-WebSocket-Version: 8\r\n"),
            "unsupported Sec-WebSocket-Version\n",
        ),
        (
            format!("Upgrade: websocket\r\n{key}Sec-WebSocket-Version: 13\r\n"),
            "Connection header must include upgrade\n",
        ),
    ] {
        let (head, body) = request(server.addr, "GET", "/ws", &extra).await;
        assert_eq!(status(&head), "HTTP/1.1 400 Bad Request", "{extra}: {head}");
        assert_eq!(String::from_utf8(body).unwrap(), reason, "{extra}");
        if reason.contains("Version") {
            // RFC 6455 section 4.2.2: the refusal names the version the server speaks.
            assert_eq!(header(&head, "sec-websocket-version"), Some("13"), "{head}");
        }
    }
    server.stop().await;
}

/// The handshake answers with the accept key of RFC 6455's own example.
#[tokio::test]
async fn the_upgrade_answers_with_the_rfc_accept_key() {
    let server = start(config()).await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    s.write_all(
        b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
          Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    )
    .await
    .unwrap();
    let mut buf = Vec::new();
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let mut chunk = [0u8; 512];
        let n = tokio::time::timeout(WAIT, s.read(&mut chunk))
            .await
            .unwrap()
            .unwrap();
        assert!(n > 0, "closed during the handshake");
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8(buf).unwrap();
    assert_eq!(status(&head), "HTTP/1.1 101 Switching Protocols", "{head}");
    assert_eq!(
        header(&head, "sec-websocket-accept"),
        Some("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
        "{head}"
    );
    assert_eq!(header(&head, "connection"), Some("upgrade"), "{head}");
    drop(s);
    server.stop().await;
}

/// A method a path does not have gets 405, an `Allow` header naming the ones it has, and a body.
#[tokio::test]
async fn wrong_methods_get_405_with_allow() {
    let server = start(config()).await;
    for (path, allow) in [
        ("/ws", "GET"),
        ("/api/rooms", "GET,HEAD"),
        ("/api/games", "GET,HEAD"),
        ("/", "GET,HEAD"),
        ("/app.js", "GET,HEAD"),
    ] {
        let (head, body) = request(server.addr, "POST", path, "Content-Length: 0\r\n").await;
        assert_eq!(
            status(&head),
            "HTTP/1.1 405 Method Not Allowed",
            "{path}: {head}"
        );
        assert_eq!(header(&head, "allow"), Some(allow), "{path}: {head}");
        assert_eq!(body, b"method not allowed\n", "{path}");
    }
    server.stop().await;
}

/// Unknown paths get 404 with a body: plain text for files, the API's JSON error for games.
#[tokio::test]
async fn unknown_paths_get_404_with_a_body() {
    let server = start(config()).await;
    let (head, body) = request(server.addr, "GET", "/nope", "").await;
    assert_eq!(status(&head), "HTTP/1.1 404 Not Found");
    assert_eq!(body, b"not found\n");
    for path in ["/api/games/nosuchgame", "/api/games/a/b.psq"] {
        let (head, body) = request(server.addr, "GET", path, "").await;
        assert_eq!(status(&head), "HTTP/1.1 404 Not Found", "{path}");
        assert_eq!(header(&head, "content-type"), Some("application/json"));
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["error"]["code"], "not_found", "{path}: {v}");
    }
    server.stop().await;
}

/// A head larger than 8 KiB is refused with 431 rather than buffered.
#[tokio::test]
async fn an_oversized_head_gets_431() {
    let server = start(config()).await;
    let filler = format!("X-Filler: {}\r\n", "a".repeat(10_000));
    let (head, _) = request(server.addr, "GET", "/healthz", &filler).await;
    assert_eq!(
        status(&head),
        "HTTP/1.1 431 Request Header Fields Too Large",
        "{head}"
    );
    server.stop().await;
}

/// A client that sends half a request head (or nothing) is disconnected after
/// `server.handshake_timeout_ms`, and its connection slot is free again.
#[tokio::test]
async fn a_half_sent_head_is_dropped_after_the_handshake_timeout() {
    let server = start(config_with(
        "handshake_timeout_ms = 100",
        "max_connections = 1",
        "",
        "",
    ))
    .await;
    for sent in ["GET /healthz HTTP/1.1\r\nHost: x\r\n", ""] {
        let mut s = TcpStream::connect(server.addr).await.unwrap();
        s.write_all(sent.as_bytes()).await.unwrap();
        let mut buf = Vec::new();
        // The guard is generous: the close comes from the server's timeout, not this one.
        let read = tokio::time::timeout(WAIT, s.read_to_end(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("{sent:?}: still open after {WAIT:?}"));
        // A reset or an end of stream both close it; a complete reply must not come.
        assert!(
            read.is_err() || !String::from_utf8_lossy(&buf).contains("200 OK"),
            "{sent:?}: {buf:?}"
        );
        // The slot (the only one) is free again.
        let (head, body) = request(server.addr, "GET", "/healthz", "").await;
        assert_eq!(status(&head), "HTTP/1.1 200 OK", "{sent:?}: {head}");
        assert_eq!(body, b"ok\n");
    }
    server.stop().await;
}

/// Beyond `limits.max_connections`, a connection is refused with 503 before any HTTP, and
/// counted.
#[tokio::test]
async fn connections_beyond_the_limit_get_503_and_are_counted() {
    let server = start(config_with("", "max_connections = 1", "", "")).await;
    let (mut c, _) = server.hello("only").await;
    let (head, body) = request(server.addr, "GET", "/healthz", "").await;
    assert_eq!(status(&head), "HTTP/1.1 503 Service Unavailable", "{head}");
    assert_eq!(body, b"too many connections\n");
    c.ws.close(None).await.unwrap();
    c.closed().await;
    // The WebSocket's slot is released when its task ends, just after the close.
    let refused = loop {
        let (head, body) = request(server.addr, "GET", "/metrics", "").await;
        if status(&head) == "HTTP/1.1 200 OK" {
            break String::from_utf8(body).unwrap();
        }
        tokio::task::yield_now().await;
    };
    assert!(
        refused
            .lines()
            .any(|l| l.starts_with("caro_connections_refused_total ") && !l.ends_with(" 0")),
        "{refused}"
    );
    server.stop().await;
}

/// Compression is for clients that ask: `Accept-Encoding: gzip` gets a gzip body that inflates
/// to the very bytes a client without it gets; small replies are sent as they are.
#[tokio::test]
async fn gzip_when_asked_for() {
    use std::io::Read;
    let server = start(config()).await;
    for path in ["/app.js", "/metrics"] {
        let (plain_head, plain_body) = request(server.addr, "GET", path, "").await;
        assert_eq!(
            header(&plain_head, "content-encoding"),
            None,
            "{plain_head}"
        );
        let (head, body) = request(server.addr, "GET", path, "Accept-Encoding: gzip\r\n").await;
        assert_eq!(status(&head), "HTTP/1.1 200 OK", "{path}: {head}");
        assert_eq!(header(&head, "content-encoding"), Some("gzip"), "{head}");
        assert!(body.len() < plain_body.len(), "{path}");
        let mut inflated = Vec::new();
        flate2::read::GzDecoder::new(&body[..])
            .read_to_end(&mut inflated)
            .unwrap();
        if path == "/app.js" {
            assert_eq!(inflated, plain_body, "{path}");
        } else {
            assert!(String::from_utf8(inflated)
                .unwrap()
                .contains("caro_connections "));
        }
    }
    let (head, _) = request(server.addr, "GET", "/healthz", "Accept-Encoding: gzip\r\n").await;
    assert_eq!(header(&head, "content-encoding"), None, "{head}");
    server.stop().await;
}

/// Shutdown does not wait for a client that is still sending its head: the connection is
/// closed and the server stops.
#[tokio::test]
async fn shutdown_closes_a_connection_still_sending_its_head() {
    let server = start(config_with("handshake_timeout_ms = 600000", "", "", "")).await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    // The server has the connection once it answers another.
    let (head, _) = request(server.addr, "GET", "/healthz", "").await;
    assert_eq!(status(&head), "HTTP/1.1 200 OK");
    server.stop().await;
    let mut buf = Vec::new();
    let read = tokio::time::timeout(WAIT, s.read_to_end(&mut buf))
        .await
        .expect("closed at shutdown");
    assert!(
        read.is_err() || !String::from_utf8_lossy(&buf).contains("200 OK"),
        "{buf:?}"
    );
}
