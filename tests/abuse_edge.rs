//! The edge under abuse from one address (issue 16): the per-address connection cap
//! (`limits.max_connections_per_ip`), the per-address WebSocket upgrade rate
//! (`limits.upgrades_per_ip_per_sec`), the `Origin` allow-list (`server.allowed_origins`) and
//! the gauge of open TCP connections. Raw TCP on port 0, so every status and header is seen;
//! a second address is 127.0.0.2, which Linux routes to loopback like 127.0.0.1.

mod common;

use std::net::{IpAddr, SocketAddr};

use common::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends `request` on `s` and reads the reply's head; the body too unless it is a 101 (the
/// socket then stays open, a WebSocket). Returns (head, body).
async fn exchange(s: &mut TcpStream, request: &str) -> (String, String) {
    s.write_all(request.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    let end = tokio::time::timeout(WAIT, async {
        loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                return end;
            }
            let mut chunk = [0; 1024];
            let n = s.read(&mut chunk).await.unwrap();
            assert!(
                n > 0,
                "closed before a head: {:?}",
                String::from_utf8_lossy(&buf)
            );
            buf.extend_from_slice(&chunk[..n]);
        }
    })
    .await
    .expect("a reply head in time");
    let head = String::from_utf8(buf[..end].to_vec()).unwrap();
    let mut body = buf[end + 4..].to_vec();
    if !head.starts_with("HTTP/1.1 101 ") {
        tokio::time::timeout(WAIT, s.read_to_end(&mut body))
            .await
            .expect("the server closes after its reply")
            .unwrap();
    }
    (head, String::from_utf8(body).unwrap())
}

/// `GET /healthz` from `from`: (status line, body).
async fn healthz_from(from: IpAddr, addr: SocketAddr) -> (String, String) {
    let mut s = connect_from(from, addr).await;
    let (head, body) = exchange(&mut s, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await;
    (status(&head).to_string(), body)
}

/// A WebSocket handshake for `/ws` sent to `addr` with `Host: host` and `extra` header lines
/// (each ending in CRLF). Returns the reply's (head, body) and the socket.
async fn upgrade(addr: SocketAddr, host: &str, extra: &str) -> (String, String, TcpStream) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{extra}\r\n"
    );
    let (head, body) = exchange(&mut s, &request).await;
    (head, body, s)
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

fn localhost() -> IpAddr {
    "127.0.0.1".parse().unwrap()
}

