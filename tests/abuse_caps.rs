//! Per-player room caps, and bot-vs-bot games that end when nobody watches (issue 16, item 2).
//!
//! They exist because one connection opened every room the server allowed (`max_rooms = 50`)
//! with master-vs-master games lasting hours, then left: the next player got `too_many_rooms`.
//! Now a player (by player id, whatever its connection) has at most `limits.rooms_per_player`
//! unfinished rooms, `bot_rooms_per_player` of them bot-vs-bot and `bot_games_per_player` against
//! a bot, and a bot-vs-bot game nobody has watched for `rooms.unwatched_bot_game_ms` is aborted.
//! At the server's `limits.max_rooms` a finished room makes way for a new one, so rooms whose
//! games are over (created and finished as fast as the caps allow) never lock others out.
//! No wall-clock assertions: every wait is for an event, under the harness timeout.

mod common;

use common::*;
use serde_json::{json, Value};

/// Caps small enough to reach, and bots that never move within a test (`min_move_ms`: a bot
/// waits that long before answering, cancellably), so no game ends by itself.
fn capped(rooms: &str) -> caro_arena::config::Config {
    config_with(
        "",
        "rooms_per_player = 4\nbot_rooms_per_player = 1\nbot_games_per_player = 2",
        &format!("lobby_update_ms = 20\n{rooms}"),
        "min_move_ms = 600000",
    )
}

fn over(re: u64, n: usize, what: &str) -> Value {
    json!({"type": "error", "re": re, "code": "too_many_rooms_for_player",
    "message": format!(
        "you have as many unfinished {what} as one player may have ({n}); finish one first"
    )})
}

/// `limits.rooms_per_ip` (`n`) refusing a room: in answer to message `re`, or unprompted (a
/// seek's bot fallback).
fn address_over(re: Option<u64>, n: usize) -> Value {
    let mut v = json!({"type": "error", "code": "too_many_rooms_for_player",
    "message": format!(
        "your address has as many unfinished rooms as one address may have ({n}); finish one first"
    )});
    if let Some(re) = re {
        v["re"] = json!(re);
    }
    v
}

fn bot_vs_bot(id: u64) -> Value {
    json!({"type": "create_room", "id": id, "game": "caro", "x": {"bot": "quick"},
        "o": {"bot": "quick"}})
}

fn against_bot(id: u64) -> Value {
    json!({"type": "create_room", "id": id, "game": "caro", "x": "me", "o": {"bot": "quick"}})
}

fn people(id: u64) -> Value {
    json!({"type": "create_room", "id": id, "game": "caro", "x": "me", "o": "open"})
}

/// Sends `msg` and returns the reply, skipping what rooms already joined send meanwhile.
async fn reply(c: &mut Client, msg: Value) -> Value {
    c.send(msg).await;
    c.recv_skip(&["room_update", "bot_thinking", "move"]).await
}

async fn created(c: &mut Client, msg: Value) -> String {
    let v = reply(c, msg).await;
    assert_eq!(v["type"], "room_joined", "{v}");
    v["room"]["room_id"].as_str().unwrap().to_string()
}

/// Waits until a lobby watcher hears that room `id` closed.
async fn closed_in_lobby(watcher: &mut Client, id: &str) {
    loop {
        let v = watcher.recv().await;
        if v["type"] == "lobby_update" && v["removed"].as_array().unwrap().contains(&json!(id)) {
            return;
        }
    }
}

/// The stored record of room `id`'s game (`/api/games/{id}`).
async fn stored(server: &TestServer, id: &str) -> Value {
    let (status, body) = server.get(&format!("/api/games/{id}")).await;
    assert!(status.contains("200"), "{status}");
    serde_json::from_str(&body).unwrap()
}

