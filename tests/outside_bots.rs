//! Outside Gomocup engines as bots, with real processes over real sockets. The scripted fake
//! engine `tests/fake_engines/fake_pbrain.py` (run by `python3`) plays, chatters and misbehaves
//! on demand; the real `pbrain-caro` plays whole games. What is checked: the exact event stream
//! of a game, the exact protocol transcript an engine receives, every misbehaviour ending the
//! game as a forfeit with its reason, a hung engine never holding its room, restarts, the
//! restart rest of a broken command, the pool bound, and shutdown. See docs/bots.md.
//!
//! No test asserts speed: deadlines are generous against engines that answer at once, and the
//! hung and slow engines are far past theirs.

mod common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use common::*;
use serde_json::{json, Value};

const FAKE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fake_engines/fake_pbrain.py"
);

/// A `[bots.<name>]` table that runs the fake engine with `args` through python3.
fn fake_level(name: &str, args: &[&str], time_ms: u64, margin_ms: u64, extra: &str) -> String {
    let mut all = vec![FAKE.to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    // A JSON array of strings is a valid TOML array.
    let args = serde_json::to_string(&all).unwrap();
    format!(
        r#"
[bots.{name}]
description = "The fake engine, {name}"
command = "python3"
args = {args}
time_ms = {time_ms}
margin_ms = {margin_ms}
rules = ["freestyle", "caro"]
min_board = 5
max_board = 20
{extra}
"#
    )
}

/// The lines the fake engine appended to its record file: (pid, event).
fn record(path: &Path) -> Vec<(u32, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|l| {
            let (pid, event) = l.split_once(' ').unwrap();
            (pid.parse().unwrap(), event.to_string())
        })
        .collect()
}

/// The pids of the processes that started, in order.
fn started(rec: &[(u32, String)]) -> Vec<u32> {
    rec.iter()
        .filter(|(_, e)| e == "start")
        .map(|(p, _)| *p)
        .collect()
}

