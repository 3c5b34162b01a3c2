//! Generates quiet midgame positions for speed and depth measurements, in the `.pos` format of
//! `tests/data/positions/README.md` with the label `QUIET`: from each of the match openings
//! (`data/openings/`), the engine plays itself with a fixed node budget (reproducible on any
//! machine) up to a target number of stones, and the position is kept when neither side can make
//! five, neither has to block one, and a deeper search announces no forced result and an
//! evaluation within ±1000 (about a well-placed open three).
//!
//! ```text
//! cargo run --release -p caro-engine --example midgame_positions -- [per_rule] > midgame15.pos
//! ```
//! `per_rule` (default 8) positions per rule (freestyle, then caro). The output is the file
//! `tests/data/positions/midgame15.pos`; the bench positions are taken from it.

use std::sync::atomic::AtomicBool;

use caro_engine::positions::{parse_square, square_name};
use caro_engine::search::position::Position;
use caro_engine::search::{is_mate, threats, Engine, Limits};
use caro_engine::{Board, Player, Rule, Rules, Status};

/// Node budget of each self-play move.
const PLAY_NODES: u64 = 30_000;
/// Node budget of the check that the position is not decided.
const CHECK_NODES: u64 = 300_000;
/// Stones in the kept positions, by opening number modulo 4.
const TARGETS: [usize; 4] = [20, 23, 26, 29];
/// Largest evaluation (either sign) of a kept position: a clearly better side is no midgame.
const MAX_SCORE: i32 = 1000;

fn main() {
    let per_rule: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("usage: midgame_positions [per_rule]"))
        .unwrap_or(8);
    println!("# Quiet midgame positions from engine self-play (examples/midgame_positions.rs):");
    println!("# `cargo run --release -p caro-engine --example midgame_positions -- {per_rule}`.");
    println!("# No forced result is known; for speed and depth measurements only.");
    let stop = AtomicBool::new(false);
    for (rule, file) in [
        (Rule::Freestyle, "freestyle15.txt"),
        (Rule::Caro, "caro15.txt"),
    ] {
        let path = format!("{}/../../data/openings/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let rules = Rules::caro(15, 15, rule).unwrap();
        let mut kept = 0;
        for (n, line) in text
            .lines()
            .map(|l| l.split('#').next().unwrap().trim())
            .filter(|l| !l.is_empty())
            .enumerate()
        {
            if kept == per_rule {
                break;
            }
            let mut board = Board::new(rules);
            for sq in line.split_whitespace() {
                board.play(parse_square(sq).expect("an opening square"));
            }
            let target = TARGETS[n % TARGETS.len()];
            let mut engine = Engine::new(16);
            while board.status() == Status::Ongoing && board.moves().len() < target {
                let limits = Limits {
                    max_depth: 64,
                    time: None,
                    time_max: None,
                    nodes: Some(PLAY_NODES),
                };
                let r = engine.search(&board, &limits, &stop, &mut |_| {}).unwrap();
                board.play(r.best);
            }
            if board.status() != Status::Ongoing || !quiet(&board) {
                continue;
            }
            engine.clear();
            let limits = Limits {
                max_depth: 64,
                time: None,
                time_max: None,
                nodes: Some(CHECK_NODES),
            };
            let r = engine.search(&board, &limits, &stop, &mut |_| {}).unwrap();
            if is_mate(r.score) || r.score.abs() > MAX_SCORE {
                continue;
            }
            kept += 1;
            let stones = |p: Player| {
                board
                    .moves()
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| (i % 2 == 0) == (p == Player::X))
                    .map(|(_, &m)| square_name(m))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let side = match board.to_move() {
                Player::X => "black",
                Player::O => "white",
            };
            println!(
                "selfplay_{rule}-o{n}-s{} | {} | {side} | {} | {} | - | QUIET; score {} after {} nodes",
                board.moves().len(),
                rule.gomocup_code(),
                stones(Player::X),
                stones(Player::O),
                r.score,
                r.nodes,
            );
        }
        if kept < per_rule {
            eprintln!("{rule}: only {kept} positions");
        }
    }
}

/// Neither side can make five at once (so nobody has to block one).
fn quiet(board: &Board) -> bool {
    let pos = Position::new(board);
    (0..2).all(|p| threats::win_cells(&pos, p).is_empty())
}