/// Each cap refuses with its exact error, is shared by every connection of the player, leaves
/// other players alone, and a finished or closed room gives its slot back.
#[tokio::test]
async fn one_player_cannot_take_every_room() {
    let server = start(capped("empty_ttl_ms = 50")).await;
    let (mut a, welcome) = server.hello("hog").await;
    let token = welcome["token"].as_str().unwrap().to_string();

    created(&mut a, bot_vs_bot(1)).await;
    assert_eq!(
        reply(&mut a, bot_vs_bot(2)).await,
        over(2, 1, "bot-vs-bot rooms")
    );
    let vs_bot = created(&mut a, against_bot(3)).await;
    created(&mut a, against_bot(4)).await;
    assert_eq!(
        reply(&mut a, against_bot(5)).await,
        over(5, 2, "games against bots")
    );
    let waiting = created(&mut a, people(6)).await;
    assert_eq!(reply(&mut a, people(7)).await, over(7, 4, "rooms"));

    // A second connection with the same token is the same player: the same counts.
    let mut a2 = server.connect().await;
    a2.send(json!({"type": "hello", "token": token})).await;
    assert_eq!(a2.recv().await["resumed"], true);
    for _ in 0..3 {
        // Its seats: two games against a bot and the waiting room.
        assert_eq!(a2.recv_skip(&["room_update"]).await["type"], "room_joined");
    }
    assert_eq!(reply(&mut a2, people(8)).await, over(8, 4, "rooms"));

    // Someone else is not concerned.
    let (mut b, _) = server.hello("bystander").await;
    created(&mut b, people(1)).await;
    created(&mut b, bot_vs_bot(2)).await;

    // A finished game frees its slot as soon as game_over is out.
    a2.send(json!({"type": "resign", "room_id": vs_bot})).await;
    loop {
        let v = a2.recv().await;
        if v["type"] == "game_over" && v["room_id"] == vs_bot.as_str() {
            break;
        }
    }
    created(&mut a2, against_bot(9)).await;
    assert_eq!(reply(&mut a2, people(10)).await, over(10, 4, "rooms"));

    // A waiting room left empty counts until it closes (`rooms.empty_ttl_ms`), then frees it.
    let (mut watcher, _) = server.hello("watcher").await;
    watcher.send(json!({"type": "watch_lobby"})).await;
    assert_eq!(watcher.recv().await["type"], "room_list");
    a2.send(json!({"type": "leave_room", "id": 11, "room_id": waiting}))
        .await;
    assert_eq!(
        a2.recv_skip(&["room_update", "bot_thinking"]).await["type"],
        "left"
    );
    closed_in_lobby(&mut watcher, &waiting).await;
    created(&mut a2, people(12)).await;
    server.stop().await;
}

/// The hog's bot-vs-bot room, left by its creator with nobody watching, is aborted after
/// `rooms.unwatched_bot_game_ms`: the result is stored (a draw, reason `aborted`), the room
/// closes, and the creator may open another.
#[tokio::test]
async fn an_unwatched_bot_game_ends_and_frees_its_slot() {
    let server = start(capped("unwatched_bot_game_ms = 100")).await;
    let (mut watcher, _) = server.hello("watcher").await;
    watcher.send(json!({"type": "watch_lobby"})).await;
    assert_eq!(watcher.recv().await["type"], "room_list");
    let (mut a, _) = server.hello("hog").await;
    let room = created(&mut a, bot_vs_bot(1)).await;
    assert_eq!(
        reply(&mut a, bot_vs_bot(2)).await,
        over(2, 1, "bot-vs-bot rooms")
    );
    a.send(json!({"type": "leave_room", "id": 3, "room_id": room}))
        .await;
    assert_eq!(
        a.recv_skip(&["room_update", "bot_thinking"]).await["type"],
        "left"
    );

    closed_in_lobby(&mut watcher, &room).await;
    let game = stored(&server, &room).await;
    assert_eq!(
        (&game["result"], &game["reason"]),
        (&json!("draw"), &json!("aborted"))
    );
    created(&mut a, bot_vs_bot(4)).await;
    server.stop().await;
}

/// A bot-vs-bot game restored after a restart has nobody in its room until someone joins: it
/// is aborted like any other unwatched one, not left to hold a bot slot for hours.
#[tokio::test]
async fn a_restored_bot_game_nobody_joins_is_aborted() {
    use caro_arena::store::sqlite::SqliteStore;
    use caro_arena::store::{GameCreated, SeatRecord, Store, StoreEvent};
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(SqliteStore::open(&dir.path().join("games.db")).unwrap());
    let bot = || SeatRecord::Bot {
        level: "quick".into(),
    };
    let _ = store.record(StoreEvent::Created(GameCreated {
        room_id: "restored01".into(),
        game: "caro",
        width: 15,
        height: 15,
        rule: Some("freestyle"),
        time_control: caro_arena::protocol::TimeControl::None,
        seats: [bot(), bot()],
        casual: false,
        rated: false,
    }));
    store.flush();
    let server = start_with_store(capped("unwatched_bot_game_ms = 100"), store).await;
    let (mut watcher, _) = server.hello("watcher").await;
    watcher.send(json!({"type": "watch_lobby"})).await;
    let list = watcher.recv().await;
    assert_eq!(list["type"], "room_list");
    // Restored before the server accepts: listed unless already aborted.
    if list["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["room_id"] == "restored01")
    {
        closed_in_lobby(&mut watcher, "restored01").await;
    }
    let (_, body) = server.get("/api/games/restored01").await;
    let game: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (&game["result"], &game["reason"]),
        (&json!("draw"), &json!("aborted"))
    );
    server.stop().await;
}

