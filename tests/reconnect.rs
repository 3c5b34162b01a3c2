//! Disconnection and reconnection: the seat is held, the token restores it within the grace
//! period, the abandonment clock runs only on the absent player's turn, a newer connection takes
//! a session over, and finished or empty rooms are cleaned up.
//!
//! These use real sockets with short real durations (hundreds of milliseconds) rather than a
//! paused clock: the server and the clients share one runtime and real I/O, where tokio's
//! auto-advance would fire timeouts while bytes are still in flight.

mod common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};

/// alice (X) and bob (O) in a Caro room after alice's first move at (7,7); all updates read.
async fn game(server: &TestServer) -> (Client, Client, String, String, Value) {
    let (mut alice, _) = server.hello("alice").await;
    let (mut bob, wb) = server.hello("bob").await;
    let (_, room) = create(
        &mut alice,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": "open"}),
    )
    .await;
    bob.send(json!({"type": "join_room", "room_id": room}))
        .await;
    assert_eq!(bob.recv().await["type"], "room_joined");
    bob.recv().await;
    alice.recv().await;
    alice
        .send(json!({"type": "move", "room_id": room, "x": 7, "y": 7}))
        .await;
    alice.recv().await;
    bob.recv().await;
    let token = wb["token"].as_str().unwrap().to_string();
    (alice, bob, room, token, wb)
}

fn players(bob_connected: bool) -> Value {
    json!({"x": human("alice", true), "o": human("bob", bob_connected)})
}

#[tokio::test]
async fn reconnect_within_the_grace_period_restores_the_seat() {
    let server = start(config_with("", "", "grace_ms = 5000", "")).await;
    let (mut alice, bob, room, token, wb) = game(&server).await;
    drop(bob);
    // Bob is away on his turn: the countdown to his abandonment is on the update.
    let away = alice
        .expect_away(
            json!({"type": "room_update", "room_id": room, "players": players(false),
            "spectators": 0}),
            5000,
        )
        .await;
    assert!(away[0].is_none() && away[1].is_some());

    let mut bob = server.connect().await;
    bob.send(json!({"type": "hello", "id": 1, "token": token}))
        .await;
    let w = bob.recv().await;
    assert_eq!(w["resumed"], true);
    assert_eq!(w["player_id"], wb["player_id"]);
    assert_eq!(w["token"], wb["token"]);
    assert_eq!(w["name"], "bob");
    assert_eq!(w["re"], 1);
    // Regression: the room_update about the returning player once arrived before its snapshot.
    bob.expect(
        json!({"type": "room_joined", "you": {"role": "player", "seat": "o"},
        "room": {"room_id": room, "game": "caro", "width": 15, "height": 15,
            "rule": "freestyle", "win_length": 5, "status": "playing",
            "players": players(true), "spectators": 0, "moves": [[7, 7]], "turn": "o",
            "seq": 1}}),
    )
    .await;
    alice
        .expect(
            json!({"type": "room_update", "room_id": room, "players": players(true),
            "spectators": 0}),
        )
        .await;
    bob.send(json!({"type": "move", "room_id": room, "x": 8, "y": 8}))
        .await;
    let ev = json!({"type": "move", "room_id": room, "seq": 2, "seat": "o", "x": 8, "y": 8,
        "turn": "x"});
    bob.recv_skip(&["room_update"]).await;
    assert_eq!(alice.recv_skip(&["room_update"]).await, ev);
    server.stop().await;
}

#[tokio::test]
async fn a_player_who_does_not_come_back_loses_as_abandoned() {
    let server = start(config_with("", "", "grace_ms = 300", "")).await;
    let (mut alice, bob, room, token, _) = game(&server).await;
    drop(bob); // on bob's turn: the clock runs
    alice.recv().await; // room_update
    alice
        .expect(
            json!({"type": "game_over", "room_id": room, "seq": 2, "result": "x",
            "reason": "abandoned"}),
        )
        .await;
    // Coming back later: the identity is restored and the finished game shown.
    let mut bob = server.connect().await;
    bob.send(json!({"type": "hello", "token": token})).await;
    assert_eq!(bob.recv().await["resumed"], true);
    let j = bob.recv().await;
    assert_eq!(j["type"], "room_joined");
    assert_eq!(j["room"]["status"], "finished");
    assert_eq!(j["room"]["result"], "x");
    assert_eq!(j["room"]["reason"], "abandoned");
    assert_eq!(j["room"]["seq"], 2);
    server.stop().await;
}

