//! Ratings over real sockets, HTTP and SQLite files (issue 18, docs/ratings.md): a rated game
//! moves both ratings exactly as the `skillratings` crate's Glicko-2 reference vector says, an
//! aborted, casual or guest game moves none, a game against a bot moves only the human's, and
//! ratings and their history survive a restart.

mod common;

use common::rated::*;
use common::*;
use serde_json::{json, Value};
use skillratings::glicko2::{glicko2, Glicko2Config, Glicko2Rating};
use skillratings::Outcomes;

/// The test config with the `quick` bot rated 1200.
fn rated_config() -> caro_arena::config::Config {
    let mut c = config();
    c.bots.get_mut("quick").unwrap().rating = Some(1200.0);
    c
}

async fn profile(server: &TestServer, name: &str) -> Value {
    let (status, body) = server.get(&format!("/api/players/{name}")).await;
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    serde_json::from_str(&body).unwrap()
}

/// The reference vector of `skillratings`' own `test_glicko2` (from Glickman's paper): a
/// player at 1500 (deviation 200) beats one at 1400 (deviation 30) and goes to 1564 (175); the
/// loser to 1398 (32). Both accounts are seeded to the inputs in a real database, the game is
/// played over sockets, and the outputs are checked on the wire, over HTTP, in the file (to
/// the crate's full precision) and after a restart.
#[tokio::test]
async fn a_rated_game_moves_both_ratings_as_the_glicko2_reference_vector() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("games.db");
    let server = start_with_store(rated_config(), sqlite(&path)).await;
    let (_a, ann_token, ann) = register(&server, "Ann").await;
    let (_b, bob_token, bob) = register(&server, "Bob").await;
    server.stop().await;
    let family = "freestyle-untimed";
    seed(
        &path,
        &[
            (&ann, family, 1500.0, 200.0, 0.06, 4, 1),
            (&bob, family, 1400.0, 30.0, 0.06, 40, 1),
        ],
    );

    let server = start_with_store(rated_config(), sqlite(&path)).await;
    let mut ann_c = resume(&server, &ann_token).await;
    let mut bob_c = resume(&server, &bob_token).await;
    let (jx, _, room) = seated_room(&mut ann_c, &mut bob_c, json!({})).await;
    assert_eq!(jx["room"]["rated"], true, "{jx}");
    let (over, _) = x_wins(&mut ann_c, &mut bob_c, &room).await;
    assert_eq!(
        over,
        json!({"type": "game_over", "room_id": room, "seq": 10, "result": "x",
            "reason": "line", "line": [[0, 7], [1, 7], [2, 7], [3, 7], [4, 7]],
            "ratings": {"x": {"before": 1500, "after": 1564, "delta": 64},
                        "o": {"before": 1400, "after": 1398, "delta": -2}}})
    );
    let p = profile(&server, "ann").await;
    assert_eq!(
        p["ratings"],
        json!([{"family": family, "rating": 1564, "deviation": 175, "provisional": true,
            "games": 5, "wins": 5, "draws": 0, "losses": 0}])
    );
    assert_eq!(p["history"][0]["game_id"], json!(room));
    let p = profile(&server, "BOB").await;
    assert_eq!(
        p["ratings"],
        json!([{"family": family, "rating": 1398, "deviation": 32, "provisional": false,
            "games": 41, "wins": 40, "draws": 0, "losses": 1}])
    );
    server.stop().await;

    // The file holds exactly what the crate computes.
    let (want_ann, want_bob) = glicko2(
        &Glicko2Rating {
            rating: 1500.0,
            deviation: 200.0,
            volatility: 0.06,
        },
        &Glicko2Rating {
            rating: 1400.0,
            deviation: 30.0,
            volatility: 0.06,
        },
        &Outcomes::WIN,
        &Glicko2Config::new(),
    );
    let conn = rusqlite::Connection::open(&path).unwrap();
    for (id, want) in [(&ann, want_ann), (&bob, want_bob)] {
        let got: (f64, f64, f64) = conn
            .query_row(
                "SELECT rating, deviation, volatility FROM ratings WHERE player_id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(got, (want.rating, want.deviation, want.volatility));
    }
    let history: i64 = conn
        .query_row("SELECT COUNT(*) FROM rating_history", [], |r| r.get(0))
        .unwrap();
    assert_eq!(history, 2);
    drop(conn);

    // After a restart: the same ratings, the same history, nothing applied twice.
    let server = start_with_store(rated_config(), sqlite(&path)).await;
    let p = profile(&server, "Ann").await;
    assert_eq!(p["ratings"][0]["rating"], 1564);
    assert_eq!(p["ratings"][0]["games"], 5);
    assert_eq!(
        p["history"],
        json!([{"family": family, "game_id": room, "at_ms": p["history"][0]["at_ms"],
            "rating": 1564, "deviation": 175}])
    );
    assert_eq!(p["record"], json!({"wins": 1, "draws": 0, "losses": 0}));
    server.stop().await;
}

