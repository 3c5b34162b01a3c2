//! A full human-vs-human Caro game over real sockets, with a spectator who must see every event
//! in order; list_rooms, the HTTP API, resign, leave and sync.

mod common;

use common::*;
use serde_json::{json, Value};

fn mv(room: &str, seq: u64, seat: &str, x: u8, y: u8, turn: Value) -> Value {
    json!({"type": "move", "room_id": room, "seq": seq, "seat": seat, "x": x, "y": y, "turn": turn})
}

#[tokio::test]
async fn human_vs_human_caro_to_a_win_with_a_spectator() {
    let server = start(config()).await;
    let (mut alice, w) = server.hello("alice").await;
    assert_eq!(w["name"], "alice");
    assert_eq!(w["protocol"], 2);
    assert_eq!(w["resumed"], false);
    assert!(w["token"].as_str().unwrap().len() >= 32);
    let (mut bob, _) = server.hello("bob").await;
    let (mut carol, _) = server.hello("carol").await;

    let (joined, room) = create(
        &mut alice,
        json!({"type": "create_room", "id": 1, "game": "caro", "x": "me", "o": "open"}),
    )
    .await;
    assert_eq!(
        joined,
        json!({"type": "room_joined", "re": 1, "you": {"role": "player", "seat": "x"},
            "room": {"room_id": room, "game": "caro", "width": 15, "height": 15,
                "rule": "freestyle", "win_length": 5, "status": "waiting",
                "players": {"x": human("alice", true), "o": null}, "spectators": 0,
                "moves": [], "turn": null, "seq": 0}})
    );

    carol
        .send(json!({"type": "join_room", "id": "c", "room_id": room, "as": "spectator"}))
        .await;
    let j = carol.recv().await;
    assert_eq!(j["re"], "c");
    assert_eq!(j["you"], json!({"role": "spectator"}));
    assert_eq!(j["room"]["spectators"], 1);
    // Everyone in the room, the newcomer included, hears of the crowd change.
    let crowd = json!({"type": "room_update", "room_id": room,
        "players": {"x": human("alice", true), "o": null}, "spectators": 1});
    alice.expect(crowd.clone()).await;
    carol.expect(crowd).await;

    bob.send(json!({"type": "join_room", "room_id": room}))
        .await;
    let j = bob.recv().await;
    assert_eq!(j["you"], json!({"role": "player", "seat": "o"}));
    // Regression: the player who filled the last seat once got a snapshot still saying
    // "waiting" (the snapshot was taken before the game started).
    assert_eq!(j["room"]["status"], "playing");
    assert_eq!(j["room"]["turn"], "x");
    let update = json!({"type": "room_update", "room_id": room,
        "players": {"x": human("alice", true), "o": human("bob", true)}, "spectators": 1});
    for c in [&mut alice, &mut bob, &mut carol] {
        c.expect(update.clone()).await;
    }

    // The counters operators watch: one room, its game in progress, nothing played yet.
    for (name, value) in [
        ("rooms", 1),
        ("rooms_total", 1),
        ("games_active", 1),
        ("games_finished_total", 0),
        ("moves_total", 0),
    ] {
        assert_eq!(server.metric(name).await, value, "caro_{name}");
    }

    // X builds a row on y=7, O dawdles on y=9.
    let mut expected = Vec::new();
    let mut seq = 0;
    for i in 0..5u8 {
        seq += 1;
        alice
            .send(json!({"type": "move", "id": seq, "room_id": room, "x": i, "y": 7}))
            .await;
        let turn = if i == 4 { json!(null) } else { json!("o") };
        let ev = mv(&room, seq, "x", i, 7, turn);
        let mut acked = ev.clone();
        acked["re"] = json!(seq);
        alice.expect(acked).await;
        bob.expect(ev.clone()).await;
        expected.push(ev);
        if i == 4 {
            break;
        }
        seq += 1;
        bob.send(json!({"type": "move", "room_id": room, "x": i, "y": 9}))
            .await;
        let ev = mv(&room, seq, "o", i, 9, json!("x"));
        alice.expect(ev.clone()).await;
        bob.expect(ev.clone()).await;
        expected.push(ev);
    }
    let over = json!({"type": "game_over", "room_id": room, "seq": 10, "result": "x",
        "reason": "line", "line": [[0, 7], [1, 7], [2, 7], [3, 7], [4, 7]]});
    alice.expect(over.clone()).await;
    bob.expect(over.clone()).await;
    expected.push(over);
    for ev in &expected {
        carol.expect(ev.clone()).await;
    }

    // The room stays open (finished) and the counters saw the game through.
    for (name, value) in [
        ("rooms", 1),
        ("games_active", 0),
        ("games_finished_total", 1),
        ("moves_total", 9),
    ] {
        assert_eq!(server.metric(name).await, value, "caro_{name}");
    }

    // The game is over: nothing more can be played.
    bob.send(json!({"type": "move", "id": 5, "room_id": room, "x": 9, "y": 9}))
        .await;
    bob.expect(
        json!({"type": "error", "code": "game_over", "message": "the game is over", "re": 5}),
    )
    .await;

    alice.send(json!({"type": "list_rooms", "id": 2})).await;
    let list = alice.recv().await;
    let summary = json!({"room_id": room, "game": "caro", "width": 15, "height": 15,
        "rule": "freestyle", "status": "finished",
        "players": {"x": human("alice", true), "o": human("bob", true)},
        "spectators": 1, "moves": 9});
    assert_eq!(
        list,
        json!({"type": "room_list", "re": 2, "rooms": [summary.clone()]})
    );
    let (status, body) = server.get("/api/rooms").await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"rooms": [summary]})
    );

    // The store got the whole record.
    let events = server.store.events();
    assert_eq!(events.len(), 1 + 9 + 1, "{events:?}");

    // A late sync replays from a seq; a snapshot's seq matches.
    carol
        .send(json!({"type": "sync", "id": 3, "room_id": room, "since_seq": 8}))
        .await;
    carol.expect(expected[8].clone()).await;
    carol.expect(expected[9].clone()).await;
    carol
        .expect(json!({"type": "synced", "room_id": room, "seq": 10, "re": 3}))
        .await;
    server.stop().await;
}

