//! Persistence with real SQLite files: a game survives an in-process restart and a real
//! `kill -9` of the server binary, the replay API answers exactly, the `.psq` export reads back
//! to the same result, migrations run from an empty file and from schema v1, and a bad database
//! path stops the server at start.

mod common;

use std::net::SocketAddr;
use std::process::{Child, Command};
use std::sync::Arc;

use caro_arena::store::sqlite::{self, SqliteStore};
use caro_arena::store::{hash_token, Store};
use common::scripted::*;
use common::*;
use futures::StreamExt;
use serde_json::{json, Value};

#[tokio::test]
async fn moves_survive_an_in_process_restart_and_the_replay_api_answers_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.db");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db).unwrap());
    let server = start_with_store(config(), store.clone()).await;
    let (mut alice, mut bob, room, wa, wb) = seated(server.addr).await;
    let (ta, tb) = (token(&wa), token(&wb));
    play_moves(&mut alice, &mut bob, &room, 0..5).await;
    server.stop().await;
    drop(store); // joins the writer: the file is closed
    drop((alice, bob));

    // The file holds the tokens' SHA-256 only: a copied database hands out no identities.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let hashes: Vec<String> = conn
        .prepare("SELECT token_hash FROM sessions ORDER BY token_hash")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut expected = vec![hash_token(&ta), hash_token(&tb)];
    expected.sort();
    assert_eq!(hashes, expected);
    let raw = std::fs::read(&db).unwrap();
    let wal = std::fs::read(db.with_extension("db-wal")).unwrap_or_default();
    for token in [&ta, &tb] {
        for bytes in [&raw, &wal] {
            assert!(!bytes.windows(token.len()).any(|w| w == token.as_bytes()));
        }
    }
    drop(conn);

    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db).unwrap());
    let server = start_with_store(config(), store.clone()).await;
    let (mut alice, _, mut ja) = resume(server.addr, &ta).await;
    // Bob is held as away since the restart, on his turn: his countdown is the grace period.
    let away = take_countdowns(&mut ja);
    assert!(
        away[0].is_none() && away[1].is_some_and(|ms| ms <= 60_000),
        "{away:?}"
    );
    assert_eq!(
        ja,
        json!({"type": "room_joined", "you": {"role": "player", "seat": "x"},
            "room": {"room_id": room, "game": "caro", "width": 15, "height": 15,
            "rule": "freestyle", "win_length": 5, "status": "playing",
            "players": {"x": human("alice", true), "o": human("bob", false)},
            "spectators": 0, "moves": moves_json(5), "turn": "o", "seq": 5}})
    );
    let (mut bob, _, jb) = resume(server.addr, &tb).await;
    assert_eq!(jb["room"]["moves"], moves_json(5));
    assert_eq!(jb["you"]["seat"], "o");
    finish(&mut alice, &mut bob, &room, 5).await;

    // The replay API: the list, the game with its moves, the exports.
    let (head, body) = http_get(server.addr, "/api/games?limit=5").await;
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    let list: Value = serde_json::from_str(&body).unwrap();
    let g = &list["games"][0];
    let (created, finished) = (g["created_at"].clone(), g["finished_at"].clone());
    assert!(created.as_i64().unwrap() <= finished.as_i64().unwrap());
    let summary = json!({"id": room, "game": "caro", "width": 15, "height": 15,
        "rule": "freestyle",
        "players": {"x": {"kind": "human", "player_id": g["players"]["x"]["player_id"],
                          "name": "alice"},
                    "o": {"kind": "human", "player_id": g["players"]["o"]["player_id"],
                          "name": "bob"}},
        "result": "x", "reason": "line", "moves": 9,
        "created_at": created, "finished_at": finished});
    assert_eq!(list, json!({"games": [summary.clone()], "next": null}));
    let player = g["players"]["o"]["player_id"].as_str().unwrap();
    let (_, body) = http_get(server.addr, &format!("/api/games?player={player}")).await;
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"games": [summary.clone()], "next": null})
    );
    let (_, body) = http_get(server.addr, "/api/games?player=nobody").await;
    assert_eq!(body, r#"{"games":[],"next":null}"#);
    let before = finished.as_i64().unwrap();
    let (_, body) = http_get(server.addr, &format!("/api/games?before={before}")).await;
    assert_eq!(body, r#"{"games":[],"next":null}"#);
    // A full page names the cursor of its last game; the page after it is empty here.
    let (_, body) = http_get(server.addr, "/api/games?limit=1").await;
    let page: Value = serde_json::from_str(&body).unwrap();
    let next = format!("{before}:{room}");
    assert_eq!(page, json!({"games": [summary.clone()], "next": next}));
    let (_, body) = http_get(server.addr, &format!("/api/games?before={next}")).await;
    assert_eq!(body, r#"{"games":[],"next":null}"#);
    for bad in ["limit=0", "limit=101", "before=soon", "before=12:"] {
        let (head, body) = http_get(server.addr, &format!("/api/games?{bad}")).await;
        assert!(head.starts_with("HTTP/1.1 400"), "{bad}: {head}");
        assert!(body.contains(r#""code":"bad_query""#), "{bad}: {body}");
    }

    let (_, body) = http_get(server.addr, &format!("/api/games/{room}")).await;
    // Regression: a flattened summary once wrote "moves" twice (the count, then the list).
    assert_eq!(body.matches("\"moves\"").count(), 1, "{body}");
    let game: Value = serde_json::from_str(&body).unwrap();
    let mut expected = summary.clone();
    let moves: Vec<Value> = (0..9)
        .map(|i| {
            let (x, y) = script(i);
            json!({"x": x, "y": y, "seq": i + 1, "at": game["moves"][i]["at"]})
        })
        .collect();
    expected["moves"] = Value::Array(moves);
    assert_eq!(game, expected);
    let (head, _) = http_get(server.addr, "/api/games/nosuchgame").await;
    assert!(head.starts_with("HTTP/1.1 404"), "{head}");

    let (head, psq) = http_get(server.addr, &format!("/api/games/{room}.psq")).await;
    assert!(head.contains("Content-Type: text/plain"), "{head}");
    assert!(
        head.contains(&format!(
            "Content-Disposition: attachment; filename=\"caro-{room}.psq\""
        )),
        "{head}"
    );
    assert!(psq.starts_with("Piskvorky 15x15, 11:11, 0\n1,1,"), "{psq}");
    let record = caro_arena::store::psq::read(&psq).unwrap();
    let mut board = caro_engine::Board::new(caro_engine::Rules::caro_default());
    let mut status = caro_engine::Status::Ongoing;
    for (x, y) in &record.moves {
        status = board.try_play(caro_engine::Move::new(*x, *y)).unwrap();
    }
    assert_eq!(record.moves.len(), 9);
    assert_eq!(status, caro_engine::Status::Won(caro_engine::Player::X));

    let (head, body) = http_get(server.addr, &format!("/api/games/{room}.json")).await;
    assert!(head.contains("attachment"), "{head}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), expected);
    server.stop().await;
}

/// The real binary with a config whose database is `db`; returns it and its address.
fn spawn_server(dir: &std::path::Path, db: &std::path::Path) -> (Child, SocketAddr) {
    spawn_binary(
        dir,
        &format!(
            "[server]\nlog = \"warn\"\n[rooms]\ngrace_ms = 30000\n[search]\nmin_move_ms = 0\n\
             [store]\npath = {:?}\n",
            db.display().to_string()
        ),
    )
}

#[tokio::test]
async fn kill_9_mid_game_loses_no_acknowledged_move() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data").join("games.db");
    let (mut child, addr) = spawn_server(dir.path(), &db);
    // Busy play: two bot-vs-bot games write moves all along, watched by carol.
    let mut carol = connect(addr).await;
    carol.send(json!({"type": "hello", "name": "carol"})).await;
    carol.recv().await;
    let mut bot_rooms = Vec::new();
    for _ in 0..2 {
        let (_, id) = create(
            &mut carol,
            json!({"type": "create_room", "game": "caro", "x": {"bot": "beginner"},
                "o": {"bot": "beginner"}}),
        )
        .await;
        bot_rooms.push(id);
    }
    // Every bot move carol is told of was acknowledged: it must be in the database.
    let mut seen: std::collections::HashMap<String, Vec<Value>> = Default::default();
    fn note(seen: &mut std::collections::HashMap<String, Vec<Value>>, v: &Value) {
        if v["type"] == "move" {
            let id = v["room_id"].as_str().unwrap().to_string();
            seen.entry(id).or_default().push(json!([v["x"], v["y"]]));
        }
    }
    // Two moves of each bot game told before the kill, so the check below has something to
    // check in every room.
    while bot_rooms
        .iter()
        .any(|id| seen.get(id).map_or(0, Vec::len) < 2)
    {
        let v = carol.recv_skip(&["bot_thinking", "room_update"]).await;
        note(&mut seen, &v);
    }
    let (mut alice, mut bob, room, wa, wb) = seated(addr).await;
    let (ta, tb) = (token(&wa), token(&wb));
    // Moves as fast as acks come back, then SIGKILL right after the last acknowledgement.
    play_moves(&mut alice, &mut bob, &room, 0..6).await;
    child.kill().unwrap(); // SIGKILL on unix
    child.wait().unwrap();
    drop((alice, bob));
    // And what carol received up to the kill.
    while let Ok(Some(Ok(m))) =
        tokio::time::timeout(std::time::Duration::from_secs(5), carol.ws.next()).await
    {
        if let tokio_tungstenite::tungstenite::Message::Text(t) = m {
            note(&mut seen, &serde_json::from_str(t.as_str()).unwrap());
        }
    }

    // The file opens cleanly.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    drop(conn);

    let (mut child, addr) = spawn_server(dir.path(), &db);
    let (mut alice, _, ja) = resume(addr, &ta).await;
    let (mut bob, _, jb) = resume(addr, &tb).await;
    assert_eq!(ja["room"]["moves"], moves_json(6));
    assert_eq!(jb["room"]["moves"], moves_json(6));
    assert_eq!(ja["room"]["seq"], 6);
    alice.recv_skip(&[]).await; // room_update: bob is back
    finish(&mut alice, &mut bob, &room, 6).await;
    let (_, body) = http_get(addr, &format!("/api/games/{room}")).await;
    let game: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(game["moves"].as_array().unwrap().len(), 9);
    assert_eq!(game["result"], "x");
    for id in &bot_rooms {
        let (_, body) = http_get(addr, &format!("/api/games/{id}")).await;
        let game: Value = serde_json::from_str(&body).unwrap();
        let stored: Vec<Value> = game["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| json!([m["x"], m["y"]]))
            .collect();
        let told = &seen[id];
        assert!(told.len() >= 2, "room {id}: told {told:?}");
        assert!(
            stored.len() >= told.len() && stored[..told.len()] == told[..],
            "room {id}: told {told:?}, stored {stored:?}"
        );
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// The schema version a database file says it is at.
fn user_version(conn: &rusqlite::Connection) -> u32 {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn migrations_run_from_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("new.db");
    std::fs::write(&db, b"").unwrap();
    drop(SqliteStore::open(&db).unwrap());
    let conn = rusqlite::Connection::open(&db).unwrap();
    let v = user_version(&conn);
    assert_eq!(v, sqlite::schema_version());
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn migration_from_schema_v1_keeps_the_games() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v1.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(sqlite::MIGRATIONS[0]).unwrap();
        conn.execute_batch(
            "PRAGMA user_version = 1;
             INSERT INTO games (id, game, width, height, rule, created_at, finished_at, result,
                                reason)
                 VALUES ('old1', 'tictactoe', 3, 3, NULL, 1000, 2000, 'draw', 'board_full');
             INSERT INTO seats VALUES ('old1', 'x', 'human', 'pa', 'ann', NULL);
             INSERT INTO seats VALUES ('old1', 'o', 'bot', NULL, NULL, 'quick');
             INSERT INTO moves VALUES ('old1', 1, 'x', 1, 1, 1500);",
        )
        .unwrap();
    }
    let store = SqliteStore::open(&db).unwrap();
    let g = store.game("old1").unwrap().unwrap();
    assert_eq!(
        serde_json::to_value(&g).unwrap(),
        json!({"id": "old1", "game": "tictactoe", "width": 3, "height": 3, "rule": null,
            "players": {"x": {"kind": "human", "player_id": "pa", "name": "ann"},
                        "o": {"kind": "bot", "level": "quick"}},
            "result": "draw", "reason": "board_full", "moves": [{"x": 1, "y": 1, "seq": 1,
            "at": 1500}], "created_at": 1000, "finished_at": 2000})
    );
    drop(store);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let v = user_version(&conn);
    assert_eq!(v, sqlite::schema_version());
    let n: u32 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name = 'sessions'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 1);
}

/// A forfeit's fault and detail are kept with the result, in a database created at schema v2
/// (before the columns existed) and migrated when the server opened it.
#[test]
fn a_forfeit_keeps_its_fault_and_detail_through_the_migration_to_v3() {
    use caro_arena::protocol::{Outcome, Reason, Seat};
    use caro_arena::store::{ForfeitRecord, GameCreated, SeatRecord, StoreEvent};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v2.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(sqlite::MIGRATIONS[0]).unwrap();
        conn.execute_batch(sqlite::MIGRATIONS[1]).unwrap();
        conn.execute_batch("PRAGMA user_version = 2;").unwrap();
    }
    let store = SqliteStore::open(&db).unwrap();
    let created = |id: &str| {
        StoreEvent::Created(GameCreated {
            room_id: id.into(),
            game: "caro",
            width: 9,
            height: 9,
            rule: Some("caro"),
            time_control: caro_arena::protocol::TimeControl::None,
            seats: [
                SeatRecord::Human {
                    player_id: "p1".into(),
                    name: "ann".into(),
                },
                SeatRecord::Bot {
                    level: "garbage".into(),
                },
            ],
            casual: false,
            rated: false,
        })
    };
    for id in ["forfeited", "resigned"] {
        let _ = store.record(created(id));
        let _ = store.record(StoreEvent::Move {
            room_id: id.into(),
            seq: 1,
            seat: Seat::X,
            cell: [4, 4],
            clock: None,
        });
    }
    let _ = store.record(StoreEvent::Result {
        room_id: "forfeited".into(),
        seq: 2,
        result: Outcome::X,
        reason: Reason::Forfeit,
        forfeit: Some(ForfeitRecord {
            fault: "garbage".into(),
            detail: "answered \"I resign\", which is not a move".into(),
        }),
        ratings: Vec::new(),
    });
    let _ = store.record(StoreEvent::Result {
        room_id: "resigned".into(),
        seq: 2,
        result: Outcome::X,
        reason: Reason::Resign,
        forfeit: None,
        ratings: Vec::new(),
    });
    store.flush();
    let g = serde_json::to_value(store.game("forfeited").unwrap().unwrap()).unwrap();
    assert_eq!(
        [&g["result"], &g["reason"], &g["fault"], &g["detail"]],
        [
            &json!("x"),
            &json!("forfeit"),
            &json!("garbage"),
            &json!("answered \"I resign\", which is not a move")
        ]
    );
    // Any other result has neither key, as in `game_over`.
    let g = serde_json::to_value(store.game("resigned").unwrap().unwrap()).unwrap();
    assert_eq!(g["reason"], "resign");
    assert!(g.get("fault").is_none() && g.get("detail").is_none(), "{g}");
    // The listing carries them too.
    let listed = store
        .list_games(&caro_arena::store::GameQuery {
            player: Some("p1".into()),
            limit: 10,
            before: None,
        })
        .unwrap();
    let forfeited = listed.iter().find(|g| g.id == "forfeited").unwrap();
    assert_eq!(forfeited.fault.as_deref(), Some("garbage"));
    drop(store);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let v = user_version(&conn);
    assert_eq!(v, sqlite::schema_version(), "migrated to the newest schema");
}

#[test]
fn a_corrupt_or_unwritable_database_fails_at_start_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, vec![0x55u8; 8192]).unwrap();
    let e = SqliteStore::open(&junk).err().unwrap().to_string();
    assert!(e.contains("not a database"), "{e}");

    // A directory where a file is: the parent cannot be created.
    let file = dir.path().join("plain");
    std::fs::write(&file, b"x").unwrap();
    let e = SqliteStore::open(&file.join("games.db"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("plain"), "{e}");

    // The binary says so and exits 1 instead of running without persistence, for both.
    let unwritable = file.join("games.db");
    for (path, why) in [(&junk, "not a database"), (&unwritable, "plain")] {
        let cfg = dir.path().join("bad.toml");
        std::fs::write(
            &cfg,
            format!("[store]\npath = {:?}\n", path.display().to_string()),
        )
        .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_caro-arena"))
            .arg("--config")
            .arg(&cfg)
            .args(["--bind", "127.0.0.1:0"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", path.display());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("caro-arena: cannot open the game database") && err.contains(why),
            "{err}"
        );
    }
}

#[tokio::test]
async fn a_restored_bot_plays_its_turn_and_absent_players_lose_as_abandoned() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.db");
    // A slow bot, so the server stops while it is thinking.
    let slow = config_with("", "", "", "min_move_ms = 5000");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db).unwrap());
    let server = start_with_store(slow, store.clone()).await;
    let mut ann = connect(server.addr).await;
    ann.send(json!({"type": "hello", "name": "ann"})).await;
    let token = ann.recv().await["token"].as_str().unwrap().to_string();
    let (_, room) = create(
        &mut ann,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": {"bot": "quick"}}),
    )
    .await;
    ann.send(json!({"type": "move", "id": 1, "room_id": room, "x": 7, "y": 7}))
        .await;
    assert_eq!(ann.event().await["re"], 1);
    server.stop().await;
    drop((store, ann));

    // The bot had the turn: after the restart it plays with nobody connected.
    let quick = config_with("", "", "grace_ms = 30000", "");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db).unwrap());
    let server = start_with_store(quick, store.clone()).await;
    let (mut ann, _, joined) = resume(server.addr, &token).await;
    assert_eq!(joined["room"]["room_id"], room);
    if joined["room"]["moves"].as_array().unwrap().len() == 1 {
        let mv = ann.event().await;
        assert_eq!(mv["type"], "move", "{mv}");
        assert_eq!(mv["seat"], "o");
        assert_eq!(mv["seq"], 2);
    } else {
        assert_eq!(joined["room"]["seq"], 2);
        assert_eq!(joined["room"]["turn"], "x");
    }
    server.stop().await;
    drop((store, ann));

    // Nobody comes back: X, to move and away, loses by abandonment once the grace runs out.
    let short = config_with("", "", "grace_ms = 200", "");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db).unwrap());
    let server = start_with_store(short, store.clone()).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let (_, body) = http_get(server.addr, &format!("/api/games/{room}")).await;
        let g: Value = serde_json::from_str(&body).unwrap();
        if !g["result"].is_null() {
            assert_eq!(g["result"], "o");
            assert_eq!(g["reason"], "abandoned");
            assert_eq!(g["moves"].as_array().unwrap().len(), 2);
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "not abandoned: {g}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    server.stop().await;
}