/// `x` and `o` in a room whose game `x` resigned: both still in it, read up to `game_over`.
async fn finished_game(server: &TestServer, x: &str, o: &str) -> (Client, Client, String) {
    let (mut a, _) = server.hello(x).await;
    let (mut b, _) = server.hello(o).await;
    let room = created(&mut a, people(1)).await;
    b.send(json!({"type": "join_room", "room_id": room})).await;
    assert_eq!(b.recv().await["type"], "room_joined");
    a.send(json!({"type": "resign", "room_id": room})).await;
    for c in [&mut a, &mut b] {
        while c.recv().await["type"] != "game_over" {}
    }
    (a, b, room)
}

/// At `limits.max_rooms` a new room takes the place of a finished one, an empty one first: its
/// game is recorded and its members hear `room_closed`. Rooms whose games are over (a client
/// creating and finishing games as fast as it may) never keep others from playing; with every
/// room unfinished the server still refuses.
#[tokio::test]
async fn finished_rooms_make_way_for_new_ones_at_the_server_cap() {
    let server = start(config_with(
        "",
        "max_rooms = 3",
        "lobby_update_ms = 20",
        "min_move_ms = 600000",
    ))
    .await;
    let (mut watcher, _) = server.hello("watcher").await;
    watcher.send(json!({"type": "watch_lobby"})).await;
    assert_eq!(watcher.recv().await["type"], "room_list");

    // A finished game its players are still in, one everybody left, one waiting.
    let (mut ann, mut ben, stayed) = finished_game(&server, "ann", "ben").await;
    let (mut cid, mut dan, left) = finished_game(&server, "cid", "dan").await;
    for c in [&mut cid, &mut dan] {
        c.send(json!({"type": "leave_room", "id": 2, "room_id": left}))
            .await;
        assert_eq!(
            c.recv_skip(&["room_update"]).await,
            json!({"type": "left", "re": 2, "room_id": left})
        );
    }
    let (mut eve, _) = server.hello("eve").await;
    created(&mut eve, people(1)).await;

    // The server is full: the empty finished room makes way first...
    let (mut fay, _) = server.hello("fay").await;
    created(&mut fay, people(1)).await;
    closed_in_lobby(&mut watcher, &left).await;
    // ... then the one with its players in it, who hear that it closed.
    let (mut gus, _) = server.hello("gus").await;
    created(&mut gus, people(1)).await;
    for c in [&mut ann, &mut ben] {
        assert_eq!(
            c.recv_skip(&["room_update"]).await,
            json!({"type": "room_closed", "room_id": stayed})
        );
    }
    closed_in_lobby(&mut watcher, &stayed).await;

    // Three rooms waiting for players: nothing makes way.
    let (mut hal, _) = server.hello("hal").await;
    assert_eq!(
        reply(&mut hal, people(5)).await,
        json!({"type": "error", "re": 5, "code": "too_many_rooms",
            "message": "the server has as many rooms as it allows; try again later"})
    );
    // The finished games stay recorded.
    for room in [&stayed, &left] {
        let game = stored(&server, room).await;
        assert_eq!(
            (&game["result"], &game["reason"]),
            (&json!("o"), &json!("resign"))
        );
    }
    server.stop().await;
}

