//! Draw offers and takebacks over real sockets: announced to the room, declined, accepted, and
//! lapsed by moves; a takeback recorded like a move (its `seq`, a restart, the replay API); a
//! bot that grants takebacks in casual games only.

mod common;

use std::sync::Arc;

use caro_arena::store::sqlite::SqliteStore;
use caro_arena::store::Store;
use common::*;
use serde_json::{json, Value};

/// `c` plays (x, y); everyone in `all` gets the move (the mover with `re` "m").
async fn play(all: &mut [&mut Client], mover: usize, room: &str, x: u8, y: u8) -> u64 {
    all[mover]
        .send(json!({"type": "move", "id": "m", "room_id": room, "x": x, "y": y}))
        .await;
    let mut seq = 0;
    for (i, c) in all.iter_mut().enumerate() {
        let m = c.event().await;
        assert_eq!(
            (m["type"].as_str(), m["x"].as_u64(), m["y"].as_u64()),
            (Some("move"), Some(x as u64), Some(y as u64)),
            "{m}"
        );
        assert_eq!(m.get("re").is_some(), i == mover, "{m}");
        seq = m["seq"].as_u64().unwrap();
    }
    seq
}

/// Everyone in `all` gets `expected`, the one at `acked` with `re`.
async fn all_get(all: &mut [&mut Client], expected: Value, acked: Option<(usize, Value)>) {
    for (i, c) in all.iter_mut().enumerate() {
        let mut e = expected.clone();
        if let Some((a, re)) = &acked {
            if *a == i {
                e["re"] = re.clone();
            }
        }
        assert_eq!(c.event().await, e);
    }
}

fn offer(room: &str, kind: &str, by: &str) -> Value {
    json!({"type": "offer", "room_id": room, "kind": kind, "by": by})
}

fn ended(room: &str, kind: &str, by: &str, outcome: &str) -> Value {
    json!({"type": "offer_ended", "room_id": room, "kind": kind, "by": by, "outcome": outcome})
}

#[tokio::test]
async fn a_draw_offer_is_declined_lapses_when_its_maker_moves_again_and_is_agreed() {
    let server = start(config()).await;
    let (mut alice, mut bob, mut carol, room) = two_players_and_a_spectator(&server).await;

    // A spectator cannot offer; nobody can answer an offer that was not made.
    carol
        .ask(
            json!({"type": "offer", "id": 1, "room_id": room, "kind": "draw"}),
            json!({"type": "error", "re": 1, "code": "not_a_player",
                "message": "only a seated player can do this"}),
        )
        .await;
    bob.ask(
        json!({"type": "respond", "id": 2, "room_id": room, "kind": "draw", "accept": true}),
        json!({"type": "error", "re": 2, "code": "no_offer",
            "message": "your opponent has no pending offer of this kind"}),
    )
    .await;

    // Offered, then declined.
    alice
        .send(json!({"type": "offer", "id": 3, "room_id": room, "kind": "draw"}))
        .await;
    let mut all = [&mut alice, &mut bob, &mut carol];
    all_get(&mut all, offer(&room, "draw", "x"), Some((0, json!(3)))).await;
    all[0]
        .ask(
            json!({"type": "offer", "id": 4, "room_id": room, "kind": "draw"}),
            json!({"type": "error", "re": 4, "code": "offer_pending",
                "message": "you have already made this offer"}),
        )
        .await;
    all[1]
        .send(json!({"type": "respond", "id": 5, "room_id": room, "kind": "draw", "accept": false}))
        .await;
    all_get(
        &mut all,
        ended(&room, "draw", "x", "declined"),
        Some((1, json!(5))),
    )
    .await;

    // Offered on alice's turn: it survives her move and bob's, and lapses at her next one.
    all[0]
        .send(json!({"type": "offer", "room_id": room, "kind": "draw"}))
        .await;
    all_get(&mut all, offer(&room, "draw", "x"), None).await;
    play(&mut all, 0, &room, 7, 7).await;
    play(&mut all, 1, &room, 0, 0).await;
    // A newcomer sees the pending offer in its snapshot.
    let (mut dave, _) = server.hello("dave").await;
    dave.send(json!({"type": "join_room", "room_id": room, "as": "spectator"}))
        .await;
    let joined = dave.recv().await;
    assert_eq!(
        joined["room"]["offers"],
        json!([{"kind": "draw", "by": "x"}])
    );
    all[0]
        .send(json!({"type": "move", "room_id": room, "x": 8, "y": 7}))
        .await;
    all_get(&mut all, ended(&room, "draw", "x", "lapsed"), None).await;
    for c in all.iter_mut() {
        assert_eq!(c.event().await["type"], "move");
    }

    // Offering what the opponent offers is accepting it: a draw by agreement.
    all[1]
        .send(json!({"type": "offer", "room_id": room, "kind": "draw"}))
        .await;
    all_get(&mut all, offer(&room, "draw", "o"), None).await;
    all[0]
        .send(json!({"type": "offer", "id": 6, "room_id": room, "kind": "draw"}))
        .await;
    all_get(
        &mut all,
        ended(&room, "draw", "o", "accepted"),
        Some((0, json!(6))),
    )
    .await;
    all_get(
        &mut all,
        json!({"type": "game_over", "room_id": room, "seq": 4, "result": "draw",
            "reason": "agreement"}),
        None,
    )
    .await;
    server.stop().await;
}

