//! Abuse of one connection (issue 16): clients that never read, floods of messages and of
//! WebSocket pings, and the paging that keeps one `list_rooms` small. Everything over real
//! sockets; nothing here asserts on elapsed time (loops are bounded by counts and by the
//! harness's guard timeouts).

mod common;

use std::collections::HashSet;
use std::net::SocketAddr;

use common::*;
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::MaybeTlsStream;

/// Opens `n` waiting rooms, one per player (so that a per-player cap does not matter), and
/// returns their ids and the creators, which must stay connected for the rooms to stay open.
async fn open_rooms(
    addr: SocketAddr,
    n: usize,
    name: impl Fn(usize) -> String,
) -> (Vec<String>, Vec<Client>) {
    let (mut ids, mut creators) = (Vec::new(), Vec::new());
    for i in 0..n {
        let mut c = connect(addr).await;
        c.send(json!({"type": "hello", "name": name(i)})).await;
        assert_eq!(c.recv().await["type"], "welcome");
        let (_, id) = create(
            &mut c,
            json!({"type": "create_room", "game": "tictactoe", "x": "me", "o": "open"}),
        )
        .await;
        ids.push(id);
        creators.push(c);
    }
    (ids, creators)
}

/// A client whose socket's receive buffer is as small as the kernel allows: what the server
/// sends it piles up in the server, not in this side's kernel buffer, so a few hundred replies
/// are enough to show where it piles up.
async fn tight_client(addr: SocketAddr) -> Client {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let stream = socket.connect(addr).await.unwrap();
    let (ws, _) =
        tokio_tungstenite::client_async(format!("ws://{addr}/ws"), MaybeTlsStream::Plain(stream))
            .await
            .expect("connect");
    Client { ws }
}

/// Sends `n` `list_rooms` without reading anything; stops early if the server has gone.
async fn ask_without_reading(c: &mut Client, n: usize) {
    for i in 0..n {
        let msg = Message::Text(json!({"type": "list_rooms", "id": i}).to_string().into());
        if c.ws.send(msg).await.is_err() {
            return;
        }
    }
}