/// The players of one address together have at most `limits.rooms_per_ip` unfinished rooms:
/// sessions cost nothing, so the per-player caps alone would let one client open players until
/// it held every room. Another address is not concerned, and a room that closes gives its place
/// back.
#[tokio::test]
async fn one_address_cannot_take_every_room_with_new_players() {
    let server = start(config_with(
        "",
        "rooms_per_player = 2\nrooms_per_ip = 3",
        "lobby_update_ms = 20\nempty_ttl_ms = 50",
        "min_move_ms = 600000",
    ))
    .await;
    let (mut a, _) = server.hello("first").await;
    let (mut b, _) = server.hello("second").await;
    created(&mut a, people(1)).await;
    let waiting = created(&mut a, people(2)).await;
    created(&mut b, people(1)).await;
    let refused = |re: u64| address_over(Some(re), 3);
    assert_eq!(reply(&mut b, people(2)).await, refused(2));
    // A new player from the same address is no way round it.
    let (mut c, _) = server.hello("third").await;
    assert_eq!(reply(&mut c, people(1)).await, refused(1));
    // Another address is not concerned.
    let (mut d, _) = hello_from("127.0.0.2".parse().unwrap(), server.addr, "elsewhere").await;
    created(&mut d, people(1)).await;
    created(&mut d, people(2)).await;

    // A waiting room left empty closes (`rooms.empty_ttl_ms`) and gives its place back.
    let (mut watcher, _) = server.hello("watcher").await;
    watcher.send(json!({"type": "watch_lobby"})).await;
    assert_eq!(watcher.recv().await["type"], "room_list");
    a.send(json!({"type": "leave_room", "id": 3, "room_id": waiting}))
        .await;
    assert_eq!(a.recv_skip(&["room_update"]).await["type"], "left");
    closed_in_lobby(&mut watcher, &waiting).await;
    created(&mut c, people(2)).await;
    assert_eq!(reply(&mut b, people(3)).await, refused(3));
    server.stop().await;
}

/// Rooms opened for players rather than by `create_room` count against an address too: a
/// rematch against its maker's, a pairing against the address of the seek that completed it,
/// a bot fallback against its seeker's. Without that, an address could finish its rooms and
/// rematch them, or seek bot games, past `limits.rooms_per_ip`.
#[tokio::test]
async fn rematches_and_pairings_count_for_the_address_that_asks() {
    let server = start(config_with(
        "",
        "rooms_per_ip = 2",
        "lobby_update_ms = 20",
        "min_move_ms = 600000",
    ))
    .await;
    let refused = |re: u64| address_over(Some(re), 2);
    let seek_bot = |id: u64| json!({"type": "seek", "id": id, "game": "caro", "bot": "quick", "bot_after_ms": 0});

    // A finished game counts for nobody; its rematch counts for the maker's address.
    let (mut ann, mut ben, room) = finished_game(&server, "ann", "ben").await;
    ann.send(json!({"type": "offer", "id": 1, "room_id": room, "kind": "rematch"}))
        .await;
    ben.send(
        json!({"type": "respond", "id": 2, "room_id": room, "kind": "rematch",
        "accept": true}),
    )
    .await;
    while ann.recv().await["type"] != "rematch" {}

    // A seek that falls back to a bot counts for its seeker's address.
    let (mut cid, _) = server.hello("cid").await;
    cid.send(seek_bot(1)).await;
    assert_eq!(cid.recv().await["type"], "seeking");
    assert_eq!(cid.recv().await["type"], "paired");

    // The address has its two rooms: a new player from it can neither create nor seek one.
    let (mut dan, _) = server.hello("dan").await;
    assert_eq!(reply(&mut dan, people(3)).await, refused(3));
    dan.send(seek_bot(4)).await;
    assert_eq!(dan.recv().await["type"], "seeking");
    assert_eq!(dan.recv().await, address_over(None, 2));
    // Two seekers of the address: the second's completes the pairing, and is refused.
    dan.send(json!({"type": "seek", "id": 5, "game": "caro"}))
        .await;
    assert_eq!(dan.recv().await["type"], "seeking");
    let (mut eve, _) = server.hello("eve").await;
    eve.send(json!({"type": "seek", "id": 6, "game": "caro"}))
        .await;
    assert_eq!(eve.recv().await, refused(6));

    // Another address is not concerned: its seek pairs it with the waiting one.
    let (mut fay, _) = hello_from("127.0.0.2".parse().unwrap(), server.addr, "fay").await;
    fay.send(json!({"type": "seek", "id": 7, "game": "caro"}))
        .await;
    assert_eq!(fay.recv().await["type"], "paired");
    assert_eq!(dan.recv().await["type"], "paired");
    server.stop().await;
}