#[tokio::test]
async fn a_takeback_by_agreement_is_a_recorded_event_and_one_lapses_with_a_move() {
    let server = start(config()).await;
    let (mut alice, mut bob, mut carol, room) = two_players_and_a_spectator(&server).await;
    let mut all = [&mut alice, &mut bob, &mut carol];
    // Nothing of O's to take back yet.
    play(&mut all, 0, &room, 7, 7).await;
    all[1]
        .ask(
            json!({"type": "offer", "id": 1, "room_id": room, "kind": "takeback"}),
            json!({"type": "error", "re": 1, "code": "no_takeback",
                "message": "you have no move to take back"}),
        )
        .await;
    play(&mut all, 1, &room, 0, 0).await;

    // bob asks on alice's turn: his move only. alice moves instead: the request lapses.
    all[1]
        .send(json!({"type": "offer", "room_id": room, "kind": "takeback"}))
        .await;
    all_get(&mut all, offer(&room, "takeback", "o"), None).await;
    all[0]
        .send(json!({"type": "move", "room_id": room, "x": 8, "y": 8}))
        .await;
    all_get(&mut all, ended(&room, "takeback", "o", "lapsed"), None).await;
    for c in all.iter_mut() {
        assert_eq!(c.event().await["seq"], 3);
    }
    play(&mut all, 1, &room, 1, 0).await;

    // alice asks on her own turn: her move and bob's reply go. Declined first, then agreed.
    for (accept, outcome) in [(false, "declined"), (true, "accepted")] {
        all[0]
            .send(json!({"type": "offer", "room_id": room, "kind": "takeback"}))
            .await;
        all_get(&mut all, offer(&room, "takeback", "x"), None).await;
        all[1]
            .send(
                json!({"type": "respond", "room_id": room, "kind": "takeback",
                "accept": accept}),
            )
            .await;
        all_get(&mut all, ended(&room, "takeback", "x", outcome), None).await;
    }
    all_get(
        &mut all,
        json!({"type": "takeback", "room_id": room, "seq": 5, "by": "x",
            "undone": [[1, 0], [8, 8]], "turn": "x"}),
        None,
    )
    .await;
    // The game goes on from there, its events numbered on.
    assert_eq!(play(&mut all, 0, &room, 9, 9).await, 6);
    let (mut dave, _) = server.hello("dave").await;
    dave.send(json!({"type": "join_room", "room_id": room, "as": "spectator"}))
        .await;
    let joined = dave.recv().await;
    assert_eq!(joined["room"]["moves"], json!([[7, 7], [0, 0], [9, 9]]));
    assert_eq!(joined["room"]["seq"], 6);
    assert_eq!(joined["room"]["turn"], "o");
    server.stop().await;
}

