//! Post-game analysis over real HTTP with a real SQLite file (issue 18, docs/analysis.md): every
//! position of a stored game gets an evaluation, a move that ignores the opponent's four is a
//! blunder at exactly that move, the result survives a restart (judged anew with this build's
//! thresholds as it is served), and the caps, an unknown game and an unfinished one get their
//! typed errors.

mod common;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use caro_arena::config::Config;
use caro_arena::protocol::{Outcome, Reason, Seat, TimeControl};
use caro_arena::store::sqlite::SqliteStore;
use caro_arena::store::{GameCreated, SeatRecord, Store, StoreEvent};
use common::*;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

/// X builds a four on row 7 whose left end O closed at once; O answers near X's stones until
/// its 4th move ignores the four (ply 8); X makes five. The game of `src/analysis.rs`'s test.
const IGNORED_FOUR: [[u8; 2]; 9] = [
    [7, 7],
    [6, 7],
    [8, 7],
    [8, 8],
    [9, 7],
    [9, 8],
    [10, 7],
    [7, 8],
    [11, 7],
];

fn config(analysis: &str) -> Config {
    let text = format!("{}\n[analysis]\n{analysis}\n", config_text("", "", "", ""));
    Config::from_toml(&text).expect("test config")
}

/// Records a game between two humans with `moves`, finished by `result` unless `None`.
fn seed(store: &dyn Store, id: &str, moves: &[[u8; 2]], result: Option<Outcome>) {
    let human = |n: &str| SeatRecord::Human {
        player_id: format!("{n}00"),
        name: n.into(),
    };
    let _ = store.record(StoreEvent::Created(GameCreated {
        room_id: id.into(),
        game: "caro",
        width: 15,
        height: 15,
        rule: Some("freestyle"),
        time_control: TimeControl::None,
        seats: [human("alice"), human("bob")],
        casual: false,
        rated: false,
    }));
    for (i, &cell) in moves.iter().enumerate() {
        let _ = store.record(StoreEvent::Move {
            room_id: id.into(),
            seq: i as u64 + 1,
            seat: if i % 2 == 0 { Seat::X } else { Seat::O },
            cell,
            clock: None,
        });
    }
    if let Some(result) = result {
        let _ = store.record(StoreEvent::Result {
            room_id: id.into(),
            seq: moves.len() as u64 + 1,
            result,
            reason: Reason::Line,
            forfeit: None,
            ratings: Vec::new(),
        });
    }
    store.flush();
}

/// One HTTP request from the local address `from` (the per-player cap counts by address):
/// (status code, body as JSON).
async fn request(addr: SocketAddr, from: Ipv4Addr, method: &str, path: &str) -> (u16, Value) {
    request_as(addr, from, method, path, None).await
}

/// [`request`] with `Authorization: Bearer <token>` when `token` is given.
async fn request_as(
    addr: SocketAddr,
    from: Ipv4Addr,
    method: &str,
    path: &str,
    token: Option<&str>,
) -> (u16, Value) {
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(IpAddr::V4(from), 0)).unwrap();
    let mut s = socket.connect(addr).await.unwrap();
    s.write_all(
        format!(
            "{method} {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let (head, body) = read_response(s).await;
    let code = head.split(' ').nth(1).unwrap().parse().unwrap();
    (code, serde_json::from_str(&body).unwrap_or(Value::Null))
}

const LOCAL: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 1);

