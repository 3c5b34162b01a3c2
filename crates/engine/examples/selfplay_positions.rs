//! Training data for Texel-style tuning (docs/engine.md, "Self-play data"): self-play games from
//! the shipped openings of freestyle and caro (`data/openings/freestyle15.txt`, `caro15.txt`),
//! every searched position labelled with the game's outcome.
//!
//! `cargo run --release -p caro-engine --example selfplay_positions -- OUT [games-per-opening]
//! [nodes] [threads] [seed]` (defaults: 1 game per opening and rule, 20000 nodes, 2 threads,
//! seed 1). The file is the same for the same arguments, whatever the threads and the load:
//! every move is searched by a fresh engine with a node budget, and game `g` of opening `i`
//! draws its random moves from seed `seed * 1_000_003 + i * 1_009 + g`.
//!
//! One line per position: `rule | moves | result | score`, where `moves` are the squares from
//! the empty board (X first), `result` is the outcome for the side to move (1 win, 0.5 draw,
//! 0 loss) and `score` the search's score of the move played there, for the side to move.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use caro_engine::positions::{parse_square, square_name};
use caro_engine::selfplay::{self, Config, Game};
use caro_engine::{Move, Rule, Rules};

fn openings(file: &str) -> Vec<Vec<Move>> {
    let path = format!("{}/../../data/openings/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(|l| {
            l.split_whitespace()
                .map(|s| parse_square(s).expect("a square"))
                .collect()
        })
        .collect()
}

struct Job {
    rule: Rule,
    opening: Vec<Move>,
    seed: u64,
}

fn lines(rule: Rule, game: &Game, out: &mut String) {
    let x_result = game.result_for_x();
    for s in &game.samples {
        // The side to move is X after an even number of moves.
        let result = if s.moves.len() % 2 == 0 {
            x_result
        } else {
            1.0 - x_result
        };
        let moves: Vec<String> = s.moves.iter().map(|&m| square_name(m)).collect();
        let _ = writeln!(
            out,
            "{} | {} | {result} | {}",
            rule.gomocup_code(),
            moves.join(" "),
            s.score
        );
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let out_path = args
        .next()
        .expect("usage: selfplay_positions OUT [games] [nodes] [threads] [seed]");
    let mut num = |default: u64| {
        args.next()
            .map_or(default, |s| s.parse().expect("a number"))
    };
    let games = num(1);
    let nodes = num(20_000);
    let threads = num(2) as usize;
    let seed = num(1);
    let config = Config {
        nodes,
        ..Config::default()
    };
    let mut jobs = Vec::new();
    for (rule, file) in [
        (Rule::Freestyle, "freestyle15.txt"),
        (Rule::Caro, "caro15.txt"),
    ] {
        for (i, opening) in openings(file).into_iter().enumerate() {
            for g in 0..games {
                jobs.push(Job {
                    rule,
                    opening: opening.clone(),
                    seed: seed * 1_000_003 + i as u64 * 1_009 + g,
                });
            }
        }
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<String>>> = Mutex::new(vec![None; jobs.len()]);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let rules = Rules::caro(15, 15, job.rule).expect("15x15");
                let game = selfplay::play(rules, &job.opening, &config, job.seed);
                let mut text = String::new();
                lines(job.rule, &game, &mut text);
                let mut r = results.lock().unwrap();
                r[i] = Some(text);
                let done = r.iter().filter(|t| t.is_some()).count();
                eprintln!(
                    "game {done}/{} ({} plies, {:.0} s)",
                    jobs.len(),
                    game.moves.len(),
                    start.elapsed().as_secs_f64()
                );
            });
        }
    });
    let mut text = format!(
        "# selfplay_positions: {games} game(s) per opening, {nodes} nodes a move, seed {seed}\n\
         # rule | moves | result for the side to move | search score\n"
    );
    for r in results.into_inner().unwrap() {
        text.push_str(&r.expect("every game finished"));
    }
    std::fs::write(&out_path, text).unwrap_or_else(|e| panic!("{out_path}: {e}"));
}