#[tokio::test]
async fn a_bot_grants_a_takeback_in_a_casual_game_only_and_it_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.db");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db).unwrap());
    let server = start_with_store(config(), store.clone()).await;
    let (mut alice, wa) = server.hello("alice").await;
    let token = wa["token"].as_str().unwrap().to_string();

    // A rated (not casual) game: no takebacks from the bot.
    let (_, rated) = create(
        &mut alice,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": {"bot": "quick"}}),
    )
    .await;
    alice
        .send(json!({"type": "move", "room_id": rated, "x": 7, "y": 7}))
        .await;
    assert_eq!(alice.event().await["type"], "move");
    assert_eq!(alice.event().await["type"], "move", "the bot's reply");
    alice
        .ask(
            json!({"type": "offer", "id": 1, "room_id": rated, "kind": "takeback"}),
            json!({"type": "error", "re": 1, "code": "no_takeback",
                "message": "a bot grants takebacks in casual games only"}),
        )
        .await;
    alice
        .send(json!({"type": "leave_room", "room_id": rated}))
        .await;
    assert_eq!(
        alice
            .recv_skip(&["room_update", "bot_thinking", "game_over"])
            .await["type"],
        "left"
    );

    let (joined, room) = create(
        &mut alice,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": {"bot": "quick"},
            "casual": true}),
    )
    .await;
    assert_eq!(joined["room"]["casual"], true);
    alice
        .send(json!({"type": "move", "room_id": room, "x": 7, "y": 7}))
        .await;
    assert_eq!(alice.event().await["seq"], 1);
    let reply = alice.event().await;
    assert_eq!(
        (reply["type"].as_str(), reply["seq"].as_u64()),
        (Some("move"), Some(2))
    );
    let bot_cell = json!([reply["x"], reply["y"]]);
    alice
        .send(json!({"type": "offer", "id": 2, "room_id": room, "kind": "takeback"}))
        .await;
    let mut mine = offer(&room, "takeback", "x");
    mine["re"] = json!(2);
    assert_eq!(alice.event().await, mine);
    assert_eq!(
        alice.event().await,
        ended(&room, "takeback", "x", "accepted")
    );
    assert_eq!(
        alice.event().await,
        json!({"type": "takeback", "room_id": room, "seq": 3, "by": "x",
            "undone": [bot_cell, [7, 7]], "turn": "x"})
    );
    alice
        .send(json!({"type": "move", "room_id": room, "x": 3, "y": 3}))
        .await;
    assert_eq!(alice.event().await["seq"], 4);
    let reply = alice.event().await;
    assert_eq!(reply["seq"], 5, "{reply}");
    let cells = json!([[3, 3], [reply["x"], reply["y"]]]);
    server.stop().await;
    drop(store);
    drop(alice);

    // After a restart: the moves taken back stay out, the numbering goes on, still casual.
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db).unwrap());
    let server = start_with_store(config(), store.clone()).await;
    let mut alice = server.connect().await;
    alice.send(json!({"type": "hello", "token": token})).await;
    assert_eq!(alice.recv().await["resumed"], true);
    let joined = alice.recv_skip(&["room_update"]).await;
    assert_eq!(joined["room"]["room_id"], room.as_str(), "{joined}");
    assert_eq!(joined["room"]["moves"], cells);
    assert_eq!(joined["room"]["seq"], 5);
    assert_eq!(joined["room"]["casual"], true);
    alice.send(json!({"type": "resign", "room_id": room})).await;
    assert_eq!(alice.event().await["seq"], 6);
    let (_, body) = server.get(&format!("/api/games/{room}")).await;
    let g: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (g["moves"].as_array().unwrap().len(), g["casual"].clone()),
        (2, json!(true))
    );
    assert_eq!(
        g["moves"][0],
        json!({"x": 3, "y": 3, "seq": 4, "at": g["moves"][0]["at"]})
    );
    server.stop().await;
}

