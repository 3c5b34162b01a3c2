//! `scripts/field-ab` (Python 3.11+) end to end, cheaply: the exact commands and their order in a
//! dry run, a tiny comparison of two real `pbrain-caro` levels against a third through `caro-match
//! play` (its report checked against the matches' own summaries, and a second call resuming
//! without playing), and its typed refusals of bad arguments.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

mod scripts;
use scripts::repo;

const CARO_MATCH: &str = env!("CARGO_BIN_EXE_caro-match");

fn dir(name: &str) -> PathBuf {
    scripts::dir("field-ab", name)
}

fn field_ab(args: &[&str]) -> Output {
    scripts::run("field-ab", args)
}

fn success(output: &Output) -> String {
    scripts::success("field-ab", output)
}

#[test]
fn dry_run_interleaves_the_engines_seed_by_seed() {
    let out = success(&field_ab(&[
        "--dry-run",
        "--opponent",
        "/o/pbrain-rapfi",
        "--opponent-name",
        "rapfi",
        "--seeds",
        "3,4",
        "--runs",
        "2",
        "--games",
        "8",
        "--caro-match",
        "/B/caro-match",
        "--out",
        "/O",
        "base=/b/pbrain-caro",
        "new=/n/pbrain-caro --threads 1",
    ]));
    let openings = repo().join("data/openings/freestyle15-v3.txt");
    let play = |name: &str, engine: &str, run: u32, seed: u32| {
        format!(
            "/B/caro-match play --engine1 {engine} --engine2 /o/pbrain-rapfi --name1 {name} \
             --name2 rapfi --rule freestyle --size 15 --turn-ms 200 --games 8 --openings {} \
             --seed {seed} --out /O/{name}/r{run}-s{seed} --quiet\n",
            openings.display()
        )
    };
    let mut expected = String::new();
    for run in 1..=2 {
        for seed in 3..=4 {
            expected += &play("base", "/b/pbrain-caro", run, seed);
            expected += &play("new", "'/n/pbrain-caro --threads 1'", run, seed);
        }
    }
    assert_eq!(out, expected);
}

#[test]
fn bad_arguments_are_refused_with_the_reason() {
    let cases: [(&[&str], &str); 4] = [
        (&["just-a-command"], "an engine is NAME=COMMAND"),
        (&["a=x", "a=y"], "engine names must differ"),
        (&["a/b=x"], "letters, digits"),
        (&["--games", "3", "a=x"], "--games even"),
    ];
    for (args, message) in cases {
        let mut all = vec!["--opponent", "o", "--out", "/nowhere"];
        all.extend_from_slice(args);
        let output = field_ab(&all);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

/// Two real levels against a third: two runs of one seed, two games a match, both lanes.
#[test]
fn a_tiny_comparison_of_real_engines() {
    let bin = Path::new(CARO_MATCH).parent().unwrap();
    let pbrain = bin.join("pbrain-caro");
    // scripts/test builds pbrain-caro before the tests: a missing binary is a failure, not a skip.
    assert!(
        pbrain.exists(),
        "{} is missing: run `cargo build -p caro-pbrain --bin pbrain-caro`",
        pbrain.display()
    );
    let p = pbrain.to_str().unwrap();
    let d = dir("real");
    let out = d.join("out");
    let (two, one) = (
        format!("deep={p} --depth 2 --time-ms 100"),
        format!("shallow={p} --depth 1 --time-ms 100"),
    );
    let opponent = format!("{p} --depth 1 --time-ms 100");
    let args = [
        "--opponent",
        &opponent,
        "--opponent-name",
        "one",
        "--seeds",
        "5",
        "--runs",
        "2",
        "--games",
        "2",
        "--turn-ms",
        "2000",
        "--caro-match",
        CARO_MATCH,
        "--out",
        out.to_str().unwrap(),
        "--json",
        &one,
        &two,
    ];
    let first = success(&field_ab(&args));
    let json_start = first.find('{').expect("a JSON report");
    let report: Value = serde_json::from_str(&first[json_start..]).unwrap();

    let mut scores = Vec::new();
    for name in ["shallow", "deep"] {
        let r = &report[name];
        assert_eq!(r["matches"], 2, "{report}");
        assert_eq!(r["games"], 4, "{report}");
        // The totals are the sums of the two matches' own summaries.
        let mut wdl = [0u64; 3];
        let mut cells = Vec::new();
        for run in 1..=2 {
            let path = out.join(name).join(format!("r{run}-s5/summary.json"));
            let s: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            let t = &s["total"];
            let (w, dr, l) = (
                t["wins"].as_u64().unwrap(),
                t["draws"].as_u64().unwrap(),
                t["losses"].as_u64().unwrap(),
            );
            wdl = [wdl[0] + w, wdl[1] + dr, wdl[2] + l];
            cells.push((w as f64 + dr as f64 / 2.0) / 2.0);
        }
        assert_eq!(r["wdl"], serde_json::json!(wdl), "{report}");
        let listed: Vec<f64> = r["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["score"].as_f64().unwrap())
            .collect();
        assert_eq!(listed, cells, "{report}");
        scores.push(cells);
    }
    // The second engine against the first, cell by cell.
    let diffs: Vec<f64> = (0..2).map(|i| scores[1][i] - scores[0][i]).collect();
    let vs = &report["deep"]["vs_base"];
    assert_eq!(vs["cells"], 2);
    let mean = (diffs[0] + diffs[1]) / 2.0;
    assert!((vs["points"].as_f64().unwrap() - mean).abs() < 1e-9, "{vs}");
    let sd = ((diffs[0] - mean).powi(2) + (diffs[1] - mean).powi(2)).sqrt();
    // Student's t with one degree of freedom: two cells say little about the spread.
    let half = 12.706 * sd / 2f64.sqrt();
    assert!(
        (vs["half_width"].as_f64().unwrap() - half).abs() < 1e-9,
        "{vs}"
    );
    assert!(report["shallow"].get("vs_base").is_none(), "{report}");

    // Called again, it plays nothing and reports the same.
    let again = success(&field_ab(&args));
    assert_eq!(again.matches("done already").count(), 4, "{again}");
    let json_start = again.find('{').unwrap();
    let second: Value = serde_json::from_str(&again[json_start..]).unwrap();
    assert_eq!(second, report);
}
