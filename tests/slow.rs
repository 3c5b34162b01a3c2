//! One slow or dead spectator never delays the players or the other spectators: its queue is
//! bounded, and once full the connection is dropped (close code 1013).

mod common;

use std::sync::Arc;
use std::time::Duration;

use caro_arena::client::ClientHandle;
use caro_arena::metrics::Metrics;
use common::*;
use serde_json::json;
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spectator_that_never_reads_does_not_delay_the_others() {
    let server = start(config_with("", "send_queue = 64", "", "")).await;
    let (mut alice, _) = server.hello("alice").await;
    let (mut bob, _) = server.hello("bob").await;
    let (mut carol, _) = server.hello("carol").await;
    let (_, room) = create(
        &mut alice,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": "open"}),
    )
    .await;
    bob.send(json!({"type": "join_room", "room_id": room}))
        .await;
    bob.recv().await;

    // The sloth: a tiny receive buffer, joins, then never reads again.
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.set_recv_buffer_size(2048).unwrap();
    let stream = tokio_tungstenite::MaybeTlsStream::Plain(sock.connect(server.addr).await.unwrap());
    let (ws, _) = tokio_tungstenite::client_async(format!("ws://{}/ws", server.addr), stream)
        .await
        .unwrap();
    let mut sloth = Client { ws };
    sloth.send(json!({"type": "hello", "name": "sloth"})).await;
    sloth.recv().await;
    // The churn comes and goes in a room of the sloth's own: its room_updates pile up in the
    // sloth's queue only. Nobody else is in that room, so no reader that a loaded machine
    // deschedules for a few milliseconds (the players, carol) falls behind on them and is
    // dropped in the sloth's place.
    let (_, churn_room) = create(
        &mut sloth,
        json!({"type": "create_room", "game": "tictactoe", "x": "me", "o": "open"}),
    )
    .await;
    sloth
        .send(json!({"type": "join_room", "room_id": room, "as": "spectator"}))
        .await;
    sloth.recv().await;

    carol
        .send(json!({"type": "join_room", "room_id": room, "as": "spectator"}))
        .await;
    carol.recv().await;

    // Churn: a visitor opens rooms (to make room lists long), then comes and goes, so every
    // member of its room gets a room_update each time.
    let (mut churn, _) = server.hello("churn").await;
    for _ in 0..40 {
        create(
            &mut churn,
            json!({"type": "create_room", "game": "tictactoe", "x": "me", "o": "open"}),
        )
        .await;
    }
    // The sloth asks for far more than it reads: long room lists pile up in its queue.
    for _ in 0..300 {
        sloth.send(json!({"type": "list_rooms"})).await;
    }
    let churner = tokio::spawn(async move {
        for _ in 0..300 {
            churn
                .send(json!({"type": "join_room", "room_id": churn_room, "as": "spectator"}))
                .await;
            churn
                .send(json!({"type": "leave_room", "room_id": churn_room}))
                .await;
            loop {
                if churn.recv().await["type"] == "left" {
                    break;
                }
            }
        }
    });

    // Meanwhile the players play and carol watches. Each wait below is bounded by the harness's
    // guard (`WAIT`), not by a wall-clock assertion that a loaded machine could break: a room
    // that waited on the sloth's full queue would stall until someone dropped the sloth, and
    // nobody but the queue does.
    let moves = [
        (0, 0),
        (0, 1),
        (2, 0),
        (2, 1),
        (4, 0),
        (4, 1),
        (6, 0),
        (6, 1),
    ];
    let mut seq = 0;
    for (i, (x, y)) in moves.into_iter().enumerate() {
        let (mover, other) = if i % 2 == 0 {
            (&mut alice, &mut bob)
        } else {
            (&mut bob, &mut alice)
        };
        mover
            .send(json!({"type": "move", "room_id": room, "x": x, "y": y}))
            .await;
        let ack = mover.recv_skip(&["room_update"]).await;
        seq += 1;
        assert_eq!(ack["seq"], seq);
        assert_eq!(other.recv_skip(&["room_update"]).await, ack);
        assert_eq!(carol.recv_skip(&["room_update"]).await, ack);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    churner.await.unwrap();

    assert_eq!(
        server.metric("slow_clients_dropped_total").await,
        1,
        "the sloth was dropped"
    );
    // The sloth's connection ends (after whatever was buffered). It may end with a reset: the
    // server closed a socket holding requests it had not read yet. The close code on the wire
    // is the next test's.
    let _ = sloth.closed().await;
    server.stop().await;
}

/// The close code the module promises, read over the real socket: a client that stops reading
/// until the server gives up on it, then reads again, finds 1013 after what was buffered.
// One thread for the server and the test: the server's reader counts a request and queues its
// reply with no await between, so no scrape of `/metrics` can fall in between.
#[tokio::test]
async fn a_client_that_stops_reading_reads_1013_once_dropped() {
    let server = start(config_with(
        "",
        "send_queue = 64\nrate_per_sec = 100000.0\nrate_burst = 100000",
        "",
        "",
    ))
    .await;
    // Rooms to make each room list long.
    let (mut owner, _) = server.hello("owner").await;
    for _ in 0..40 {
        create(
            &mut owner,
            json!({"type": "create_room", "game": "tictactoe", "x": "me", "o": "open"}),
        )
        .await;
    }
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.set_recv_buffer_size(2048).unwrap();
    let stream = tokio_tungstenite::MaybeTlsStream::Plain(sock.connect(server.addr).await.unwrap());
    let (ws, _) = tokio_tungstenite::client_async(format!("ws://{}/ws", server.addr), stream)
        .await
        .unwrap();
    let mut sloth = Client { ws };
    sloth.send(json!({"type": "hello", "name": "sloth"})).await;
    sloth.recv().await;
    // One request per write, the next only once the server has counted the last: when the
    // queue overflows the server has nothing unread from the sloth, so closing the socket sends
    // the close frame and a FIN, not a reset that would throw the frame away (Linux resets a
    // socket closed with unread data). The overflow is seen before the next request goes out.
    let request = json!({"type": "list_rooms"}).to_string();
    // A masked text frame with a zero mask: the payload goes as is.
    let mut frame = vec![0x81, 0x80 | request.len() as u8, 0, 0, 0, 0];
    frame.extend_from_slice(request.as_bytes());
    let mut sent = server.metric("messages_total").await;
    for round in 0.. {
        if server.metric("slow_clients_dropped_total").await > 0 {
            break;
        }
        assert!(round < 5000, "the sloth's queue never overflowed");
        {
            use tokio::io::AsyncWriteExt;
            sloth.ws.get_mut().write_all(&frame).await.unwrap();
        }
        sent += 1;
        let deadline = Instant::now() + WAIT;
        while server.metric("messages_total").await < sent
            && server.metric("slow_clients_dropped_total").await == 0
        {
            assert!(Instant::now() < deadline, "the request was not read");
        }
    }
    // A wider window so that what the server's kernel holds (megabytes) drains at once: with
    // 2 KiB and delayed acknowledgements it would take most of a minute.
    if let tokio_tungstenite::MaybeTlsStream::Plain(tcp) = sloth.ws.get_ref() {
        socket2::SockRef::from(tcp)
            .set_recv_buffer_size(1 << 20)
            .unwrap();
    }
    // Reading again drains what the kernel buffered, then the close frame.
    let frame = sloth
        .closed()
        .await
        .expect("a close frame, not a dropped connection");
    assert_eq!(u16::from(frame.code), 1013, "{frame:?}");
    server.stop().await;
}

#[tokio::test]
async fn a_full_queue_closes_the_connection_with_1013() {
    // The mechanism rooms rely on: `send` never waits; the first overflow asks for a close.
    let metrics = Arc::new(Metrics::default());
    let (client, mut rx) = ClientHandle::new(1, 2, metrics.clone());
    assert!(client.send("a".into()));
    assert!(client.send("b".into()));
    assert!(!client.send("c".into()));
    assert_eq!(
        client.close_request(),
        Some((1013, "too slow: messages were not read"))
    );
    assert!(!client.send("d".into()));
    assert_eq!(rx.recv().await.unwrap().as_str(), "a");
    assert_eq!(
        metrics
            .slow_clients_dropped_total
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
}
