//! A match between two ways of keeping the `master` level's engine: a fresh engine for every
//! move (how the server searched before its search slots kept their engines) against one
//! engine per worker thread, reused for every move of every game and aged between searches
//! (how a search slot keeps it now). Both play our full search with the same node budget per
//! move, so the result does not depend on the machine's load; all that differs is what the
//! reused engine remembers (its transposition table, threat-space proofs, history).
//!
//! Each opening of `data/openings/freestyle15.txt` and `caro15.txt` is played twice, each side
//! once as X, for every node budget given; a pair's two games give one pentanomial sample.
//! Prints W-D-L of the reused engine, the pentanomial counts, the Elo estimate with a 95%
//! interval, and the SPRT log-likelihood ratio for elo0 = 0, elo1 = 20 (docs/engine.md).
//!
//! `cargo run --release -p caro-engine --example pooled_match -- [threads] [nodes...]`
//! (defaults: 2 threads, 60000 nodes).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use caro_engine::positions::parse_openings;
use caro_engine::search::{Engine, Limits};
use caro_engine::{Board, Move, Player, Rule, Rules, Status};

/// One pair of games: an opening, a rule, a node budget.
struct Job {
    rule: Rule,
    opening: Vec<Move>,
    nodes: u64,
}

/// Score of the reused engine in one game: 0, 1 or 2 half points.
fn play(job: &Job, reused_is_x: bool, reused: &mut Engine) -> u32 {
    let rules = Rules::caro(15, 15, job.rule).expect("15x15");
    let mut board = Board::new(rules);
    for &m in &job.opening {
        board.try_play(m).expect("a legal opening");
    }
    let stop = AtomicBool::new(false);
    let limits = Limits {
        max_depth: 64,
        time: None,
        time_max: None,
        nodes: Some(job.nodes),
    };
    while board.status() == Status::Ongoing {
        let reused_to_move = (board.to_move() == Player::X) == reused_is_x;
        let r = if reused_to_move {
            reused.search(&board, &limits, &stop, &mut |_| {})
        } else {
            Engine::new(16).search(&board, &limits, &stop, &mut |_| {})
        }
        .expect("an ongoing game has a move");
        board
            .try_play(r.best)
            .expect("the engine plays legal moves");
    }
    match board.status() {
        Status::Won(p) if (p == Player::X) == reused_is_x => 2,
        Status::Won(_) => 0,
        _ => 1,
    }
}

fn openings(file: &str) -> Vec<Vec<Move>> {
    let path = format!("{}/../../data/openings/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    parse_openings(&text).unwrap_or_else(|e| panic!("{path}:{}: {}", e.line, e.message))
}

/// Expected score of a player `elo` points stronger.
fn expected(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

fn elo(score: f64) -> f64 {
    let s = score.clamp(1e-6, 1.0 - 1e-6);
    -400.0 * (1.0 / s - 1.0).log10()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let threads: usize = args.next().map_or(2, |s| s.parse().expect("threads"));
    let mut budgets: Vec<u64> = args.map(|s| s.parse().expect("nodes")).collect();
    if budgets.is_empty() {
        budgets.push(60_000);
    }
    let mut jobs = Vec::new();
    for &nodes in &budgets {
        for (rule, file) in [
            (Rule::Freestyle, "freestyle15.txt"),
            (Rule::Caro, "caro15.txt"),
        ] {
            for opening in openings(file) {
                jobs.push(Job {
                    rule,
                    opening,
                    nodes,
                });
            }
        }
    }
    let next = AtomicUsize::new(0);
    // Pentanomial counts: pairs in which the reused engine scored 0..=4 half points.
    let penta = Mutex::new([0u32; 5]);
    let wdl = Mutex::new([0u32; 3]);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                // This worker's search slot: one engine for all its games, never cleared.
                let mut reused = Engine::new(16);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let a = play(job, true, &mut reused);
                    let b = play(job, false, &mut reused);
                    {
                        let mut w = wdl.lock().unwrap();
                        for g in [a, b] {
                            w[2 - g as usize] += 1;
                        }
                    }
                    let mut p = penta.lock().unwrap();
                    p[(a + b) as usize] += 1;
                    let done: u32 = p.iter().sum();
                    println!(
                        "pair {done}/{}: {:?} {} nodes, reused engine {a}+{b} half points ({:.0} s)",
                        jobs.len(),
                        job.rule,
                        job.nodes,
                        start.elapsed().as_secs_f64()
                    );
                }
            });
        }
    });
    let p = *penta.lock().unwrap();
    let [w, d, l] = *wdl.lock().unwrap();
    let n: f64 = p.iter().map(|&c| f64::from(c)).sum();
    let score = |k: usize| k as f64 / 4.0;
    let mean = (0..5).map(|k| f64::from(p[k]) * score(k)).sum::<f64>() / n;
    let var = (0..5)
        .map(|k| f64::from(p[k]) * (score(k) - mean).powi(2))
        .sum::<f64>()
        / n;
    let se = (var / n).sqrt();
    let (e0, e1) = (expected(0.0), expected(20.0));
    let llr = n * (e1 - e0) * (2.0 * mean - e0 - e1) / (2.0 * var.max(1e-9));
    println!(
        "reused engine against a fresh one per move, {} games in {:.0} s, nodes {budgets:?}",
        w + d + l,
        start.elapsed().as_secs_f64()
    );
    println!("W-D-L {w}-{d}-{l}, pentanomial (0..=2 points a pair) {p:?}");
    println!(
        "score {:.3}, Elo {:+.1} [{:+.1}, {:+.1}] (95%), LLR(0, 20) {llr:.2} (bounds ±2.94)",
        mean,
        elo(mean),
        elo(mean - 1.96 * se),
        elo(mean + 1.96 * se)
    );
}
