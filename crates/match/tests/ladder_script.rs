//! `scripts/ladder` (Python 3.11+) end to end, cheaply: the exact commands of a dry run on a small
//! config, a whole ladder played by the scripted `fake-pbrain` (the level flags go to a wrapper
//! that drops them) through `caro-match play` and `caro-match rate` to the markdown table, and,
//! when the `pbrain-caro` built next to these tests knows the level flags, a tiny ladder of real
//! levels at depth 1 and 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod scripts;
use scripts::repo;

const CARO_MATCH: &str = env!("CARGO_BIN_EXE_caro-match");
const FAKE: &str = env!("CARGO_BIN_EXE_fake-pbrain");

/// A config with the shapes the script must handle: a blundering level, a depth-only level
/// without `style` and `blunder` (their defaults) that orders quiet moves by the learnt table
/// (`learnt_ordering`), a tic-tac-toe-only level (skipped), the classic anchor, and keys the
/// script ignores.
const CONFIG: &str = r#"
[server]
bind = "127.0.0.1:0"

[bots.weak]
description = "weak"
games = ["caro", "tictactoe"]
style = "full"
max_depth = 1
time_ms = 20
blunder = 0.25

[bots.ttt]
description = "tic-tac-toe only"
games = ["tictactoe"]
max_depth = 9
time_ms = 100

[bots.strong]
description = "strong"
games = ["caro"]
max_depth = 2
time_ms = 40
learnt_ordering = true

[bots.classic]
description = "anchor"
games = ["caro"]
style = "classic"
max_depth = 1
time_ms = 50
"#;

/// Runs the script with `args`.
fn ladder(args: &[&str]) -> Output {
    scripts::run("ladder", args)
}

fn success(output: &Output) -> String {
    scripts::success("ladder", output)
}

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    scripts::dir("ladder", name)
}

