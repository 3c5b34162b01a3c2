//! Helpers of the rating tests: accounts, a rated room between two clients, a game played to
//! its end, and ratings seeded into a real SQLite file before the server starts.

use std::path::Path;
use std::sync::Arc;

use caro_arena::store::sqlite::SqliteStore;
use caro_arena::store::Store;
use serde_json::{json, Value};

use super::{create, Client, TestServer};

/// Every test account's password.
pub const PASSWORD: &str = "correct horse battery";

/// A guest that registers `username`: the client, its token and its player id.
pub async fn register(server: &TestServer, username: &str) -> (Client, String, String) {
    let (mut c, w) = server.hello("guest").await;
    let player_id = w["player_id"].as_str().unwrap().to_string();
    c.ask(
        json!({"type": "register", "id": 1, "username": username, "password": PASSWORD}),
        json!({"type": "logged_in", "re": 1, "player_id": player_id, "name": username}),
    )
    .await;
    (c, w["token"].as_str().unwrap().to_string(), player_id)
}

/// A new connection resuming the session `token` (an account's survives a restart).
pub async fn resume(server: &TestServer, token: &str) -> Client {
    let mut c = server.connect().await;
    c.send(json!({"type": "hello", "token": token})).await;
    let w = c.recv().await;
    assert_eq!(w["type"], "welcome", "{w}");
    c
}

/// `x` creates a room (`create_room` with `params` added: `game` caro unless given) with itself
/// as X, `o` joins it; both have read every setup message. Returns both `room_joined`s and the
/// room id.
pub async fn seated_room(x: &mut Client, o: &mut Client, params: Value) -> (Value, Value, String) {
    let mut msg = json!({"type": "create_room", "game": "caro", "x": "me", "o": "open"});
    for (k, v) in params.as_object().unwrap() {
        msg[k] = v.clone();
    }
    let (jx, room) = create(x, msg).await;
    o.send(json!({"type": "join_room", "room_id": room})).await;
    let jo = o.recv().await;
    assert_eq!(jo["type"], "room_joined", "{jo}");
    for c in [x, o] {
        c.send(json!({"type": "ping", "id": "sync"})).await;
        let pong = c.recv_skip(&["room_update"]).await;
        assert_eq!(pong, json!({"type": "pong", "re": "sync"}));
    }
    (jx, jo, room)
}

/// Plays `moves` alternately, X first; both clients read each move.
pub async fn play(x: &mut Client, o: &mut Client, room: &str, moves: &[(u8, u8)]) {
    for (i, (cx, cy)) in moves.iter().enumerate() {
        let (mover, other) = if i % 2 == 0 {
            (&mut *x, &mut *o)
        } else {
            (&mut *o, &mut *x)
        };
        mover
            .send(json!({"type": "move", "room_id": room, "x": cx, "y": cy}))
            .await;
        for c in [mover, other] {
            let ev = c.event().await;
            assert_eq!(ev["type"], "move", "{ev}");
        }
    }
}

/// X plays five in a row on y=7 while O plays on y=9: X wins. Returns X's and O's `game_over`.
pub async fn x_wins(x: &mut Client, o: &mut Client, room: &str) -> (Value, Value) {
    let mut moves = Vec::new();
    for i in 0..5u8 {
        moves.push((i, 7));
        if i < 4 {
            moves.push((i, 9));
        }
    }
    play(x, o, room, &moves).await;
    let (a, b) = (x.event().await, o.event().await);
    assert_eq!(a["type"], "game_over", "{a}");
    assert_eq!(a, b);
    (a, b)
}

/// The SQLite store at `path`.
pub fn sqlite(path: &Path) -> Arc<dyn Store> {
    Arc::new(SqliteStore::open(path).unwrap())
}

/// One seeded rating: player id, family, rating, deviation, volatility, games, last rated game
/// (unix ms).
pub type Seed<'a> = (&'a str, &'a str, f64, f64, f64, u32, i64);

/// Writes ratings straight into the file of a stopped server.
pub fn seed(path: &Path, rows: &[Seed<'_>]) {
    let conn = rusqlite::Connection::open(path).unwrap();
    for (player, family, r, d, v, games, last) in rows {
        conn.execute(
            "INSERT OR REPLACE INTO ratings (player_id, family, rating, deviation, volatility,
                 games, wins, draws, losses, last_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, 0, 0, ?7)",
            rusqlite::params![player, family, r, d, v, games, last],
        )
        .unwrap();
    }
}
