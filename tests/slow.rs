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
    sloth
        .send(json!({"type": "join_room", "room_id": room, "as": "spectator"}))
        .await;
    sloth.recv().await;

    carol
        .send(json!({"type": "join_room", "room_id": room, "as": "spectator"}))
        .await;
    carol.recv().await;

    // Churn: a visitor opens rooms (to make room lists long), then comes and goes, so every
    // member gets a room_update each time.
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
    let churn_room = room.clone();
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

    // Meanwhile the players play and carol watches; every move is answered promptly.
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
        let t = Instant::now();
        mover
            .send(json!({"type": "move", "room_id": room, "x": x, "y": y}))
            .await;
        let ack = mover.recv_skip(&["room_update"]).await;
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "move took {:?}",
            t.elapsed()
        );
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
    // The sloth's connection ends (after whatever was buffered).
    let _ = sloth.closed().await;
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
