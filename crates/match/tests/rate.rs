//! `caro-match rate` end to end: hand-written `games.jsonl` files from three "matches" between
//! four engines, rated jointly, as a table and as JSON; a sweep that needs the prior; the errors a
//! user can make. The numbers are checked against `stats::elo_from_score`, which the model must
//! reproduce on a chain of matches.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use caro_match::stats::{elo_from_score, Z95};
use serde_json::Value;

mod common;
use common::{gzip, stdout};

const CARO_MATCH: &str = env!("CARGO_BIN_EXE_caro-match");

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("caro-rate-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `DIR/sub/games.jsonl` with `results` of `a` against `b` (`1`, `=` or `0` for `a`),
/// colours alternating as `caro-match play` does, in its record format (fields abridged).
fn write_match(dir: &Path, sub: &str, a: &str, b: &str, results: &str) -> PathBuf {
    let out = dir.join(sub);
    std::fs::create_dir_all(&out).unwrap();
    let mut text = String::new();
    for (k, r) in results.chars().enumerate() {
        let a_is_x = k % 2 == 0;
        let (x, o) = if a_is_x { (a, b) } else { (b, a) };
        let a_points = match r {
            '1' => 2,
            '=' => 1,
            _ => 0,
        };
        let x_points = if a_is_x { a_points } else { 2 - a_points };
        let (winner, result) = match x_points {
            2 => ("\"x\"", "1-0"),
            0 => ("\"o\"", "0-1"),
            _ => ("null", "1/2-1/2"),
        };
        text += &format!(
            "{{\"game\":{},\"pair\":{},\"opening\":\"h8 i9\",\"x\":\"{x}\",\"o\":\"{o}\",\
             \"engine1_color\":\"{}\",\"moves\":[\"h8\",\"i9\"],\"times_ms\":[0,0],\
             \"winner\":{winner},\"result\":\"{result}\",\"reason\":\"five\",\"detail\":\"\",\
             \"restarted\":[false,false],\"duration_ms\":10,\"psq\":\"games/0001.psq\"}}\n",
            k + 1,
            k / 2 + 1,
            if a_is_x { "x" } else { "o" },
        );
    }
    std::fs::write(out.join("games.jsonl"), text).unwrap();
    out
}

fn rate(args: &[&Path], extra: &[&str]) -> Output {
    Command::new(CARO_MATCH)
        .arg("rate")
        .args(args)
        .args(extra)
        .output()
        .expect("caro-match runs")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn rates_a_chain_of_matches_jointly() {
    let d = dir("chain");
    // casual vs classic: 5 of 8 (62.5%); strong vs casual: 6 of 8 (75%); beginner vs casual:
    // 2 of 8 (25%). Each engine meets classic only through casual: the differences add up, and
    // so do the variances of the links, 1 / (k^2 n p (1 - p)) each with k = ln 10 / 400.
    let m1 = write_match(&d, "m1", "casual", "classic", "1=101=10");
    let m2 = write_match(&d, "m2", "strong", "casual", "11011011");
    let m3 = write_match(&d, "m3", "beginner", "casual", "=01=0000");
    let table = stdout(&rate(
        &[&m1, &m2.join("games.jsonl"), &m3],
        &["--anchor", "classic"],
    ));
    let casual = elo_from_score(0.625);
    let strong = casual + elo_from_score(0.75);
    let beginner = casual + elo_from_score(0.25);
    let k = std::f64::consts::LN_10 / 400.0;
    let var = |n: f64, p: f64| 1.0 / (k * k * n * p * (1.0 - p));
    let ci = |v: f64| format!("{:.0}", Z95 * v.sqrt());
    assert_eq!(
        table,
        format!(
            "Elo of 4 engines from 24 games: logistic model, a draw counts 1/2, classic = 0\n\
             rank  engine     games   score     Elo    ±95%\n\
             \x20  1  strong         8   75.0%  {:>+6.0}  {:>6}\n\
             \x20  2  casual        24   54.2%  {:>+6.0}  {:>6}\n\
             \x20  3  classic        8   37.5%       0  anchor\n\
             \x20  4  beginner       8   25.0%  {:>+6.0}  {:>6}\n\
             prior: none (maximum-likelihood ratings)\n",
            strong,
            ci(var(8.0, 0.625) + var(8.0, 0.75)),
            casual,
            ci(var(8.0, 0.625)),
            beginner,
            ci(var(8.0, 0.625) + var(8.0, 0.25)),
        )
    );
    // A gzipped file, and a directory holding only `games.jsonl.gz` (as docs/strength-runs
    // keeps them), read the same.
    let gz = d.join("m2.jsonl.gz");
    gzip(&m2.join("games.jsonl"), &gz);
    let m2_gz = d.join("m2-gz");
    std::fs::create_dir_all(&m2_gz).unwrap();
    gzip(&m2.join("games.jsonl"), &m2_gz.join("games.jsonl.gz"));
    for m2 in [&gz, &m2_gz] {
        assert_eq!(
            stdout(&rate(&[&m1, m2, &m3], &["--anchor", "classic"])),
            table
        );
    }

    let json: Value = serde_json::from_str(&stdout(&rate(
        &[&m1, &m2, &m3],
        &["--anchor", "classic", "--json"],
    )))
    .unwrap();
    assert_eq!(json["anchor"], "classic");
    assert_eq!(json["games"], 24);
    assert_eq!(json["prior"]["virtual_draws"], 0.0);
    assert_eq!(json["prior"]["reason"], Value::Null);
    assert_eq!(json["files"].as_array().unwrap().len(), 3);
    let engines = json["engines"].as_array().unwrap();
    let names: Vec<&str> = engines
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["strong", "casual", "classic", "beginner"]);
    let elo = |i: usize| engines[i]["elo"].as_f64().unwrap();
    assert!(close(elo(0), strong) && close(elo(1), casual) && close(elo(3), beginner));
    assert_eq!(elo(2), 0.0);
    // casual's interval is its one match with classic.
    let se = var(8.0, 0.625).sqrt();
    assert!(close(engines[1]["stderr"].as_f64().unwrap(), se));
    assert!(close(engines[1]["ci95"].as_f64().unwrap(), Z95 * se));
    assert_eq!(engines[1]["points"], 13.0);
    let pairs = json["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 3);
    assert_eq!(pairs[0]["engine1"], "beginner");
    assert_eq!(pairs[0]["engine2"], "casual");
    assert_eq!(pairs[0]["points1"], 2.0);
}

#[test]
fn a_clean_sweep_is_rated_with_the_prior_and_says_so() {
    let d = dir("sweep");
    let m1 = write_match(&d, "m1", "master", "classic", "1111");
    let m2 = write_match(&d, "m2", "casual", "classic", "10=1");
    let table = stdout(&rate(&[&m1, &m2], &[]));
    // master's only games, against classic: 4 wins and the prior's virtual draw, 4.5 of 5.
    assert!(
        table.contains(&format!(
            "master        4  100.0%  {:>+6.0}",
            elo_from_score(0.9)
        )),
        "{table}"
    );
    // The prior applies to every engine: casual's 2.5 of 4 becomes 3 of 5.
    assert!(
        table.contains(&format!(
            "casual        4   62.5%  {:>+6.0}",
            elo_from_score(0.6)
        )),
        "{table}"
    );
    assert!(
        table.ends_with(
            "prior: 1 virtual draw(s) of each engine against classic, because no finite \
             maximum-likelihood ratings: master won every game it played\n"
        ),
        "{table}"
    );
    // Without a prior there is no answer, and the error says why.
    let output = rate(&[&m1, &m2], &["--prior", "0"]);
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("master won every game"), "{err}");
}

#[test]
fn user_errors_are_explained() {
    let d = dir("errors");
    let m1 = write_match(&d, "m1", "a", "b", "10");
    let m2 = write_match(&d, "m2", "c", "d", "10");
    let err = |output: Output| {
        assert!(!output.status.success());
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let e = err(rate(&[&m1], &[]));
    assert!(
        e.contains("anchor \"classic\" played no game; engines: a, b"),
        "{e}"
    );
    let e = err(rate(&[&m1, &m2], &["--anchor", "a"]));
    assert!(
        e.contains("no chain of games links c, d to the anchor \"a\""),
        "{e}"
    );
    std::fs::write(d.join("bad.jsonl"), "{\"x\":\"a\"}\n").unwrap();
    let e = err(rate(&[&d.join("bad.jsonl")], &["--anchor", "a"]));
    assert!(e.contains("bad.jsonl") && e.contains("line 1"), "{e}");
    let e = err(rate(&[&d.join("missing")], &[]));
    assert!(e.contains("missing"), "{e}");
}