/// Creates games and sessions, but every move's commit fails (a full disk).
struct FailingMoves;

impl Store for FailingMoves {
    fn record(&self, event: caro_arena::store::StoreEvent) -> caro_arena::store::Commit {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let r = match event {
            caro_arena::store::StoreEvent::Move { .. } => Err("disk full".to_string()),
            _ => Ok(()),
        };
        let _ = tx.send(r);
        caro_arena::store::Commit::pending(rx)
    }
}

#[tokio::test]
async fn a_move_that_cannot_be_recorded_is_never_announced() {
    let server = start_with_store(config(), Arc::new(FailingMoves)).await;
    let (mut alice, mut bob, room, _, _) = seated(server.addr).await;
    alice
        .send(json!({"type": "move", "id": 1, "room_id": room, "x": 7, "y": 7}))
        .await;
    // No move, no acknowledgement: the room closes instead.
    assert_eq!(
        alice.recv().await,
        json!({"type": "room_closed", "room_id": room})
    );
    assert_eq!(
        bob.recv().await,
        json!({"type": "room_closed", "room_id": room})
    );
    server.stop().await;
}

/// Commits everything at once except a game's result, which waits until the test releases it.
#[derive(Default)]
struct HeldResults {
    held: std::sync::Mutex<Vec<tokio::sync::oneshot::Sender<Result<(), String>>>>,
}

