//! Time controls (protocol v2): clocks on the wire, flag falls, the increment, the per-move
//! reset, the idle limit, the away countdown, bots under a clock, validation, and clocks across a
//! restart.
//!
//! The exact times are checked with tokio's clock paused (`start_paused`), on real rooms whose
//! clients are in-memory queues, as in tests/clock.rs. What needs sockets, a database or a bot
//! (validation errors, the lobby, a restart, a bot's moves) runs on a real server over real
//! sockets, where real time passes: there only the values no clock runs for are exact.

mod common;

use std::sync::Arc;
use std::time::Duration;

use caro_arena::config::Config;
use caro_arena::room::{self, RoomCmd};
use caro_arena::store::sqlite::SqliteStore;
use caro_arena::store::{NullStore, Store};
use caro_arena::Server;
use common::fake::{opened, seated, Fake};
use common::*;
use serde_json::{json, Value};

fn server() -> Arc<Server> {
    Server::new(Config::default(), Arc::new(NullStore))
}

/// A Caro room with `tc`, x and o seated (the game, and X's clock, start now); setup read.
async fn game(server: &Arc<Server>, tc: Value) -> (Fake, Fake, room::RoomHandle) {
    seated(server, Some(&tc)).await
}

async fn play(h: &room::RoomHandle, f: &Fake, x: i64, y: i64) {
    h.send(RoomCmd::Move {
        who: f.who.clone(),
        x,
        y,
        re: Some(json!(1)),
    })
    .await
    .unwrap();
}

