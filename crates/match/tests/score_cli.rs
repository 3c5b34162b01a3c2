//! `caro-match score` end to end: a real SPRT match played by `fake-pbrain` to its decision,
//! then scored from its `games.jsonl` (plain and gzipped), which must give back exactly what the
//! runner printed and wrote in `summary.json`; the same file cut to an odd number of games, as a
//! match killed for time leaves it, whose last game must be left out of the pentanomial and
//! reported; and the errors a user can make.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use caro_match::stats::{Pentanomial, Wdl};
use serde_json::Value;

mod common;
use common::{gzip, stdout};

const CARO_MATCH: &str = env!("CARGO_BIN_EXE_caro-match");
const FAKE: &str = env!("CARGO_BIN_EXE_fake-pbrain");
const SPRT: &str = "0,100,0.05,0.05";

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("caro-score-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Plays `one` (`fake-pbrain good`) against `two` (`fake-pbrain illegal`, which loses every
/// game it reaches its third move in) under `--sprt 0,100,0.05,0.05` in `DIR/match`, and returns
/// the output directory and what `play` printed. The book's first opening gives X a five on
/// its first move (h8, the cell both engines pick first), so X wins each game of that pair,
/// split 1-1; in the other `two` reaches its third move, so `one` wins the pair 2-0. The SPRT
/// accepts H1 after 24 games (12 pairs); no clock, so a loaded machine changes nothing.
fn play_match(dir: &Path) -> (PathBuf, String) {
    let book = dir.join("book.txt");
    std::fs::write(&book, "f8 a1 g8 a3 i8 a5 j8 a7\nh8 i9 j8\n").unwrap();
    let out = dir.join("match");
    let output = Command::new(CARO_MATCH)
        .args(["play", "--engine1", &format!("{FAKE} good")])
        .args(["--engine2", &format!("{FAKE} illegal")])
        .args(["--name1", "one", "--name2", "two", "--delay-ms", "1"])
        .args(["--turn-ms", "0", "--games", "100", "--sprt", SPRT, "-q"])
        .arg("--openings")
        .arg(&book)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("caro-match runs");
    (out, stdout(&output))
}

fn score(files: &[&Path], extra: &[&str]) -> Output {
    Command::new(CARO_MATCH)
        .arg("score")
        .args(files)
        .args(extra)
        .output()
        .expect("caro-match runs")
}

fn stderr(output: &Output) -> String {
    assert!(!output.status.success(), "caro-match should have failed");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The runner's final report of the match (what `play -q` printed, less the `output:` line).
const REPORT: &str = "\
one vs two: 24 games
  one: +18 =0 -6 total, +12 =0 -0 as X (first), +6 =0 -6 as O; score 18.0/24 = 0.750
  Elo (trinomial):   +190.8 [+53.8, +432.1] (95%)
  Elo (pentanomial): +190.8 [+76.6, +365.8] (95%)  pairs [0, 1/2, 1, 3/2, 2] = [0, 0, 6, 0, 6]
  endings: five 12, illegal_move 12
  two lost by fault: illegal_move 12; restarted 12 times
  SPRT elo0=0 elo1=100 alpha=0.05 beta=0.05 (pentanomial): LLR 2.962 bounds [-2.944, 2.944] -> H1 accepted (elo1) after 24 games
";

#[test]
fn a_finished_match_scores_as_the_runner_reported_it() {
    let d = dir("finished");
    let (out, played) = play_match(&d);
    assert_eq!(played, format!("{REPORT}output: {}\n", out.display()));
    let jsonl = out.join("games.jsonl");
    let expected = format!("{REPORT}  unpaired games: none\n");
    assert_eq!(stdout(&score(&[&jsonl], &["--sprt", SPRT])), expected);
    // The output directory, and a gzipped copy as docs/strength-runs keeps them, read the same.
    assert_eq!(stdout(&score(&[&out], &["--sprt", SPRT])), expected);
    let gz = d.join("games.jsonl.gz");
    gzip(&jsonl, &gz);
    assert_eq!(stdout(&score(&[&gz], &["--sprt", SPRT])), expected);

    // The JSON holds summary.json's fields with the same values, to the last bit.
    let json: Value =
        serde_json::from_str(&stdout(&score(&[&jsonl], &["--sprt", SPRT, "--json"]))).unwrap();
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for (key, value) in summary.as_object().unwrap() {
        assert_eq!(&json[key], value, "{key}");
    }
    assert_eq!(
        json["files"],
        serde_json::json!([jsonl.display().to_string()])
    );
    assert_eq!(json["unpaired"], serde_json::json!([]));

    // No --sprt, no SPRT line.
    let without_sprt: String = expected
        .lines()
        .filter(|l| !l.starts_with("  SPRT"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(stdout(&score(&[&jsonl], &[])), without_sprt);
}

#[test]
fn the_last_game_of_a_stopped_match_is_left_out_of_the_pentanomial() {
    let d = dir("stopped");
    let (out, _) = play_match(&d);
    // 23 games, as if the match had been killed during game 24: pair 12 has one game.
    let text = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    let cut = d.join("cut.jsonl");
    let lines: Vec<&str> = text.lines().take(23).collect();
    std::fs::write(&cut, lines.join("\n") + "\n").unwrap();
    let last: Value = serde_json::from_str(lines[22]).unwrap();
    assert_eq!(
        (last["game"].as_u64(), last["pair"].as_u64()),
        (Some(23), Some(12))
    );

    assert_eq!(
        stdout(&score(&[&cut], &["--sprt", SPRT])),
        "one vs two: 23 games
  one: +18 =0 -5 total, +12 =0 -0 as X (first), +6 =0 -5 as O; score 18.0/23 = 0.783
  Elo (trinomial):   +222.5 [+80.7, +515.9] (95%)
  Elo (pentanomial): +212.6 [+89.2, +423.9] (95%)  pairs [0, 1/2, 1, 3/2, 2] = [0, 0, 5, 0, 6]
  endings: five 11, illegal_move 12
  two lost by fault: illegal_move 12; restarted 12 times
  SPRT elo0=0 elo1=100 alpha=0.05 beta=0.05 (pentanomial): LLR 2.716 bounds [-2.944, 2.944] -> no decision
  unpaired games: 1 (pair 12 game 23), not in the pentanomial: the other game of the pair is missing
"
    );
    // The numbers are stats.rs's on the 11 complete pairs and the 23 games.
    let json: Value =
        serde_json::from_str(&stdout(&score(&[&cut], &["--sprt", SPRT, "--json"]))).unwrap();
    let pairs = Pentanomial {
        counts: [0, 0, 5, 0, 6],
    };
    let elo = pairs.elo().unwrap();
    assert_eq!(json["elo_pentanomial"]["elo"].as_f64(), Some(elo.elo));
    assert_eq!(json["elo_pentanomial"]["low"].as_f64(), Some(elo.low));
    assert_eq!(json["elo_pentanomial"]["high"].as_f64(), Some(elo.high));
    assert_eq!(
        json["sprt"]["llr"].as_f64(),
        Some(pairs.llr(0.0, 100.0)),
        "the GSPRT over pairs"
    );
    let games = Wdl {
        wins: 18,
        draws: 0,
        losses: 5,
    };
    assert_eq!(json["elo"]["elo"].as_f64(), Some(games.elo().unwrap().elo));
    assert_eq!(
        json["unpaired"],
        serde_json::json!([{"file": cut.display().to_string(), "pair": 12, "game": 23}])
    );

    // From engine 2's point of view: everything mirrored.
    let two = stdout(&score(&[&cut], &["--engine", "two"]));
    assert!(
        two.starts_with(
            "two vs one: 23 games
  two: +5 =0 -18 total, +5 =0 -6 as X (first), +0 =0 -12 as O; score 5.0/23 = 0.217
  Elo (trinomial):   -222.5 [-515.9, -80.7] (95%)
  Elo (pentanomial): -212.6 [-423.9, -89.2] (95%)  pairs [0, 1/2, 1, 3/2, 2] = [6, 0, 5, 0, 0]
"
        ),
        "{two}"
    );
}

/// A reader that goes away before the report (`caro-match score ... | head`) ends the run
/// quietly, as `cat` would: success and nothing on stderr, where `println!` panicked.
#[test]
fn a_reader_that_went_away_ends_it_quietly() {
    let d = dir("pipe");
    let (out, _) = play_match(&d);
    let mut child = Command::new(CARO_MATCH)
        .arg("score")
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Closed before caro-match has read the games, let alone written the report.
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stderr, "");
}

#[test]
fn user_errors_are_explained() {
    let d = dir("errors");
    let (out, _) = play_match(&d);
    let text = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    let with_line = |n: usize, line: &str| -> String {
        let mut lines: Vec<&str> = text.lines().collect();
        lines[n - 1] = line;
        lines.join("\n") + "\n"
    };

    let bad = d.join("bad.jsonl");
    std::fs::write(&bad, with_line(3, "{\"game\":3,\"pair\":2,\"x\":\"one\"")).unwrap();
    let e = stderr(&score(&[&bad], &[]));
    assert!(
        e.contains(&format!(
            "{}, line 3: EOF while parsing an object at column 28",
            bad.display()
        )),
        "{e}"
    );

    let missing = d.join("missing.jsonl");
    let e = stderr(&score(&[&missing], &[]));
    assert!(
        e.contains(&format!("{}: No such file or directory", missing.display())),
        "{e}"
    );

    // Line 5 played by another engine than `two`.
    let mixed = d.join("mixed.jsonl");
    let line5 = text.lines().nth(4).unwrap().replace("\"two\"", "\"three\"");
    std::fs::write(&mixed, with_line(5, &line5)).unwrap();
    let e = stderr(&score(&[&mixed], &[]));
    assert!(
        e.contains(&format!(
            "{}, line 5: a game of \"one\" vs \"three\", but the first game is \"one\" vs \
             \"two\": score one pair of engines at a time",
            mixed.display()
        )),
        "{e}"
    );

    let e = stderr(&score(&[&out], &["--engine", "three"]));
    assert!(
        e.contains("engine \"three\" played none of these games; engines: \"one\", \"two\""),
        "{e}"
    );
}