/// Whether a process is still running (Linux: its /proc entry; a reaped process has none, a
/// zombie's state is Z).
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // "pid (comm) state ...": the state follows the last ')'.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Whether a process has stopped running within a few seconds: a killed process needs a moment
/// to die, and one whose parent was killed with it is reaped by init, not by us.
async fn stopped(pid: u32) -> bool {
    for _ in 0..250 {
        if !running(pid) {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    false
}

/// Waits until the fake engine has a position to think about.
async fn thinking(rec: &Path) {
    for _ in 0..500 {
        if record(rec).iter().any(|(_, e)| e == "think") {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("the engine never got the position");
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

async fn play(c: &mut Client, room: &str, x: u8, y: u8) {
    c.send(json!({"type": "move", "room_id": room, "x": x, "y": y}))
        .await;
}

fn a_move(room: &str, seq: u64, seat: &str, (x, y): (u8, u8), turn: Option<&str>) -> Value {
    json!({"type": "move", "room_id": room, "seq": seq, "seat": seat, "x": x, "y": y,
           "turn": turn})
}

fn forfeit(room: &str, seq: u64, winner: &str, fault: &str, detail: &str) -> Value {
    json!({"type": "game_over", "room_id": room, "seq": seq, "result": winner,
           "reason": "forfeit", "fault": fault, "detail": detail})
}

/// The fake engine answers the empty cell nearest the centre of a 9x9 board: these, in order,
/// while X plays along the top row.
const FAKE_MOVES: [(u8, u8); 4] = [(4, 4), (4, 3), (3, 4), (5, 4)];

/// X (the human) plays (0,0)..(4,0) against the fake engine on 9x9 and wins by a line; every
/// event is checked exactly.
async fn human_wins_along_the_top_row(a: &mut Client, room: &str) {
    let mut seq = 0;
    for i in 0..5u8 {
        play(a, room, i, 0).await;
        seq += 1;
        let last = i == 4;
        let turn = if last { None } else { Some("o") };
        assert_eq!(a.event().await, a_move(room, seq, "x", (i, 0), turn));
        if last {
            break;
        }
        seq += 1;
        let bot = FAKE_MOVES[i as usize];
        assert_eq!(a.event().await, a_move(room, seq, "o", bot, Some("x")));
    }
    assert_eq!(
        a.event().await,
        json!({"type": "game_over", "room_id": room, "seq": 10, "result": "x", "reason": "line",
               "line": [[0, 0], [1, 0], [2, 0], [3, 0], [4, 0]]})
    );
}

/// What the engine must receive for its move with the fake engine's stones at `bot` and the
/// human's along the top row, X to have moved `humans` times.
fn expected_transcript(humans: u8, bot: &[(u8, u8)], infos: &[&str]) -> Vec<String> {
    let mut lines = vec!["START 9".to_string()];
    lines.extend(infos.iter().map(|s| s.to_string()));
    lines.push("BOARD".into());
    for i in 0..humans as usize {
        lines.push(format!("{i},0,2"));
        if let Some((x, y)) = bot.get(i) {
            lines.push(format!("{x},{y},1"));
        }
    }
    lines.push("DONE".into());
    lines
}

#[tokio::test]
async fn a_human_beats_an_outside_engine_that_reuses_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("record");
    let bots = fake_level(
        "fake",
        &["good", "--record", path_str(&rec)],
        5000,
        1000,
        "",
    );
    let server = start(config_with_bots("", &bots)).await;
    let (mut a, welcome) = server.hello("a").await;
    let listed = json!({"name": "fake", "description": "The fake engine, fake",
        "games": ["caro"], "rules": ["freestyle", "caro"], "min_board": 5, "max_board": 20,
        "square_only": true});
    let bots = welcome["bots"].as_array().unwrap();
    assert!(bots.contains(&listed), "{welcome}");
    // The built-in levels are listed as before.
    assert!(
        bots.contains(&json!({"name": "quick", "description": "Fast test bot",
        "games": ["caro", "tictactoe"]}))
    );
    let (_, body) = server.get("/api/bots").await;
    let api: Value = serde_json::from_str(&body).unwrap();
    assert!(api["bots"].as_array().unwrap().contains(&listed), "{body}");

    let (j, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 9, "x": "me",
               "o": {"bot": "fake"}}),
    )
    .await;
    assert_eq!(j["room"]["players"]["o"], bot("fake"));
    assert_eq!(j["room"]["status"], "playing");
    human_wins_along_the_top_row(&mut a, &room).await;
    server.stop().await;

    // One process played all four moves, each from a fresh START and the whole position, and
    // was ended with END at shutdown.
    let rec = record(&rec);
    let pids = started(&rec);
    assert_eq!(pids.len(), 1, "{rec:?}");
    assert!(stopped(pids[0]).await);
    let received: Vec<String> = rec
        .iter()
        .filter_map(|(_, e)| e.strip_prefix("< ").map(String::from))
        .collect();
    let infos = [
        "INFO timeout_turn 5000",
        "INFO timeout_match 0",
        "INFO game_type 0",
        "INFO rule 0",
    ];
    let mut expected = Vec::new();
    for n in 1..=4u8 {
        expected.extend(expected_transcript(
            n,
            &FAKE_MOVES[..n as usize - 1],
            &infos,
        ));
    }
    expected.push("END".into());
    assert_eq!(received, expected);
}

#[tokio::test]
async fn chatter_is_never_a_move_and_the_game_clock_is_sent() {
    // MESSAGE/DEBUG/UNKNOWN/blank lines before each answer (some hold cells), a late MESSAGE
    // after it; a match clock of ten minutes.
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("record");
    let bots = fake_level(
        "chatty",
        &["chatty", "--record", path_str(&rec)],
        5000,
        1000,
        "match_time_ms = 600000\nmax_memory_mb = 64",
    );
    let server = start(config_with_bots("", &bots)).await;
    let (mut a, _) = server.hello("a").await;
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 9, "x": "me",
               "o": {"bot": "chatty"}}),
    )
    .await;
    human_wins_along_the_top_row(&mut a, &room).await;
    server.stop().await;

    let rec = record(&rec);
    assert_eq!(started(&rec).len(), 1, "{rec:?}");
    let infos: Vec<&str> = rec
        .iter()
        .filter_map(|(_, e)| e.strip_prefix("< INFO "))
        .collect();
    assert_eq!(
        &infos[..6],
        [
            "timeout_turn 5000",
            "timeout_match 600000",
            "time_left 600000",
            "max_memory 67108864",
            "game_type 0",
            "rule 0"
        ]
    );
    // time_left before each of the four moves, never growing.
    let left: Vec<i64> = infos
        .iter()
        .filter_map(|l| l.strip_prefix("time_left "))
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(left.len(), 4, "{infos:?}");
    assert!(left.windows(2).all(|w| w[1] <= w[0]), "{left:?}");
}