async fn sleep_ms(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

fn fischer(base_ms: u64, increment_ms: u64) -> Value {
    json!({"kind": "fischer", "base_ms": base_ms, "increment_ms": increment_ms})
}

/// A `move` as the other player sees it (no `re`).
fn moved(room: &str, seq: u64, seat: &str, x: u8, y: u8, turn: &str, clock: Value) -> Value {
    json!({"type": "move", "room_id": room, "seq": seq, "seat": seat, "x": x, "y": y,
        "turn": turn, "clock": clock})
}

#[tokio::test(start_paused = true)]
async fn a_flag_falls_at_exactly_the_time_left_and_the_flagging_side_loses() {
    let server = server();
    let (x, mut o, h) = game(&server, fischer(10_000, 0)).await;
    sleep_ms(2_500).await;
    play(&h, &x, 7, 7).await;
    assert_eq!(
        o.drain().await,
        [moved(
            &h.id,
            1,
            "x",
            7,
            7,
            "o",
            json!({"x": 7_500, "o": 10_000, "running": "o"})
        )]
    );
    sleep_ms(9_999).await;
    assert!(o.drain().await.is_empty(), "O still has 1 ms");
    sleep_ms(1).await;
    assert_eq!(
        o.drain().await,
        [
            json!({"type": "game_over", "room_id": &*h.id, "seq": 2, "result": "x",
            "reason": "time", "clock": {"x": 7_500, "o": 0, "running": null}})
        ]
    );
    drop(x);
}

/// The clocks start with the game: a side that never makes its first move flags like any
/// other (docs/protocol.md, "Time controls").
#[tokio::test(start_paused = true)]
async fn a_flag_before_the_first_move_loses_too() {
    let server = server();
    let (mut x, o, h) = game(&server, json!({"kind": "per_move", "move_ms": 30_000})).await;
    sleep_ms(30_000).await;
    assert_eq!(
        x.drain().await,
        [
            json!({"type": "game_over", "room_id": &*h.id, "seq": 1, "result": "o",
            "reason": "time", "clock": {"x": 0, "o": 30_000, "running": null}})
        ]
    );
    drop(o);
}

/// The second player's seat starts the game and X's clock: the creator learns it from that
/// `room_update`, the joiner from its `room_joined`.
#[tokio::test(start_paused = true)]
async fn taking_the_second_seat_starts_xs_clock() {
    let server = server();
    let tc = json!({"kind": "per_move", "move_ms": 30_000});
    let (mut x, mut o, h) = opened(&server, Some(&tc));
    let created = x.drain().await.remove(0);
    assert_eq!(
        created["room"]["clock"],
        json!({"x": 30_000, "o": 30_000, "running": null})
    );
    sleep_ms(5_000).await; // waiting for a player costs nobody time
    h.join(o.who.clone(), None, None).await.unwrap();
    sleep_ms(1_000).await;
    assert_eq!(
        x.drain().await,
        [json!({"type": "room_update", "room_id": &*h.id,
            "players": {"x": {"name": "x", "kind": "human", "connected": true},
                        "o": {"name": "o", "kind": "human", "connected": true}},
            "spectators": 0, "clock": {"x": 30_000, "o": 30_000, "running": "x"}})]
    );
    let joined = o.drain().await.remove(0);
    assert_eq!(
        joined["room"]["clock"],
        json!({"x": 30_000, "o": 30_000, "running": "x"})
    );
    assert_eq!(joined["room"]["status"], "playing");
}

#[tokio::test(start_paused = true)]
async fn the_increment_is_credited_after_each_move() {
    let server = server();
    let (mut x, mut o, h) = game(&server, fischer(10_000, 2_000)).await;
    sleep_ms(3_000).await;
    play(&h, &x, 7, 7).await;
    let after_x = json!({"x": 9_000, "o": 10_000, "running": "o"});
    // The mover's own copy is the acknowledgement, with `re`.
    let mut ack = moved(&h.id, 1, "x", 7, 7, "o", after_x.clone());
    ack["re"] = json!(1);
    assert_eq!(x.drain().await, [ack]);
    assert_eq!(o.drain().await, [moved(&h.id, 1, "x", 7, 7, "o", after_x)]);
    sleep_ms(1_500).await;
    play(&h, &o, 8, 8).await;
    assert_eq!(
        x.drain().await,
        [moved(
            &h.id,
            2,
            "o",
            8,
            8,
            "x",
            json!({"x": 9_000, "o": 10_500, "running": "x"})
        )]
    );
    // A `sync` replays the move as it was sent, then says where the clocks are now.
    sleep_ms(500).await;
    h.send(RoomCmd::Sync {
        who: x.who.clone(),
        since_seq: 1,
        re: Some(json!(9)),
    })
    .await
    .unwrap();
    let replay = x.drain().await;
    assert_eq!(
        replay[0]["clock"],
        json!({"x": 9_000, "o": 10_500, "running": "x"})
    );
    assert_eq!(
        replay[1],
        json!({"type": "synced", "re": 9, "room_id": &*h.id, "seq": 2,
            "clock": {"x": 8_500, "o": 10_500, "running": "x"}})
    );
    // A spectator joining now sees both clocks as of its room_joined, and the time control.
    sleep_ms(3_500).await;
    let mut s = Fake::new(&server, "s");
    h.join(s.who.clone(), None, None).await.unwrap();
    let joined = s.drain().await.remove(0);
    assert_eq!(
        joined["room"]["time_control"],
        json!({"kind": "fischer", "base_ms": 10_000, "increment_ms": 2_000})
    );
    assert_eq!(
        joined["room"]["clock"],
        json!({"x": 5_000, "o": 10_500, "running": "x"})
    );
}

#[tokio::test(start_paused = true)]
async fn a_per_move_clock_resets_after_every_move() {
    let server = server();
    let (mut x, o, h) = game(&server, json!({"kind": "per_move", "move_ms": 5_000})).await;
    sleep_ms(4_000).await;
    play(&h, &x, 7, 7).await;
    sleep_ms(4_900).await;
    play(&h, &o, 8, 8).await;
    let seen = x.drain().await;
    assert_eq!(
        seen[1],
        moved(
            &h.id,
            2,
            "o",
            8,
            8,
            "x",
            json!({"x": 5_000, "o": 5_000, "running": "x"})
        )
    );
    sleep_ms(5_000).await;
    assert_eq!(
        x.drain().await,
        [
            json!({"type": "game_over", "room_id": &*h.id, "seq": 3, "result": "o",
            "reason": "time", "clock": {"x": 0, "o": 5_000, "running": null}})
        ]
    );
}

/// A move that reaches the room after the mover's flag fell is not played: the game is lost on
/// time, and the move is answered `game_over`.
#[tokio::test(start_paused = true)]
async fn a_move_after_the_flag_fell_loses_on_time() {
    let server = server();
    let (mut x, _o, h) = game(&server, fischer(1_000, 0)).await;
    // Time jumps past the flag without the room running, then the move arrives.
    tokio::time::advance(Duration::from_millis(1_001)).await;
    play(&h, &x, 7, 7).await;
    assert_eq!(
        x.drain().await,
        [
            json!({"type": "game_over", "room_id": &*h.id, "seq": 1, "result": "o",
                "reason": "time", "clock": {"x": 0, "o": 1_000, "running": null}}),
            json!({"type": "error", "re": 1, "code": "game_over",
                "message": "the game is over"}),
        ]
    );
}

/// Without a clock, `rooms.idle_move_ms` (15 minutes by default) still ends a game whose side
/// to move never moves, connected or not; no clock appears on the wire.
#[tokio::test(start_paused = true)]
async fn a_game_without_a_clock_ends_at_the_idle_limit() {
    let server = server();
    let (x, mut o, h) = game(&server, json!({"kind": "none"})).await;
    play(&h, &x, 7, 7).await;
    assert_eq!(
        o.drain().await,
        [
            json!({"type": "move", "room_id": &*h.id, "seq": 1, "seat": "x", "x": 7, "y": 7,
            "turn": "o"})
        ]
    );
    sleep_ms(899_999).await;
    assert!(o.drain().await.is_empty());
    sleep_ms(1).await;
    assert_eq!(
        o.drain().await,
        [
            json!({"type": "game_over", "room_id": &*h.id, "seq": 2, "result": "x",
            "reason": "abandoned"})
        ]
    );
}

/// The away player's countdown to its abandonment, as of each message: on the `room_update`
/// that says it left, and in a later joiner's `room_joined`.
#[tokio::test(start_paused = true)]
async fn the_away_countdown_is_on_the_wire() {
    let server = server();
    let (x, mut o, h) = game(&server, json!({"kind": "none"})).await;
    h.send(RoomCmd::Disconnected {
        player_id: x.who.player_id.clone(),
        conn_id: x.who.client.conn_id,
    })
    .await
    .unwrap();
    // X is to move: its grace (60 s) runs.
    assert_eq!(
        o.drain().await,
        [json!({"type": "room_update", "room_id": &*h.id,
            "players": {"x": {"name": "x", "kind": "human", "connected": false,
                              "abandon_ms": 60_000},
                        "o": {"name": "o", "kind": "human", "connected": true}},
            "spectators": 0})]
    );
    sleep_ms(20_000).await;
    let mut s = Fake::new(&server, "s");
    h.join(s.who.clone(), None, None).await.unwrap();
    let joined = s.drain().await.remove(0);
    assert_eq!(
        joined["room"]["players"]["x"],
        json!({"name": "x", "kind": "human", "connected": false, "abandon_ms": 40_000})
    );
    // The lobby's summary carries no countdown (it would change every millisecond).
    let (summary, _) = server.lobby.room(&h.id).unwrap().summary.get();
    assert_eq!(
        serde_json::to_value(&summary.players).unwrap()["x"],
        json!({"name": "x", "kind": "human", "connected": false})
    );
}

// --- A real server over real sockets. ---

fn create_msg(tc: Value) -> Value {
    json!({"type": "create_room", "id": 3, "game": "caro", "x": "me", "o": "open",
        "time_control": tc})
}

#[tokio::test]
async fn bad_time_controls_are_refused_with_exact_errors() {
    let server = start(config()).await;
    let (mut c, _) = server.hello("alice").await;
    let cases = [
        (json!("3+2"), "time_control: invalid type: string \"3+2\", expected internally tagged enum TimeControl"),
        (json!({"kind": "blitz"}), "time_control: unknown variant `blitz`, expected one of `none`, `fischer`, `per_move`"),
        (json!({"base_ms": 1000}), "time_control: missing field `kind`"),
        (json!({"kind": "fischer", "base_ms": 180_000}), "time_control: missing field `increment_ms`"),
        (json!({"kind": "fischer", "base_ms": -5, "increment_ms": 0}), "time_control: invalid value: integer `-5`, expected u64"),
        (json!({"kind": "fischer", "base_ms": 999, "increment_ms": 0}), "time_control: base_ms must be in 1000..=10800000, got 999"),
        (json!({"kind": "fischer", "base_ms": 10_800_001_u64, "increment_ms": 0}), "time_control: base_ms must be in 1000..=10800000, got 10800001"),
        (json!({"kind": "fischer", "base_ms": 180_000, "increment_ms": 60_001}), "time_control: increment_ms must be at most 60000, got 60001"),
        (json!({"kind": "per_move", "move_ms": 0}), "time_control: move_ms must be in 1000..=10800000, got 0"),
        (json!({"kind": "per_move", "move_ms": 30_000, "base_ms": 5}), "time_control: unknown field `base_ms`, expected `move_ms`"),
    ];
    for (tc, message) in cases {
        c.ask(
            create_msg(tc),
            json!({"type": "error", "re": 3, "code": "bad_time_control", "message": message}),
        )
        .await;
    }
    // Nothing was opened.
    c.ask(
        json!({"type": "list_rooms", "id": 4}),
        json!({"type": "room_list", "re": 4, "rooms": []}),
    )
    .await;
    server.stop().await;
}

/// A v1 client's `create_room` (no `time_control`) still opens a room, with no clock on the
/// wire; `null` and `{"kind": "none"}` mean the same.
#[tokio::test]
async fn a_create_room_without_a_time_control_still_works() {
    let server = start(config()).await;
    let (mut c, _) = server.hello("alice").await;
    let v1 = json!({"type": "create_room", "id": 3, "game": "caro", "x": "me", "o": "open"});
    for msg in [
        v1,
        create_msg(Value::Null),
        create_msg(json!({"kind": "none"})),
    ] {
        let (joined, room) = create(&mut c, msg).await;
        assert_eq!(
            joined,
            json!({"type": "room_joined", "re": 3, "you": {"role": "player", "seat": "x"},
                "room": {"room_id": room, "game": "caro", "width": 15, "height": 15,
                "rule": "freestyle", "win_length": 5, "status": "waiting",
                "players": {"x": human("alice", true), "o": null},
                "spectators": 0, "moves": [], "turn": null, "seq": 0}})
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn the_lobby_shows_the_time_control() {
    let server = start(config()).await;
    let (mut c, _) = server.hello("alice").await;
    let (joined, room) = create(&mut c, create_msg(fischer(180_000, 2_000))).await;
    assert_eq!(
        joined["room"]["time_control"],
        json!({"kind": "fischer", "base_ms": 180_000, "increment_ms": 2_000})
    );
    // Waiting: full clocks, none running.
    assert_eq!(
        joined["room"]["clock"],
        json!({"x": 180_000, "o": 180_000, "running": null})
    );
    c.ask(
        json!({"type": "list_rooms", "id": 4}),
        json!({"type": "room_list", "re": 4, "rooms": [
            {"room_id": room, "game": "caro", "width": 15, "height": 15, "rule": "freestyle",
             "status": "waiting", "players": {"x": human("alice", true), "o": null},
             "spectators": 0, "moves": 0,
             "time_control": {"kind": "fischer", "base_ms": 180_000, "increment_ms": 2_000}}]}),
    )
    .await;
    let (_, body) = server.get("/api/rooms").await;
    let api: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        api["rooms"][0]["time_control"],
        json!({"kind": "fischer", "base_ms": 180_000, "increment_ms": 2_000})
    );
    server.stop().await;
}

/// A bot level that thinks up to 3 s a move, in a game with 1 s per side: without budgeting
/// from its clock it would flag on its first move. It budgets a share of what it has left, so
/// it plays on until the game ends otherwise (its five, as nothing blocks it) or twelve moves.
#[tokio::test]
async fn a_bot_moves_within_its_clock() {
    let bots = "[bots.slow]\ndescription = \"Thinks long\"\ngames = [\"caro\"]\n\
                max_depth = 30\ntime_ms = 3000\n";
    let server = start(config_with_bots("", bots)).await;
    let (mut c, _) = server.hello("alice").await;
    let (_, room) = create(
        &mut c,
        json!({"type": "create_room", "game": "caro", "width": 20, "x": "me",
            "o": {"bot": "slow"}, "time_control": fischer(1_000, 0)}),
    )
    .await;
    let mut last_o = 1_000;
    let mut bot_moves = 0;
    // Far-apart stones of X's own: X never makes five.
    for i in 0..12u8 {
        let (x, y) = ((i % 4) * 5, (i / 4) * 6 + 1);
        c.send(json!({"type": "move", "room_id": room, "x": x, "y": y}))
            .await;
        let mine = c.event().await;
        if mine["type"] == "error" {
            // The bot took this cell: try the game's next event instead.
            assert_eq!(mine["code"], "occupied", "{mine}");
            continue;
        }
        assert_eq!(mine["type"], "move", "{mine}");
        let reply = c.event().await;
        if reply["type"] == "game_over" {
            assert_eq!(reply["reason"], "line", "{reply}");
            assert_eq!(reply["result"], "o", "{reply}");
            break;
        }
        assert_eq!(reply["type"], "move", "{reply}");
        assert_eq!(reply["seat"], "o");
        bot_moves += 1;
        let o = reply["clock"]["o"].as_u64().unwrap();
        assert!(o > 0 && o <= last_o, "{reply}");
        last_o = o;
        if reply["turn"].is_null() {
            // The bot's five: its clock stopped with the game.
            assert_eq!(reply["clock"]["running"], Value::Null);
            let over = c.event().await;
            assert_eq!(over["reason"], "line", "{over}");
            break;
        }
        assert_eq!(reply["clock"]["running"], "x");
    }
    assert!(bot_moves >= 4, "{bot_moves} bot moves");
    server.stop().await;
}

/// Clocks survive a restart with the game: each side gets its time as of the last stored move
/// (the downtime is charged to nobody), and the replay API returns the time control and every
/// move's clocks exactly as the moves announced them.
#[tokio::test]
async fn clocks_are_restored_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.db");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db).unwrap());
    let server = start_with_store(config(), store).await;
    let (mut alice, wa) = server.hello("alice").await;
    let (mut bob, wb) = server.hello("bob").await;
    let (_, room) = create(
        &mut alice,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": "open",
            "time_control": fischer(600_000, 5_000)}),
    )
    .await;
    bob.send(json!({"type": "join_room", "room_id": room}))
        .await;
    assert_eq!(bob.recv().await["type"], "room_joined");
    let mut clocks = Vec::new();
    for (i, (x, y)) in [(0, 0), (1, 1), (2, 0)].into_iter().enumerate() {
        let (m, o) = if i % 2 == 0 {
            (&mut alice, &mut bob)
        } else {
            (&mut bob, &mut alice)
        };
        m.send(json!({"type": "move", "room_id": room, "x": x, "y": y}))
            .await;
        let ack = m.event().await;
        assert_eq!(ack["type"], "move", "{ack}");
        assert_eq!(o.event().await["clock"], ack["clock"]);
        clocks.push(ack["clock"].clone());
    }
    // O to move; X's time is what its last move left it.
    let last = clocks[2].clone();
    assert_eq!(last["running"], "o");
    server.stop().await;

    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db).unwrap());
    let server = start_with_store(config(), store).await;
    let mut alice = server.connect().await;
    alice
        .send(json!({"type": "hello", "token": wa["token"]}))
        .await;
    assert_eq!(alice.recv().await["resumed"], true);
    let joined = alice.recv_skip(&["room_update"]).await;
    let room_state = &joined["room"];
    assert_eq!(
        room_state["time_control"],
        json!({"kind": "fischer", "base_ms": 600_000, "increment_ms": 5_000})
    );
    assert_eq!(room_state["clock"]["x"], last["x"], "{joined}");
    assert_eq!(room_state["clock"]["running"], "o");
    // O's clock runs again from the restart, from its stored time.
    let o_now = room_state["clock"]["o"].as_u64().unwrap();
    let o_stored = last["o"].as_u64().unwrap();
    assert!(o_now <= o_stored && o_now + 5_000 > o_stored, "{joined}");
    // O comes back and moves: its increment is credited on its restored time.
    let mut bob = server.connect().await;
    bob.send(json!({"type": "hello", "token": wb["token"]}))
        .await;
    assert_eq!(bob.recv().await["resumed"], true);
    assert_eq!(bob.recv_skip(&["room_update"]).await["type"], "room_joined");
    bob.send(json!({"type": "move", "room_id": room, "x": 3, "y": 3}))
        .await;
    let ack = bob.event().await;
    // X's clock runs again from its stored time.
    let x_now = ack["clock"]["x"].as_u64().unwrap();
    let x_stored = last["x"].as_u64().unwrap();
    assert!(x_now <= x_stored && x_now + 5_000 > x_stored, "{ack}");
    let o_after = ack["clock"]["o"].as_u64().unwrap();
    assert!(
        o_after <= o_stored + 5_000 && o_after + 5_000 > o_stored + 5_000,
        "{ack}"
    );
    clocks.push(ack["clock"].clone());
    bob.send(json!({"type": "resign", "room_id": room})).await;
    assert_eq!(bob.event().await["reason"], "resign");

    let (_, body) = server.get(&format!("/api/games/{room}")).await;
    let game: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        game["time_control"],
        json!({"kind": "fischer", "base_ms": 600_000, "increment_ms": 5_000})
    );
    let stored: Vec<Value> = game["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["clock"].clone())
        .collect();
    let announced: Vec<Value> = clocks
        .iter()
        .map(|c| json!({"x": c["x"], "o": c["o"]}))
        .collect();
    assert_eq!(stored, announced);
    server.stop().await;
}

