//! `caro-match spsa` end to end: the real `pbrain-caro` at a fixed depth tuned against a
//! fixed-depth opponent (both deterministic, so the run is too), its records checked against
//! the SPSA arithmetic of `caro_engine::spsa` replayed from them; an opponent that crashes; the
//! errors a user can make.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use caro_engine::positions::parse_square;
use caro_engine::search::params::SearchParams;
use caro_engine::search::weights::Weights;
use caro_engine::spsa::{self, Space, Spsa};
use caro_engine::{Board, Move, Player, Rule, Rules, Status};
use serde_json::Value;

mod common;
use common::stdout;

const CARO_MATCH: &str = env!("CARGO_BIN_EXE_caro-match");
const FAKE: &str = env!("CARGO_BIN_EXE_fake-pbrain");

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("caro-spsa-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `pbrain-caro`, built beside `caro-match` (scripts/test builds it before the tests).
fn pbrain() -> String {
    let path = Path::new(CARO_MATCH).parent().unwrap().join("pbrain-caro");
    assert!(
        path.exists(),
        "{} is missing: run `cargo build -p caro-pbrain --bin pbrain-caro`",
        path.display()
    );
    path.to_str().unwrap().to_string()
}

fn openings(dir: &Path) -> PathBuf {
    let path = dir.join("book.txt");
    std::fs::write(&path, "h8 i9 j8\nh8 h9 i7\n").unwrap();
    path
}

fn spsa_run(args: &[impl AsRef<std::ffi::OsStr>]) -> Output {
    Command::new(CARO_MATCH)
        .arg("spsa")
        .args(args)
        .output()
        .unwrap()
}

fn steps(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("steps.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The arguments of three steps of the cross-line terms (`--r-end 0.05 --seed 4`), pbrain-caro
/// at depth 2 against itself at depth 1 (named `shallow`), both with quiet moves ordered by the
/// cell values (`policy` 0), one lane, writing to `out`; with
/// the values of `set` for those flags, then `extra`.
fn real_run(d: &Path, out: &Path, set: &[(&str, &str)], extra: &[&str]) -> Vec<String> {
    let book = openings(d);
    let engine = format!("{} --depth 2", pbrain());
    let opponent = format!("{} --depth 1 --search policy=0", pbrain());
    // Both sides order quiet moves by the cell values (the learnt ordering, the default since
    // 2026-11-29, makes every step of these shallow games even): the tuned one from this start.
    let start = d.join("start-search.txt");
    std::fs::write(&start, "policy=0\n").unwrap();
    let args = [
        "--engine",
        &engine,
        "--opponent",
        &opponent,
        "--opponent-name",
        "shallow",
        "--rule",
        "freestyle",
        "--turn-ms",
        "5000",
        "--openings",
        book.to_str().unwrap(),
        "--search",
        start.to_str().unwrap(),
        "--space",
        "plus",
        "--steps",
        "3",
        "--r-end",
        "0.05",
        "--seed",
        "4",
        "--save-every",
        "2",
        "--out",
        out.to_str().unwrap(),
    ];
    let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    for (flag, value) in set {
        let at = args
            .iter()
            .position(|a| a == flag)
            .expect("a flag of the run");
        args[at + 1] = value.to_string();
    }
    args.extend(extra.iter().map(|a| a.to_string()));
    args
}

/// Three steps of the cross-line terms against a shallower fixed-depth engine, one lane: every
/// step is four games (each perturbed side with each colour), its result is the `+` side's
/// points minus the `-` side's, and replaying the recorded signs and results through `Spsa`
/// gives the recorded values and the final files.
#[test]
fn a_run_against_a_real_engine_follows_the_spsa_arithmetic() {
    let d = dir("real");
    let out = d.join("out");
    let output = spsa_run(&real_run(&d, &out, &[], &[]));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let records = steps(&out);
    assert_eq!(records.len(), 3, "{records:?}");

    // The run's start: the engine's numbers with `policy` 0 (`start-search.txt`).
    let sp0 = SearchParams {
        policy: 0,
        ..Default::default()
    };
    let w0 = *Weights::built();
    let space = Space::named("plus").unwrap();
    let mut tuner = Spsa::new(space.params(&w0, &sp0, 0.05), 3);
    for (k, r) in records.iter().enumerate() {
        assert_eq!(r["step"], k as u64 + 1);
        let games = r["games"].as_array().unwrap();
        let played: Vec<(&str, &str)> = games
            .iter()
            .map(|g| (g["side"].as_str().unwrap(), g["color"].as_str().unwrap()))
            .collect();
        assert_eq!(played, [("+", "x"), ("+", "o"), ("-", "x"), ("-", "o")]);
        let points = |side: &str| -> f64 {
            games
                .iter()
                .filter(|g| g["side"] == side)
                .map(|g| match g["score"].as_str().unwrap() {
                    "win" => 1.0,
                    "draw" => 0.5,
                    _ => 0.0,
                })
                .sum()
        };
        let result = r["result"].as_f64().unwrap();
        assert_eq!(result, points("+") - points("-"));
        assert!(games.iter().all(|g| g["reason"] != "crash"), "{r}");
        let opening = r["opening"].as_str().unwrap();
        assert!(["h8 i9 j8", "h8 h9 i7"].contains(&opening), "{opening}");
        for g in games {
            replay_game(g, opening);
        }
        let signs: Vec<bool> = r["signs"]
            .as_str()
            .unwrap()
            .chars()
            .map(|c| c == '+')
            .collect();
        assert_eq!(signs.len(), 4);
        let numbers = |key: &str| -> Vec<f64> {
            r[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        };
        // One lane: each step perturbed the numbers after the step before.
        assert_eq!(numbers("around"), tuner.values(), "step {}", k + 1);
        tuner.update(k as u64, &signs, result);
        assert_eq!(numbers("values"), tuner.values(), "step {}", k + 1);
    }
    // The replay above checked moving numbers, not only standing ones: a step before the last
    // was won or lost by a perturbed side, so a later step's `around` is not the start (with
    // these seeds and depths, step 1; an engine change that makes every step even needs
    // another seed here).
    assert!(
        records[..2].iter().any(|r| r["result"] != 0.0),
        "{records:?}"
    );
    // and replay_game checked some five.
    assert!(records
        .iter()
        .flat_map(|r| r["games"].as_array().unwrap())
        .any(|g| g["reason"] == "five"));
    assert!(stdout.contains("step     3: "), "{stdout}");

    let (w, sp) = space.apply(&w0, &sp0, &tuner.values());
    let written = std::fs::read_to_string(out.join("weights.txt")).unwrap();
    assert!(
        written.starts_with("# Written by `caro-match spsa` after 3 of 3 steps against shallow."),
        "{written}"
    );
    assert_eq!(Weights::parse(&written), Ok(w));
    let search = std::fs::read_to_string(out.join("search.txt")).unwrap();
    assert_eq!(search, spsa::search_text(&sp).join("\n") + "\n");
    // The perturbed files the engines read: one pair for the one lane, the last step's.
    let plus = std::fs::read_to_string(out.join("lanes/lane0plus.txt")).unwrap();
    assert!(plus.starts_with("# Step 3 of 3, the + side."), "{plus}");
    assert!(Weights::parse(&plus).is_ok());
    let log = std::fs::read_to_string(out.join("tune.log")).unwrap();
    assert!(log.contains("[step 1 +x]") && log.contains("[step 3 -o]"));
}

/// Checks a game of `steps.jsonl` against its own moves: they start with the step's opening,
/// are as many as its stones, are legal, and a game won by a five ends in that five, for the
/// side the record says won.
fn replay_game(g: &Value, opening: &str) {
    let names: Vec<&str> = g["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(names.join(" ").starts_with(opening), "{g}");
    assert_eq!(names.len() as u64, g["stones"].as_u64().unwrap(), "{g}");
    let moves: Vec<Move> = names
        .iter()
        .map(|name| parse_square(name).unwrap())
        .collect();
    let rules = Rules::caro(15, 15, Rule::Freestyle).unwrap();
    let board = Board::from_moves(rules, &moves).unwrap();
    if g["reason"] == "five" {
        let ours = if g["color"] == "x" {
            Player::X
        } else {
            Player::O
        };
        let winner = if g["score"] == "win" {
            ours
        } else {
            ours.opponent()
        };
        assert_eq!(board.status(), Status::Won(winner), "{g}");
    }
}

/// A stopped run goes on with `--resume`: killed after its first step (and halfway through
/// writing its second), it plays the two steps it lacks and ends exactly as the run that was
/// never stopped (the engines are deterministic); a finished run resumes to nothing; other
/// settings are refused, naming the line that does not replay.
#[test]
fn a_stopped_run_resumes_where_it_was() {
    let d = dir("resume");
    let out = d.join("out");
    let whole = spsa_run(&real_run(&d, &out, &[], &[]));
    assert!(whole.status.success(), "{whole:?}");
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
    let (steps, weights, search) = (read("steps.jsonl"), read("weights.txt"), read("search.txt"));
    assert_eq!(steps.lines().count(), 3);

    let first = steps.lines().next().unwrap();
    std::fs::write(
        out.join("steps.jsonl"),
        format!("{first}\n{{\"step\":2,\"ope"),
    )
    .unwrap();
    let resumed = spsa_run(&real_run(&d, &out, &[], &["--resume"]));
    let printed = stdout(&resumed);
    assert!(
        !printed.contains("step     1:") && printed.contains("step     3:"),
        "{printed}"
    );
    assert!(
        printed.contains("our score") && printed.contains("/12 ("),
        "the tally counts the recorded step's games too: {printed}"
    );
    assert_eq!(read("steps.jsonl"), steps);
    assert_eq!(read("weights.txt"), weights);
    assert_eq!(read("search.txt"), search);

    let again = spsa_run(&real_run(&d, &out, &[], &["--resume"]));
    let printed = stdout(&again);
    assert!(!printed.contains("step "), "{printed}");
    assert_eq!(read("steps.jsonl"), steps);
    assert_eq!(read("weights.txt"), weights);

    let steps_path = out.join("steps.jsonl");
    // Another schedule shows at the first step that was not even (a result of 0 moves nothing):
    // line n, step n, with one lane.
    let n = 1 + steps
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .position(|r| r["result"] != 0.0)
        .expect("a step that moved the numbers");
    let schedule = format!("line {n}: the numbers after step {n} are not the record's");
    for (other, says) in [
        (
            ("--seed", "5"),
            "line 1: step 1 was drawn with another seed, space or openings file",
        ),
        (("--r-end", "0.04"), schedule.as_str()),
        (("--steps", "2"), schedule.as_str()),
    ] {
        // With a line cut short at the end, which only a resume that goes on drops.
        let cut = format!("{steps}{{\"step\":4");
        std::fs::write(&steps_path, &cut).unwrap();
        let refused = spsa_run(&real_run(&d, &out, &[other], &["--resume"]));
        assert!(!refused.status.success(), "{other:?}");
        let e = String::from_utf8_lossy(&refused.stderr);
        assert!(
            e.contains(&format!("{}, {says}", steps_path.display())),
            "{other:?}: {e}"
        );
        assert_eq!(read("steps.jsonl"), cut, "a refused resume writes nothing");
    }
    let lines: Vec<&str> = steps.lines().collect();
    for (text, says) in [
        (
            format!("{}\n{}\n", lines[0], lines[0]),
            "line 2: step 1 is recorded twice",
        ),
        (
            lines[0].replace("{\"step\":1,", "{\"step\":9,") + "\n",
            "line 1: step 9 is not one of the run's 3 steps",
        ),
        (
            "{\"step\":1}\n".to_string(),
            "line 1: missing field `opening`",
        ),
    ] {
        std::fs::write(&steps_path, &text).unwrap();
        let refused = spsa_run(&real_run(&d, &out, &[], &["--resume"]));
        let e = String::from_utf8_lossy(&refused.stderr);
        assert!(
            !refused.status.success() && e.contains(&format!("{}, {says}", steps_path.display())),
            "{text}: {e}"
        );
    }
    let missing = d.join("nothing-here");
    let refused = spsa_run(&real_run(&d, &missing, &[], &["--resume"]));
    let e = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && e.contains("nothing-here/steps.jsonl: No such file"),
        "{e}"
    );
}

/// An opponent that crashes on its third move loses every game by forfeit and is restarted:
/// the run goes on, each step's result is 0 and the numbers do not move.
#[test]
fn a_crashing_opponent_forfeits_and_the_run_goes_on() {
    let d = dir("crash");
    let out = d.join("out");
    let book = openings(&d);
    let engine = format!("{} --depth 1", pbrain());
    let output = spsa_run(&[
        "--engine",
        &engine,
        "--opponent",
        &format!("{FAKE} crash"),
        "--rule",
        "freestyle",
        "--openings",
        book.to_str().unwrap(),
        "--space",
        "search",
        "--steps",
        "2",
        "--concurrency",
        "2",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(!stdout.contains("step "), "--quiet: {stdout}");
    let records = steps(&out);
    assert_eq!(records.len(), 2);
    let defaults: Vec<f64> = spsa::search_params(&SearchParams::default(), 0.0)
        .iter()
        .map(|p| p.value)
        .collect();
    for r in &records {
        assert_eq!(r["result"], 0.0, "{r}");
        for g in r["games"].as_array().unwrap() {
            assert_eq!(
                (g["score"].as_str(), g["reason"].as_str()),
                (Some("win"), Some("crash"))
            );
        }
        let values: Vec<f64> = r["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(values, defaults);
    }
    let search = std::fs::read_to_string(out.join("search.txt")).unwrap();
    assert_eq!(
        search,
        spsa::search_text(&SearchParams::default()).join("\n") + "\n"
    );
}

/// Bad arguments and files are refused before anything is played, naming what is wrong.
#[test]
fn bad_arguments_are_refused() {
    let d = dir("bad");
    let book = openings(&d);
    let bad_search = d.join("search.txt");
    std::fs::write(&bad_search, "lmr_k=0.7\nlmr=3\n").unwrap();
    let bad_weights = d.join("weights.txt");
    std::fs::write(&bad_weights, "level 1 2\n").unwrap();
    let book = book.to_str().unwrap();
    let base = [
        "--engine",
        "pbrain-caro",
        "--opponent",
        FAKE,
        "--openings",
        book,
    ];
    for (extra, status, says) in [
        (
            &["--space", "weights"][..],
            2,
            "\"weights\" is not eval, plus, search or both",
        ),
        (&["--steps", "0"], 2, "--steps"),
        (&["--concurrency", "0"], 2, "--concurrency"),
        (
            &["--search", bad_search.to_str().unwrap()],
            1,
            "search.txt:2: \"lmr=3\" is not NAME=VALUE",
        ),
        (&["--weights", bad_weights.to_str().unwrap()], 1, "line 1"),
    ] {
        let out = d.join("out");
        let mut args: Vec<&str> = base.to_vec();
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", out.to_str().unwrap()]);
        let output = spsa_run(&args);
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(status), "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
        assert!(!out.exists(), "{extra:?}: nothing written");
    }
}