impl HeldResults {
    /// Commits the held results; returns how many there were.
    fn release(&self) -> usize {
        let held = std::mem::take(&mut *self.held.lock().unwrap());
        let n = held.len();
        for tx in held {
            let _ = tx.send(Ok(()));
        }
        n
    }
}

impl Store for HeldResults {
    fn record(&self, event: caro_arena::store::StoreEvent) -> caro_arena::store::Commit {
        let (tx, rx) = tokio::sync::oneshot::channel();
        match event {
            caro_arena::store::StoreEvent::Result { .. } => self.held.lock().unwrap().push(tx),
            _ => {
                let _ = tx.send(Ok(()));
            }
        }
        caro_arena::store::Commit::pending(rx)
    }
}

/// Regression: leaving a game in progress resigns it, and `left` once went out as soon as the
/// room had handled the leave, before the resignation was on disk: a crash then brought the game
/// back unfinished although the leaver had been told it was over.
#[tokio::test]
async fn left_is_sent_only_once_the_resignation_is_recorded() {
    let store = Arc::new(HeldResults::default());
    let server = start_with_store(config(), store.clone()).await;
    let (mut alice, mut bob, room, _, _) = seated(server.addr).await;
    play(&mut alice, &mut bob, &room, 0).await;
    alice
        .send(json!({"type": "leave_room", "id": 9, "room_id": room}))
        .await;
    // Nothing reaches alice or bob while the result is not durable.
    let quiet = tokio::time::timeout(std::time::Duration::from_millis(300), alice.recv()).await;
    assert!(
        quiet.is_err(),
        "answered before the result was recorded: {quiet:?}"
    );
    let quiet = tokio::time::timeout(std::time::Duration::from_millis(50), bob.recv()).await;
    assert!(
        quiet.is_err(),
        "announced before the result was recorded: {quiet:?}"
    );
    assert_eq!(store.release(), 1);
    assert_eq!(
        alice.recv().await,
        json!({"type": "left", "re": 9, "room_id": room})
    );
    let over = bob.recv().await;
    assert_eq!(over["type"], "game_over", "{over}");
    assert_eq!(over["result"], "o");
    assert_eq!(over["reason"], "resign");
    server.stop().await;
}

