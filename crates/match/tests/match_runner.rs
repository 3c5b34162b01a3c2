//! End-to-end tests: run the `caro-match` binary against the scripted `fake-pbrain` fixture
//! (tests/fake_engines/fake_pbrain.rs) and, when it has been built, the real `pbrain-caro`.
//! They check what a user relies on: a misbehaving engine loses its games with the right reason,
//! the match goes on, a crashed engine is restarted, and the output files exist and parse.

use std::path::{Path, PathBuf};
use std::process::Command;

use caro_match::psq::PsqGame;
use serde_json::Value;

const CARO_MATCH: &str = env!("CARGO_BIN_EXE_caro-match");
const FAKE: &str = env!("CARGO_BIN_EXE_fake-pbrain");

/// A fresh directory for one test's output.
fn out_dir(name: &str) -> PathBuf {
    let dir = out_dir_path(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Where [`out_dir`] puts a test's output (without clearing it).
fn out_dir_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("caro-match-{name}"))
}

/// Runs `caro-match play` with fast settings plus `extra`, asserting success; returns stdout.
fn play(out: &Path, engine1: &str, engine2: &str, extra: &[&str]) -> String {
    let output = Command::new(CARO_MATCH)
        .args(["play", "--engine1", engine1, "--engine2", engine2])
        .args(["--name1", "one", "--name2", "two", "--delay-ms", "1"])
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("caro-match runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "caro-match failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The JSON lines of `games.jsonl`, checked against their `.psq` files.
fn games(out: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for r in &records {
        let psq = std::fs::read_to_string(out.join(r["psq"].as_str().unwrap())).unwrap();
        let game = PsqGame::parse(&psq).unwrap();
        assert_eq!(game.moves.len(), r["moves"].as_array().unwrap().len());
        let trailer = game.trailer.unwrap();
        assert_eq!(trailer.names[0], r["x"].as_str().unwrap());
        let winner = match r["winner"].as_str() {
            Some("x") => 1,
            Some("o") => 2,
            _ => 0,
        };
        assert_eq!(trailer.winner, Some(winner));
    }
    records
}

fn summary(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

fn fake(mode: &str) -> String {
    format!("{FAKE} {mode}")
}

/// Plays good vs a misbehaving `engine2` for 2 games and checks that the good engine won both,
/// for `reason`, with both colours.
fn misbehaviour_is_a_loss(name: &str, engine2: &str, reason: &str, extra: &[&str]) {
    let out = out_dir(name);
    play(
        &out,
        &fake("good"),
        engine2,
        &[&["--games", "2"], extra].concat(),
    );
    let records = games(&out);
    assert_eq!(records.len(), 2, "the match went on after the first fault");
    for r in &records {
        assert_eq!(r["engine1_score"], "win", "{r}");
        assert_eq!(r["reason"], reason, "{r}");
    }
    assert_eq!(records[0]["engine1_color"], "x");
    assert_eq!(records[1]["engine1_color"], "o");
    let s = summary(&out);
    assert_eq!(s["games"], 2);
    assert_eq!(s["faults"][1][reason], 2);
    assert!(s["faults"][0].as_object().unwrap().is_empty());
    let log = std::fs::read_to_string(out.join("match.log")).unwrap();
    assert!(log.contains(&format!("two (o) loses: {reason}")), "{log}");
}

#[test]
fn an_illegal_move_loses() {
    misbehaviour_is_a_loss("illegal", &fake("illegal"), "illegal_move", &[]);
}

#[test]
fn garbage_output_loses() {
    misbehaviour_is_a_loss("garbage", &fake("garbage"), "garbage", &[]);
}

#[test]
fn a_crash_loses() {
    misbehaviour_is_a_loss("crash", &fake("crash"), "crash", &[]);
}

#[test]
fn a_late_answer_forfeits() {
    // Sleeps 1500 ms against 400 + 100 ms allowed (generous for the honest engine on a busy
    // machine).
    misbehaviour_is_a_loss(
        "slow",
        &fake("slow 1500"),
        "time_forfeit",
        &["--turn-ms", "400"],
    );
}

#[test]
fn an_error_answer_loses() {
    misbehaviour_is_a_loss("error", &fake("error"), "engine_error", &[]);
}

#[test]
fn the_match_clock_forfeits_too() {
    // No per-move limit, 800 ms per game: the 1500 ms third move overdraws the clock.
    let args = ["--turn-ms", "0", "--match-ms", "800"];
    misbehaviour_is_a_loss("match-clock", &fake("slow 1500"), "time_forfeit", &args);
    let log = std::fs::read_to_string(out_dir_path("match-clock").join("match.log")).unwrap();
    assert!(log.contains("< INFO timeout_match 800"), "{log}");
    assert!(log.contains("< INFO time_left 800"), "{log}");
}

#[test]
fn an_engine_that_cannot_start_loses_every_game() {
    misbehaviour_is_a_loss("no-engine", "/nonexistent/pbrain-none", "start_failed", &[]);
}

#[test]
fn rectangular_boards_use_rectstart() {
    let out = out_dir("rect");
    play(
        &out,
        &fake("good"),
        &fake("good"),
        &["--games", "2", "--width", "20", "--height", "15"],
    );
    let records = games(&out);
    assert_eq!(records.len(), 2);
    let psq = std::fs::read_to_string(out.join("games/0001.psq")).unwrap();
    assert!(psq.starts_with("Piskvorky 20x15, 11:11, 0\n"), "{psq}");
    let log = std::fs::read_to_string(out.join("match.log")).unwrap();
    assert!(log.contains("< RECTSTART 20,15"), "{log}");
    // The fake's first move is the centre of the 20x15 board: (10, 7) = k8.
    assert_eq!(records[0]["moves"][0], "k8");
}

#[test]
fn a_crashed_engine_is_restarted_and_plays_on() {
    let out = out_dir("crash-once");
    let marker = out.join("crashed.marker");
    let engine2 = format!("{FAKE} crash-once {}", marker.display());
    play(&out, &fake("good"), &engine2, &["--games", "4"]);
    let records = games(&out);
    assert_eq!(records.len(), 4);
    assert_eq!(records[0]["reason"], "crash");
    assert_eq!(records[0]["engine1_score"], "win");
    assert_eq!(records[1]["restarted"], serde_json::json!([false, true]));
    // The respawned process played real games: they end with a five, not a fault.
    for r in &records[1..] {
        assert_eq!(r["reason"], "five", "{r}");
        assert_eq!(r["restarted"][0], false);
    }
    let s = summary(&out);
    assert_eq!(s["restarts"], serde_json::json!([0, 1]));
    assert!(std::fs::read_to_string(out.join("match.log"))
        .unwrap()
        .contains("two: restarting the engine"));
}

#[test]
fn openings_are_played_twice_with_colours_swapped_in_parallel() {
    let out = out_dir("openings");
    let book = out.join("book.txt");
    // Both formats: square names and centre offsets.
    std::fs::write(&book, "# test book\nh8 i9 j8\n0,0 -1,1 2,2 0,3\n").unwrap();
    play(
        &out,
        &fake("good"),
        &fake("good"),
        &[
            "--games",
            "4",
            "--concurrency",
            "2",
            "--openings",
            book.to_str().unwrap(),
        ],
    );
    let mut records = games(&out);
    // Games finish in any order with two workers.
    records.sort_by_key(|r| r["game"].as_u64());
    assert_eq!(records.len(), 4);
    let openings = ["h8 i9 j8", "h8 g9 j10 h11"];
    for pair in records.chunks(2) {
        assert_eq!(pair[0]["pair"], pair[1]["pair"]);
        assert_eq!(pair[0]["opening"], pair[1]["opening"]);
        assert!(openings.contains(&pair[0]["opening"].as_str().unwrap()));
        assert_eq!(pair[0]["x"], "one");
        assert_eq!(pair[1]["x"], "two");
        for r in pair {
            let opening: Vec<&str> = r["opening"].as_str().unwrap().split(' ').collect();
            let moves: Vec<&str> = r["moves"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m.as_str().unwrap())
                .collect();
            assert_eq!(
                &moves[..opening.len()],
                &opening[..],
                "games start from the opening"
            );
            let times = r["times_ms"].as_array().unwrap();
            assert!(
                times[..opening.len()].iter().all(|t| t == 0),
                "opening stones take no time"
            );
        }
    }
    assert_ne!(records[0]["opening"], records[2]["opening"]);
    let s = summary(&out);
    assert_eq!(s["games"], 4);
    assert_eq!(
        s["pentanomial"]["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .sum::<u64>(),
        2
    );
}

#[test]
fn sprt_stops_the_match_when_a_bound_is_crossed() {
    let out = out_dir("sprt");
    let stdout = play(
        &out,
        &fake("good"),
        &fake("garbage"),
        &["--games", "100", "--sprt", "0,100,0.05,0.05"],
    );
    let s = summary(&out);
    // Every pair won: the LLR for [0, 100] crosses ln(19) after 12 pairs (docs/match.md). A
    // worker waits until its game is counted before taking the next one, so the single worker
    // starts no game after the decision (regression: it used to run ahead by a few games).
    assert_eq!(s["sprt"]["decided_after"], 24, "{stdout}");
    assert_eq!(s["games"], 24, "{stdout}");
    assert_eq!(s["sprt"]["decision"], "h1");
    assert!(s["sprt"]["llr"].as_f64().unwrap() >= s["sprt"]["upper"].as_f64().unwrap());
    assert!(stdout.contains("H1 accepted"), "{stdout}");
    assert!(stdout.contains("LLR"), "{stdout}");
}

#[test]
fn the_openings_generator_writes_a_readable_book() {
    let output = Command::new(CARO_MATCH)
        .args([
            "openings",
            "--rule",
            "freestyle",
            "--count",
            "3",
            "--depth",
            "2",
        ])
        .args(["--time-ms", "50", "--min-stones", "3", "--max-stones", "4"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let rules = caro_engine::Rules::caro(15, 15, caro_engine::Rule::Freestyle).unwrap();
    let book = caro_match::openings::parse_openings(&text, rules).unwrap();
    assert_eq!(book.len(), 3, "{text}");
}

/// The real engine against the classic baseline, when `pbrain-caro` has been built next to
/// `caro-match` (`cargo build -p caro-pbrain --bin pbrain-caro`, as scripts/test does); fails
/// otherwise.
#[test]
fn pbrain_caro_plays_a_real_match() {
    let dir = Path::new(CARO_MATCH).parent().unwrap();
    let pbrain = dir.join(format!("pbrain-caro{}", std::env::consts::EXE_SUFFIX));
    assert!(
        pbrain.exists(),
        "{} is missing: build it first with `cargo build -p caro-pbrain --bin pbrain-caro` \
         (scripts/test does)",
        pbrain.display()
    );
    let out = out_dir("pbrain");
    let pbrain = format!("\"{}\"", pbrain.display());
    let classic = format!("{pbrain} classic 2");
    let stdout = play(
        &out,
        &pbrain,
        &classic,
        &["--games", "2", "--turn-ms", "150", "--tolerance-ms", "500"],
    );
    let records = games(&out);
    assert_eq!(records.len(), 2, "{stdout}");
    for r in &records {
        let reason = r["reason"].as_str().unwrap();
        assert!(reason == "five" || reason == "board_full", "{r}");
    }
    println!("{stdout}");
}

#[test]
fn a_bad_opening_file_is_refused_with_its_line() {
    let out = out_dir("bad-book");
    let book = out.join("book.txt");
    std::fs::write(&book, "h8 i9\n# fine so far\nh8 h8\n").unwrap();
    let output = Command::new(CARO_MATCH)
        .args([
            "play",
            "--engine1",
            &fake("good"),
            "--engine2",
            &fake("good"),
        ])
        .arg("--openings")
        .arg(&book)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("opening line 3"), "{stderr}");
    assert!(!out.join("games.jsonl").exists(), "no game was played");
}
