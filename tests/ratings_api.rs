//! The ratings' HTTP API with exact JSON (docs/protocol.md, "HTTP API"): leaderboards and
//! their filter rules, profiles and their games, the 404 and 400 answers, `/api/ratings`; and
//! the schema v9 migration of a v8 file.

mod common;

use caro_arena::store::sqlite::{self, SqliteStore};
use caro_arena::store::{GameQuery, Store};
use common::rated::*;
use common::*;
use serde_json::{json, Value};

async fn get_json(server: &TestServer, path: &str) -> (String, Value) {
    let (status, body) = server.get(path).await;
    let v = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
    (status, v)
}

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// Listed: at least `min_games` (5) rated games in the family, deviation at most 110, a rated
/// game within 30 days; best first, ties by name.
#[tokio::test]
async fn the_leaderboard_lists_established_active_players_best_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("games.db");
    let server = start_with_store(config(), sqlite(&path)).await;
    let mut ids = Vec::new();
    for name in ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay"] {
        ids.push(register(&server, name).await.2);
    }
    server.stop().await;
    let now = caro_arena::store::now_ms();
    let f = "caro-blitz";
    seed(
        &path,
        &[
            (&ids[0], f, 1700.4, 80.0, 0.06, 10, now),  // Ann: listed
            (&ids[1], f, 1800.0, 120.0, 0.06, 30, now), // Bob: too uncertain
            (&ids[2], f, 1900.0, 60.0, 0.06, 4, now),   // Cid: too few games
            (&ids[3], f, 1650.0, 70.0, 0.06, 20, now - 31 * DAY_MS), // Dee: inactive
            (&ids[4], f, 1700.4, 109.6, 0.06, 5, now - 29 * DAY_MS), // Eve: listed, ties Ann
            (&ids[5], "caro-rapid", 2000.0, 50.0, 0.06, 50, now), // Fay: another family
        ],
    );
    let server = start_with_store(config(), sqlite(&path)).await;
    let (status, body) = get_json(&server, "/api/leaderboard?family=caro-blitz").await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(
        body,
        json!({"family": "caro-blitz", "players": [
            {"rank": 1, "name": "Ann", "rating": 1700, "deviation": 80, "games": 10},
            {"rank": 2, "name": "Eve", "rating": 1700, "deviation": 110, "games": 5}]})
    );
    let (_, body) = get_json(&server, "/api/leaderboard?family=caro-blitz&limit=1").await;
    assert_eq!(body["players"].as_array().unwrap().len(), 1);
    let (_, body) = get_json(&server, "/api/leaderboard?family=freestyle-bullet").await;
    assert_eq!(body, json!({"family": "freestyle-bullet", "players": []}));

    let families = "caro-bullet, caro-blitz, caro-rapid, caro-classical, caro-untimed, \
        freestyle-bullet, freestyle-blitz, freestyle-rapid, freestyle-classical, freestyle-untimed";
    let bad = json!({"error": {"code": "bad_family",
        "message": format!("family must be one of {families}")}});
    for path in ["/api/leaderboard", "/api/leaderboard?family=chess-blitz"] {
        let (status, body) = get_json(&server, path).await;
        assert_eq!((status.as_str(), &body), ("HTTP/1.1 400 Bad Request", &bad));
    }
    let (status, body) = get_json(&server, "/api/leaderboard?family=caro-blitz&limit=0").await;
    assert_eq!(status, "HTTP/1.1 400 Bad Request");
    assert_eq!(body["error"]["code"], "bad_query");

    // A profile: every family with a rating, sorted; no games yet.
    let (status, body) = get_json(&server, "/api/players/fay").await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    let joined = body["joined_ms"].as_i64().unwrap();
    assert!(joined > 0 && joined <= now, "{body}");
    assert_eq!(
        body,
        json!({"name": "Fay", "joined_ms": joined,
            "ratings": [{"family": "caro-rapid", "rating": 2000, "deviation": 50,
                "provisional": false, "games": 50, "wins": 50, "draws": 0, "losses": 0}],
            "record": {"wins": 0, "draws": 0, "losses": 0}, "history": []})
    );
    for path in ["/api/players/nobody", "/api/players/nobody/games"] {
        let (status, body) = get_json(&server, path).await;
        assert_eq!(status, "HTTP/1.1 404 Not Found");
        assert_eq!(
            body,
            json!({"error": {"code": "no_such_player", "message": "no player has that name"}})
        );
    }
    let (_, body) = get_json(&server, "/api/ratings").await;
    assert_eq!(
        body,
        json!({"families": families.split(", ").collect::<Vec<_>>(), "bots": []})
    );
    server.stop().await;
}

