//! Graceful shutdown: stop accepting, close every client with 1001, cancel bot searches, wait
//! for every task, return Ok.

mod common;

use std::time::Duration;

use common::*;
use serde_json::json;

#[tokio::test]
async fn shutdown_closes_clients_with_1001_and_cancels_searches() {
    // A bot that would take an hour to answer: shutdown must not wait for it.
    let server = start(config_with("", "", "", "min_move_ms = 3600000")).await;
    let addr = server.addr;
    let (mut a, _) = server.hello("a").await;
    let (mut b, _) = server.hello("b").await;
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": {"bot": "quick"}}),
    )
    .await;
    a.send(json!({"type": "move", "room_id": room, "x": 7, "y": 7}))
        .await;
    assert_eq!(a.event().await["seq"], 1);
    b.send(json!({"type": "join_room", "room_id": room})).await;
    assert_eq!(b.recv().await["you"]["role"], "spectator");

    // Not a speed target: a guard against waiting for the bot. A shutdown that waited would
    // hang for the hour; one that cancels the search returns at once.
    tokio::time::timeout(Duration::from_secs(60), server.stop())
        .await
        .expect("the shutdown waited for the bot's move");
    for c in [&mut a, &mut b] {
        let f = c.closed().await.expect("a close frame");
        assert_eq!(u16::from(f.code), 1001);
        assert_eq!(f.reason.as_str(), "server shutting down");
    }
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn shutdown_with_no_clients() {
    let server = start(config()).await;
    server.stop().await;
}
