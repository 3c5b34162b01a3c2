//! Time-based room rules, with tokio's clock paused (`start_paused`): the rooms run for real but
//! their clients are in-memory queues, so minutes pass instantly and exactly.
//! The same rules are exercised over real sockets with short durations in tests/reconnect.rs.

mod common;

use std::sync::Arc;
use std::time::Duration;

use caro_arena::config::Config;
use caro_arena::protocol::SeatSpec;
use caro_arena::room::{self, RoomCmd};
use caro_arena::store::NullStore;
use caro_arena::Server;
use common::fake::{seated, Fake};
use serde_json::{json, Value};

/// A room with `x` and `o` seated and X's first move played at (7,7).
async fn game(server: &Arc<Server>) -> (Fake, Fake, room::RoomHandle) {
    let (mut x, mut o, handle) = seated(server, None).await;
    play(&handle, &x, 7, 7).await;
    x.drain().await;
    o.drain().await;
    (x, o, handle)
}

async fn play(h: &room::RoomHandle, f: &Fake, x: i64, y: i64) {
    h.send(RoomCmd::Move {
        who: f.who.clone(),
        x,
        y,
        re: None,
    })
    .await
    .unwrap();
}

async fn disconnect(h: &room::RoomHandle, f: &Fake) {
    h.send(RoomCmd::Disconnected {
        player_id: f.who.player_id.clone(),
        conn_id: f.who.client.conn_id,
    })
    .await
    .unwrap();
}

fn server() -> Arc<Server> {
    Server::new(Config::default(), Arc::new(NullStore))
}

fn abandoned(room: &str, seq: u64, winner: &str) -> Value {
    json!({"type": "game_over", "room_id": room, "seq": seq, "result": winner,
        "reason": "abandoned"})
}

#[tokio::test(start_paused = true)]
async fn absent_on_their_turn_loses_after_exactly_the_grace_period() {
    let server = server();
    let (mut x, o, h) = game(&server).await;
    disconnect(&h, &o).await; // O to move
    assert_eq!(Fake::types(&x.drain().await), ["room_update"]);
    tokio::time::sleep(Duration::from_millis(59_900)).await;
    assert!(x.drain().await.is_empty());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(x.drain().await, [abandoned(&h.id, 2, "x")]);
}

#[tokio::test(start_paused = true)]
async fn the_clock_waits_for_the_absent_players_turn() {
    let server = server();
    let (x, mut o, h) = game(&server).await;
    disconnect(&h, &x).await; // O to move: X's clock does not run
    o.drain().await;
    tokio::time::sleep(Duration::from_secs(200)).await;
    assert!(
        o.drain().await.is_empty(),
        "no abandonment while it is O's turn"
    );
    play(&h, &o, 0, 0).await; // now X's clock starts
                              // The room tells everyone X's countdown now runs (protocol v2's `abandon_ms`): X has been
                              // away 200 s of the 300 s cap, and its 60 s grace on its turn comes first.
    let seen = o.drain().await;
    assert_eq!(Fake::types(&seen), ["move", "room_update"]);
    assert_eq!(seen[1]["players"]["x"]["abandon_ms"], 60_000);
    tokio::time::sleep(Duration::from_millis(59_900)).await;
    assert!(o.drain().await.is_empty());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(o.drain().await, [abandoned(&h.id, 3, "o")]);
    drop(x);
}

#[tokio::test(start_paused = true)]
async fn reconnecting_stops_the_clock() {
    let server = server();
    let (mut x, o, h) = game(&server).await;
    disconnect(&h, &o).await;
    tokio::time::sleep(Duration::from_secs(50)).await;
    let mut o2 = Fake::new(&server, "o");
    assert!(h.reconnect(o2.who.clone()).await);
    assert_eq!(
        Fake::types(&o2.drain().await),
        ["room_joined", "room_update"]
    );
    tokio::time::sleep(Duration::from_secs(600)).await;
    let seen = x.drain().await;
    assert_eq!(Fake::types(&seen), ["room_update", "room_update"]);
    drop(o);
}

#[tokio::test(start_paused = true)]
async fn an_absent_player_loses_at_the_cap_even_when_the_opponent_stalls() {
    let server = server();
    let (x, mut o, h) = game(&server).await;
    disconnect(&h, &x).await; // O to move, and O never does
    o.drain().await;
    tokio::time::sleep(Duration::from_millis(299_900)).await;
    assert!(o.drain().await.is_empty());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(o.drain().await, [abandoned(&h.id, 2, "o")]);
    drop(x);
}

#[tokio::test(start_paused = true)]
async fn spectator_counts_are_batched_once_a_second() {
    let server = server();
    let (mut x, _o, h) = game(&server).await;
    let mut crowd = Vec::new();
    for i in 0..5 {
        let f = Fake::new(&server, &format!("s{i}"));
        h.join(f.who.clone(), None, None).await.unwrap();
        crowd.push(f);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The game's own updates happened at t=0; the crowd changes wait for the next second.
    assert!(x.drain().await.is_empty());
    tokio::time::sleep(Duration::from_millis(600)).await;
    let seen = x.drain().await;
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["type"], "room_update");
    assert_eq!(seen[0]["spectators"], 5);
}

#[tokio::test(start_paused = true)]
async fn finished_rooms_close_after_their_ttl() {
    let server = server();
    let (mut x, o, h) = game(&server).await;
    h.send(RoomCmd::Resign {
        who: o.who.clone(),
        re: None,
    })
    .await
    .unwrap();
    assert_eq!(Fake::types(&x.drain().await), ["game_over"]);
    tokio::time::sleep(Duration::from_secs(599)).await;
    assert!(server.lobby.room(&h.id).is_some());
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(Fake::types(&x.drain().await), ["room_closed"]);
    assert!(server.lobby.room(&h.id).is_none());
}

#[tokio::test(start_paused = true)]
async fn create_and_join_are_refused_while_shutting_down() {
    let server = server();
    let (x, _o, h) = game(&server).await;
    server.shutdown.cancel();
    let params = server
        .lobby
        .check_params(
            "tictactoe",
            None,
            None,
            None,
            &SeatSpec::Word("me".into()),
            &SeatSpec::Word("open".into()),
            None,
        )
        .unwrap();
    let e = server
        .lobby
        .open_room(x.who.clone(), params, None)
        .unwrap_err();
    assert_eq!(e.code.as_str(), "shutting_down");
    // The room task stops with the server: a join finds it gone or refuses.
    let late = Fake::new(&server, "late");
    let e = h.join(late.who.clone(), None, None).await.unwrap_err();
    assert!(
        ["shutting_down", "no_such_room"].contains(&e.code.as_str()),
        "{e:?}"
    );
}