/// In a game with a time control, an outside engine is told its share of the game clock for
/// each move (`timeout_turn`, at most its own `time_ms`) and the clock's time left
/// (`time_left`): with 60 s per side and no increment, a thirtieth, 2000 ms.
#[tokio::test]
async fn an_outside_engine_is_told_the_game_clock() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("record");
    let bots = fake_level(
        "fake",
        &["good", "--record", path_str(&rec)],
        5000,
        1000,
        "",
    );
    let server = start(config_with_bots("", &bots)).await;
    let (mut a, _) = server.hello("a").await;
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 9, "x": "me",
               "o": {"bot": "fake"},
               "time_control": {"kind": "fischer", "base_ms": 60000, "increment_ms": 0}}),
    )
    .await;
    for i in 0..2u8 {
        play(&mut a, &room, i, 0).await;
        assert_eq!(a.event().await["seat"], "x");
        let reply = a.event().await;
        assert_eq!(reply["seat"], "o", "{reply}");
        assert!(reply["clock"]["o"].as_u64().unwrap() <= 60_000, "{reply}");
    }
    server.stop().await;
    let rec = record(&rec);
    let infos: Vec<&str> = rec
        .iter()
        .filter_map(|(_, e)| e.strip_prefix("< INFO "))
        .collect();
    let turns: Vec<&str> = infos
        .iter()
        .copied()
        .filter(|l| l.starts_with("timeout_turn "))
        .collect();
    // A thirtieth of the time left, which real time has just started to eat: about 2000 ms,
    // not the level's 5000.
    assert_eq!(turns.len(), 2, "{infos:?}");
    for t in &turns {
        let ms: u64 = t.strip_prefix("timeout_turn ").unwrap().parse().unwrap();
        assert!((1_800..=2_000).contains(&ms), "{infos:?}");
    }
    let left: Vec<u64> = infos
        .iter()
        .filter_map(|l| l.strip_prefix("time_left "))
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(left.len(), 2, "{infos:?}");
    assert!(left[0] <= 60_000 && left[0] > 55_000, "{left:?}");
    assert!(left[1] <= left[0], "{left:?}");
}