/// Issue 16 item 7: 3,000 of 3,000 connections from one address were accepted. Past
/// `max_connections_per_ip` a connection from that address gets 429 with a reason, before any
/// HTTP; another address still gets in; closing one connection frees its slot.
#[tokio::test]
async fn connections_past_the_per_address_cap_get_429_until_one_closes() {
    let server = start(config_with("", "max_connections_per_ip = 3", "", "")).await;
    // WebSockets past `hello`, so each has certainly been admitted before the next is opened.
    let (mut first, _) = server.hello("a").await;
    let (_second, _) = server.hello("b").await;
    let (_third, _) = server.hello("c").await;

    let (status_line, body) = healthz_from(localhost(), server.addr).await;
    assert_eq!(status_line, "HTTP/1.1 429 Too Many Requests");
    assert_eq!(body, "too many connections from your address\n");
    // A connection that sends nothing is refused the same way, without waiting for a head.
    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(WAIT, silent.read_to_end(&mut reply))
        .await
        .expect("refused without a request")
        .unwrap();
    assert!(String::from_utf8(reply)
        .unwrap()
        .starts_with("HTTP/1.1 429 Too Many Requests\r\n"),);
    // Another address is not held back by this one.
    let (status_line, _) = healthz_from("127.0.0.2".parse().unwrap(), server.addr).await;
    assert_eq!(status_line, "HTTP/1.1 200 OK");

    first.ws.close(None).await.unwrap();
    first.closed().await;
    // The slot comes back when the WebSocket's task ends, just after its close.
    tokio::time::timeout(WAIT, async {
        while healthz_from(localhost(), server.addr).await.0 != "HTTP/1.1 200 OK" {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("a slot frees when a connection closes");
    let refused = tokio::time::timeout(WAIT, async {
        loop {
            let (head, body) = http_get(server.addr, "/metrics").await;
            if status(&head) == "HTTP/1.1 200 OK" {
                break body;
            }
        }
    })
    .await
    .unwrap();
    let line = refused
        .lines()
        .find(|l| l.starts_with("caro_connections_refused_per_ip_total "))
        .unwrap_or_else(|| panic!("{refused}"));
    assert!(!line.ends_with(" 0"), "{line}");
    server.stop().await;
}

/// Issue 16 (hellos per address per second): past `upgrades_per_ip_burst` upgrades, an address
/// gets 429 with `Retry-After` until its bucket refills; its plain HTTP requests and other
/// addresses' upgrades still get through.
#[tokio::test]
async fn upgrades_past_the_burst_get_429_with_retry_after() {
    // One token per 100 s: none comes back during the test.
    let server = start(config_with(
        "",
        "upgrades_per_ip_per_sec = 0.01\nupgrades_per_ip_burst = 3",
        "",
        "",
    ))
    .await;
    let _open: Vec<Client> = futures::future::join_all((0..3).map(|_| server.connect())).await;
    let (head, body, _) = upgrade(server.addr, "x", "").await;
    assert_eq!(status(&head), "HTTP/1.1 429 Too Many Requests", "{head}");
    assert_eq!(
        body,
        "too many new WebSocket connections from your address\n"
    );
    let retry: u64 = header(&head, "retry-after")
        .unwrap_or_else(|| panic!("no Retry-After in {head}"))
        .parse()
        .unwrap();
    assert!((1..=100).contains(&retry), "{head}");

    assert_eq!(server.get("/healthz").await.0, "HTTP/1.1 200 OK");
    let mut elsewhere = connect_from("127.0.0.2".parse().unwrap(), server.addr).await;
    let (head, _) = exchange(
        &mut elsewhere,
        "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
    )
    .await;
    assert_eq!(status(&head), "HTTP/1.1 101 Switching Protocols", "{head}");
    assert!(server.metric("upgrades_rate_limited_total").await >= 1);
    server.stop().await;
}

/// Issue 16 item 8: any `Origin` was accepted. By default a page of the server's own host and
/// a client without `Origin` get a WebSocket; another site's page, or an opaque ("null")
/// origin, gets 403 with a reason.
#[tokio::test]
async fn only_the_servers_own_pages_and_clients_without_origin_may_upgrade() {
    let server = start(config()).await;
    let host = server.addr.to_string();
    for (origin, expected) in [
        (
            format!("Origin: http://{host}\r\n"),
            "101 Switching Protocols",
        ),
        // Case does not make another origin.
        (
            format!("Origin: HTTP://{}\r\n", host.to_uppercase()),
            "101 Switching Protocols",
        ),
        (String::new(), "101 Switching Protocols"),
        ("Origin: http://evil.example\r\n".into(), "403 Forbidden"),
        // Same host name, another port: another site.
        (
            format!("Origin: http://127.0.0.1:{}\r\n", server.addr.port() + 1),
            "403 Forbidden",
        ),
        (
            format!("Origin: https://{host}\r\n"),
            "101 Switching Protocols",
        ),
        ("Origin: null\r\n".into(), "403 Forbidden"),
    ] {
        let (head, body, _) = upgrade(server.addr, &host, &origin).await;
        assert_eq!(status(&head), format!("HTTP/1.1 {expected}"), "{origin:?}");
        if expected == "403 Forbidden" {
            assert_eq!(
                body,
                "WebSocket connections from this page's origin are not allowed\n"
            );
        }
    }
    assert_eq!(server.metric("upgrades_forbidden_origin_total").await, 3);
    server.stop().await;
}

/// `server.allowed_origins` adds pages of other hosts; `"*"` allows any page.
#[tokio::test]
async fn configured_origins_may_upgrade() {
    let server = start(config_with(
        r#"allowed_origins = ["https://caro.example"]"#,
        "",
        "",
        "",
    ))
    .await;
    for (origin, expected) in [
        ("https://caro.example", "101 Switching Protocols"),
        ("https://caro.example:443", "101 Switching Protocols"),
        ("http://caro.example", "403 Forbidden"),
        ("https://evil.example", "403 Forbidden"),
    ] {
        let (head, _, _) = upgrade(server.addr, "x", &format!("Origin: {origin}\r\n")).await;
        assert_eq!(status(&head), format!("HTTP/1.1 {expected}"), "{origin}");
    }
    server.stop().await;

    let server = start(config_with(r#"allowed_origins = ["*"]"#, "", "", "")).await;
    let (head, _, _) = upgrade(server.addr, "x", "Origin: https://evil.example\r\n").await;
    assert_eq!(status(&head), "HTTP/1.1 101 Switching Protocols", "{head}");
    server.stop().await;
}

/// Issue 16 item 9: `caro_connections` counts WebSockets only. `caro_tcp_connections` counts
/// every accepted connection, one that has not sent a byte of its head included, until it
/// closes.
#[tokio::test]
async fn the_tcp_gauge_counts_connections_still_in_their_head() {
    // Heads may take their time: none is dropped while the test waits.
    let server = start(config_with("handshake_timeout_ms = 600000", "", "", "")).await;
    let silent: Vec<TcpStream> =
        futures::future::join_all((0..5).map(|_| TcpStream::connect(server.addr)))
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
    let mut half = TcpStream::connect(server.addr).await.unwrap();
    half.write_all(b"GET /healthz HTTP/1.1\r\nHo")
        .await
        .unwrap();
    // The five silent, the half head and the /metrics request itself; the loop waits for the
    // accepts to run and for earlier /metrics connections to finish closing.
    let gauge = |want: u64| async move {
        tokio::time::timeout(WAIT, async {
            loop {
                let (_, body) = http_get(server.addr, "/metrics").await;
                let value = |name: &str| -> u64 {
                    body.lines()
                        .find_map(|l| l.strip_prefix(&format!("caro_{name} ")))
                        .unwrap()
                        .parse()
                        .unwrap()
                };
                if value("tcp_connections") == want {
                    return value("connections");
                }
                tokio::task::yield_now().await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("caro_tcp_connections never {want}"))
    };
    assert_eq!(gauge(7).await, 0, "none of them is a WebSocket");
    drop(silent);
    drop(half);
    gauge(1).await;
    server.stop().await;
}