/// Polls `/metrics` until `caro_<name>` reaches `at_least`; the guard is a count of polls, each
/// a real HTTP round trip.
async fn metric_reaches(addr: SocketAddr, name: &str, at_least: u64) {
    for _ in 0..2_000 {
        let (_, body) = http_get(addr, "/metrics").await;
        let prefix = format!("caro_{name} ");
        let v: u64 = body
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .unwrap_or_else(|| panic!("no caro_{name}"))
            .parse()
            .unwrap();
        if v >= at_least {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("caro_{name} never reached {at_least}");
}

/// The resident memory of process `pid`, in KiB (`VmRSS` in `/proc/<pid>/status`).
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Players' names of 2,000 characters make each summary about 2 KiB, so a `list_rooms` of 8
/// rooms is about 17 KiB.
fn long_name(i: usize) -> String {
    format!("{i:04}{}", "n".repeat(1996))
}

const LONG_NAMES: &str = "max_name_chars = 2000";

/// Regression: a client that never read and asked for large replies held up to
/// `limits.send_queue` (512) of them, 75 KB each, in the server's memory until it was evicted.
/// Now it is closed once `limits.send_queue_bytes` are waiting, with 1013 and a reason naming
/// that bound, which it reads when it finally reads.
#[tokio::test]
async fn a_client_that_never_reads_is_closed_at_the_byte_bound() {
    let server = start(config_with(
        "",
        &format!("{LONG_NAMES}\nsend_queue_bytes = 65536\nsend_queue = 100000"),
        "",
        "",
    ))
    .await;
    let (_, _creators) = open_rooms(server.addr, 8, long_name).await;
    let mut sloth = tight_client(server.addr).await;
    sloth.send(json!({"type": "hello", "name": "sloth"})).await;
    // 600 replies of 17 KiB (10 MB) cannot all fit in a 4 KiB window, the server's socket
    // buffer and 64 KiB of queue.
    ask_without_reading(&mut sloth, 600).await;
    metric_reaches(server.addr, "slow_clients_dropped_total", 1).await;
    let frame = sloth.closed().await.expect("a close frame, not a reset");
    assert_eq!(u16::from(frame.code), 1013);
    assert_eq!(
        frame.reason.as_str(),
        "too slow: queued bytes over limits.send_queue_bytes"
    );
    server.stop().await;
}

/// The same over the real binary, several clients at once: the server's resident memory while
/// they ask and never read stays within a bound with slack. The server runs as its own process
/// so that its RSS is its own (in this process, the test's clients would be counted with it).
/// Before the byte bound each such client could hold 512 replies of 17 KiB here (8.7 MB; the
/// peak measured with six was +21 MiB); the bound allows six times 256 KiB plus the write
/// buffers, and 10 MiB of slack for the allocator (measured with the bound: +1 MiB).
#[tokio::test]
async fn memory_stays_bounded_while_clients_never_read() {
    const SLOW: usize = 6;
    let dir = tempfile::tempdir().unwrap();
    let (mut child, addr) = spawn_binary(
        dir.path(),
        &format!(
            "[server]\nlog = \"warn\"\n[store]\npath = \":memory:\"\n\
             [limits]\n{LONG_NAMES}\nrate_per_sec = 1000.0\nrate_burst = 1000\n"
        ),
    );
    let pid = child.id();
    let (_, _creators) = open_rooms(addr, 8, long_name).await;
    let mut warm = connect(addr).await;
    warm.send(json!({"type": "hello", "name": "warm"})).await;
    warm.recv().await;
    // One full reply read, so the first serialisations' allocations are in the baseline.
    for i in 0..20 {
        warm.send(json!({"type": "list_rooms", "id": i})).await;
        assert_eq!(warm.recv().await["rooms"].as_array().unwrap().len(), 8);
    }
    let before = rss_kib(pid);
    let mut sloths = Vec::new();
    for i in 0..SLOW {
        let mut c = tight_client(addr).await;
        c.send(json!({"type": "hello", "name": format!("sloth{i}")}))
            .await;
        sloths.push(c);
    }
    let tasks: Vec<_> = sloths
        .into_iter()
        .map(|mut c| {
            tokio::spawn(async move {
                ask_without_reading(&mut c, 600).await;
                c
            })
        })
        .collect();
    let mut peak = before;
    let mut dropped = 0;
    for _ in 0..2_000 {
        peak = peak.max(rss_kib(pid));
        let (_, body) = http_get(addr, "/metrics").await;
        dropped = body
            .lines()
            .find_map(|l| l.strip_prefix("caro_slow_clients_dropped_total "))
            .unwrap()
            .parse()
            .unwrap();
        if dropped >= SLOW as u64 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    peak = peak.max(rss_kib(pid));
    assert_eq!(
        dropped, SLOW as u64,
        "every client that never reads is dropped"
    );
    let allowed = SLOW as u64 * (256 + 64) + 10 * 1024;
    assert!(
        peak <= before + allowed,
        "RSS went from {before} KiB to {peak} KiB (+{} KiB), more than {allowed} KiB",
        peak - before
    );
    eprintln!(
        "server RSS {before} KiB before, {peak} KiB at most with {SLOW} clients that never read"
    );
    for t in tasks {
        drop(t.await.unwrap());
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Regression: the server closed a flooder's socket with its messages still unread, the kernel
/// reset the connection, and the client saw 1006: no `rate_limited`, no replies to what it sent
/// before, no 1008. The flooder here keeps sending after the close; it still reads the replies
/// to its first messages, its `rate_limited` errors, then a close frame with 1008.
#[tokio::test]
async fn a_flooder_reads_rate_limited_then_1008() {
    let server = start(config_with(
        "",
        "rate_per_sec = 1.0\nrate_burst = 5\nflood_close_after = 10",
        "",
        "",
    ))
    .await;
    let (mut c, _) = server.hello("flood").await;
    // Large messages, so that the flood is still being sent when the server closes: unread
    // data in the socket is what made the kernel reset the connection.
    let pad = "f".repeat(3000);
    for i in 0..2_000 {
        let msg = json!({"type": "ping", "id": i, "pad": pad});
        let msg = Message::Text(msg.to_string().into());
        if c.ws.send(msg).await.is_err() {
            break;
        }
    }
    let (mut pongs, mut limited) = (0, 0);
    let code = loop {
        match tokio::time::timeout(WAIT, c.ws.next()).await.unwrap() {
            Some(Ok(Message::Text(t))) => {
                let v: Value = serde_json::from_str(t.as_str()).unwrap();
                match v["type"].as_str().unwrap() {
                    "pong" => {
                        assert_eq!(limited, 0, "replies come before the refusals");
                        pongs += 1;
                    }
                    "error" => {
                        assert_eq!(v["code"], "rate_limited", "{v}");
                        limited += 1;
                    }
                    other => panic!("{other}"),
                }
            }
            Some(Ok(Message::Close(f))) => break f.map(|f| u16::from(f.code)),
            Some(Ok(_)) => {}
            other => panic!("expected a close frame, got {other:?} (a reset is 1006)"),
        }
    };
    assert_eq!(code, Some(1008));
    // hello took one token of the burst of 5.
    assert_eq!((pongs, limited), (4, 9));
    server.stop().await;
}

/// Regression: WebSocket ping frames were answered without counting against the rate limit
/// (50,000 pings in 0.6 s got 6.35 MB of pongs). Now they count like messages: a ping flood is
/// closed with 1008 after `flood_close_after` refusals, and most of it is never answered.
#[tokio::test]
async fn a_ping_flood_is_cut_off() {
    let server = start(config_with(
        "",
        "rate_per_sec = 1.0\nrate_burst = 5\nflood_close_after = 10",
        "",
        "",
    ))
    .await;
    let (mut c, _) = server.hello("pinger").await;
    const PINGS: usize = 5_000;
    for _ in 0..PINGS {
        if c.ws
            .send(Message::Ping(vec![7u8; 100].into()))
            .await
            .is_err()
        {
            break;
        }
    }
    let (mut pongs, mut limited) = (0, 0);
    let code = loop {
        match tokio::time::timeout(WAIT, c.ws.next()).await.unwrap() {
            Some(Ok(Message::Pong(_))) => pongs += 1,
            Some(Ok(Message::Text(t))) => {
                let v: Value = serde_json::from_str(t.as_str()).unwrap();
                assert_eq!(v["code"], "rate_limited", "{v}");
                limited += 1;
            }
            Some(Ok(Message::Close(f))) => break f.map(|f| u16::from(f.code)),
            Some(Ok(_)) => {}
            other => panic!("expected a close frame, got {other:?}"),
        }
    };
    assert_eq!(code, Some(1008));
    assert_eq!(limited, 9);
    // At most one pong per ping read before the close (tungstenite answers a ping as it reads
    // it); the pings read while the server waits for the close handshake are not answered.
    assert!(
        pongs <= 5 + 10,
        "{pongs} pongs for a flood of {PINGS} pings"
    );
    server.stop().await;
}

/// The ids of a `room_list` reply.
fn ids(reply: &Value) -> Vec<String> {
    reply["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["room_id"].as_str().unwrap().to_string())
        .collect()
}

/// Paging `list_rooms` (and `/api/rooms`) returns every room exactly once, in id order, with
/// `next` on every page but the last, and never more than `limits.room_list_page` rooms.
#[tokio::test]
async fn list_rooms_pages_return_every_room_once() {
    let server = start(config_with("", "room_list_page = 4", "", "")).await;
    let (mut opened, _creators) = open_rooms(server.addr, 10, |i| format!("p{i}")).await;
    opened.sort();
    let (mut c, _) = server.hello("pager").await;

    // No paging fields: the first page, at most room_list_page rooms, and `next`.
    c.send(json!({"type": "list_rooms", "id": 1})).await;
    let first = c.recv().await;
    assert_eq!(ids(&first), opened[..4]);
    assert_eq!(first["next"], opened[3]);
    // A larger limit is the page size.
    c.send(json!({"type": "list_rooms", "id": 2, "limit": 1000}))
        .await;
    assert_eq!(ids(&c.recv().await).len(), 4);

    let (mut seen, mut after, mut pages) = (Vec::new(), None::<String>, 0);
    loop {
        pages += 1;
        assert!(pages <= 10, "paging does not end");
        let mut msg = json!({"type": "list_rooms", "id": 10 + pages, "limit": 3});
        if let Some(a) = &after {
            msg["after"] = json!(a);
        }
        c.send(msg).await;
        let page = c.recv().await;
        assert_eq!(page["type"], "room_list");
        assert_eq!(page["re"], 10 + pages);
        let got = ids(&page);
        assert!(got.len() <= 3);
        seen.extend(got.clone());
        match page.get("next") {
            Some(next) => {
                assert_eq!(next.as_str(), got.last().map(String::as_str));
                after = Some(next.as_str().unwrap().to_string());
            }
            None => break,
        }
    }
    assert_eq!(pages, 4);
    assert_eq!(seen, opened, "every room once, in id order");
    assert_eq!(seen.iter().collect::<HashSet<_>>().len(), 10);

    // The last page has no `next` key at all: the reply of a small lobby is as before paging.
    c.send(json!({"type": "list_rooms", "id": 99, "after": opened[7]}))
        .await;
    let last = c.recv().await;
    assert_eq!(last.as_object().unwrap().len(), 3, "{last}");
    assert_eq!(ids(&last), opened[8..]);

    // /api/rooms pages the same way.
    let mut seen = Vec::new();
    let mut path = "/api/rooms?limit=3".to_string();
    for _ in 0..10 {
        let (status, body) = server.get(&path).await;
        assert!(status.contains("200"), "{status}");
        let page: Value = serde_json::from_str(&body).unwrap();
        seen.extend(ids(&page));
        match page.get("next") {
            Some(next) => path = format!("/api/rooms?limit=3&after={}", next.as_str().unwrap()),
            None => break,
        }
    }
    assert_eq!(seen, opened);
    let (status, _) = server.get("/api/rooms?limit=0").await;
    assert!(status.contains("400"), "{status}");
    server.stop().await;
}