/// Fewer than two moves by a side: an aborted game, whatever ended it.
#[tokio::test]
async fn a_game_resigned_after_one_move_each_changes_no_rating() {
    let server = start(rated_config()).await;
    let (mut ann, _, _) = register(&server, "Ann").await;
    let (mut bob, _, _) = register(&server, "Bob").await;
    let (_, _, room) = seated_room(&mut ann, &mut bob, json!({})).await;
    play(&mut ann, &mut bob, &room, &[(7, 7), (8, 8)]).await;
    ann.send(json!({"type": "resign", "room_id": room})).await;
    let over = bob.event().await;
    assert_eq!(
        over,
        json!({"type": "game_over", "room_id": room, "seq": 3, "result": "o",
            "reason": "resign"})
    );
    for name in ["Ann", "Bob"] {
        assert_eq!(profile(&server, name).await["ratings"], json!([]));
    }
    server.stop().await;
}

#[tokio::test]
async fn casual_games_and_guests_are_never_rated() {
    let server = start(rated_config()).await;
    let (mut ann, _, _) = register(&server, "Ann").await;
    let (mut bob, _, _) = register(&server, "Bob").await;
    let (jx, _, room) = seated_room(&mut ann, &mut bob, json!({"casual": true})).await;
    assert_eq!(jx["room"].get("rated"), None, "{jx}");
    let (over, _) = x_wins(&mut ann, &mut bob, &room).await;
    assert_eq!(over.get("ratings"), None, "{over}");

    let (mut guest, _) = server.hello("guest").await;
    let (jx, jo, room) = seated_room(&mut ann, &mut guest, json!({})).await;
    // Rated while the seat is open (an account may take it), not once a guest has.
    assert_eq!(jx["room"]["rated"], true, "{jx}");
    assert_eq!(jo["room"].get("rated"), None, "{jo}");
    assert_eq!(
        jo["room"]["players"],
        json!({"x": {"name": "Ann", "kind": "human", "connected": true,
                     "rating": {"value": 1500, "provisional": true}},
               "o": {"name": "guest", "kind": "human", "connected": true}})
    );
    let (over, _) = x_wins(&mut ann, &mut guest, &room).await;
    assert_eq!(over.get("ratings"), None, "{over}");

    assert_eq!(profile(&server, "Ann").await["ratings"], json!([]));
    let p = profile(&server, "Ann").await;
    assert_eq!(p["record"], json!({"wins": 2, "draws": 0, "losses": 0}));
    let (status, body) = server.get("/api/players/guest").await;
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"error": {"code": "no_such_player", "message": "no player has that name"}})
    );
    server.stop().await;
}

