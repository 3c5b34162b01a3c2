//! A scripted Caro game between alice (X) and bob (O) over real sockets, for the tests that stop
//! or kill a server mid-game and check what comes back (tests/persistence.rs on SQLite,
//! tests/postgres.rs on PostgreSQL): X plays (i, 0), O plays (i, 1), so X makes five in row 0
//! on the 9th move.

use std::net::SocketAddr;

use serde_json::{json, Value};

use super::{connect, create, Client};

/// Move `i` of the script.
pub fn script(i: usize) -> (u8, u8) {
    ((i / 2) as u8, (i % 2) as u8)
}

/// The first `n` moves of the script as a room's `moves` shows them.
pub fn moves_json(n: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| {
                let (x, y) = script(i);
                json!([x, y])
            })
            .collect(),
    )
}

/// alice (X) and bob (O) seated in a new Caro room; every setup message read. Returns both, the
/// room id and their `welcome`s.
pub async fn seated(addr: SocketAddr) -> (Client, Client, String, Value, Value) {
    let mut alice = connect(addr).await;
    alice.send(json!({"type": "hello", "name": "alice"})).await;
    let wa = alice.recv().await;
    let mut bob = connect(addr).await;
    bob.send(json!({"type": "hello", "name": "bob"})).await;
    let wb = bob.recv().await;
    for w in [&wa, &wb] {
        assert_eq!(w["type"], "welcome", "{w}");
    }
    let (_, room) = create(
        &mut alice,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": "open"}),
    )
    .await;
    bob.send(json!({"type": "join_room", "room_id": room}))
        .await;
    assert_eq!(bob.recv().await["type"], "room_joined");
    bob.recv().await; // room_update
    alice.recv().await; // room_update
    (alice, bob, room, wa, wb)
}

/// A welcome's session token.
pub fn token(welcome: &Value) -> String {
    welcome["token"].as_str().unwrap().to_string()
}

/// Plays move `i` of the script and waits for the mover's acknowledgement (its copy with `re`).
pub async fn play(mover: &mut Client, other: &mut Client, room: &str, i: usize) -> Value {
    let (x, y) = script(i);
    mover
        .send(json!({"type": "move", "id": i, "room_id": room, "x": x, "y": y}))
        .await;
    let ack = mover.recv_skip(&["room_update"]).await;
    assert_eq!(ack["type"], "move", "{ack}");
    assert_eq!(ack["re"], i, "{ack}");
    other.recv_skip(&["room_update"]).await;
    ack
}

/// Plays moves `moves` of the script, each by its side.
pub async fn play_moves(
    alice: &mut Client,
    bob: &mut Client,
    room: &str,
    moves: std::ops::Range<usize>,
) {
    for i in moves {
        if i % 2 == 0 {
            play(alice, bob, room, i).await;
        } else {
            play(bob, alice, room, i).await;
        }
    }
}

/// Plays the script from move `from` to X's five; returns the game_over.
pub async fn finish(alice: &mut Client, bob: &mut Client, room: &str, from: usize) -> Value {
    play_moves(alice, bob, room, from..9).await;
    let over = alice.recv_skip(&["room_update"]).await;
    assert_eq!(over["type"], "game_over", "{over}");
    assert_eq!(over["result"], "x");
    assert_eq!(over["seq"], 10);
    over
}

/// Resumes a session by its token: the client, its `welcome` (resumed) and its `room_joined`.
pub async fn resume(addr: SocketAddr, token: &str) -> (Client, Value, Value) {
    let mut c = connect(addr).await;
    c.send(json!({"type": "hello", "token": token})).await;
    let w = c.recv().await;
    assert_eq!(w["type"], "welcome", "{w}");
    assert_eq!(w["resumed"], true, "{w}");
    let j = c.recv_skip(&["room_update"]).await;
    assert_eq!(j["type"], "room_joined", "{j}");
    (c, w, j)
}