#[tokio::test]
async fn the_clock_runs_only_on_the_absent_players_turn() {
    let server = start(config_with("", "", "grace_ms = 700", "")).await;
    let (alice, mut bob, room, _, _) = game(&server).await;
    drop(alice); // it is bob's turn: alice's clock does not run
    bob.recv().await; // room_update
    tokio::time::sleep(Duration::from_millis(900)).await;
    bob.send(json!({"type": "move", "room_id": room, "x": 0, "y": 0}))
        .await;
    assert_eq!(bob.recv().await["seq"], 2); // the game was still on after 900 ms
                                            // Now alice's clock runs, and bob is told her countdown...
    let away = bob
        .expect_away(
            json!({"type": "room_update", "room_id": room,
                "players": {"x": human("alice", false), "o": human("bob", true)},
                "spectators": 0}),
            700,
        )
        .await;
    assert!(away[0].is_some());
    bob.quiet(Duration::from_millis(400)).await;
    bob.expect(
        json!({"type": "game_over", "room_id": room, "seq": 3, "result": "o",
        "reason": "abandoned"}),
    )
    .await; // ...and expires
    server.stop().await;
}

#[tokio::test]
async fn a_new_connection_with_the_token_takes_over() {
    let server = start(config()).await;
    let (mut alice, mut bob, room, token, _) = game(&server).await;
    // Two connections (however the gauge counts the scrape's own): the count to come back to.
    let two = server.metric("connections").await;
    let mut bob2 = server.connect().await;
    bob2.send(json!({"type": "hello", "token": token})).await;
    assert_eq!(bob2.recv().await["resumed"], true);
    let j = bob2.recv().await;
    assert_eq!(j["room"]["room_id"], room);
    assert_eq!(j["you"]["seat"], "o");
    let f = bob.closed().await.expect("close frame");
    assert_eq!(u16::from(f.code), 4000);
    // The seat stays connected (the old connection's end does not count as a disconnect).
    bob2.send(json!({"type": "move", "room_id": room, "x": 1, "y": 1}))
        .await;
    assert_eq!(bob2.recv_skip(&["room_update"]).await["seq"], 2);
    // The old connection has ended once the server counts two again: it told its rooms before.
    let deadline = tokio::time::Instant::now() + WAIT;
    while server.metric("connections").await != two {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the old connection never ended"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // alice's move is handled after whatever the old connection's end told the room, so every
    // update alice sees up to its echo covers that end.
    alice
        .send(json!({"type": "move", "room_id": room, "x": 2, "y": 2}))
        .await;
    let mut moves = 0;
    loop {
        let v = alice.recv().await;
        match v["type"].as_str().unwrap() {
            "move" if v["seq"] == 3 => break,
            "move" => moves += 1,
            _ => assert_eq!(v["players"]["o"]["connected"], true, "{v}"),
        }
    }
    assert_eq!(moves, 1, "bob2's move");
    let (_, body) = server.get("/api/rooms").await;
    let rooms: Value = serde_json::from_str(&body).unwrap();
    let summary = rooms["rooms"]
        .as_array()
        .and_then(|r| r.iter().find(|s| s["room_id"] == room))
        .unwrap_or_else(|| panic!("{body}"));
    assert_eq!(summary["players"]["o"]["connected"], true, "{summary}");
    server.stop().await;
}

#[tokio::test]
async fn an_unknown_token_gets_a_fresh_identity() {
    let server = start(config()).await;
    let mut c = server.connect().await;
    c.send(
        json!({"type": "hello", "name": "zed", "token": "00000000-0000-4000-8000-000000000000"}),
    )
    .await;
    let w = c.recv().await;
    assert_eq!(w["resumed"], false);
    assert_eq!(w["name"], "zed");
    assert_ne!(w["token"], "00000000-0000-4000-8000-000000000000");
    server.stop().await;
}

/// A token unused for `session_ttl_ms`, with no seat in an open room, is forgotten; one that
/// holds a seat in an open room is kept however long its owner is away.
#[tokio::test]
async fn an_expired_token_gets_a_fresh_identity_but_a_seat_keeps_its_token() {
    let server = start(config_with("session_ttl_ms = 150", "", "", "")).await;
    let (idle, w_idle) = server.hello("idle").await;
    let (mut seated, w_seated) = server.hello("seated").await;
    create(
        &mut seated,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": "open"}),
    )
    .await;
    drop((idle, seated));
    // Wait for the janitor to forget the idle session (the seated one stays): the sessions
    // gauge says when, so no guessed sleep.
    let deadline = tokio::time::Instant::now() + WAIT;
    while server.metric("sessions").await > 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the idle session was never forgotten"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut c = server.connect().await;
    c.send(json!({"type": "hello", "token": w_idle["token"]}))
        .await;
    let w = c.recv().await;
    assert_eq!(w["type"], "welcome", "{w}");
    assert_eq!(w["resumed"], false, "{w}");
    assert_ne!(w["player_id"], w_idle["player_id"]);
    assert_ne!(w["token"], w_idle["token"]);
    let mut c = server.connect().await;
    c.send(json!({"type": "hello", "token": w_seated["token"]}))
        .await;
    let w = c.recv().await;
    assert_eq!(w["resumed"], true, "{w}");
    assert_eq!(w["player_id"], w_seated["player_id"]);
    server.stop().await;
}

#[tokio::test]
async fn finished_and_empty_rooms_are_cleaned_up() {
    let server = start(config_with(
        "",
        "",
        "finished_ttl_ms = 300\nempty_ttl_ms = 300",
        "",
    ))
    .await;
    let (mut a, _) = server.hello("a").await;
    let (_, finished) = create(
        &mut a,
        json!({"type": "create_room", "game": "tictactoe", "x": "me", "o": {"bot": "quick"}}),
    )
    .await;
    a.send(json!({"type": "resign", "room_id": finished})).await;
    assert_eq!(a.event().await["type"], "game_over");
    a.expect(json!({"type": "room_closed", "room_id": finished}))
        .await;
    let (_, empty) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": "open"}),
    )
    .await;
    a.send(json!({"type": "leave_room", "room_id": empty}))
        .await;
    assert_eq!(a.recv().await["type"], "left");
    // The empty room's close is seen in the list when it happens, not after a guessed sleep.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        a.send(json!({"type": "list_rooms"})).await;
        let list = a.recv().await;
        assert_eq!(list["type"], "room_list", "{list}");
        let ids: Vec<&Value> = list["rooms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| &r["room_id"])
            .collect();
        assert!(!ids.contains(&&json!(finished)), "{list}");
        if ids.is_empty() {
            break;
        }
        assert_eq!(ids, [&json!(empty)], "{list}");
        assert!(
            tokio::time::Instant::now() < deadline,
            "{empty} never closed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.stop().await;
}

/// Regression: a bot-against-bot game nobody watched closed after `empty_ttl` without a result,
/// stayed unfinished in the database, and came back at every restart.
#[tokio::test]
async fn an_unwatched_bot_game_is_played_to_its_end() {
    let server = start(config_with(
        "",
        "",
        "finished_ttl_ms = 60000\nempty_ttl_ms = 1",
        "",
    ))
    .await;
    let (mut a, _) = server.hello("a").await;
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "tictactoe", "x": {"bot": "quick"}, "o": {"bot": "quick"}}),
    )
    .await;
    a.send(json!({"type": "leave_room", "room_id": room})).await;
    let left = a
        .recv_skip(&["move", "room_update", "bot_thinking", "game_over"])
        .await;
    assert_eq!(left["type"], "left", "{left}");
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let over = server.store.events().into_iter().find_map(|e| match e {
            caro_arena::store::StoreEvent::Result {
                room_id, reason, ..
            } if room_id == room => Some(reason),
            _ => None,
        });
        if let Some(reason) = over {
            assert!(matches!(
                reason,
                caro_arena::protocol::Reason::Line | caro_arena::protocol::Reason::BoardFull
            ));
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the bots stopped playing"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.stop().await;
}