/// The human's rating moves against the bot's published 1200 (deviation 50); the bot's does
/// not.
#[tokio::test]
async fn a_rated_game_against_a_bot_moves_only_the_humans_rating() {
    let server = start(rated_config()).await;
    let (mut ann, _, _) = register(&server, "Ann").await;
    let (joined, _) = create(
        &mut ann,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": {"bot": "quick"}}),
    )
    .await;
    let room = joined["room"]["room_id"].as_str().unwrap().to_string();
    assert_eq!(joined["room"]["rated"], true, "{joined}");
    assert_eq!(
        joined["room"]["players"]["o"]["rating"],
        json!({"value": 1200, "provisional": false})
    );
    // Two moves each (far from the bot's), then a resignation: a counted loss.
    for (x, y) in [(0, 0), (14, 14)] {
        ann.send(json!({"type": "move", "room_id": room, "x": x, "y": y}))
            .await;
        assert_eq!(ann.event().await["seat"], "x");
        assert_eq!(ann.event().await["seat"], "o");
    }
    ann.send(json!({"type": "resign", "room_id": room})).await;
    let over = ann.event().await;
    let (after, _) = glicko2(
        &Glicko2Rating::new(),
        &Glicko2Rating {
            rating: 1200.0,
            deviation: 50.0,
            volatility: 0.06,
        },
        &Outcomes::LOSS,
        &Glicko2Config::new(),
    );
    let after = after.rating.round() as i64;
    assert_eq!(
        over["ratings"],
        json!({"x": {"before": 1500, "after": after, "delta": after - 1500},
               "o": {"before": 1200, "after": 1200, "delta": 0}})
    );
    assert!(after < 1500);
    let (_, body) = server.get("/api/ratings").await;
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["bots"], json!([{"level": "quick", "rating": 1200}]));
    let p = profile(&server, "Ann").await;
    assert_eq!(p["ratings"][0]["rating"], after);
    assert_eq!(p["ratings"][0]["losses"], 1);
    server.stop().await;
}

/// Bob (1900), Ann (1500, new) and Cid (1560) seek the same terms, in that order: Bob and Ann
/// are too far apart to be paired at once, so both wait (the lobby sees their ratings); Cid is
/// paired with the closest, Ann. Then Dee (1100) waits too, and as Bob's and Dee's gap allowed
/// widens with their wait they are paired with each other.
#[tokio::test]
async fn quick_pairing_takes_the_closest_rating_and_widens_with_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("games.db");
    let mut config = rated_config();
    config.ratings.pairing_widen_per_sec = 0;
    let server = start_with_store(config.clone(), sqlite(&path)).await;
    let mut tokens = Vec::new();
    let mut ids = Vec::new();
    for name in ["Ann", "Bob", "Cid", "Dee"] {
        let (_, token, id) = register(&server, name).await;
        tokens.push(token);
        ids.push(id);
    }
    server.stop().await;
    let f = "freestyle-untimed";
    seed(
        &path,
        &[
            (&ids[1], f, 1900.0, 60.0, 0.06, 30, 1),
            (&ids[2], f, 1560.0, 60.0, 0.06, 30, 1),
            (&ids[3], f, 1100.0, 60.0, 0.06, 30, 1),
        ],
    );
    let server = start_with_store(config, sqlite(&path)).await;
    let (mut w, _) = server.hello("watcher").await;
    w.send(json!({"type": "watch_lobby"})).await;
    assert_eq!(w.recv().await["type"], "room_list");
    let mut c = Vec::new();
    for t in &tokens {
        c.push(resume(&server, t).await);
    }
    let info = |id: &str, name: &str, rating: i64| {
        json!({"seek_id": id, "name": name, "game": "caro", "width": 15, "height": 15,
            "rule": "freestyle", "rating": rating})
    };
    c[1].ask(
        json!({"type": "seek", "id": 1, "game": "caro"}),
        json!({"type": "seeking", "re": 1, "seek_id": "s1"}),
    )
    .await;
    assert_eq!(
        w.recv().await,
        json!({"type": "seeks", "seeks": [info("s1", "Bob", 1900)]})
    );
    c[0].ask(
        json!({"type": "seek", "id": 2, "game": "caro"}),
        json!({"type": "seeking", "re": 2, "seek_id": "s2"}),
    )
    .await;
    assert_eq!(
        w.recv().await,
        json!({"type": "seeks", "seeks": [info("s1", "Bob", 1900), info("s2", "Ann", 1500)]})
    );
    c[2].send(json!({"type": "seek", "id": 3, "game": "caro"}))
        .await;
    let paired = c[2].recv().await;
    assert_eq!(
        (&paired["type"], &paired["re"]),
        (&json!("paired"), &json!(3))
    );
    let other = c[0].recv().await;
    assert_eq!(other["room_id"], paired["room_id"], "{other}");
    assert_eq!(
        w.recv().await,
        json!({"type": "seeks", "seeks": [info("s1", "Bob", 1900)]})
    );
    server.stop().await;

    // The gap widens as they wait: Bob and Dee, 800 apart, are paired by the sweep.
    let mut config = rated_config();
    // 200 + 300 a second: Dee's seek, a moment after Bob's, waits; two seconds later the
    // sweep pairs them.
    config.ratings.pairing_widen_per_sec = 300;
    let server = start_with_store(config, sqlite(&path)).await;
    let mut bob = resume(&server, &tokens[1]).await;
    let mut dee = resume(&server, &tokens[3]).await;
    bob.ask(
        json!({"type": "seek", "id": 1, "game": "caro"}),
        json!({"type": "seeking", "re": 1, "seek_id": "s1"}),
    )
    .await;
    dee.ask(
        json!({"type": "seek", "id": 2, "game": "caro"}),
        json!({"type": "seeking", "re": 2, "seek_id": "s2"}),
    )
    .await;
    let (pb, pd) = (bob.recv().await, dee.recv().await);
    assert_eq!(
        (&pb["type"], &pd["type"]),
        (&json!("paired"), &json!("paired"))
    );
    assert_eq!(pb["room_id"], pd["room_id"]);
    server.stop().await;
}

