//! Effective branching factor of plain minimax, plain alpha-beta (both from `classic`, same
//! move generator and order) and our full [`Engine`] on the fixed bench positions, as a
//! markdown table for `docs/`.
//!
//! The effective branching factor at depth `d` is `nodes(d) / nodes(d - 1)` (chessprogramming.org,
//! "Branching Factor"). Minimax visits about `b^d` nodes, so its ratio is about `b`, the number of
//! candidate moves; alpha-beta with perfect move ordering visits about `b^(d/2)` leaves (Knuth and
//! Moore 1975), a ratio near `sqrt(b)`; the full engine adds ordering, a transposition table,
//! pruning and reductions, and goes far lower.
//!
//! Minimax and alpha-beta are fresh searches to each depth. The engine is measured the way an
//! iterative-deepening engine runs: one search to the deepest depth, and `nodes(d)` is the nodes
//! of its depth-`d` iteration (which profits from the table the shallower ones filled). Its depth-1
//! row also holds the root VCF and threat-space search (60k nodes at most), so its depth-2 ratio
//! is left out.
//!
//! ```text
//! cargo run --release -p caro-engine --example branching -- [engine] [alpha-beta] [minimax]
//! ```
//! The deepest depth of each; defaults 12, 4 and 3 (minimax costs `b^d`: depth 4 on a
//! 60-candidate position is 13 million leaves; unordered alpha-beta to depth 5 takes minutes).

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use caro_engine::classic::{alphabeta_nodes, minimax_nodes};
use caro_engine::positions::{bench_boards, short_id};
use caro_engine::search::{Engine, Limits};
use caro_engine::Board;

fn main() {
    let args: Vec<u8> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse().unwrap_or_else(|_| {
                eprintln!("usage: branching [engine_depth] [alphabeta_depth] [minimax_depth]");
                std::process::exit(2)
            })
        })
        .collect();
    let max_depth = args.first().copied().unwrap_or(12).max(1);
    let max_alphabeta = args.get(1).copied().unwrap_or(4).min(max_depth);
    let max_minimax = args.get(2).copied().unwrap_or(3).min(max_alphabeta);

    println!("| position | b | depth | minimax nodes | EBF | alpha-beta nodes | EBF | engine nodes | EBF |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let boards = bench_boards();
    // Totals over the positions, per depth, for the summary rows.
    let mut totals = vec![[0u64; 3]; max_depth as usize + 1];
    let start = Instant::now();
    for (id, board) in &boards {
        let b = candidates(board);
        let engine = engine_iterations(board, max_depth);
        let mut prev = [0u64; 3];
        for depth in 1..=max_depth {
            let mm = (depth <= max_minimax).then(|| minimax_nodes(board, depth));
            let ab = (depth <= max_alphabeta).then(|| alphabeta_nodes(board, depth));
            let full = engine.get(depth as usize).copied().unwrap_or(0);
            let row = [mm.unwrap_or(0), ab.unwrap_or(0), full];
            for (t, n) in totals[depth as usize].iter_mut().zip(row) {
                *t += n;
            }
            let show = |n: Option<u64>| n.map_or("-".to_string(), |n| n.to_string());
            println!(
                "| {} | {b} | {depth} | {} | {} | {} | {} | {} | {} |",
                short_id(id),
                show(mm),
                ratio(row[0], prev[0]),
                show(ab),
                ratio(row[1], prev[1]),
                show((full > 0).then_some(full)),
                if depth == 2 {
                    "-".to_string()
                } else {
                    ratio(row[2], prev[2])
                },
            );
            prev = row;
        }
    }
    for depth in 1..=max_depth as usize {
        let (t, p) = (totals[depth], totals[depth - 1]);
        let show = |n: u64| {
            if n > 0 {
                n.to_string()
            } else {
                "-".to_string()
            }
        };
        println!(
            "| **all {}** | | {depth} | {} | {} | {} | {} | {} | {} |",
            boards.len(),
            show(t[0]),
            ratio(t[0], p[0]),
            show(t[1]),
            ratio(t[1], p[1]),
            show(t[2]),
            if depth == 2 {
                "-".to_string()
            } else {
                ratio(t[2], p[2])
            },
        );
    }
    eprintln!("({:.1} s)", start.elapsed().as_secs_f64());
}

/// Nodes of each iteration of one engine search to `depth` from a fresh table (index = depth;
/// iteration 1 includes the root VCF and threat-space search). Shorter when the search stops
/// early (a proven result).
fn engine_iterations(board: &Board, depth: u8) -> Vec<u64> {
    let mut engine = Engine::new(16);
    let mut per = vec![0u64];
    let mut last = 0;
    engine.search(
        board,
        &Limits::depth(depth),
        &AtomicBool::new(false),
        &mut |info| {
            per.resize(info.depth as usize, 0);
            per.push(info.nodes - last);
            last = info.nodes;
        },
    );
    per
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
