//! Every error code, malformed, oversized and flooding input. Errors change nothing and the
//! connection stays up, except for abuse, which gets a close frame with its code.

mod common;

use common::*;
use serde_json::{json, Value};
use tokio_tungstenite::MaybeTlsStream;

fn error(code: &str, message: &str, re: Value) -> Value {
    let mut v = json!({"type": "error", "code": code, "message": message});
    if !re.is_null() {
        v["re"] = re;
    }
    v
}

/// The code of the next message, which must be an error echoing `re`.
async fn code(c: &mut Client, msg: Value) -> String {
    let re = msg.get("id").cloned().unwrap_or(Value::Null);
    c.send(msg).await;
    let v = c.recv_skip(&["room_update"]).await;
    assert_eq!(v["type"], "error", "{v}");
    assert_eq!(v.get("re").cloned().unwrap_or(Value::Null), re, "{v}");
    v["code"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn handshake_and_message_errors() {
    let server = start(config_with("", "max_name_chars = 5", "", "")).await;
    let mut c = server.connect().await;
    c.ask(
        json!({"type": "ping", "id": 1}),
        error("not_hello", "send hello first", json!(1)),
    )
    .await;
    c.send_text("{").await;
    let v = c.recv().await;
    assert_eq!(v["code"], "bad_message");
    assert!(v.get("re").is_none());
    assert_eq!(
        code(&mut c, json!({"type": "fly", "id": "x"})).await,
        "bad_message"
    );
    assert_eq!(code(&mut c, json!({"id": 2})).await, "bad_message");
    c.send_text("[1, 2]").await;
    assert_eq!(c.recv().await["code"], "bad_message");
    c.ws.send_binary().await;
    assert_eq!(c.recv().await["code"], "bad_message");
    assert_eq!(
        code(&mut c, json!({"type": "hello", "name": "abcdef", "id": 3})).await,
        "name_too_long"
    );
    c.send(json!({"type": "hello", "name": "abcde", "id": 4}))
        .await;
    let w = c.recv().await;
    assert_eq!(
        (w["type"].clone(), w["re"].clone()),
        (json!("welcome"), json!(4))
    );
    assert_eq!(
        code(&mut c, json!({"type": "hello", "id": 5})).await,
        "already_hello"
    );
    assert_eq!(
        code(
            &mut c,
            json!({"type": "move", "room_id": "r", "x": 1, "id": 6})
        )
        .await,
        "bad_message"
    );
    // Still up.
    c.ask(
        json!({"type": "ping", "id": 7}),
        json!({"type": "pong", "re": 7}),
    )
    .await;
    server.stop().await;
}

trait SendBinary {
    async fn send_binary(&mut self);
}

impl SendBinary
    for tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>
{
    async fn send_binary(&mut self) {
        use futures::SinkExt;
        self.send(tokio_tungstenite::tungstenite::Message::Binary(
            vec![1u8, 2, 3].into(),
        ))
        .await
        .unwrap();
    }
}

#[tokio::test]
async fn room_errors() {
    let server = start(config_with(
        "",
        "max_rooms = 2\nmax_spectators = 1\nmin_board = 7\nmax_board = 19",
        "",
        "",
    ))
    .await;
    let (mut a, _) = server.hello("a").await;
    let (mut b, _) = server.hello("b").await;
    let (mut s, _) = server.hello("s").await;
    let (mut t, _) = server.hello("t").await;

    for (msg, why) in [
        (
            json!({"game": "chess", "x": "me", "o": "open"}),
            "unknown game",
        ),
        (
            json!({"game": "caro", "width": 6, "x": "me", "o": "open"}),
            "too small",
        ),
        (
            json!({"game": "caro", "width": 20, "x": "me", "o": "open"}),
            "too large",
        ),
        (
            json!({"game": "caro", "width": 15, "height": -1, "x": "me", "o": "open"}),
            "negative",
        ),
        (
            json!({"game": "caro", "rule": "renju", "x": "me", "o": "open"}),
            "unknown rule",
        ),
        (
            json!({"game": "tictactoe", "width": 4, "x": "me", "o": "open"}),
            "ttt size",
        ),
        (
            json!({"game": "caro", "x": "me", "o": {"bot": "nobody"}}),
            "unknown bot",
        ),
        (
            json!({"game": "tictactoe", "x": "me", "o": {"bot": "classic"}}),
            "bot's games",
        ),
        (json!({"game": "caro", "x": "you", "o": "open"}), "bad seat"),
        (json!({"game": "caro", "x": "me", "o": "me"}), "two seats"),
    ] {
        let mut m = msg.clone();
        m["type"] = json!("create_room");
        m["id"] = json!(why);
        assert_eq!(code(&mut a, m).await, "bad_room", "{why}");
    }
    assert_eq!(
        code(
            &mut a,
            json!({"type": "create_room", "id": 1, "game": "caro"})
        )
        .await,
        "bad_message"
    );

    for msg in [
        json!({"type": "join_room", "room_id": "nope", "id": 1}),
        json!({"type": "leave_room", "room_id": "nope", "id": 2}),
        json!({"type": "move", "room_id": "nope", "x": 0, "y": 0, "id": 3}),
        json!({"type": "resign", "room_id": "nope", "id": 4}),
        json!({"type": "sync", "room_id": "nope", "since_seq": 0, "id": 5}),
    ] {
        assert_eq!(code(&mut a, msg).await, "no_such_room");
    }

    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 9, "x": "me", "o": "open"}),
    )
    .await;
    let mv = |x: i64, y: i64, id: u32| json!({"type": "move", "room_id": room, "x": x, "y": y, "id": id});
    assert_eq!(code(&mut a, mv(0, 0, 1)).await, "not_started");
    assert_eq!(
        code(&mut a, json!({"type": "resign", "room_id": room, "id": 1})).await,
        "not_started"
    );
    // b is not in the room.
    assert_eq!(code(&mut b, mv(0, 0, 2)).await, "not_a_player");
    assert_eq!(
        code(
            &mut b,
            json!({"type": "leave_room", "room_id": room, "id": 3})
        )
        .await,
        "not_in_room"
    );
    assert_eq!(
        code(
            &mut b,
            json!({"type": "sync", "room_id": room, "since_seq": 0, "id": 4})
        )
        .await,
        "not_in_room"
    );
    // Spectators: one allowed.
    s.send(json!({"type": "join_room", "room_id": room, "as": "spectator"}))
        .await;
    assert_eq!(s.recv().await["type"], "room_joined");
    assert_eq!(
        code(
            &mut t,
            json!({"type": "join_room", "room_id": room, "as": "spectator", "id": 1})
        )
        .await,
        "room_full"
    );
    b.send(json!({"type": "join_room", "room_id": room})).await;
    assert_eq!(b.recv().await["you"]["seat"], "o");
    assert_eq!(
        code(
            &mut t,
            json!({"type": "join_room", "room_id": room, "as": "player", "id": 2})
        )
        .await,
        "seat_taken"
    );
    assert_eq!(code(&mut s, mv(0, 0, 5)).await, "not_a_player");
    assert_eq!(
        code(&mut s, json!({"type": "resign", "room_id": room, "id": 6})).await,
        "not_a_player"
    );
    assert_eq!(code(&mut b, mv(0, 0, 7)).await, "not_your_turn");
    assert_eq!(code(&mut a, mv(9, 0, 8)).await, "out_of_bounds");
    assert_eq!(code(&mut a, mv(0, -1, 9)).await, "out_of_bounds");
    assert_eq!(code(&mut a, mv(1 << 40, 0, 10)).await, "out_of_bounds");
    // Skip the room_updates from joins, then play.
    let skip = ["room_update"];
    a.send(mv(4, 4, 11)).await;
    assert_eq!(a.recv_skip(&skip).await["seq"], 1);
    assert_eq!(b.recv_skip(&skip).await["seq"], 1);
    b.send(mv(4, 4, 12)).await;
    let e = b.recv_skip(&skip).await;
    assert_eq!(e, error("occupied", "(4, 4) is taken", json!(12)));
    // Errors changed nothing: the state is one move.
    let ev = s.recv_skip(&skip).await;
    assert_eq!(ev["seq"], 1);
    s.send(json!({"type": "sync", "room_id": room, "since_seq": 0, "id": 1}))
        .await;
    assert_eq!(s.recv_skip(&skip).await, ev);
    assert_eq!(
        s.recv_skip(&skip).await,
        json!({"type": "synced", "room_id": room, "seq": 1, "re": 1})
    );
    // A sync from the future gets a snapshot.
    s.send(json!({"type": "sync", "room_id": room, "since_seq": 99, "id": 2}))
        .await;
    let snap = s.recv_skip(&skip).await;
    assert_eq!(snap["type"], "room_joined");
    assert_eq!(snap["re"], 2);
    assert_eq!(snap["room"]["moves"], json!([[4, 4]]));

    // max_rooms = 2.
    create(
        &mut t,
        json!({"type": "create_room", "game": "tictactoe", "x": "me", "o": "open"}),
    )
    .await;
    assert_eq!(
        code(
            &mut t,
            json!({"type": "create_room", "id": 1, "game": "tictactoe", "x": "me", "o": "open"})
        )
        .await,
        "too_many_rooms"
    );
    server.stop().await;
}