/// A rated game interrupted by a restart is still rated when it ends, and counts once: the
/// restored room knows it is rated, the lobby and the replay API say so, and the result's
/// rating rows are written with it.
#[tokio::test]
async fn a_rated_game_restored_after_a_restart_counts_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("games.db");
    let server = start_with_store(rated_config(), sqlite(&path)).await;
    let (mut ann, ann_token, _) = register(&server, "Ann").await;
    let (mut bob, bob_token, _) = register(&server, "Bob").await;
    let (_, _, room) = seated_room(&mut ann, &mut bob, json!({})).await;
    play(&mut ann, &mut bob, &room, &[(0, 7), (0, 9), (1, 7), (1, 9)]).await;
    server.stop().await;
    drop((ann, bob));

    let server = start_with_store(rated_config(), sqlite(&path)).await;
    let (_, body) = server.get("/api/rooms").await;
    let rooms: Value = serde_json::from_str(&body).unwrap();
    let provisional = json!({"value": 1500, "provisional": true});
    assert_eq!(
        rooms["rooms"][0],
        json!({"room_id": room, "game": "caro", "width": 15, "height": 15,
            "rule": "freestyle", "status": "playing",
            "players": {"x": {"name": "Ann", "kind": "human", "connected": false,
                              "rating": provisional},
                        "o": {"name": "Bob", "kind": "human", "connected": false,
                              "rating": provisional}},
            "spectators": 0, "moves": 4, "rated": true})
    );
    let mut ann = resume(&server, &ann_token).await;
    assert_eq!(ann.recv_skip(&["room_update"]).await["room"]["rated"], true);
    let mut bob = resume(&server, &bob_token).await;
    assert_eq!(bob.recv_skip(&["room_update"]).await["type"], "room_joined");
    play(
        &mut ann,
        &mut bob,
        &room,
        &[(2, 7), (2, 9), (3, 7), (3, 9), (4, 7)],
    )
    .await;
    let over = ann.event().await;
    assert_eq!(
        over["ratings"],
        json!({"x": {"before": 1500, "after": 1662, "delta": 162},
               "o": {"before": 1500, "after": 1338, "delta": -162}})
    );
    let (_, body) = server.get(&format!("/api/games/{room}")).await;
    let game: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (&game["rated"], &game["result"]),
        (&json!(true), &json!("x"))
    );
    server.stop().await;

    let server = start_with_store(rated_config(), sqlite(&path)).await;
    let p = profile(&server, "Ann").await;
    assert_eq!(p["ratings"][0]["games"], 1);
    assert_eq!(p["history"].as_array().unwrap().len(), 1);
    server.stop().await;
}