#[tokio::test]
async fn tictactoe_draw_resign_and_leave() {
    let server = start(config()).await;
    let (mut a, _) = server.hello("a").await;
    let (mut b, _) = server.hello("b").await;
    let (j, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "tictactoe", "x": "open", "o": "me"}),
    )
    .await;
    assert_eq!(j["room"]["rule"], json!(null));
    assert_eq!(j["room"]["win_length"], 3);
    assert_eq!(j["you"]["seat"], "o");
    b.send(json!({"type": "join_room", "room_id": room, "as": "player"}))
        .await;
    assert_eq!(b.recv().await["you"]["seat"], "x");
    a.recv().await; // room_update
    b.recv().await; // room_update
                    // x o x / x o o / o x x : a draw.
    let moves = [
        (0, 0),
        (1, 0),
        (2, 0),
        (1, 1),
        (0, 1),
        (2, 1),
        (1, 2),
        (0, 2),
        (2, 2),
    ];
    for (i, (x, y)) in moves.into_iter().enumerate() {
        let (mover, other) = if i % 2 == 0 {
            (&mut b, &mut a)
        } else {
            (&mut a, &mut b)
        };
        mover
            .send(json!({"type": "move", "room_id": room, "x": x, "y": y}))
            .await;
        let ev = mover.recv().await;
        assert_eq!(ev["seq"], i as u64 + 1);
        assert_eq!(other.recv().await, ev);
    }
    let over = json!({"type": "game_over", "room_id": room, "seq": 10, "result": "draw",
        "reason": "board_full"});
    a.expect(over.clone()).await;
    b.expect(over).await;

    // A new game: O resigns.
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "tictactoe", "x": "me", "o": "open"}),
    )
    .await;
    b.send(json!({"type": "join_room", "room_id": room})).await;
    b.recv().await;
    b.recv().await;
    a.recv().await;
    b.send(json!({"type": "resign", "id": 9, "room_id": room}))
        .await;
    let over = json!({"type": "game_over", "room_id": room, "seq": 1, "result": "x",
        "reason": "resign"});
    let mut acked = over.clone();
    acked["re"] = json!(9);
    b.expect(acked).await;
    a.expect(over).await;

    // A third: X leaves mid-game, which resigns.
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 7, "height": 9,
            "rule": "caro", "x": "me", "o": "open"}),
    )
    .await;
    b.send(json!({"type": "join_room", "room_id": room})).await;
    let j = b.recv().await;
    assert_eq!(j["room"]["width"], 7);
    assert_eq!(j["room"]["height"], 9);
    assert_eq!(j["room"]["rule"], "caro");
    b.recv().await;
    a.recv().await;
    a.send(json!({"type": "leave_room", "id": 4, "room_id": room}))
        .await;
    a.expect(json!({"type": "left", "room_id": room, "re": 4}))
        .await;
    b.expect(
        json!({"type": "game_over", "room_id": room, "seq": 1, "result": "o",
        "reason": "resign"}),
    )
    .await;
    b.expect(json!({"type": "room_update", "room_id": room,
        "players": {"x": human("a", false), "o": human("b", true)}, "spectators": 0}))
        .await;
    server.stop().await;
}

