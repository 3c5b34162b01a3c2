//! Criterion benchmarks of the search: time to reach depths 6, 8 and 10 on the fixed midgame
//! positions (with the node count as throughput, so criterion's `elem/s` is nodes per second),
//! the time to solve tic-tac-toe from the empty board, the fixed-depth bench set that
//! `pbrain-caro bench` counts, and the `classic` baseline for comparison.
//!
//! Sample counts are kept at criterion's minimum so `cargo bench -p caro-engine` finishes in a
//! few minutes; filter to run a part: `cargo bench -p caro-engine -- depth/6`.
//! Node counts are printed once per benchmark: unlike times, they only change when the search
//! does.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use caro_engine::classic;
use caro_engine::positions::{bench_boards, short_id, BENCH_DEPTH};
use caro_engine::search::{Engine, Limits};
use caro_engine::{Board, Rules};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};

/// Transposition table size for every bench engine.
const TT_MB: usize = 16;

/// One search from a fresh engine; returns the node count.
fn search(engine: &mut Engine, board: &Board, depth: u8) -> u64 {
    engine
        .search(
            board,
            &Limits::depth(depth),
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .map_or(0, |r| r.nodes)
}

/// Whether the command line's filter (criterion's positional argument) selects `id`. Node
/// counts for the throughput are computed only for benchmarks that will run: with a real search
/// a depth-10 count costs as much as a sample, and a filtered smoke run should not pay for all
/// of them. Substrings and `a|b` alternatives only; a fancier regex still runs the benchmark,
/// just without the throughput line.
fn selected(id: &str) -> bool {
    // Criterion options that take a value: that value is not a filter.
    const WITH_VALUE: [&str; 12] = [
        "--save-baseline",
        "--baseline",
        "--baseline-lenient",
        "--load-baseline",
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--profile-time",
    ];
    let mut filters = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if WITH_VALUE.contains(&arg.as_str()) {
            args.next();
        } else if !arg.starts_with('-') {
            filters.push(arg);
        }
    }
    filters.is_empty()
        || filters
            .iter()
            .any(|f| f.split('|').any(|alt| id.contains(alt)))
}

/// The throughput of a benchmark that searches `nodes` nodes, if it will run.
fn nodes_throughput(id: &str, nodes: impl FnOnce() -> u64) -> Option<Throughput> {
    selected(id).then(|| {
        let nodes = nodes();
        eprintln!("{id}: {nodes} nodes");
        Throughput::Elements(nodes.max(1))
    })
}

/// Time to depth 6, 8 and 10 on each position, from an empty table each time (the table is
/// allocated outside the timing).
fn time_to_depth(c: &mut Criterion) {
    for depth in [6u8, 8, 10] {
        let mut group = c.benchmark_group(format!("depth/{depth}"));
        for (id, board) in bench_boards() {
            let id = short_id(&id).to_string();
            let full_id = format!("depth/{depth}/{id}");
            if let Some(t) =
                nodes_throughput(&full_id, || search(&mut Engine::new(TT_MB), &board, depth))
            {
                group.throughput(t);
            }
            group.bench_with_input(BenchmarkId::from_parameter(&id), &board, |b, board| {
                b.iter_batched_ref(
                    || Engine::new(TT_MB),
                    |engine| search(engine, board, depth),
                    BatchSize::PerIteration,
                )
            });
        }
        group.finish();
    }
}

/// Solving tic-tac-toe: a full-depth search of the empty 3x3 board (a draw).
fn tictactoe(c: &mut Criterion) {
    let board = Board::new(Rules::tictactoe());
    let mut group = c.benchmark_group("tictactoe");
    if let Some(t) = nodes_throughput("tictactoe/solve", || search(&mut Engine::new(1), &board, 9))
    {
        group.throughput(t);
    }
    group.bench_function("solve", |b| {
        b.iter_batched_ref(
            || Engine::new(1),
            |engine| search(engine, &board, 9),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// The whole bench set at [`BENCH_DEPTH`], as `pbrain-caro bench` runs it.
fn bench_set(c: &mut Criterion) {
    let boards = bench_boards();
    let run = || -> u64 {
        boards
            .iter()
            .map(|(_, board)| search(&mut Engine::new(TT_MB), board, BENCH_DEPTH))
            .sum()
    };
    let name = format!("depth{BENCH_DEPTH}");
    let mut group = c.benchmark_group("bench_set");
    if let Some(t) = nodes_throughput(&format!("bench_set/{name}"), run) {
        group.throughput(t);
    }
    group.bench_function(name, |b| b.iter(run));
    group.finish();
}

/// The seed's plain alpha-beta to depth 3 on the same positions: the baseline's speed.
fn classic_baseline(c: &mut Criterion) {
    let mut group = c.benchmark_group("classic/depth3");
    let stop = AtomicBool::new(false);
    for (id, board) in bench_boards() {
        let id = short_id(&id);
        if let Some(t) = nodes_throughput(&format!("classic/depth3/{id}"), || {
            classic::alphabeta_nodes(&board, 3)
        }) {
            group.throughput(t);
        }
        group.bench_with_input(BenchmarkId::from_parameter(id), &board, |b, board| {
            b.iter(|| classic::search(board, 3, &stop, &mut |_| {}))
        });
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = time_to_depth, tictactoe, bench_set, classic_baseline
}
criterion_main!(benches);
