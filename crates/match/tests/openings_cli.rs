//! `caro-match openings` end to end: a file's first line is the command that regenerates it,
//! byte for byte, when the check is bounded by nodes (no clock), including the playout pairs;
//! bad playout pairs are refused with a clear message.

use std::process::Command;

const CARO_MATCH: &str = env!("CARGO_BIN_EXE_caro-match");

fn openings(args: &[&str]) -> std::process::Output {
    Command::new(CARO_MATCH)
        .arg("openings")
        .args(args)
        .output()
        .expect("caro-match runs")
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