#[tokio::test]
async fn oversized_frame_closes_with_1009() {
    let server = start(config()).await;
    let (mut c, _) = server.hello("big").await;
    let big = format!(r#"{{"type":"ping","pad":"{}"}}"#, "x".repeat(5000));
    c.send_text(&big).await;
    let frame = c.closed().await.expect("a close frame");
    assert_eq!(u16::from(frame.code), 1009);
    // The server is fine.
    let (mut d, _) = server.hello("small").await;
    d.ask(json!({"type": "ping"}), json!({"type": "pong"}))
        .await;
    server.stop().await;
}

/// Writes `frame` (already encoded) straight to the socket under the WebSocket, to send what a
/// well-behaved client library refuses to.
async fn write_raw(c: &mut Client, frame: &[u8]) {
    use tokio::io::AsyncWriteExt;
    let MaybeTlsStream::Plain(tcp) = c.ws.get_mut() else {
        unreachable!("tests use plain TCP")
    };
    tcp.write_all(frame).await.unwrap();
}

#[tokio::test]
async fn invalid_utf8_closes_with_1007_and_unmasked_frames_with_1002() {
    let server = start(config()).await;
    // A masked text frame (mask key 0) whose payload is not UTF-8.
    let (mut c, _) = server.hello("bytes").await;
    write_raw(&mut c, &[0x81, 0x82, 0, 0, 0, 0, 0xff, 0xfe]).await;
    let frame = c.closed().await.expect("a close frame");
    assert_eq!(u16::from(frame.code), 1007);
    // Clients must mask their frames (RFC 6455 5.1).
    let (mut c, _) = server.hello("unmasked").await;
    write_raw(&mut c, &[0x81, 0x02, b'h', b'i']).await;
    let frame = c.closed().await.expect("a close frame");
    assert_eq!(u16::from(frame.code), 1002);
    let (mut d, _) = server.hello("fine").await;
    d.ask(json!({"type": "ping"}), json!({"type": "pong"}))
        .await;
    server.stop().await;
}

#[tokio::test]
async fn flooding_is_rate_limited_then_closed_with_1008() {
    let server = start(config_with(
        "",
        "rate_per_sec = 1.0\nrate_burst = 5\nflood_close_after = 10",
        "",
        "",
    ))
    .await;
    let (mut c, _) = server.hello("flood").await; // hello takes one token
    for i in 0..30 {
        c.send(json!({"type": "ping", "id": i})).await;
    }
    let mut pongs = 0;
    let mut limited = 0;
    loop {
        use futures::StreamExt;
        use tokio_tungstenite::tungstenite::Message;
        match tokio::time::timeout(WAIT, c.ws.next()).await.unwrap() {
            Some(Ok(Message::Text(t))) => {
                let v: Value = serde_json::from_str(t.as_str()).unwrap();
                match v["type"].as_str().unwrap() {
                    "pong" => pongs += 1,
                    "error" => {
                        assert_eq!(v["code"], "rate_limited");
                        limited += 1;
                    }
                    other => panic!("{other}"),
                }
            }
            Some(Ok(Message::Close(f))) => {
                assert_eq!(u16::from(f.unwrap().code), 1008);
                break;
            }
            Some(Ok(_)) => {}
            other => panic!("{other:?}"),
        }
    }
    // Regression: refused messages were once answered with rate_limited *and* handled anyway,
    // and a close request once dropped the replies queued before it.
    assert_eq!(pongs, 4);
    assert_eq!(limited, 9);
    server.stop().await;
}

#[tokio::test]
async fn no_hello_in_time_closes_with_1008() {
    let server = start(config_with("handshake_timeout_ms = 200", "", "", "")).await;
    let mut c = server.connect().await;
    let f = c.closed().await.expect("a close frame");
    assert_eq!(u16::from(f.code), 1008);
    assert_eq!(f.reason.as_str(), "hello expected");
    server.stop().await;
}

#[tokio::test]
async fn dead_connections_are_detected_by_heartbeat() {
    let server = start(config_with(
        "heartbeat_ms = 100\nidle_timeout_ms = 400",
        "",
        "",
        "",
    ))
    .await;
    let (mut alive, _) = server.hello("alive").await;
    let (mut dead, _) = server.hello("dead").await;
    let (_, room) = create(
        &mut alive,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": "open"}),
    )
    .await;
    dead.send(json!({"type": "join_room", "room_id": room}))
        .await;
    dead.recv().await;
    alive.recv().await; // room_update: dead took the seat
                        // `dead` stops reading, so it never answers pings; `alive` keeps reading (and ponging).
    let t = tokio::time::Instant::now();
    let update = alive.recv().await;
    assert_eq!(update["type"], "room_update");
    assert_eq!(update["players"]["o"]["connected"], false);
    assert!(t.elapsed() >= std::time::Duration::from_millis(300));
    // Well past the idle timeout, the reading client is still connected.
    alive.quiet(std::time::Duration::from_millis(600)).await;
    alive
        .ask(json!({"type": "ping"}), json!({"type": "pong"}))
        .await;
    drop(dead);
    server.stop().await;
}

/// The heartbeat is a WebSocket ping every `heartbeat_ms`, from the moment the connection opens
/// (before `hello` too), and nothing else: no text frame rides along with it.
#[tokio::test]
async fn heartbeat_pings_arrive_as_ping_frames() {
    let server = start(config_with(
        "heartbeat_ms = 100\nidle_timeout_ms = 2000\nhandshake_timeout_ms = 2000",
        "",
        "",
        "",
    ))
    .await;
    use futures::StreamExt;
    use tokio_tungstenite::tungstenite::Message;
    let mut c = server.connect().await;
    let t = tokio::time::Instant::now();
    let mut pings = 0;
    while pings < 3 {
        let m = tokio::time::timeout(std::time::Duration::from_secs(2), c.ws.next())
            .await
            .expect("a ping within 2 s")
            .expect("open")
            .expect("no error");
        match m {
            Message::Ping(payload) => {
                assert!(payload.is_empty());
                pings += 1;
            }
            other => panic!("expected only pings before hello, got {other:?}"),
        }
    }
    // Three pings 100 ms apart: not sooner than the heartbeat allows.
    assert!(t.elapsed() >= std::time::Duration::from_millis(300));
    // The connection is still usable, and pings do not disturb the replies.
    c.send(json!({"type": "hello", "name": "pinged"})).await;
    assert_eq!(c.recv().await["type"], "welcome");
    c.ask(
        json!({"type": "ping", "id": 1}),
        json!({"type": "pong", "re": 1}),
    )
    .await;
    server.stop().await;
}

#[tokio::test]
async fn connections_beyond_the_limit_get_503() {
    let server = start(config_with("", "max_connections = 1", "", "")).await;
    let (mut c, _) = server.hello("only").await;
    let (status, _) = server.get("/healthz").await;
    assert_eq!(status, "HTTP/1.1 503 Service Unavailable");
    c.ask(json!({"type": "ping"}), json!({"type": "pong"}))
        .await;
    drop(c);
    server.stop().await;
}