#[tokio::test]
async fn each_misbehaviour_loses_the_game_for_the_bot_with_its_reason() {
    let bots = [
        fake_level("illegal", &["illegal", "--at", "2"], 5000, 1000, ""),
        fake_level("garbage", &["garbage", "--at", "2"], 5000, 1000, ""),
        fake_level("error", &["error", "--at", "2"], 5000, 1000, ""),
        fake_level("crash", &["crash", "--at", "2"], 5000, 1000, ""),
        fake_level("garbage-first", &["garbage", "--at", "1"], 5000, 1000, ""),
        fake_level("refuse", &["refuse"], 5000, 1000, ""),
    ]
    .concat();
    let server = start(config_with_bots("", &bots)).await;
    let (mut a, _) = server.hello("a").await;
    // The bot as O: X plays (0,0), the bot (4,4), X (1,0), then the bot's second move fails.
    for (level, fault, detail) in [
        (
            "illegal",
            "illegal_move",
            "played \"0,0\": (0, 0) is already taken",
        ),
        (
            "garbage",
            "garbage",
            "answered \"I resign, said nobody\", which is not a move",
        ),
        (
            "error",
            "engine_error",
            "answered \"ERROR something went wrong\"",
        ),
        (
            "crash",
            "crash",
            "the engine exited while thinking (exit status: 3)",
        ),
    ] {
        let (_, room) = create(
            &mut a,
            json!({"type": "create_room", "game": "caro", "width": 9, "x": "me",
                   "o": {"bot": level}}),
        )
        .await;
        play(&mut a, &room, 0, 0).await;
        assert_eq!(a.event().await, a_move(&room, 1, "x", (0, 0), Some("o")));
        assert_eq!(a.event().await, a_move(&room, 2, "o", (4, 4), Some("x")));
        play(&mut a, &room, 1, 0).await;
        assert_eq!(a.event().await, a_move(&room, 3, "x", (1, 0), Some("o")));
        assert_eq!(
            a.event().await,
            forfeit(&room, 4, "x", fault, detail),
            "{level}"
        );
        // The snapshot says the same.
        a.send(json!({"type": "join_room", "room_id": room})).await;
        let snap = a.recv_skip(&["room_update"]).await;
        assert_eq!(snap["room"]["status"], "finished");
        assert_eq!(snap["room"]["reason"], "forfeit");
        assert_eq!(snap["room"]["fault"], fault);
        assert_eq!(snap["room"]["detail"], detail);
        assert_eq!(snap["room"]["result"], "x");
        assert_eq!(a.recv().await["type"], "room_update");
        // And so does the stored game (the replay API).
        let (_, body) = server.get(&format!("/api/games/{room}")).await;
        let stored: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            [
                &stored["result"],
                &stored["reason"],
                &stored["fault"],
                &stored["detail"]
            ],
            [
                &json!("x"),
                &json!("forfeit"),
                &json!(fault),
                &json!(detail)
            ],
            "{level}"
        );
    }
    // The bot as X, failing its very first move: O wins.
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 9, "x": {"bot": "garbage-first"},
               "o": "me"}),
    )
    .await;
    assert_eq!(
        a.event().await,
        forfeit(
            &room,
            1,
            "o",
            "garbage",
            "answered \"I resign, said nobody\", which is not a move"
        )
    );
    // An engine that does not accept the game.
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 9, "x": {"bot": "refuse"},
               "o": "me"}),
    )
    .await;
    assert_eq!(
        a.event().await,
        forfeit(
            &room,
            1,
            "o",
            "start_failed",
            "answered \"ERROR I do not play today\" to START 9"
        )
    );
    assert_eq!(server.metric("outside_engine_forfeits_total").await, 6);
    // Every misbehaving process was killed.
    assert_eq!(server.metric("outside_engines").await, 0);
    let stored = server.store.events();
    let forfeits = stored
        .iter()
        .filter(|e| {
            matches!(e, caro_arena::store::StoreEvent::Result { reason, .. }
                if *reason == caro_arena::protocol::Reason::Forfeit)
        })
        .count();
    assert_eq!(forfeits, 6, "a forfeit is recorded like any result");
    server.stop().await;
}

#[tokio::test]
async fn a_hung_engine_is_killed_and_never_holds_its_room() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("record");
    // It never answers: the game is forfeited after 3 s + 1 s; in the meantime the room serves
    // everyone as usual.
    let bots = fake_level(
        "hang",
        &["hang", "--record", path_str(&rec)],
        3000,
        1000,
        "",
    );
    let server = start(config_with_bots("", &bots)).await;
    let (mut a, _) = server.hello("a").await;
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 9, "x": "me",
               "o": {"bot": "hang"}}),
    )
    .await;
    play(&mut a, &room, 0, 0).await;
    assert_eq!(a.event().await, a_move(&room, 1, "x", (0, 0), Some("o")));
    // While the engine hangs: a spectator joins and gets the state, the player syncs.
    let (mut s, _) = server.hello("s").await;
    s.send(json!({"type": "join_room", "room_id": room})).await;
    let snap = s.recv().await;
    assert_eq!(snap["type"], "room_joined", "{snap}");
    assert_eq!(snap["room"]["moves"], json!([[0, 0]]));
    a.send(json!({"type": "sync", "id": 1, "room_id": room, "since_seq": 1}))
        .await;
    assert_eq!(
        a.recv_skip(&["room_update"]).await,
        json!({"type": "synced", "re": 1, "room_id": room, "seq": 1})
    );
    let detail = "no move within 4000 ms (time_ms 3000 + margin_ms 1000); the engine was stopped";
    let over = forfeit(&room, 2, "x", "timeout", detail);
    assert_eq!(a.event().await, over);
    assert_eq!(s.event().await, over);

    // The process is gone, the server is healthy, the room still answers.
    let pids = started(&record(&rec));
    assert_eq!(pids.len(), 1);
    assert!(
        stopped(pids[0]).await,
        "the hung engine {} was killed",
        pids[0]
    );
    assert_eq!(server.get("/healthz").await.0, "HTTP/1.1 200 OK");
    assert_eq!(server.metric("outside_engines").await, 0);
    assert_eq!(server.metric("bot_searches_active").await, 0);
    a.send(json!({"type": "sync", "id": 2, "room_id": room, "since_seq": 0}))
        .await;
    assert_eq!(
        a.recv_skip(&["room_update"]).await,
        a_move(&room, 1, "x", (0, 0), Some("o"))
    );
    assert_eq!(a.recv_skip(&["room_update"]).await, over);
    assert_eq!(
        a.recv_skip(&["room_update"]).await,
        json!({"type": "synced", "re": 2, "room_id": room, "seq": 2})
    );
    // The built-in bots play on.
    let (_, room2) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 9, "x": "me",
               "o": {"bot": "quick"}}),
    )
    .await;
    play(&mut a, &room2, 4, 4).await;
    assert_eq!(a.event().await["seat"], "x");
    assert_eq!(a.event().await["seat"], "o");
    server.stop().await;
}