/// The real binary on SIGTERM: every client gets 1001, the process exits 0, and the game it
/// held comes back in the next process with its moves.
#[tokio::test]
async fn sigterm_closes_clients_with_1001_exits_0_and_keeps_the_game() {
    a_signal_closes_clients_with_1001_exits_0_and_keeps_the_game("-TERM").await;
}

/// Ctrl-C at a terminal (SIGINT) shuts down the same way.
#[tokio::test]
async fn sigint_closes_clients_with_1001_exits_0_and_keeps_the_game() {
    a_signal_closes_clients_with_1001_exits_0_and_keeps_the_game("-INT").await;
}

async fn a_signal_closes_clients_with_1001_exits_0_and_keeps_the_game(signal: &str) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.db");
    let (mut child, addr) = spawn_server(dir.path(), &db);
    let (mut alice, mut bob, room, wa, _) = seated(addr).await;
    let ta = token(&wa);
    play(&mut alice, &mut bob, &room, 0).await;
    play(&mut bob, &mut alice, &room, 1).await;
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    for c in [&mut alice, &mut bob] {
        let f = c.closed().await.expect("a close frame");
        assert_eq!(u16::from(f.code), 1001);
    }
    let exit = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert_eq!(exit.code(), Some(0), "{exit:?}");

    let (mut child, addr) = spawn_server(dir.path(), &db);
    let (_alice, _, joined) = resume(addr, &ta).await;
    assert_eq!(joined["room"]["room_id"], room);
    assert_eq!(joined["room"]["moves"], moves_json(2));
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Regression: a restored game whose bot level is gone from the configuration ends at once as
/// abandoned; its `game_over` was held until the room's first event and then sent to a player
/// who had already seen the finished game in the snapshot: a duplicate, and one that went out
/// before the result was on disk.
#[tokio::test]
async fn a_restored_game_whose_bot_is_gone_is_finished_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.db");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db).unwrap());
    let server = start_with_store(config(), store.clone()).await;
    let (mut alice, welcome) = hello_at(server.addr, "alice").await;
    let (_, room) = create(
        &mut alice,
        json!({"type": "create_room", "game": "caro", "x": "me", "o": {"bot": "quick"}}),
    )
    .await;
    alice
        .send(json!({"type": "move", "room_id": room, "x": 7, "y": 7}))
        .await;
    // Alice's move and the bot's answer.
    for _ in 0..2 {
        let m = alice.recv_skip(&["room_update", "bot_thinking"]).await;
        assert_eq!(m["type"], "move", "{m}");
    }
    server.stop().await;
    drop((store, alice));

    // The same file, a configuration without the "quick" level.
    let without_quick = caro_arena::config::Config::from_toml(
        "[bots.strong]\ndescription = \"s\"\ngames = [\"caro\"]\nmax_depth = 2\ntime_ms = 50\n",
    )
    .unwrap();
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db).unwrap());
    let server = start_with_store(without_quick, store.clone()).await;
    let (mut alice, _, joined) = resume(server.addr, welcome["token"].as_str().unwrap()).await;
    assert_eq!(joined["room"]["status"], "finished", "{joined}");
    assert_eq!(joined["room"]["result"], "x");
    assert_eq!(joined["room"]["reason"], "abandoned");
    let (_, body) = http_get(server.addr, &format!("/api/games/{room}")).await;
    let g: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (&g["result"], &g["reason"]),
        (&json!("x"), &json!("abandoned"))
    );
    // No game_over follows the snapshot: the game was over before alice came back.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(300);
    while let Ok(more) = tokio::time::timeout_at(deadline, alice.recv()).await {
        assert_eq!(more["type"], "room_update", "after the snapshot: {more}");
    }
    server.stop().await;
}