#[tokio::test]
async fn an_agreed_rematch_opens_a_room_with_the_colours_swapped_for_players_and_spectators() {
    let server = start(config()).await;
    let (mut alice, mut bob, mut carol, room) = two_players_and_a_spectator(&server).await;
    let mut all = [&mut alice, &mut bob, &mut carol];
    all[1]
        .ask(
            json!({"type": "offer", "id": 1, "room_id": room, "kind": "rematch"}),
            json!({"type": "error", "re": 1, "code": "game_not_over",
                "message": "a rematch is offered once the game is over"}),
        )
        .await;
    play(&mut all, 0, &room, 7, 7).await;
    all[0]
        .send(json!({"type": "resign", "room_id": room}))
        .await;
    for c in all.iter_mut() {
        assert_eq!(c.event().await["type"], "game_over");
    }
    all[1]
        .send(json!({"type": "offer", "id": 2, "room_id": room, "kind": "rematch"}))
        .await;
    all_get(&mut all, offer(&room, "rematch", "o"), Some((1, json!(2)))).await;
    all[0]
        .send(
            json!({"type": "respond", "id": 3, "room_id": room, "kind": "rematch",
            "accept": true}),
        )
        .await;
    all_get(
        &mut all,
        ended(&room, "rematch", "o", "accepted"),
        Some((0, json!(3))),
    )
    .await;
    let news = all[0].event().await;
    assert_eq!(news["type"], "rematch", "{news}");
    assert_eq!(news["room_id"], room.as_str());
    let new_room = news["new_room_id"].as_str().unwrap().to_string();
    assert_ne!(new_room, room);
    for c in all[1..].iter_mut() {
        assert_eq!(c.event().await, news);
    }

    // Each joins the new room: the seats were held for them, colours swapped.
    all[0]
        .send(json!({"type": "join_room", "room_id": new_room}))
        .await;
    let mut joined = all[0].event().await;
    assert_eq!(joined["you"], json!({"role": "player", "seat": "o"}));
    assert_eq!(joined["room"]["status"], "playing");
    // Bob's seat is held as if he had just left, on his turn: his countdown to abandonment runs
    // (protocol v2's `abandon_ms`, inexact in real time).
    let away = take_countdowns(&mut joined);
    assert!(
        away[0].is_some_and(|ms| ms <= 60_000) && away[1].is_none(),
        "{away:?}"
    );
    assert_eq!(
        joined["room"]["players"],
        json!({"x": human("bob", false), "o": human("alice", true)})
    );
    all[1]
        .send(json!({"type": "join_room", "room_id": new_room}))
        .await;
    assert_eq!(all[1].event().await["you"]["seat"], "x");
    all[2]
        .send(json!({"type": "join_room", "room_id": new_room, "as": "spectator"}))
        .await;
    assert_eq!(all[2].event().await["you"]["role"], "spectator");
    for c in all.iter_mut() {
        c.send(json!({"type": "ping", "id": "sync"})).await;
        assert_eq!(c.event().await, json!({"type": "pong", "re": "sync"}));
    }
    // bob is X now and moves first.
    assert_eq!(play(&mut all, 1, &new_room, 7, 7).await, 1);
    server.stop().await;
}

#[tokio::test]
async fn a_bot_grants_a_rematch_at_once_and_a_leaving_player_lapses_one() {
    let server = start(config()).await;
    let (mut alice, _) = server.hello("alice").await;
    let (_, room) = create(
        &mut alice,
        json!({"type": "create_room", "game": "tictactoe", "x": "me", "o": {"bot": "quick"}}),
    )
    .await;
    alice.send(json!({"type": "resign", "room_id": room})).await;
    assert_eq!(alice.event().await["type"], "game_over");
    alice
        .send(json!({"type": "offer", "id": 1, "room_id": room, "kind": "rematch"}))
        .await;
    let mut mine = offer(&room, "rematch", "x");
    mine["re"] = json!(1);
    assert_eq!(alice.event().await, mine);
    assert_eq!(
        alice.event().await,
        ended(&room, "rematch", "x", "accepted")
    );
    let news = alice.event().await;
    assert_eq!(news["type"], "rematch", "{news}");
    let new_room = news["new_room_id"].as_str().unwrap().to_string();
    // The bot holds X now: it has moved, or will.
    alice
        .send(json!({"type": "join_room", "room_id": new_room}))
        .await;
    let joined = alice.event().await;
    assert_eq!(joined["you"], json!({"role": "player", "seat": "o"}));
    assert_eq!(joined["room"]["players"]["x"], bot("quick"));
    if joined["room"]["moves"].as_array().unwrap().is_empty() {
        assert_eq!(alice.event().await["seat"], "x", "the bot's first move");
    }

    // Two people: bob offers, alice leaves before answering.
    let (mut bob, _) = server.hello("bob").await;
    let (_, room) = create(
        &mut alice,
        json!({"type": "create_room", "game": "tictactoe", "x": "me", "o": "open"}),
    )
    .await;
    bob.send(json!({"type": "join_room", "room_id": room}))
        .await;
    assert_eq!(bob.event().await["type"], "room_joined");
    alice.send(json!({"type": "resign", "room_id": room})).await;
    assert_eq!(bob.event().await["type"], "game_over");
    bob.send(json!({"type": "offer", "room_id": room, "kind": "rematch"}))
        .await;
    assert_eq!(bob.event().await, offer(&room, "rematch", "o"));
    alice
        .send(json!({"type": "leave_room", "room_id": room}))
        .await;
    assert_eq!(bob.event().await, ended(&room, "rematch", "o", "lapsed"));
    server.stop().await;
}