#[tokio::test]
async fn a_slow_engine_loses_on_time_and_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("record");
    // 300 ms + 300 ms allowed; it takes 20 s.
    let bots = fake_level(
        "slow",
        &["slow", "20000", "--record", path_str(&rec)],
        300,
        300,
        "",
    );
    let server = start(config_with_bots("", &bots)).await;
    let (mut a, _) = server.hello("a").await;
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 9, "x": {"bot": "slow"},
               "o": "me"}),
    )
    .await;
    assert_eq!(
        a.event().await,
        forfeit(
            &room,
            1,
            "o",
            "timeout",
            "no move within 600 ms (time_ms 300 + margin_ms 300); the engine was stopped"
        )
    );
    let pids = started(&record(&rec));
    assert!(stopped(pids[0]).await);
    server.stop().await;
}

#[tokio::test]
async fn a_wrapper_scripts_children_are_killed_with_it() {
    // sh runs the engine as its child (the `; true` keeps sh from exec'ing it): killing only
    // sh would leave the hung engine running.
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("record");
    let script = format!("python3 '{FAKE}' hang --record '{}'; true", rec.display());
    let bots = format!(
        r#"
[bots.wrapped]
description = "a hung engine behind a shell script"
command = "sh"
args = ["-c", {script:?}]
time_ms = 300
margin_ms = 300
min_board = 5
"#
    );
    let server = start(config_with_bots("", &bots)).await;
    let (mut a, _) = server.hello("a").await;
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 9, "x": {"bot": "wrapped"},
               "o": "me"}),
    )
    .await;
    let over = a.event().await;
    assert_eq!(over["fault"], "timeout", "{over}");
    assert_eq!(over["room_id"], room);
    let pids = started(&record(&rec));
    assert_eq!(pids.len(), 1);
    assert!(stopped(pids[0]).await, "the engine behind sh was killed");
    server.stop().await;
}

#[tokio::test]
async fn a_crashed_engine_is_restarted_for_the_next_game() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("record");
    let flag = dir.path().join("crashed");
    let bots = fake_level(
        "fragile",
        &[
            "crash-once",
            path_str(&flag),
            "--at",
            "2",
            "--record",
            path_str(&rec),
        ],
        5000,
        1000,
        "",
    );
    let server = start(config_with_bots("", &bots)).await;
    let (mut a, _) = server.hello("a").await;
    let new_room = json!({"type": "create_room", "game": "caro", "width": 9, "x": "me",
                          "o": {"bot": "fragile"}});
    let (_, room) = create(&mut a, new_room.clone()).await;
    play(&mut a, &room, 0, 0).await;
    a.event().await;
    assert_eq!(a.event().await, a_move(&room, 2, "o", (4, 4), Some("x")));
    play(&mut a, &room, 1, 0).await;
    a.event().await;
    assert_eq!(
        a.event().await,
        forfeit(
            &room,
            4,
            "x",
            "crash",
            "the engine exited while thinking (exit status: 3)"
        )
    );
    // The next game gets a new process, which plays the whole game.
    let (_, room) = create(&mut a, new_room).await;
    human_wins_along_the_top_row(&mut a, &room).await;
    let pids = started(&record(&rec));
    assert_eq!(pids.len(), 2, "one restart");
    assert!(stopped(pids[0]).await);
    assert_eq!(server.metric("outside_engine_starts_total").await, 2);
    assert_eq!(server.metric("outside_engines").await, 1);
    server.stop().await;
    assert!(stopped(pids[1]).await, "ended at shutdown");
}

