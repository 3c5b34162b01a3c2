//! `caro-match openings` end to end: a file's first line is the command that regenerates it,
//! byte for byte, when the check is bounded by nodes (no clock), including the playout pairs;
//! bad playout pairs are refused with a clear message. And the v3 book's header: the commands
//! that made it run and print it.

use std::process::{Command, Stdio};

const CARO_MATCH: &str = env!("CARGO_BIN_EXE_caro-match");
const FAKE: &str = env!("CARGO_BIN_EXE_fake-pbrain");

fn openings(args: &[&str]) -> std::process::Output {
    Command::new(CARO_MATCH)
        .arg("openings")
        .args(args)
        .output()
        .expect("caro-match runs")
}

/// Openings print as they are kept; when the reader has gone (`caro-match openings ... |
/// head`), the run stops there, quietly: success, and no tally on stderr (it is written only
/// after a run that went to its end).
#[test]
fn a_reader_that_went_away_stops_the_run_quietly() {
    let mut child = Command::new(CARO_MATCH)
        .args(["openings", "--rule", "freestyle", "--count", "2"])
        .args(["--depth", "64", "--time-ms", "0", "--nodes", "5000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("caro-match runs");
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stderr, "");
}

#[test]
fn the_first_line_regenerates_the_file() {
    let out = openings(&[
        "--rule",
        "freestyle",
        "--count",
        "2",
        "--max-stones",
        "4",
        "--depth",
        "64",
        "--time-ms",
        "0",
        "--nodes",
        "5000",
        "--window",
        "300",
        // A seed that keeps two openings with the default search: 3, then 4 with `keep`
        // (2026-12-03), 3 again with the bonuses at half weight (the same day; 4 keeps one).
        "--seed",
        "3",
        "--playout",
        "1000/1600",
        "--playout",
        "2000/3000",
    ]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.ends_with("--nodes 5000 --playout 1000/1600 --playout 2000/3000"),
        "{first}"
    );
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 2, "{text}");
    for l in &lines {
        // Four playout games, each pair ending differently for X.
        let results = l.split("playouts ").nth(1).expect("playout results");
        let r: Vec<char> = results.chars().collect();
        assert_eq!(r.len(), 4, "{l}");
        assert!(r[0] != r[1] && r[2] != r[3], "{l}");
    }
    let tally = String::from_utf8(out.stderr).unwrap();
    assert!(
        tally.contains(" candidates, ") && tally.ends_with(", 2 kept\n"),
        "{tally}"
    );

    let args: Vec<&str> = first
        .strip_prefix("# caro-match openings ")
        .unwrap()
        .split_whitespace()
        .collect();
    let again = openings(&args);
    assert!(again.status.success(), "{again:?}");
    assert_eq!(String::from_utf8(again.stdout).unwrap(), text);
}

#[test]
fn bad_playout_pairs_are_refused() {
    for bad in ["3000", "3000/3000", "x/1"] {
        let out = openings(&["--count", "1", "--playout", bad]);
        assert!(!out.status.success(), "{bad}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("--playout"), "{bad}: {err}");
    }
}

/// The v3 freestyle book (docs/match.md, "The v3 freestyle book"): 40 legal openings, none
/// twice, each with the judge's evaluation for X within the ±100 its header states; the
/// candidates' command of its first line is one `caro-match openings` runs (with a smaller
/// count and budget here: the candidates themselves depend on the engine's search, which
/// later commits change, so the book, not the command, is the record); and the judge's command
/// of its second line is one `caro-match judge` runs and prints as its header (with our fake
/// engine for Rapfi, on the book itself for the candidates).
#[test]
fn the_v3_book_is_what_its_header_says() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../data/openings/freestyle15-v3.txt"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let rules = caro_engine::Rules::caro_default();
    let book = caro_match::openings::parse_openings(&text, rules).unwrap();
    assert_eq!(book.len(), 40);
    let distinct: std::collections::HashSet<_> = book.iter().collect();
    assert_eq!(distinct.len(), 40, "an opening twice");
    let header = text.lines().nth(1).unwrap();
    let (judge_command, tally) = header.split_once(": ").expect(header);
    assert!(
        judge_command.ends_with("--within 100 --count 40"),
        "{header}"
    );
    assert_eq!(tally, "40 of 160 kept");
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let judged: i32 = line
            .split("# judge ")
            .nth(1)
            .expect(line)
            .parse()
            .expect(line);
        assert!(judged.abs() <= 100, "{line}");
    }

    let command = text.lines().next().unwrap();
    let mut args: Vec<&str> = command
        .strip_prefix("# caro-match openings ")
        .and_then(|c| c.strip_suffix(" > candidates"))
        .expect(command)
        .split_whitespace()
        .collect();
    for (flag, value) in [("--count", "1"), ("--nodes", "5000")] {
        let i = args.iter().position(|&a| a == flag).expect(flag);
        args[i + 1] = value;
    }
    let out = openings(&args);
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let kept: Vec<&str> = stdout.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(kept.len(), 1, "{stdout}");
    let parsed = caro_match::openings::parse_openings(kept[0], rules).unwrap();
    assert_eq!(parsed.len(), 1, "{}", kept[0]);

    let mut args: Vec<&str> = judge_command
        .strip_prefix("# caro-match judge ")
        .expect(header)
        .split_whitespace()
        .collect();
    assert_eq!(
        args[..3],
        ["candidates", "--engine", "pbrain-rapfi"],
        "{header}"
    );
    let engine = format!("{FAKE} eval");
    args[0] = path;
    args[2] = &engine;
    let out = Command::new(CARO_MATCH)
        .arg("judge")
        .args(&args)
        .output()
        .expect("caro-match runs");
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let (printed, _) = stdout.lines().next().unwrap().split_once(": ").unwrap();
    assert_eq!(
        printed
            .replace(path, "candidates")
            .replace("\"fake-pbrain eval\"", "pbrain-rapfi"),
        judge_command
    );
}
