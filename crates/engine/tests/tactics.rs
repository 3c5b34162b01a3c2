//! Tactical positions with known answers (`tests/data/positions/*.pos`), solved within a fixed
//! node budget, never a wall-clock limit, so the result is the same on every machine.
//!
//! - WIN1, BLOCK4, DEFEND: the engine's move must be one of the listed answers.
//! - MATE: the engine must report a forced win (a mate score) with its move; at least 90% of the
//!   positions must pass (the listed distances reach +M41, beyond any fixed budget).
//! - LOST: the engine must answer with a legal move.

use std::sync::atomic::AtomicBool;

use caro_engine::positions::{parse, square_name, Label, TestPosition};
use caro_engine::search::{is_mate, Engine, Limits};

/// Node budget per MATE position.
const MATE_NODES: u64 = 400_000;
/// Node budget per other position (one-move tactics).
const NODES: u64 = 50_000;

fn load(name: &str) -> Vec<TestPosition> {
    let path = format!("{}/tests/data/positions/{name}", env!("CARGO_MANIFEST_DIR"));
    parse(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn limits(label: Label) -> Limits {
    Limits {
        max_depth: 64,
        time: None,
        nodes: Some(if label == Label::Mate {
            MATE_NODES
        } else {
            NODES
        }),
    }
}

/// Runs every position of the files; returns (label, passed, total) and the failures.
fn run(files: &[&str]) -> (Vec<(Label, usize, usize)>, Vec<String>) {
    let mut engine = Engine::new(16);
    let stop = AtomicBool::new(false);
    let mut stats: Vec<(Label, usize, usize)> = Vec::new();
    let mut failures = Vec::new();
    for file in files {
        for p in load(file) {
            let board = p.board().unwrap();
            engine.clear();
            let r = engine
                .search(&board, &limits(p.label), &stop, &mut |_| {})
                .unwrap_or_else(|| panic!("{p}: no move"));
            assert!(
                board.check(r.best.x as i64, r.best.y as i64).is_ok(),
                "{p}: illegal move {}",
                r.best
            );
            let ok = match p.label {
                Label::Win1 | Label::Block4 | Label::Defend => p.expected.contains(&r.best),
                Label::Mate => is_mate(r.score) && r.score > 0,
                Label::Lost => true,
            };
            if !ok {
                failures.push(format!(
                    "{p}: played {} score {} depth {} (expected {})",
                    square_name(r.best),
                    r.score,
                    r.depth,
                    p.expected
                        .iter()
                        .map(|&m| square_name(m))
                        .collect::<Vec<_>>()
                        .join("/")
                ));
            }
            match stats.iter_mut().find(|s| s.0 == p.label) {
                Some(s) => {
                    s.1 += ok as usize;
                    s.2 += 1;
                }
                None => stats.push((p.label, ok as usize, 1)),
            }
        }
    }
    for (label, pass, total) in &stats {
        eprintln!("{files:?} {label:?}: {pass}/{total}");
    }
    (stats, failures)
}

fn check(files: &[&str], mate_ratio: f64) {
    let (stats, failures) = run(files);
    for f in &failures {
        eprintln!("FAIL {f}");
    }
    for (label, pass, total) in stats {
        match label {
            Label::Mate => assert!(
                pass as f64 >= mate_ratio * total as f64,
                "MATE {pass}/{total} below {mate_ratio}"
            ),
            _ => assert_eq!(pass, total, "{label:?}: {pass}/{total}"),
        }
    }
}

#[test]
fn freestyle_positions() {
    check(&["freestyle15.pos", "freestyle15_rules.pos"], 0.6);
}

#[test]
fn caro_positions() {
    check(&["caro15.pos"], 0.9);
}

#[test]
fn caro_overline_positions() {
    check(&["caro_overline15.pos"], 0.9);
}

/// Speed on midgame positions at one second a move (run with `--ignored --nocapture`; numbers
/// for `docs/engine.md`). Not an assertion: wall-clock results depend on the machine.
#[test]
#[ignore]
fn midgame_speed() {
    let stop = AtomicBool::new(false);
    let mut positions = load("freestyle15.pos");
    positions.retain(|p| p.label == Label::Lost && p.black.len() + p.white.len() >= 20);
    for p in positions.iter().step_by(8).take(8) {
        let mut engine = Engine::new(64);
        let board = p.board().unwrap();
        let r = engine
            .search(
                &board,
                &Limits::time(std::time::Duration::from_secs(1)),
                &stop,
                &mut |_| {},
            )
            .unwrap();
        let nps = r.nodes as f64 / r.elapsed.as_secs_f64();
        eprintln!(
            "{}: stones {} depth {} nodes {} nps {:.0} score {}",
            p.id,
            p.black.len() + p.white.len(),
            r.depth,
            r.nodes,
            nps,
            r.score
        );
    }
}