#[tokio::test]
async fn http_endpoints() {
    let server = start(config()).await;
    let (status, body) = server.get("/healthz").await;
    assert_eq!(
        (status.as_str(), body.as_str()),
        ("HTTP/1.1 200 OK", "ok\n")
    );
    let (_, body) = server.get("/api/bots").await;
    let bots: Value = serde_json::from_str(&body).unwrap();
    // In the order of the config file's tables (quick, strong, classic), not by name.
    assert_eq!(
        bots,
        json!({"bots": [
            {"name": "quick", "description": "Fast test bot", "games": ["caro", "tictactoe"]},
            {"name": "strong", "description": "Full-strength test bot", "games": ["caro", "tictactoe"]},
            {"name": "classic", "description": "Caro only", "games": ["caro"]},
        ]})
    );
    let (c, _) = server.hello("x").await;
    let (head, _) = server.get_raw("/metrics").await;
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(
        head.contains("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8"),
        "{head}"
    );
    assert_eq!(server.metric("connections").await, 1);
    assert_eq!(server.metric("bot_search_seconds_count").await, 0);
    let (status, _) = server.get("/nope").await;
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    let (status, _) = server.get("/ws").await;
    assert_eq!(status, "HTTP/1.1 426 Upgrade Required");
    drop(c);
    server.stop().await;
}

/// `sync` from a point the room no longer keeps answers with the whole state; from a point it
/// keeps, with the missing events and `synced`.
#[tokio::test]
async fn sync_beyond_the_kept_history_gets_a_snapshot() {
    let server = start(config_with("", "", "history_events = 2", "")).await;
    let (mut a, _) = server.hello("a").await;
    let (mut b, _) = server.hello("b").await;
    let (mut s, _) = server.hello("s").await;
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "tictactoe", "x": "me", "o": "open"}),
    )
    .await;
    b.send(json!({"type": "join_room", "room_id": room})).await;
    assert_eq!(b.recv().await["type"], "room_joined");
    s.send(json!({"type": "join_room", "room_id": room, "as": "spectator"}))
        .await;
    assert_eq!(s.recv().await["type"], "room_joined");
    let cells = [(0, 0), (1, 1), (2, 2), (0, 2)];
    let mut seen = Vec::new();
    for (i, (x, y)) in cells.into_iter().enumerate() {
        let mover = if i % 2 == 0 { &mut a } else { &mut b };
        mover
            .send(json!({"type": "move", "room_id": room, "x": x, "y": y}))
            .await;
        seen.push(s.recv_skip(&["room_update"]).await);
    }
    // Events 3 and 4 are kept: a sync from 2 replays them.
    s.send(json!({"type": "sync", "id": 1, "room_id": room, "since_seq": 2}))
        .await;
    s.expect(seen[2].clone()).await;
    s.expect(seen[3].clone()).await;
    s.expect(json!({"type": "synced", "room_id": room, "seq": 4, "re": 1}))
        .await;
    // Event 2 is gone: a sync from 1 gets the snapshot, which holds every move.
    s.send(json!({"type": "sync", "id": 2, "room_id": room, "since_seq": 1}))
        .await;
    let snap = s.recv_skip(&["room_update"]).await;
    assert_eq!(snap["type"], "room_joined", "{snap}");
    assert_eq!(snap["re"], 2);
    assert_eq!(snap["you"], json!({"role": "spectator"}));
    assert_eq!(snap["room"]["seq"], 4);
    assert_eq!(
        snap["room"]["moves"],
        json!([[0, 0], [1, 1], [2, 2], [0, 2]])
    );
    server.stop().await;
}

/// Regression: a `sync` over a long gap queued every missed event at once and got its own
/// client closed as too slow (1013); a gap longer than half the send queue gets a snapshot.
#[tokio::test]
async fn sync_over_a_gap_longer_than_half_the_queue_gets_a_snapshot() {
    let server = start(config_with("", "send_queue = 6", "", "")).await;
    let (mut a, _) = server.hello("a").await;
    let (mut b, _) = server.hello("b").await;
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "tictactoe", "x": "me", "o": "open"}),
    )
    .await;
    b.send(json!({"type": "join_room", "room_id": room})).await;
    assert_eq!(b.recv().await["type"], "room_joined");
    for (i, (x, y)) in [(0, 0), (1, 1), (2, 2), (0, 2), (2, 0)]
        .into_iter()
        .enumerate()
    {
        let mover = if i % 2 == 0 { &mut a } else { &mut b };
        mover
            .send(json!({"type": "move", "room_id": room, "x": x, "y": y}))
            .await;
        b.recv_skip(&["room_update"]).await;
    }
    // 5 events since 0 is more than 6 / 2: the snapshot.
    b.send(json!({"type": "sync", "id": 1, "room_id": room, "since_seq": 0}))
        .await;
    let snap = b.recv_skip(&["room_update"]).await;
    assert_eq!(snap["type"], "room_joined", "{snap}");
    assert_eq!(snap["re"], 1);
    assert_eq!(snap["room"]["seq"], 5);
    // 3 events since 2 fit: replayed.
    b.send(json!({"type": "sync", "id": 2, "room_id": room, "since_seq": 2}))
        .await;
    for seq in 3..=5 {
        let ev = b.recv_skip(&["room_update"]).await;
        assert_eq!(ev["seq"], seq, "{ev}");
    }
    b.expect(json!({"type": "synced", "room_id": room, "seq": 5, "re": 2}))
        .await;
    server.stop().await;
}