/// A takeback by agreement under a clock: the side to move again runs its clock on from its
/// turn's start (time spent stays spent), and the `takeback` event carries both clocks.
#[tokio::test(start_paused = true)]
async fn a_takeback_carries_the_clocks_and_keeps_time_spent() {
    use caro_arena::protocol::OfferKind;
    let server = server();
    let (mut x, mut o, h) = game(&server, fischer(10_000, 1_000)).await;
    sleep_ms(1_000).await;
    play(&h, &x, 7, 7).await; // X: 10 000 - 1 000 + 1 000
    sleep_ms(2_000).await;
    play(&h, &o, 8, 8).await; // O: 10 000 - 2 000 + 1 000
    sleep_ms(500).await;
    h.send(RoomCmd::Offer {
        who: x.who.clone(),
        kind: OfferKind::Takeback,
        re: None,
    })
    .await
    .unwrap();
    sleep_ms(500).await;
    h.send(RoomCmd::Respond {
        who: o.who.clone(),
        kind: OfferKind::Takeback,
        accept: true,
        re: None,
    })
    .await
    .unwrap();
    x.drain().await;
    let seen = o.drain().await;
    let takeback = seen
        .iter()
        .find(|m| m["type"] == "takeback")
        .unwrap_or_else(|| panic!("{seen:?}"));
    assert_eq!(
        takeback["clock"],
        json!({"x": 9_000, "o": 9_000, "running": "x"})
    );
    assert_eq!(takeback["turn"], "x");
}