/// Polls the analysis until it is done (at most 600 looks, 100 ms apart).
async fn finished(addr: SocketAddr, id: &str) -> Value {
    for _ in 0..600 {
        let (code, body) = request(addr, LOCAL, "GET", &format!("/api/games/{id}/analysis")).await;
        assert_eq!(code, 200, "{body}");
        match body["status"].as_str() {
            Some("done") => return body,
            Some("running") => {
                assert_eq!(body["total"], 10, "{body}");
                assert!(body["done"].as_u64().unwrap() <= 10, "{body}");
            }
            _ => panic!("{body}"),
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the analysis never finished");
}

#[tokio::test]
async fn every_position_is_evaluated_the_ignored_four_is_the_blunder_and_it_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.db");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db).unwrap());
    seed(&*store, "four01", &IGNORED_FOUR, Some(Outcome::X));
    let server = start_with_store(config("nodes_per_position = 200000"), store.clone()).await;

    let (code, body) = request(server.addr, LOCAL, "GET", "/api/games/four01/analysis").await;
    assert_eq!((code, body), (200, json!({"status": "none"})));
    let (code, body) = request(server.addr, LOCAL, "POST", "/api/games/four01/analysis").await;
    assert_eq!(
        (code, body),
        (202, json!({"status": "running", "done": 0, "total": 10}))
    );
    let done = finished(server.addr, "four01").await;
    assert_eq!(done["game"], "four01");
    assert_eq!(
        done["thresholds"],
        json!({"mistake": 500, "blunder": 1500, "cap": 4500})
    );
    assert_eq!(done["analysis"]["nodes_per_position"], 200000);
    let positions = done["analysis"]["positions"].as_array().unwrap();
    assert_eq!(positions.len(), IGNORED_FOUR.len() + 1);
    for (ply, p) in positions.iter().enumerate() {
        assert_eq!(p["ply"], ply, "{p}");
        assert!(
            p["eval"].is_null() != p["mate"].is_null(),
            "one of eval and mate: {p}"
        );
    }
    assert_eq!(
        blunders(positions),
        [8],
        "only O's move that ignores the four"
    );
    // After the blunder X wins in one, at (11, 7), the engine's move and line.
    assert_eq!(positions[8]["mate"], 1);
    assert_eq!(positions[8]["best"], json!({"x": 11, "y": 7}));
    assert_eq!(positions[8]["pv"][0], json!({"x": 11, "y": 7}));
    // The last position is won on the board: no search, no move.
    assert_eq!(
        positions[9],
        json!({"ply": 9, "eval": null, "mate": 0, "best": null, "pv": [], "depth": 0, "nodes": 0})
    );
    // Every searched position has the engine's move, at the head of its line.
    for p in &positions[..9] {
        assert_eq!(p["best"], p["pv"][0], "{p}");
    }

    server.stop().await;
    drop(store);
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db).unwrap());
    let server = start_with_store(config(""), store.clone()).await;
    let (code, again) = request(server.addr, LOCAL, "GET", "/api/games/four01/analysis").await;
    assert_eq!(code, 200);
    assert_eq!(again, done, "the stored analysis, after a restart");

    // The same analysis as a build with other thresholds stored it (the blunder unmarked, the
    // first move marked): served, it is judged with this build's thresholds, as reported.
    let mut old = done["analysis"].clone();
    let stored = old["positions"].as_array_mut().unwrap();
    stored[8].as_object_mut().unwrap().remove("judgement");
    stored[1]["judgement"] = json!("mistake");
    let _ = store.record(StoreEvent::Analysis {
        game_id: "four01".into(),
        nodes_per_position: 200000,
        json: old.to_string(),
    });
    store.flush();
    let (code, judged) = request(server.addr, LOCAL, "GET", "/api/games/four01/analysis").await;
    assert_eq!(code, 200);
    assert_eq!(judged, done, "a stored analysis, judged anew");
    server.stop().await;
}

#[tokio::test]
async fn unknown_and_unfinished_games_and_the_caps_get_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.path().join("g.db")).unwrap());
    for id in ["game01", "game02", "game03"] {
        seed(&*store, id, &IGNORED_FOUR, Some(Outcome::X));
    }
    seed(&*store, "going01", &IGNORED_FOUR[..4], None);
    // A budget no test waits for: the first analyses are still running when the others ask.
    let server = start_with_store(
        config("nodes_per_position = 100000000\nper_player = 1\nmax_queued = 2"),
        store.clone(),
    )
    .await;
    let error = |code: &str, message: &str| json!({"error": {"code": code, "message": message}});

    for method in ["GET", "POST"] {
        let (code, body) = request(server.addr, LOCAL, method, "/api/games/nope01/analysis").await;
        assert_eq!((code, body), (404, error("not_found", "no such game")));
    }
    let (code, body) = request(server.addr, LOCAL, "POST", "/api/games/going01/analysis").await;
    assert_eq!(
        (code, body),
        (
            409,
            error("game_not_finished", "only a finished game can be analysed")
        )
    );

    let (code, _) = request(server.addr, LOCAL, "POST", "/api/games/game01/analysis").await;
    assert_eq!(code, 202);
    let (code, body) = request(server.addr, LOCAL, "POST", "/api/games/game01/analysis").await;
    assert_eq!(
        (code, body),
        (
            409,
            error(
                "analysis_running",
                "an analysis of this game is already running"
            )
        )
    );
    let (code, body) = request(server.addr, LOCAL, "POST", "/api/games/game02/analysis").await;
    assert_eq!(
        (code, body),
        (
            429,
            error(
                "too_many_analyses",
                "you have as many analyses queued as allowed; wait for one to finish"
            )
        )
    );
    // Another address may queue one, up to the server-wide cap.
    let other = Ipv4Addr::new(127, 0, 0, 2);
    let (code, _) = request(server.addr, other, "POST", "/api/games/game02/analysis").await;
    assert_eq!(code, 202);
    let third = Ipv4Addr::new(127, 0, 0, 3);
    let (code, body) = request(server.addr, third, "POST", "/api/games/game03/analysis").await;
    assert_eq!(
        (code, body),
        (
            429,
            error(
                "analysis_queue_full",
                "the server's analysis queue is full; try again later"
            )
        )
    );
    let (code, body) = request(server.addr, LOCAL, "GET", "/api/games/game01/analysis").await;
    assert_eq!(code, 200);
    assert_eq!(body["status"], "running", "{body}");
    assert_eq!(body["total"], 10, "{body}");
    // Shutdown stops the running analyses (their searches see the stop flag) and stores nothing.
    server.stop().await;
    assert_eq!(store.analysis("game01").unwrap(), None);
}

