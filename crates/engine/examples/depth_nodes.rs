//! Nodes each midgame position of `tests/data/positions/midgame15.pos` needs to complete a fixed
//! depth, with no clock: a deterministic stand-in for "depth reached in a second", to compare
//! search variants without the noise of a loaded machine (`docs/engine.md`, "Speed and depth").
//!
//! ```text
//! cargo run --release -p caro-engine --example depth_nodes -- [depth] [-v]
//! ```
//! `depth` defaults to 12; `-v` also prints the cumulative node count after each iteration. A
//! fixed-depth search gives the threat-space search 60k nodes (with a clock it may take half the
//! time), so this measures the main search. The summary gives the geometric mean, the positions
//! that need fewer than a million nodes (about 0.6 s at today's speed), the total and the
//! median.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use caro_engine::positions::{parse, square_name};
use caro_engine::search::{Engine, Limits};

fn main() {
    let mut depth = 12;
    let mut verbose = false;
    for a in std::env::args().skip(1) {
        match (a.as_str(), a.parse()) {
            ("-v", _) => verbose = true,
            (_, Ok(d)) => depth = d,
            _ => {
                eprintln!("usage: depth_nodes [depth] [-v]");
                std::process::exit(2)
            }
        }
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/positions/midgame15.pos"
    );
    let positions = parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    let stop = AtomicBool::new(false);
    let mut all = Vec::new();
    let start = Instant::now();
    for p in &positions {
        let mut engine = Engine::new(64);
        let board = p.board().unwrap();
        let t = Instant::now();
        let mut iterations = String::new();
        let r = engine
            .search(&board, &Limits::depth(depth), &stop, &mut |i| {
                if verbose {
                    iterations += &format!(" d{}:{}", i.depth, i.nodes);
                }
            })
            .unwrap();
        all.push(r.nodes);
        println!(
            "{:<28} nodes {:>9} {:>6} ms score {:>7} best {}{iterations}",
            p.id,
            r.nodes,
            t.elapsed().as_millis(),
            r.score,
            square_name(r.best),
        );
    }
    all.sort();
    let n = all.len();
    let geo = (all.iter().map(|&x| (x as f64).ln()).sum::<f64>() / n as f64).exp();
    println!(
        "{n} positions to depth {depth}: geometric mean {geo:.0} nodes, {} under 1M, \
         total {}, median {}, max {}; {:.1} s",
        all.iter().filter(|&&x| x < 1_000_000).count(),
        all.iter().sum::<u64>(),
        (all[(n - 1) / 2] + all[n / 2]) / 2,
        all[n - 1],
        start.elapsed().as_secs_f64()
    );
}