/// `/api/players/{name}/games` pages like `/api/games?player=`, and includes the games the
/// account played as a guest before registering.
#[tokio::test]
async fn a_players_games_include_those_played_as_a_guest() {
    let server = start(config()).await;
    let (mut ann, w) = server.hello("ann-guest").await;
    let ann_id = w["player_id"].as_str().unwrap().to_string();
    let (mut bob, _) = server.hello("bob").await;
    let (_, _, first) = seated_room(&mut ann, &mut bob, json!({})).await;
    x_wins(&mut ann, &mut bob, &first).await;
    ann.ask(
        json!({"type": "register", "id": 1, "username": "Ann", "password": PASSWORD}),
        json!({"type": "logged_in", "re": 1, "player_id": ann_id, "name": "Ann"}),
    )
    .await;
    let (_, _, second) = seated_room(&mut ann, &mut bob, json!({})).await;
    x_wins(&mut ann, &mut bob, &second).await;

    let (_, all) = get_json(&server, &format!("/api/games?player={ann_id}")).await;
    let (status, mine) = get_json(&server, "/api/players/ANN/games").await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(mine, all);
    let ids: Vec<&str> = mine["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [second.as_str(), first.as_str()]);
    let (_, page) = get_json(&server, "/api/players/ann/games?limit=1").await;
    assert_eq!(page["games"][0]["id"], json!(second));
    let next = page["next"].as_str().unwrap().to_string();
    let (_, page) = get_json(
        &server,
        &format!("/api/players/ann/games?limit=1&before={next}"),
    )
    .await;
    assert_eq!(page["games"][0]["id"], json!(first));
    let (_, p) = get_json(&server, "/api/players/Ann").await;
    assert_eq!(p["record"], json!({"wins": 2, "draws": 0, "losses": 0}));
    server.stop().await;
}

/// The v9 migration adds a column and tables: a v8 file's games and accounts survive, and it
/// has no ratings yet.
#[test]
fn migrating_a_v8_file_keeps_its_games_and_accounts() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.db");
    let conn = common::database_at_version(&db, 8);
    conn.execute_batch(
        "INSERT INTO games (id, game, width, height, rule, created_at, finished_at, result, reason)
             VALUES ('g1', 'caro', 15, 15, 'freestyle', 1, 2, 'x', 'resign');
         INSERT INTO seats VALUES ('g1', 'x', 'human', 'p1', 'ann', NULL);
         INSERT INTO seats VALUES ('g1', 'o', 'human', 'p2', 'ben', NULL);
         INSERT INTO accounts VALUES ('p1', 'Ann', 'ann', 'phc', 5);",
    )
    .unwrap();
    drop(conn);
    let store = SqliteStore::open(&db).unwrap();
    let games = store
        .list_games(&GameQuery {
            limit: 10,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(games.len(), 1);
    assert_eq!((games[0].id.as_str(), games[0].rated), ("g1", false));
    assert_eq!(store.accounts().unwrap().accounts[0].username, "Ann");
    assert_eq!(store.ratings().unwrap(), vec![]);
    let record = store.player_record("p1").unwrap();
    assert_eq!(
        (record.joined_ms, record.wins, record.losses),
        (Some(5), 1, 0)
    );
    drop(store);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let v: u32 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, sqlite::schema_version());
    assert_eq!(v, 9);
}