/// A reused process that cannot start the next game (here: it refuses a second START, as an
/// engine expecting RESTART might) is replaced by a fresh one for that move: the game goes on
/// without a forfeit, and the level is not put to rest.
#[tokio::test]
async fn a_reused_engine_that_cannot_start_a_game_is_replaced_without_a_forfeit() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("record");
    let bots = fake_level(
        "once",
        &["one-game", "--record", path_str(&rec)],
        5000,
        1000,
        "",
    );
    let server = start(config_with_bots("", &bots)).await;
    let (mut a, _) = server.hello("a").await;
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 9, "x": "me", "o": {"bot": "once"}}),
    )
    .await;
    human_wins_along_the_top_row(&mut a, &room).await;
    // Four bot moves, each on a process of its own: every reused one refused its START.
    let pids = started(&record(&rec));
    assert_eq!(pids.len(), 4, "{pids:?}");
    for pid in &pids[..3] {
        assert!(stopped(*pid).await, "replaced engine {pid} still runs");
    }
    assert_eq!(server.metric("outside_engine_forfeits_total").await, 0);
    server.stop().await;
}

#[tokio::test]
async fn a_game_that_ends_mid_move_keeps_its_engine_for_the_next_game() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("record");
    // Every move takes 500 ms.
    let bots = fake_level(
        "steady",
        &["slow", "500", "--at", "0", "--record", path_str(&rec)],
        5000,
        1000,
        "",
    );
    let server = start(config_with_bots("", &bots)).await;
    let (mut a, _) = server.hello("a").await;
    let new_room = json!({"type": "create_room", "game": "caro", "width": 9, "x": "me",
                          "o": {"bot": "steady"}});
    let (_, room) = create(&mut a, new_room.clone()).await;
    play(&mut a, &room, 0, 0).await;
    a.event().await;
    thinking(&rec).await;
    a.send(json!({"type": "resign", "room_id": room})).await;
    assert_eq!(
        a.event().await,
        json!({"type": "game_over", "room_id": room, "seq": 2, "result": "o", "reason": "resign"})
    );
    // Its answer is dropped...
    a.quiet(std::time::Duration::from_millis(1000)).await;
    // ...and the same process plays the next game.
    let (_, room) = create(&mut a, new_room).await;
    play(&mut a, &room, 0, 0).await;
    a.event().await;
    assert_eq!(a.event().await, a_move(&room, 2, "o", (4, 4), Some("x")));
    assert_eq!(started(&record(&rec)).len(), 1);
    server.stop().await;
}

