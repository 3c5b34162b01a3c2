//! Quick pairing over real sockets: two matching seeks paired into a room with opposite seats,
//! a seek taken from the lobby's list, a seek falling back to a bot, lobby watchers told of
//! the open seeks, a closed connection's seek gone.

mod common;

use common::*;
use serde_json::{json, Value};

/// A lobby watcher, its first `room_list` read.
async fn watcher(server: &TestServer) -> Client {
    let (mut w, _) = server.hello("watcher").await;
    w.send(json!({"type": "watch_lobby"})).await;
    assert_eq!(w.recv().await["type"], "room_list");
    w
}

fn seek_info(id: &str, name: &str, game: &str, size: u8, rule: Value) -> Value {
    json!({"seek_id": id, "name": name, "game": game, "width": size, "height": size,
        "rule": rule})
}

/// `c` joins `paired`'s room and gets the seat it names.
async fn join_paired(c: &mut Client, paired: &Value) -> Value {
    assert_eq!(paired["type"], "paired", "{paired}");
    c.send(json!({"type": "join_room", "room_id": paired["room_id"]}))
        .await;
    let joined = c.recv_skip(&["room_update", "bot_thinking", "move"]).await;
    assert_eq!(joined["type"], "room_joined", "{joined}");
    assert_eq!(joined["you"]["seat"], paired["seat"]);
    joined
}

#[tokio::test]
async fn matching_seeks_are_paired_and_the_lobby_sees_the_open_ones() {
    let server = start(config()).await;
    let mut w = watcher(&server).await;
    let (mut alice, _) = server.hello("alice").await;
    let (mut bob, _) = server.hello("bob").await;
    let (mut carol, _) = server.hello("carol").await;

    alice
        .ask(
            json!({"type": "seek", "id": 1, "game": "caro"}),
            json!({"type": "seeking", "re": 1, "seek_id": "s1"}),
        )
        .await;
    let caro = seek_info("s1", "alice", "caro", 15, json!("freestyle"));
    assert_eq!(w.recv().await, json!({"type": "seeks", "seeks": [caro]}));
    bob.ask(
        json!({"type": "seek", "id": 2, "game": "tictactoe"}),
        json!({"type": "seeking", "re": 2, "seek_id": "s2"}),
    )
    .await;
    let ttt = seek_info("s2", "bob", "tictactoe", 3, Value::Null);
    assert_eq!(
        w.recv().await,
        json!({"type": "seeks", "seeks": [caro, ttt]})
    );
    // A newcomer to the lobby gets the open seeks after the rooms.
    let mut w2 = watcher(&server).await;
    assert_eq!(
        w2.recv().await,
        json!({"type": "seeks", "seeks": [caro, ttt]})
    );

    // The same terms: paired at once, opposite seats, in a new room.
    carol
        .send(
            json!({"type": "seek", "id": 3, "game": "caro", "rule": "freestyle",
            "width": 15}),
        )
        .await;
    let pc = carol.recv().await;
    assert_eq!(pc["re"], 3, "{pc}");
    let pa = alice.recv().await;
    assert_eq!(pa["room_id"], pc["room_id"]);
    let seats = [pa["seat"].as_str().unwrap(), pc["seat"].as_str().unwrap()];
    assert!(seats == ["x", "o"] || seats == ["o", "x"], "{seats:?}");
    assert_eq!(w.recv().await, json!({"type": "seeks", "seeks": [ttt]}));
    join_paired(&mut alice, &pa).await;
    let joined = join_paired(&mut carol, &pc).await;
    assert_eq!(joined["room"]["status"], "playing");

    // A seek from the list: not one's own; taken, it is gone.
    bob.ask(
        json!({"type": "accept_seek", "id": 4, "seek_id": "s2"}),
        json!({"type": "error", "re": 4, "code": "no_such_seek",
            "message": "no open seek \"s2\""}),
    )
    .await;
    let (mut dave, _) = server.hello("dave").await;
    dave.send(json!({"type": "accept_seek", "id": 5, "seek_id": "s2"}))
        .await;
    let pd = dave.recv().await;
    assert_eq!(pd["re"], 5, "{pd}");
    let pb = bob.recv().await;
    assert_eq!(pb["room_id"], pd["room_id"]);
    assert_ne!(pb["seat"], pd["seat"]);
    assert_eq!(w.recv().await, json!({"type": "seeks", "seeks": []}));
    let joined = join_paired(&mut dave, &pd).await;
    assert_eq!(joined["room"]["game"], "tictactoe");
    server.stop().await;
}

#[tokio::test]
async fn a_seek_falls_back_to_a_bot_and_a_closed_connection_takes_its_seek_away() {
    let server = start(config()).await;
    let mut w = watcher(&server).await;
    let (mut alice, _) = server.hello("alice").await;
    alice
        .ask(
            json!({"type": "seek", "id": 1, "game": "tictactoe", "bot": "quick",
                "bot_after_ms": 700000}),
            json!({"type": "error", "re": 1, "code": "bad_seek",
                "message": "bot_after_ms must be at most 600000"}),
        )
        .await;
    alice
        .ask(
            json!({"type": "seek", "id": 2, "game": "tictactoe", "bot": "nobody"}),
            json!({"type": "error", "re": 2, "code": "bad_room",
                "message": "o: unknown bot level \"nobody\""}),
        )
        .await;
    alice
        .send(
            json!({"type": "seek", "id": 3, "game": "tictactoe", "bot": "quick",
            "bot_after_ms": 20}),
        )
        .await;
    assert_eq!(alice.recv().await["type"], "seeking");
    let paired = alice.recv().await;
    let joined = join_paired(&mut alice, &paired).await;
    let bot_seat = if paired["seat"] == "x" { "o" } else { "x" };
    assert_eq!(joined["room"]["players"][bot_seat], bot("quick"));
    assert_eq!(w.recv().await["seeks"].as_array().unwrap().len(), 1);
    assert_eq!(w.recv().await, json!({"type": "seeks", "seeks": []}));

    // A seeker who leaves takes its seek along.
    let (mut bob, _) = server.hello("bob").await;
    bob.send(json!({"type": "seek", "game": "caro"})).await;
    assert_eq!(bob.recv().await["type"], "seeking");
    assert_eq!(w.recv().await["seeks"].as_array().unwrap().len(), 1);
    drop(bob);
    assert_eq!(w.recv().await, json!({"type": "seeks", "seeks": []}));

    // And one who cancels.
    let (mut carol, _) = server.hello("carol").await;
    carol.send(json!({"type": "seek", "game": "caro"})).await;
    assert_eq!(carol.recv().await["type"], "seeking");
    assert_eq!(w.recv().await["seeks"].as_array().unwrap().len(), 1);
    carol
        .ask(
            json!({"type": "cancel_seek", "id": 9}),
            json!({"type": "seek_cancelled", "re": 9}),
        )
        .await;
    assert_eq!(w.recv().await, json!({"type": "seeks", "seeks": []}));
    server.stop().await;
}
