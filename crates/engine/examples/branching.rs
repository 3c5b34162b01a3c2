//! Effective branching factor of plain minimax, plain alpha-beta (both from `classic`, same
//! move generator and order) and our full [`Engine`] on the fixed bench positions, as a
//! markdown table for `docs/`.
//!
//! The effective branching factor at depth `d` is `nodes(d) / nodes(d - 1)` (chessprogramming.org,
//! "Branching Factor"). Minimax visits about `b^d` nodes, so its ratio is about `b`, the number of
//! candidate moves; alpha-beta with perfect move ordering visits about `b^(d/2)` leaves (Knuth and
//! Moore 1975), a ratio near `sqrt(b)`; the full engine adds ordering, a transposition table and
//! threat search, and should go lower still.
//!
//! ```text
//! cargo run --release -p caro-engine --example branching -- [max_depth] [max_minimax_depth]
//! ```
//! Defaults: depths 1..=5 for alpha-beta and the engine, 1..=3 for minimax (its cost grows as
//! `b^d`: depth 4 on a 60-candidate position is 13 million leaves).

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use caro_engine::classic::{alphabeta_nodes, minimax_nodes};
use caro_engine::search::{Engine, Limits};
use caro_engine::Board;

include!("../benches/common/positions.rs");

fn main() {
    let args: Vec<u8> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse().unwrap_or_else(|_| {
                eprintln!("usage: branching [max_depth] [max_minimax_depth]");
                std::process::exit(2)
            })
        })
        .collect();
    let max_depth = args.first().copied().unwrap_or(5).max(1);
    let max_minimax = args.get(1).copied().unwrap_or(3).min(max_depth);

    println!("| position | b | depth | minimax nodes | EBF | alpha-beta nodes | EBF | engine nodes | EBF |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let boards = bench_boards();
    // Totals over the positions, per depth, for the summary rows.
    let mut totals = vec![[0u64; 3]; max_depth as usize + 1];
    let start = Instant::now();
    for (id, board) in &boards {
        let b = candidates(board);
        let mut prev = [0u64; 3];
        for depth in 1..=max_depth {
            let mm = (depth <= max_minimax).then(|| minimax_nodes(board, depth));
            let ab = alphabeta_nodes(board, depth);
            let full = engine_nodes(board, depth);
            let row = [mm.unwrap_or(0), ab, full];
            for (t, n) in totals[depth as usize].iter_mut().zip(row) {
                *t += n;
            }
            println!(
                "| {} | {b} | {depth} | {} | {} | {ab} | {} | {full} | {} |",
                short_id(id),
                mm.map_or("-".to_string(), |n| n.to_string()),
                ratio(row[0], prev[0]),
                ratio(row[1], prev[1]),
                ratio(row[2], prev[2]),
            );
            prev = row;
        }
    }
    for depth in 1..=max_depth as usize {
        let (t, p) = (totals[depth], totals[depth - 1]);
        let mm = if depth as u8 <= max_minimax {
            t[0].to_string()
        } else {
            "-".to_string()
        };
        println!(
            "| **all {}** | | {depth} | {mm} | {} | {} | {} | {} | {} |",
            boards.len(),
            ratio(t[0], p[0]),
            t[1],
            ratio(t[1], p[1]),
            t[2],
            ratio(t[2], p[2]),
        );
    }
    eprintln!("({:.1} s)", start.elapsed().as_secs_f64());
}

/// Nodes of the full engine searching to `depth` from a fresh table.
fn engine_nodes(board: &Board, depth: u8) -> u64 {
    let mut engine = Engine::new(16);
    engine
        .search(
            board,
            &Limits::depth(depth),
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .map_or(0, |r| r.nodes)
}

/// The number of root moves of the classic generator: one ply of minimax, less the root.
fn candidates(board: &Board) -> u64 {
    minimax_nodes(board, 1) - 1
}

/// `n / prev` to two decimals, or `-` when either is missing.
fn ratio(n: u64, prev: u64) -> String {
    if n == 0 || prev == 0 {
        "-".to_string()
    } else {
        format!("{:.2}", n as f64 / prev as f64)
    }
}