#[tokio::test]
async fn a_broken_command_rests_instead_of_spinning() {
    // The program exits at once, every time. The first failure restarts at once, the second
    // makes the level rest 1 s, then 2 s...: games in a rest are forfeited as unavailable
    // without starting a process.
    let bots = fake_level("broken", &["exit"], 5000, 1000, "");
    let server = start(config_with_bots("", &bots)).await;
    let (mut a, _) = server.hello("a").await;
    let mut faults = Vec::new();
    for _ in 0..6 {
        let (_, room) = create(
            &mut a,
            json!({"type": "create_room", "game": "caro", "width": 9,
                   "x": {"bot": "broken"}, "o": "me"}),
        )
        .await;
        let over = a.event().await;
        assert_eq!(over["reason"], "forfeit", "{over}");
        assert_eq!(over["result"], "o");
        let fault = over["fault"].as_str().unwrap().to_string();
        match fault.as_str() {
            "crash" => assert_eq!(
                over["detail"],
                "the engine exited before answering START (exit status: 1)"
            ),
            "unavailable" => {
                // "...failed 2 times...", unless the machine is so slow that a rest ran out.
                let detail = over["detail"].as_str().unwrap();
                assert!(
                    detail.starts_with("the engine failed ")
                        && detail.contains(" times in a row; it is restarted in "),
                    "{detail}"
                );
            }
            other => panic!("{other}: {over}"),
        }
        assert_eq!(over["room_id"], room);
        faults.push(fault);
    }
    assert_eq!(faults[..2], ["crash", "crash"], "{faults:?}");
    assert!(faults.contains(&"unavailable".to_string()), "{faults:?}");
    let crashes = faults.iter().filter(|f| *f == "crash").count();
    assert_eq!(
        server.metric("outside_engine_starts_total").await,
        crashes as u64,
        "only crashes started a process: {faults:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn at_most_max_processes_think_and_waiting_rooms_still_get_their_moves() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("record");
    // Every move takes 200 ms; one process for the level: rooms take turns.
    let bots = fake_level(
        "single",
        &["slow", "200", "--at", "0", "--record", path_str(&rec)],
        5000,
        1000,
        "max_processes = 1",
    );
    let server = start(config_with_bots("max_concurrent = 4", &bots)).await;
    let mut clients = Vec::new();
    for i in 0..3 {
        let (mut c, _) = server.hello(&format!("p{i}")).await;
        let (_, room) = create(
            &mut c,
            json!({"type": "create_room", "game": "caro", "width": 9, "x": "me",
                   "o": {"bot": "single"}}),
        )
        .await;
        clients.push((c, room));
    }
    // Three rooms ask at once, twice.
    for round in 0..2u8 {
        for (c, room) in &mut clients {
            play(c, room, round, 0).await;
        }
        for (c, room) in &mut clients {
            assert_eq!(c.event().await["seat"], "x");
            let bot = c.event().await;
            assert_eq!(bot["seat"], "o", "{bot}");
            assert_eq!(bot["room_id"], *room);
        }
    }
    server.stop().await;
    let rec = record(&rec);
    assert_eq!(started(&rec).len(), 1, "one process: {rec:?}");
    // Its moves never overlapped: think, done, think, done...
    let phases: Vec<&str> = rec
        .iter()
        .filter(|(_, e)| e == "think" || e == "done")
        .map(|(_, e)| e.as_str())
        .collect();
    assert_eq!(phases.len(), 12, "{phases:?}");
    assert!(
        phases.chunks(2).all(|p| p == ["think", "done"]),
        "{phases:?}"
    );
}

#[tokio::test]
async fn shutdown_stops_a_thinking_engine_without_a_forfeit() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("record");
    let bots = fake_level(
        "hang",
        &["hang", "--record", path_str(&rec)],
        60_000,
        1000,
        "",
    );
    let server = start(config_with_bots("", &bots)).await;
    let store = server.store.clone();
    let (mut a, _) = server.hello("a").await;
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 9, "x": "me",
               "o": {"bot": "hang"}}),
    )
    .await;
    play(&mut a, &room, 0, 0).await;
    a.event().await;
    thinking(&rec).await;
    server.stop().await;
    let close = a.closed().await.expect("a close frame");
    assert_eq!(u16::from(close.code), 1001);
    assert!(
        !store
            .events()
            .iter()
            .any(|e| matches!(e, caro_arena::store::StoreEvent::Result { .. })),
        "the game stays unfinished, to be restored"
    );
    let pids = started(&record(&rec));
    assert!(stopped(pids[0]).await, "the engine was stopped");
}

#[tokio::test]
async fn create_room_refuses_rules_and_boards_an_outside_engine_does_not_play() {
    let bots = fake_level("fake", &["good"], 5000, 1000, "");
    let server = start(config_with_bots("", &bots)).await;
    let (mut a, _) = server.hello("a").await;
    for (room, message) in [
        (
            json!({"game": "caro", "rule": "exact_five"}),
            "o: bot \"fake\" does not play the exact_five rule (only freestyle, caro)",
        ),
        (
            json!({"game": "caro", "width": 21}),
            "o: bot \"fake\" does not play on 21x21 (only 5x5 to 20x20, square)",
        ),
        (
            json!({"game": "caro", "width": 9, "height": 7}),
            "o: bot \"fake\" does not play on 9x7 (only 5x5 to 20x20, square)",
        ),
        (
            json!({"game": "tictactoe"}),
            "o: bot \"fake\" does not play tictactoe",
        ),
    ] {
        let mut msg = json!({"type": "create_room", "id": 1, "x": "me", "o": {"bot": "fake"}});
        for (k, v) in room.as_object().unwrap() {
            msg[k] = v.clone();
        }
        a.send(msg).await;
        assert_eq!(
            a.recv().await,
            json!({"type": "error", "re": 1, "code": "bad_room", "message": message})
        );
    }
    server.stop().await;
}

/// `pbrain-caro`, built next to this test binary by `cargo test --workspace` (the engine's
/// tests need it) or `cargo build -p caro-pbrain --bin pbrain-caro` (scripts/test does).
fn pbrain_caro() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/outside_bots-<hash>
    let dir = exe.parent().unwrap().parent().unwrap();
    let path = dir.join(format!("pbrain-caro{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: build it first with `cargo build -p caro-pbrain --bin pbrain-caro` \
         (scripts/test does)",
        path.display()
    );
    path
}