/// A rematch is played with the same time control, on full clocks.
#[tokio::test(start_paused = true)]
async fn a_rematch_keeps_the_time_control() {
    use caro_arena::protocol::OfferKind;
    let server = server();
    let (mut x, mut o, h) = game(&server, json!({"kind": "per_move", "move_ms": 20_000})).await;
    h.send(RoomCmd::Resign {
        who: o.who.clone(),
        re: None,
    })
    .await
    .unwrap();
    h.send(RoomCmd::Offer {
        who: x.who.clone(),
        kind: OfferKind::Rematch,
        re: None,
    })
    .await
    .unwrap();
    h.send(RoomCmd::Respond {
        who: o.who.clone(),
        kind: OfferKind::Rematch,
        accept: true,
        re: None,
    })
    .await
    .unwrap();
    x.drain().await;
    let seen = o.drain().await;
    let news = seen
        .iter()
        .find(|m| m["type"] == "rematch")
        .unwrap_or_else(|| panic!("{seen:?}"));
    let new_room = news["new_room_id"].as_str().unwrap();
    let (summary, _) = server.lobby.room(new_room).unwrap().summary.get();
    assert_eq!(
        serde_json::to_value(summary.time_control).unwrap(),
        json!({"kind": "per_move", "move_ms": 20_000})
    );
    let h2 = server.lobby.room(new_room).unwrap().handle;
    h2.join(o.who.clone(), None, None).await.unwrap();
    let joined = o.drain().await.remove(0);
    assert_eq!(
        joined["room"]["clock"],
        json!({"x": 20_000, "o": 20_000, "running": "x"})
    );
}

