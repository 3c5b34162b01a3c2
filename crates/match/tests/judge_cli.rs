//! `caro-match judge` end to end, over real processes: `fake-pbrain eval` reports, before each
//! move, evaluations that follow from the position (for X: the sum of X's columns minus the sum
//! of O's; see tests/fake_engines/fake_pbrain.rs), so the exact book is known: which openings
//! are kept, in which order, how many, with which sign. An engine that reports no evaluation,
//! or does not start, stops the run with an error that names the opening.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CARO_MATCH: &str = env!("CARGO_BIN_EXE_caro-match");
const FAKE: &str = env!("CARGO_BIN_EXE_fake-pbrain");

/// Writes `text` as a candidates file for one test.
fn candidates(name: &str, text: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("judge-{name}.txt"));
    std::fs::write(&path, text).unwrap();
    path
}

fn judge(candidates: &Path, engine: &str, extra: &[&str]) -> Output {
    Command::new(CARO_MATCH)
        .arg("judge")
        .arg(candidates)
        .args(["--engine", engine])
        .args(extra)
        .output()
        .expect("caro-match runs")
}

/// Each line's evaluation for X, by the fake's rule (columns from `a` = 0), and the side to
/// move: the engine reports the negation of the first three when O is to move.
const CANDIDATES: &str = "\
# candidates: a comment, as `caro-match openings` writes
h8 i9 j8  # score +12 depth 9 (side to move)
h8 i9 g7
a1 h8 b1
g8 o1 g9
0,0 0,1 1,0 1,1
g8 h8
h8 g9
";
// h8 i9 j8     X 7+9, O 8:  +8, O to move   outside +-5
// h8 i9 g7     X 7+6, O 8:  +5, O to move   kept (the window's edge)
// a1 h8 b1     X 0+1, O 7:  -6, O to move   outside
// g8 o1 g9     X 6+6, O 14: -2, O to move   kept
// h8 h9 i8 i9  X 7+8, O 7+8: 0, X to move   kept (the offsets line, printed as squares)
// g8 h8        X 6, O 7:    -1, X to move   kept: the fourth
// h8 g9        X 7, O 6:    +1, X to move   within, but --count 4 is reached

#[test]
fn the_book_keeps_the_first_openings_within_the_window_in_the_candidates_order() {
    let path = candidates("book", CANDIDATES);
    let engine = format!("{FAKE} eval");
    let out = judge(
        &path,
        &engine,
        &[
            "--rule",
            "freestyle",
            "--turn-ms",
            "500",
            "--within",
            "5",
            "--count",
            "4",
            "--jobs",
            "3",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let expected = format!(
        "# caro-match judge {} --engine \"fake-pbrain eval\" --rule freestyle --width 15 \
         --height 15 --turn-ms 500 --within 5 --count 4: 4 of 7 kept\n\
         # Each line: moves from the empty board, X first; then the judge's evaluation for X.\n\
         h8 i9 g7  # judge +5\n\
         g8 o1 g9  # judge -2\n\
         h8 h9 i8 i9  # judge +0\n\
         g8 h8  # judge -1\n",
        path.display()
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);
    // Every evaluation for X, in the candidates' order, on stderr.
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "judged 7: 8 5 -6 -2 0 -1 1\n"
    );
}

#[test]
fn an_engine_without_evaluations_is_an_error_naming_the_opening() {
    let path = candidates("no-eval", "h8 i9 j8\ng8 h8\n");
    // `good` chats in MESSAGE lines, but never with an evaluation. Both openings fail at
    // once with two jobs; the error is the first one's.
    let out = judge(
        &path,
        &format!("{FAKE} good"),
        &["--rule", "freestyle", "-v"],
    );
    assert!(!out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty(), "no book is printed");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(&format!(
            "Error: {FAKE} good reported no evaluation for h8 i9 j8 (no MESSAGE line"
        )),
        "{err}"
    );
    assert!(!err.contains("for g8 h8"), "{err}");
    // -v echoes the protocol: the position as the engine got it and what it said.
    for line in [
        "opening 1",
        "< BOARD",
        "< 7,7,2",
        "< 8,8,1",
        "> MESSAGE thinking hard",
    ] {
        assert!(err.contains(line), "{line}: {err}");
    }
}

#[test]
fn an_engine_that_does_not_start_is_an_error_naming_the_opening() {
    let path = candidates("no-engine", "h8 i9 j8\n");
    let out = judge(&path, "/nonexistent/pbrain-none", &["--rule", "freestyle"]);
    assert!(!out.status.success(), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("/nonexistent/pbrain-none failed on h8 i9 j8: cannot start")
            && err.contains("(start_failed)"),
        "{err}"
    );
}