/// Plays a room to its end: checks seq, alternation and legality; the human (if any) plays
/// the first empty cell in reading order.
async fn play_out(c: &mut Client, room: &str, (w, h): (u64, u64), human: Option<&str>) -> Value {
    let mut taken = HashSet::new();
    let mut seq = 0;
    loop {
        let v = c.event().await;
        seq += 1;
        assert_eq!(v["seq"], seq, "{v}");
        match v["type"].as_str().unwrap() {
            "move" => {
                let cell = (v["x"].as_u64().unwrap(), v["y"].as_u64().unwrap());
                assert!(cell.0 < w && cell.1 < h, "{v}");
                assert!(taken.insert(cell), "cell played twice: {v}");
                if !v["turn"].is_null() && v["turn"].as_str() == human {
                    let free = (0..h)
                        .flat_map(|y| (0..w).map(move |x| (x, y)))
                        .find(|c| !taken.contains(c))
                        .unwrap();
                    c.send(json!({"type": "move", "room_id": room, "x": free.0, "y": free.1}))
                        .await;
                }
            }
            "game_over" => return v,
            other => panic!("unexpected {other}: {v}"),
        }
    }
}

#[tokio::test]
async fn pbrain_caro_plays_through_the_server_as_an_outside_engine() {
    let bots = format!(
        r#"
[bots.pbrain]
description = "pbrain-caro as an outside engine"
command = {command:?}
time_ms = 200
margin_ms = 2000
rules = ["freestyle", "exact_five", "caro", "caro_overline"]
min_board = 5
max_board = 32
rectangular = true
"#,
        command = pbrain_caro().display().to_string()
    );
    let server = start(config_with_bots("", &bots)).await;
    let (mut a, _) = server.hello("a").await;
    // Against a human who plays the first empty cell: the engine wins.
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 9, "rule": "caro",
               "x": "me", "o": {"bot": "pbrain"}}),
    )
    .await;
    a.send(json!({"type": "move", "room_id": room, "x": 0, "y": 0}))
        .await;
    let over = play_out(&mut a, &room, (9, 9), Some("x")).await;
    assert_eq!(over["result"], "o", "{over}");
    assert_eq!(over["reason"], "line", "{over}");
    // Against a built-in bot on a rectangular board, to the end.
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 9, "height": 7,
               "x": {"bot": "pbrain"}, "o": {"bot": "quick"}}),
    )
    .await;
    let over = play_out(&mut a, &room, (9, 7), None).await;
    assert!(
        over["reason"] == "line" || over["reason"] == "board_full",
        "{over}"
    );
    assert_eq!(
        server.metric("outside_engine_starts_total").await,
        1,
        "one process played both games"
    );
    server.stop().await;
}

/// Regression: engines are in process groups of their own, so a server killed with SIGKILL
/// (which runs no drop code) left them running, orphaned, one set more at every crash. They now
/// die with the server (PR_SET_PDEATHSIG).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn engines_die_with_a_server_killed_with_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("record");
    // A hung engine: it reads nothing more, so the end of its input does not end it either.
    let level = fake_level(
        "fake",
        &["hang", "--record", path_str(&rec)],
        60000,
        1000,
        "",
    );
    let (mut server, addr) = spawn_binary(
        dir.path(),
        &format!("[server]\nlog = \"warn\"\n[store]\npath = \":memory:\"\n[search]\nmin_move_ms = 0\n{level}"),
    );
    let mut a = connect(addr).await;
    a.send(json!({"type": "hello", "name": "a"})).await;
    assert_eq!(a.recv().await["type"], "welcome");
    let (_, room) = create(
        &mut a,
        json!({"type": "create_room", "game": "caro", "width": 9, "x": "me", "o": {"bot": "fake"}}),
    )
    .await;
    play(&mut a, &room, 0, 0).await;
    assert_eq!(a.event().await["seat"], "x");
    thinking(&rec).await;
    let pids = started(&record(&rec));
    assert_eq!(pids.len(), 1);
    assert!(running(pids[0]));
    server.kill().unwrap(); // SIGKILL
    server.wait().unwrap();
    assert!(
        stopped(pids[0]).await,
        "engine {} outlived the server",
        pids[0]
    );
}