/// Quick pairing with a clock: seeks match only with the same time control, the open seek shows
/// it, and the paired room is played with it.
#[tokio::test]
async fn seeks_pair_only_with_the_same_time_control() {
    let server = start(config()).await;
    let (mut alice, _) = server.hello("alice").await;
    let (mut bob, _) = server.hello("bob").await;
    let (mut carol, _) = server.hello("carol").await;
    let blitz = fischer(180_000, 2_000);
    alice
        .ask(
            json!({"type": "seek", "id": 1, "game": "caro", "time_control": blitz}),
            json!({"type": "seeking", "re": 1, "seek_id": "s1"}),
        )
        .await;
    // No clock is another seek: no pair.
    bob.ask(
        json!({"type": "seek", "id": 2, "game": "caro"}),
        json!({"type": "seeking", "re": 2, "seek_id": "s2"}),
    )
    .await;
    let mut w = server.connect().await;
    w.send(json!({"type": "hello", "name": "w"})).await;
    w.recv().await;
    w.send(json!({"type": "watch_lobby"})).await;
    assert_eq!(w.recv().await["type"], "room_list");
    assert_eq!(
        w.recv().await,
        json!({"type": "seeks", "seeks": [
            {"seek_id": "s1", "name": "alice", "game": "caro", "width": 15, "height": 15,
             "rule": "freestyle", "time_control": blitz},
            {"seek_id": "s2", "name": "bob", "game": "caro", "width": 15, "height": 15,
             "rule": "freestyle"}]})
    );
    // A bad time control is refused like in create_room.
    carol
        .ask(
            json!({"type": "seek", "id": 3, "game": "caro", "time_control": {"kind": "x"}}),
            json!({"type": "error", "re": 3, "code": "bad_time_control",
                "message": "time_control: unknown variant `x`, expected one of `none`, `fischer`, `per_move`"}),
        )
        .await;
    // The same clock pairs with alice.
    carol
        .send(json!({"type": "seek", "id": 4, "game": "caro", "time_control": blitz}))
        .await;
    let paired = carol.recv().await;
    assert_eq!(paired["type"], "paired", "{paired}");
    assert_eq!(paired["re"], 4);
    carol
        .send(json!({"type": "join_room", "room_id": paired["room_id"]}))
        .await;
    let joined = carol.recv_skip(&["room_update"]).await;
    assert_eq!(joined["room"]["time_control"], blitz, "{joined}");
    // X's clock runs from the game's start, so a millisecond may have gone from it by now.
    let clock = &joined["room"]["clock"];
    assert_eq!(
        (&clock["o"], &clock["running"]),
        (&json!(180_000), &json!("x")),
        "{joined}"
    );
    let x = clock["x"].as_u64().unwrap();
    assert!((170_000..=180_000).contains(&x), "{joined}");
    server.stop().await;
}
