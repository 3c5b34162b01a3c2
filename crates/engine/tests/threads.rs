//! Lazy SMP (`Engine::set_threads`, docs/engine.md "Threads (Lazy SMP)"): several threads search
//! one position and share the transposition table. Their results vary from run to run (the
//! threads race), so these tests assert what must hold in every run: one thread is exactly the
//! single-threaded search, several threads still find every one-move tactic, stay within a
//! node budget, and never answer with an illegal move, even with a table small enough that the
//! threads overwrite each other's entries all the time. Node budgets only, no clock.

use std::sync::atomic::AtomicBool;

use caro_engine::positions::{bench_boards, parse, square_name, Label, TestPosition};
use caro_engine::search::{Engine, Limits, SearchResult};
use caro_engine::Board;

fn load(name: &str) -> Vec<TestPosition> {
    let path = format!("{}/tests/data/positions/{name}", env!("CARGO_MANIFEST_DIR"));
    parse(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn nodes(n: u64) -> Limits {
    Limits {
        max_depth: 64,
        time: None,
        time_max: None,
        nodes: Some(n),
    }
}

fn search(engine: &mut Engine, board: &Board, limits: &Limits) -> SearchResult {
    let stop = AtomicBool::new(false);
    engine
        .search(board, limits, &stop, &mut |_| {})
        .expect("the game is on")
}

/// The move and the whole principal variation can be played on the board.
fn assert_legal(board: &Board, r: &SearchResult, what: &str) {
    assert!(
        board.check(r.best.x as i64, r.best.y as i64).is_ok(),
        "{what}: illegal move {}",
        r.best
    );
    let mut b = board.clone();
    for (i, m) in r.pv.iter().enumerate() {
        if b.status() != caro_engine::Status::Ongoing {
            break;
        }
        assert!(
            b.check(m.x as i64, m.y as i64).is_ok(),
            "{what}: PV move {i} ({m}) is illegal: {:?}",
            r.pv
        );
        b.play(*m);
    }
}

/// With one thread nothing changed: the bench's node counts and moves (docs/engine.md,
/// "Benchmarks"), also for an engine that had helpers and was set back to one thread.
#[test]
fn one_thread_is_the_single_threaded_search() {
    let expected = [
        (54_665, "4,12"),
        (10_814, "3,5"),
        (6_211, "2,7"),
        (13_276, "8,5"),
    ];
    let stop = AtomicBool::new(false);
    for ((id, board), (nodes, best)) in bench_boards().into_iter().zip(expected) {
        for threads in [None, Some(1), Some(3)] {
            let mut engine = Engine::new(16);
            if let Some(n) = threads {
                engine.set_threads(n);
                engine.set_threads(1);
            }
            assert_eq!(engine.threads(), 1);
            let r = engine
                .search(&board, &Limits::depth(10), &stop, &mut |_| {})
                .unwrap();
            assert_eq!(
                (r.nodes, r.best.to_string()),
                (nodes, best.to_string()),
                "{id}"
            );
        }
    }
}

/// Every WIN1, BLOCK4 and DEFEND answer of the freestyle suites (as `tests/tactics.rs` asks of
/// one thread, with the same 10k-node budget, now shared by the threads), with 2, 3 and 4
/// threads in turn, each position on an engine that keeps its table (as a game would).
#[test]
fn threads_find_every_win_and_block() {
    let positions: Vec<TestPosition> = ["freestyle15.pos", "freestyle15_rules.pos"]
        .iter()
        .flat_map(|f| load(f))
        .filter(|p| matches!(p.label, Label::Win1 | Label::Block4 | Label::Defend))
        .collect();
    assert!(positions.len() > 150, "{} positions", positions.len());
    let mut engine = Engine::new(16);
    let mut failures = Vec::new();
    for (i, p) in positions.iter().enumerate() {
        engine.set_threads(2 + i % 3);
        let board = p.board().unwrap();
        let r = search(&mut engine, &board, &nodes(10_000));
        assert_legal(&board, &r, &p.to_string());
        if !p.expected.contains(&r.best) {
            failures.push(format!(
                "{p} with {} threads: played {}",
                engine.threads(),
                square_name(r.best)
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The node budget is the threads' total: each thread adds its nodes to the shared count every
/// ~1024 nodes and all stop once it is reached, so the total overshoots by at most about a
/// poll interval per thread.
#[test]
fn threads_share_the_node_budget() {
    for (id, board) in bench_boards() {
        for threads in [2, 4] {
            let mut engine = Engine::new(16);
            engine.set_threads(threads);
            let budget = 40_000;
            let r = search(&mut engine, &board, &nodes(budget));
            assert_legal(&board, &r, &id);
            let slack = 2048 * threads as u64;
            assert!(
                r.nodes >= budget && r.nodes <= budget + slack,
                "{id}, {threads} threads: {} nodes for a budget of {budget}",
                r.nodes
            );
            assert!(r.depth >= 1, "{id}: no iteration completed");
        }
    }
}

/// Verify on read: four threads on a 1 MiB table (65,536 entries, overwritten by one another
/// many times a search) over the midgame positions, keeping the table from one position to
/// the next: every move and every principal variation must be legal in the position searched.
#[test]
fn a_crowded_shared_table_never_yields_an_illegal_move() {
    let positions = load("midgame15.pos");
    assert!(positions.len() >= 10);
    let mut engine = Engine::new(1);
    engine.set_threads(4);
    for p in &positions {
        let board = p.board().unwrap();
        let r = search(&mut engine, &board, &nodes(150_000));
        assert_legal(&board, &r, &p.to_string());
    }
}

/// A search under a clock with threads returns, with a completed iteration and a legal move
/// (how long it took is not asserted: no timed assertions).
#[test]
fn threads_stop_at_the_clock() {
    let (id, board) = bench_boards().remove(3);
    let mut engine = Engine::new(16);
    engine.set_threads(3);
    let r = search(
        &mut engine,
        &board,
        &Limits::time(std::time::Duration::from_millis(100)),
    );
    assert_legal(&board, &r, &id);
    assert!(r.depth >= 1);
}