#[test]
fn dry_run_prints_the_schedule() {
    let d = dir("dry");
    let config = d.join("config.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let config = config.to_str().unwrap();
    let out = success(&ladder(&[
        "--dry-run",
        "--config",
        config,
        "--bin",
        "/B",
        "--pbrain",
        "/E/pbrain-caro",
        "--out",
        "/O",
        "--games",
        "4",
        "--seed",
        "7",
    ]));
    let openings = repo().join("data/openings/caro15.txt");
    let openings = openings.to_str().unwrap();
    let play = |e1: &str, e2: &str, n1: &str, n2: &str, turn: u32| {
        format!(
            "/B/caro-match play --engine1 '/E/pbrain-caro {e1}' --engine2 '/E/pbrain-caro {e2}' \
             --name1 {n1} --name2 {n2} --rule caro --size 15 --turn-ms {turn} \
             --tolerance-ms 250 --games 4 --concurrency 1 --seed 7 --out /O/{n1}-vs-{n2} \
             --quiet --openings {openings}\n"
        )
    };
    let weak = "--depth 1 --time-ms 20 --blunder 0.25 --seed 7 --level-numbers";
    // Levels search with their own numbers and the cell values' order (`--level-numbers`)
    // unless learnt_ordering.
    let strong = "--depth 2 --time-ms 40 --blunder 0 --seed 7";
    let classic = "--style classic --depth 1";
    // Turn times: max(t * 10 / 9, t + 30) of the slower level, so that its own budget binds.
    let expected = [
        play(weak, "--depth 1", "weak", "novice", 50),
        play(strong, weak, "strong", "weak", 70),
        play("--depth 1", classic, "novice", "classic", 80),
        play(weak, classic, "weak", "classic", 80),
        play(strong, classic, "strong", "classic", 80),
        "/B/caro-match rate --anchor classic /O/weak-vs-novice /O/strong-vs-weak \
         /O/novice-vs-classic /O/weak-vs-classic /O/strong-vs-classic\n"
            .to_string(),
    ]
    .concat();
    assert_eq!(out, expected);

    // The strength order, the reference, the turn time and the openings can be changed.
    let out = success(&ladder(&[
        "--dry-run",
        "--config",
        config,
        "--bin",
        "/B",
        "--pbrain",
        "/E/pbrain-caro",
        "--out",
        "/O",
        "--levels",
        "strong,weak",
        "--no-reference",
        "--turn-ms",
        "500",
        "--openings",
        "none",
        "--rule",
        "freestyle",
        "--concurrency",
        "2",
    ]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert!(lines[0].contains("--name1 weak --name2 strong"), "{out}");
    assert!(lines[1].contains("--name1 strong --name2 classic"), "{out}");
    assert!(lines[2].contains("--name1 weak --name2 classic"), "{out}");
    for line in &lines[..3] {
        assert!(
            line.contains("--rule freestyle --size 15 --turn-ms 500"),
            "{out}"
        );
        assert!(line.contains("--concurrency 2") && !line.contains("--openings"));
    }

    // Mistakes are caught before anything runs.
    for (args, message) in [
        (
            &["--anchor", "nobody"][..],
            "anchor 'nobody' is not a caro level",
        ),
        (&["--levels", "weak,ttt"], "'ttt' is not a caro level"),
        (&["--reference-name", "weak"], "is also a level"),
        (
            &["--levels", "weak,classic"],
            "the anchor 'classic' plays every level",
        ),
    ] {
        let output = ladder(&[&["--dry-run", "--config", config][..], args].concat());
        assert!(!output.status.success());
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(err.contains(message), "{err}");
    }
}

/// Checks a finished ladder's output directory; returns `ladder.md`.
fn check_output(out: &Path, players: &[&str], matches: usize, games: u64) -> String {
    let ratings: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("ratings.json")).unwrap()).unwrap();
    assert_eq!(ratings["anchor"], "classic");
    assert_eq!(ratings["games"], games * matches as u64);
    let mut names: Vec<&str> = ratings["engines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    names.sort();
    let mut want = players.to_vec();
    want.sort();
    assert_eq!(names, want);
    let commands = std::fs::read_to_string(out.join("commands.sh")).unwrap();
    assert_eq!(commands.matches(" play ").count(), matches, "{commands}");
    assert!(std::fs::read_to_string(out.join("ratings.txt"))
        .unwrap()
        .contains("classic = 0"));
    let md = std::fs::read_to_string(out.join("ladder.md")).unwrap();
    assert!(md.starts_with(
        "| level | settings | time per move: budget, measured mean (max) | Elo vs classic \
         | ±95% | score vs lower neighbour |\n|---|---|---|---|---|---|\n"
    ));
    // One row per player: the reference first, the anchor last.
    let rows: Vec<&str> = md
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert_eq!(rows.len(), players.len(), "{md}");
    assert!(
        rows[0].starts_with("| novice (reference) | `--depth 1` "),
        "{md}"
    );
    assert!(
        rows[players.len() - 1].starts_with("| classic (anchor) | `--style classic --depth 1` "),
        "{md}"
    );
    assert!(rows[players.len() - 1].contains("| 0 | anchor |"), "{md}");
    md
}

#[test]
fn a_whole_ladder_with_the_fake_engine() {
    let d = dir("fake");
    let config = d.join("config.toml");
    std::fs::write(&config, CONFIG).unwrap();
    // The level flags mean nothing to fake-pbrain: a wrapper drops them.
    let wrapper = d.join("fake-level");
    std::fs::write(&wrapper, format!("#!/bin/sh\nexec '{FAKE}' good\n")).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let bin = Path::new(CARO_MATCH).parent().unwrap();
    let out = d.join("out");
    // The script on this config and these binaries, with the engine and output given.
    let run = |pbrain: &Path, out: &Path, more: &[&str]| {
        let mut args = vec!["--config", config.to_str().unwrap()];
        args.extend(["--bin", bin.to_str().unwrap()]);
        args.extend(["--pbrain", pbrain.to_str().unwrap()]);
        args.extend(["--out", out.to_str().unwrap()]);
        args.extend(more);
        ladder(&args)
    };
    let two_games = ["--games", "2", "--turn-ms", "1000"];
    let stdout = success(&run(&wrapper, &out, &two_games));
    assert!(
        stdout.contains("[5/5] strong vs classic: 2 games"),
        "{stdout}"
    );
    let md = check_output(&out, &["novice", "weak", "strong", "classic"], 5, 2);
    // The settings and the budgets under --turn-ms 1000: a level's own, or 1000 less the
    // engine's margin for classic, which has no clock of its own.
    assert!(
        md.contains(
            "| weak | `--depth 1 --time-ms 20 --blunder 0.25 --seed 1 --level-numbers` (full, \
             depth 1, 20 ms, blunder 0.25) | 20 ms, "
        ),
        "{md}"
    );
    assert!(
        md.contains(
            "| classic (anchor) | `--style classic --depth 1` (classic, depth 1, 50 ms) | 900 ms, "
        ),
        "{md}"
    );
    assert!(
        md.contains(" vs novice (") && md.contains(" vs weak ("),
        "{md}"
    );
    assert!(
        md.contains("turn time 1000 ms a move in every match"),
        "{md}"
    );

    // An engine that refuses the level flags (fake-pbrain itself, or a pbrain-caro older than
    // the flags) stops the script before any match, with the reason.
    let refused = run(Path::new(FAKE), &d.join("refused"), &[]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("exited with status 2 (does this pbrain-caro know the level flags"),
        "{err}"
    );
    assert!(!d.join("refused").exists());

    // --resume plays nothing again and gives the same table.
    let again = success(&run(
        &wrapper,
        &out,
        &[&two_games[..], &["--resume"]].concat(),
    ));
    assert_eq!(again.matches("done already").count(), 5, "{again}");
}

/// The real engine at tiny levels (`pbrain-caro` is built by `cargo build -p caro-pbrain --bin
/// pbrain-caro`, as scripts/test does).
#[test]
fn a_tiny_ladder_of_real_levels() {
    let bin = Path::new(CARO_MATCH).parent().unwrap();
    let pbrain = bin.join("pbrain-caro");
    let probe = Command::new(&pbrain)
        .args(["--depth", "1", "--time-ms", "10"])
        .stdin(std::process::Stdio::null())
        .output();
    // scripts/test builds pbrain-caro before the tests: a missing binary is a failure, not a skip.
    match probe {
        Ok(o) => assert!(
            o.status.success(),
            "{} refused the level flags: {o:?}",
            pbrain.display()
        ),
        Err(e) => panic!(
            "{} is missing ({e}): run `cargo build -p caro-pbrain --bin pbrain-caro`",
            pbrain.display()
        ),
    }
    let d = dir("real");
    let config = d.join("config.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let out = d.join("out");
    success(&ladder(&[
        "--config",
        config.to_str().unwrap(),
        "--bin",
        bin.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--games",
        "2",
        "--tolerance-ms",
        "500",
    ]));
    let md = check_output(&out, &["novice", "weak", "strong", "classic"], 5, 2);
    assert!(
        md.contains(
            "| strong | `--depth 2 --time-ms 40 --blunder 0 --seed 1` (full, depth 2, 40 ms, \
             blunder 0, learnt ordering) | "
        ),
        "{md}"
    );
}
