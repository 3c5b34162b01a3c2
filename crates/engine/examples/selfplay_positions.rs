//! Training data for Texel-style tuning (docs/engine.md, "Self-play data"): self-play games from
//! the shipped openings of freestyle and caro (`data/openings/freestyle15.txt`, `caro15.txt`),
//! every searched position labelled with the game's outcome.
//!
//! `cargo run --release -p caro-engine --example selfplay_positions -- OUT [games-per-opening]
//! [nodes] [threads] [seed] [random-plies] [random-width] [books]` (defaults: 1 game per opening
//! and rule, 20000 nodes, 2 threads, seed 1, 2 random sane moves among the 5 best-ordered after
//! the opening, the books `freestyle15.txt,caro15.txt`; a book named `freestyle…` is played
//! under freestyle, one named `caro…` under caro). The file is the same for the same arguments, whatever the threads and the load:
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

use caro_engine::positions::{parse_openings, square_name};
use caro_engine::selfplay::{self, Config, Game};
use caro_engine::{Move, Rule, Rules};

fn openings(file: &str) -> Vec<Vec<Move>> {
    let path = format!("{}/../../data/openings/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    parse_openings(&text).unwrap_or_else(|e| panic!("{path}:{}: {}", e.line, e.message))
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
    let defaults = Config::default();
    let random_plies = num(defaults.random_plies as u64) as usize;
    let random_width = num(defaults.random_width as u64) as usize;
    let books = args
        .next()
        .unwrap_or_else(|| "freestyle15.txt,caro15.txt".to_string());
    let config = Config {
        nodes,
        random_plies,
        random_width,
        ..defaults
    };
    let mut jobs = Vec::new();
    for file in books.split(',') {
        let rule = if file.starts_with("caro") {
            Rule::Caro
        } else if file.starts_with("freestyle") {
            Rule::Freestyle
        } else {
            panic!("{file}: a book's name starts with `freestyle` or `caro`")
        };
        for (i, opening) in openings(file).into_iter().enumerate() {
            let i = i as u64;
            for g in 0..games {
                jobs.push(Job {
                    rule,
                    opening: opening.clone(),
                    seed: seed * 1_000_003 + i * 1_009 + g,
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
        "# selfplay_positions: {games} game(s) per opening of {books}, {nodes} nodes a move, \
         seed {seed}, {random_plies} random moves among {random_width}\n\
         # rule | moves | result for the side to move | search score\n"
    );
    for r in results.into_inner().unwrap() {
        text.push_str(&r.expect("every game finished"));
    }
    std::fs::write(&out_path, text).unwrap_or_else(|e| panic!("{out_path}: {e}"));
}