/// A logged-in player's analyses count against its account wherever it asks from (its bearer
/// token names it); a request without one counts against its address.
#[tokio::test]
async fn the_per_player_cap_counts_an_account_across_addresses() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.path().join("g.db")).unwrap());
    for id in ["game01", "game02", "game03"] {
        seed(&*store, id, &IGNORED_FOUR, Some(Outcome::X));
    }
    let server = start_with_store(
        config("nodes_per_position = 100000000\nper_player = 1\nmax_queued = 4"),
        store.clone(),
    )
    .await;
    let (_c, token, _) = common::rated::register(&server, "Ann").await;
    let path = |id: &str| format!("/api/games/{id}/analysis");
    let (code, _) = request_as(server.addr, LOCAL, "POST", &path("game01"), Some(&token)).await;
    assert_eq!(code, 202);
    let other = Ipv4Addr::new(127, 0, 0, 2);
    let (code, body) = request_as(server.addr, other, "POST", &path("game02"), Some(&token)).await;
    assert_eq!(
        (code, &body["error"]["code"]),
        (429, &json!("too_many_analyses"))
    );
    // The same address without the token: the address's own count, still free.
    let (code, _) = request(server.addr, LOCAL, "POST", &path("game02")).await;
    assert_eq!(code, 202);
    // A token that names no account counts by address too.
    let (code, body) = request_as(server.addr, LOCAL, "POST", &path("game03"), Some("nope")).await;
    assert_eq!(
        (code, &body["error"]["code"]),
        (429, &json!("too_many_analyses"))
    );
    server.stop().await;
}

#[tokio::test]
async fn the_same_game_gets_the_same_analysis_whatever_was_searched_before() {
    // The search threads keep their engines (and tables) from search to search; an analysis
    // must not depend on what they searched before: the same moves, analysed twice on one server
    // (and after a bot-sized search of the first copy), give the same positions.
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.path().join("games.db")).unwrap());
    seed(&*store, "first", &IGNORED_FOUR, Some(Outcome::X));
    seed(&*store, "again", &IGNORED_FOUR, Some(Outcome::X));
    let server = start_with_store(config("nodes_per_position = 3000"), store.clone()).await;
    let mut analyses = Vec::new();
    for id in ["first", "again"] {
        let (code, _) = request(
            server.addr,
            LOCAL,
            "POST",
            &format!("/api/games/{id}/analysis"),
        )
        .await;
        assert_eq!(code, 202);
        analyses.push(finished(server.addr, id).await["analysis"]["positions"].clone());
    }
    assert_eq!(analyses[0], analyses[1]);
    server.stop().await;
}

/// `search.idle_threads = 2` (docs/bots.md, "Threads on idle cores"): an analysis alone on the
/// server searches its positions with two threads. Its numbers may then differ from run to run,
/// but every position is still evaluated, each searched one with its move at the head of its
/// line, and O's ignored four is still the one blunder.
#[tokio::test]
async fn idle_threads_analyse_every_position_and_find_the_blunder() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.path().join("games.db")).unwrap());
    seed(&*store, "smp001", &IGNORED_FOUR, Some(Outcome::X));
    let text = format!(
        "{}\n[analysis]\nnodes_per_position = 100000\n",
        config_text("", "", "", "idle_threads = 2")
    );
    let config = Config::from_toml(&text).expect("test config");
    assert_eq!(config.search.idle_threads, 2);
    let server = start_with_store(config, store.clone()).await;
    let (code, _) = request(server.addr, LOCAL, "POST", "/api/games/smp001/analysis").await;
    assert_eq!(code, 202);
    let done = finished(server.addr, "smp001").await;
    let positions = done["analysis"]["positions"].as_array().unwrap();
    assert_eq!(positions.len(), IGNORED_FOUR.len() + 1);
    assert_eq!(
        blunders(positions),
        [8],
        "only O's move that ignores the four"
    );
    assert_eq!(positions[8]["best"], json!({"x": 11, "y": 7}));
    for p in &positions[..9] {
        assert_eq!(p["best"], p["pv"][0], "{p}");
    }
    server.stop().await;
}

/// The plies an analysis marks as blunders.
fn blunders(positions: &[Value]) -> Vec<u64> {
    positions
        .iter()
        .filter(|p| p["judgement"] == "blunder")
        .map(|p| p["ply"].as_u64().unwrap())
        .collect()
}
