//! Tactical positions with known answers (`tests/data/positions/*.pos`), solved within a fixed
//! node budget, never a wall-clock limit, so the result is the same on every machine.
//!
//! - WIN1, BLOCK4, DEFEND: the engine's move must be one of the listed answers (all of them).
//! - MATE: the engine must report a forced win (a mate score) with its move. The listed
//!   distances reach +M41, beyond a fixed budget; the test asserts the rate we reach (see
//!   `MATE_RATE` and docs/engine.md) so that it cannot silently drop.
//! - LOST: the engine must answer with a legal move.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use caro_engine::positions::{parse, square_name, Label, TestPosition};
use caro_engine::search::params::SearchParams;
use caro_engine::search::{is_mate, Engine, Limits};

/// Node budget per MATE position (250k since the SPSA weights: docs/engine.md, "Tactical test
/// suite").
const MATE_NODES: u64 = 250_000;
/// Node budget per one-move tactic (WIN1, BLOCK4, DEFEND).
const NODES: u64 = 10_000;
/// Node budget per LOST position (only a legal answer is asked for).
const LOST_NODES: u64 = 4_000;
/// Share of the freestyle MATE positions that must be proven within the budget.
const MATE_RATE: f64 = 0.80;

fn load(name: &str) -> Vec<TestPosition> {
    let path = format!("{}/tests/data/positions/{name}", env!("CARGO_MANIFEST_DIR"));
    parse(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn limits(label: Label) -> Limits {
    let mate_nodes = std::env::var("CARO_MATE_NODES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MATE_NODES);
    Limits {
        max_depth: 64,
        time: None,
        time_max: None,
        nodes: Some(match label {
            Label::Mate => mate_nodes,
            Label::Lost => LOST_NODES,
            _ => NODES,
        }),
    }
}

/// One position's outcome: label, pass, nodes, time, and a message when it failed.
type Outcome = (Label, bool, u64, Duration, Option<String>);

fn solve(engine: &mut Engine, p: &TestPosition) -> Outcome {
    let stop = AtomicBool::new(false);
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
        Label::Lost | Label::Quiet => true,
    };
    let message = (!ok).then(|| {
        format!(
            "{p} {:?}: played {} score {} depth {} (expected {})",
            p.mate_in,
            square_name(r.best),
            r.score,
            r.depth,
            p.expected
                .iter()
                .map(|&m| square_name(m))
                .collect::<Vec<_>>()
                .join("/")
        )
    });
    (p.label, ok, r.nodes, r.elapsed, message)
}

/// Solves the positions of `files` whose label `keep` accepts, on two threads, and prints
/// per-label results. Returns (label, passed, total).
fn run(files: &[&str], keep: impl Fn(Label) -> bool) -> Vec<(Label, usize, usize)> {
    run_with(files, keep, &SearchParams::default())
}

/// [`run`] with the search's numbers `params`.
fn run_with(
    files: &[&str],
    keep: impl Fn(Label) -> bool,
    params: &SearchParams,
) -> Vec<(Label, usize, usize)> {
    let positions: Vec<TestPosition> = files
        .iter()
        .flat_map(|f| load(f))
        .filter(|p| keep(p.label))
        .collect();
    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|t| {
                let mine: Vec<&TestPosition> = positions.iter().skip(t).step_by(2).collect();
                scope.spawn(move || {
                    let mut engine = Engine::new(16);
                    engine.set_search_params(params);
                    mine.into_iter()
                        .map(|p| solve(&mut engine, p))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut stats: Vec<(Label, usize, usize, u64, Duration)> = Vec::new();
    for (label, ok, nodes, time, message) in &outcomes {
        if let Some(m) = message {
            eprintln!("FAIL {m}");
        }
        match stats.iter_mut().find(|s| s.0 == *label) {
            Some(s) => {
                s.1 += *ok as usize;
                s.2 += 1;
                s.3 += nodes;
                s.4 += *time;
            }
            None => stats.push((*label, *ok as usize, 1, *nodes, *time)),
        }
    }
    for (label, pass, total, nodes, time) in &stats {
        eprintln!(
            "{files:?} {label:?}: {pass}/{total} ({:.1}%), {nodes} nodes, {time:?}",
            100.0 * *pass as f64 / *total as f64
        );
    }
    stats.into_iter().map(|s| (s.0, s.1, s.2)).collect()
}

/// The MATE positions proven reach [`MATE_RATE`] of those run.
fn assert_mate_rate(stats: &[(Label, usize, usize)]) {
    let (_, pass, total) = stats[0];
    assert!(
        pass as f64 >= MATE_RATE * total as f64,
        "MATE {pass}/{total} below {MATE_RATE}"
    );
}

fn all_pass(stats: &[(Label, usize, usize)]) {
    for (label, pass, total) in stats {
        if *label != Label::Mate {
            assert_eq!(pass, total, "{label:?}: {pass}/{total}");
        }
    }
}

#[test]
fn freestyle_one_move_tactics() {
    all_pass(&run(&["freestyle15.pos", "freestyle15_rules.pos"], |l| {
        l != Label::Mate
    }));
}

/// The learnt ordering of quiet moves (the default, whole) orders only what the search calls
/// quiet: every one-move tactic is still answered with it blended or off, as the bot levels
/// search (docs/engine.md, "A move ordering learnt from Rapfi's moves").
#[test]
fn every_ordering_of_quiet_moves_keeps_the_one_move_tactics() {
    for policy in [0, 8] {
        let params = SearchParams {
            policy,
            ..SearchParams::default()
        };
        all_pass(&run_with(
            &["freestyle15.pos", "freestyle15_rules.pos", "caro15.pos"],
            |l| l != Label::Mate,
            &params,
        ));
    }
}

/// A move tactical by its cell values alone (`by_value` 1, off by default: docs/engine.md, "A
/// move tactical by its cell values"): the search prunes and reduces the quiet moves that
/// bonuses used to exempt, and still answers every one-move tactic and proves the forced wins
/// at the suite's rate.
#[test]
fn tactical_by_the_cell_values_alone_keeps_the_tactics() {
    let params = SearchParams {
        by_value: 1,
        ..SearchParams::default()
    };
    tactics_and_forced_wins_hold(&params);
}

/// The learnt order without the cell values' best quiet move lifted to its front (`keep` 0, the
/// default until 2026-12-03: docs/engine.md, "The cell values' first quiet move kept first"):
/// the tactics and the forced wins stand without it too.
#[test]
fn the_learnt_order_without_the_cell_values_first_quiet_move_keeps_the_tactics() {
    let params = SearchParams {
        keep: 0,
        ..SearchParams::default()
    };
    assert!(params.policy > 0, "keep acts with the learnt ordering on");
    assert_ne!(params, SearchParams::default(), "keep is on by default");
    tactics_and_forced_wins_hold(&params);
}

/// The history and killer bonuses whole (`bonuses` 16, the default until 2026-12-03:
/// docs/engine.md, "The history and killer bonuses at half weight"): the tactics and the forced
/// wins stand with them too.
#[test]
fn the_whole_history_and_killer_bonuses_keep_the_tactics() {
    let params = SearchParams {
        bonuses: 16,
        ..SearchParams::default()
    };
    assert_ne!(params, SearchParams::default(), "half weight by default");
    tactics_and_forced_wins_hold(&params);
}

/// Every one-move tactic of the three suites is answered with `params`, and the freestyle forced
/// wins are proved at the suite's rate.
fn tactics_and_forced_wins_hold(params: &SearchParams) {
    all_pass(&run_with(
        &["freestyle15.pos", "freestyle15_rules.pos", "caro15.pos"],
        |l| l != Label::Mate,
        params,
    ));
    assert_mate_rate(&run_with(
        &["freestyle15.pos", "freestyle15_rules.pos"],
        |l| l == Label::Mate,
        params,
    ));
}

#[test]
fn freestyle_forced_wins() {
    assert_mate_rate(&run(&["freestyle15.pos", "freestyle15_rules.pos"], |l| {
        l == Label::Mate
    }));
}

#[test]
fn caro_positions() {
    all_pass(&run(&["caro15.pos"], |_| true));
}

#[test]
fn rule_variant_positions() {
    all_pass(&run(&["rule_variants.pos"], |_| true));
}

/// Under caro a five blocked at both ends by opponent stones does not win, so a four whose only
/// completion is such a five is no threat: black must not believe it wins, and under freestyle
/// the same square does win.
#[test]
fn a_doubly_blocked_five_is_no_win_under_caro() {
    use caro_engine::search::WIN;
    use caro_engine::{Board, Move, Rule, Rules};
    let sq = |s: &str| caro_engine::positions::parse_square(s).unwrap();
    let black: Vec<Move> = ["h8", "i8", "j8", "k8"].map(sq).to_vec();
    let white: Vec<Move> = ["g8", "m8", "a1", "a3"].map(sq).to_vec();
    let stop = AtomicBool::new(false);
    for rule in [Rule::Caro, Rule::CaroOverline] {
        let board = Board::set_up(Rules::caro(15, 15, rule).unwrap(), &black, &white).unwrap();
        let r = Engine::new(1)
            .search(&board, &Limits::depth(1), &stop, &mut |_| {})
            .unwrap();
        assert!(
            r.score < WIN - 1,
            "{rule}: l8 is not a win, engine says {}",
            r.score
        );
        let mut b = board.clone();
        b.play(sq("l8"));
        assert_eq!(b.status(), caro_engine::Status::Ongoing, "{rule}");
    }
    let board = Board::set_up(
        Rules::caro(15, 15, Rule::Freestyle).unwrap(),
        &black,
        &white,
    )
    .unwrap();
    let r = Engine::new(1)
        .search(&board, &Limits::depth(1), &stop, &mut |_| {})
        .unwrap();
    assert_eq!((r.best, r.score), (sq("l8"), WIN - 1));
}

#[test]
fn caro_overline_positions() {
    all_pass(&run(&["caro_overline15.pos"], |_| true));
}

/// The threat-space solver's proofs are real: it never claims a win for a side that is lost
/// (LOST, MATED), and a win it claims while a five must be stopped starts with a defence
/// (BLOCK4, DEFEND: every other move loses at once). A missing defender move in its move
/// generation would show here as a false proof.
#[test]
fn the_threat_solver_proves_no_lost_position() {
    use caro_engine::search::position::Position;
    use caro_engine::search::vct::Dfpn;
    let mut solver = Dfpn::new(16);
    let mut checked = 0;
    for file in [
        "freestyle15.pos",
        "freestyle15_rules.pos",
        "caro15.pos",
        "caro_overline15.pos",
        "rule_variants.pos",
    ] {
        for p in load(file) {
            if !matches!(p.label, Label::Lost | Label::Block4 | Label::Defend) {
                continue;
            }
            let mut pos = Position::new(&p.board().unwrap());
            solver.clear();
            if let Some((m, plies)) = solver.solve(&mut pos, 20_000, &mut |_| false) {
                let mv = pos.move_at(m);
                assert!(
                    p.label != Label::Lost && p.expected.contains(&mv),
                    "{p}: claims a win in {plies} with {}",
                    square_name(mv)
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 400, "{checked}");
}

/// Speed and depth on the quiet midgame positions (`midgame15.pos`) at one second a move
/// (`CARO_SPEED_MS` to change it); run with `--ignored --nocapture` for the numbers in
/// `docs/engine.md`. Not an assertion: wall-clock results depend on the machine. Rates are per
/// CPU second of the searching thread, so other processes on the machine do not distort them.
#[test]
#[ignore]
fn midgame_speed() {
    let stop = AtomicBool::new(false);
    let positions = load("midgame15.pos");
    let ms = std::env::var("CARO_SPEED_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    // CPU time of this thread, so the rate is right even on a loaded machine.
    fn cpu_ns() -> u64 {
        std::fs::read_to_string("/proc/thread-self/schedstat")
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }
    let (mut total_nodes, mut total_cpu) = (0u64, 0u64);
    let (mut rates, mut depths) = (Vec::new(), Vec::new());
    for p in &positions {
        let mut engine = Engine::new(64);
        let board = p.board().unwrap();
        let cpu = cpu_ns();
        let r = engine
            .search(
                &board,
                &Limits::time(Duration::from_millis(ms)),
                &stop,
                &mut |_| {},
            )
            .unwrap();
        let cpu = (cpu_ns() - cpu).max(1);
        total_nodes += r.nodes;
        total_cpu += cpu;
        let rate = r.nodes as f64 / (cpu as f64 / 1e9);
        rates.push(rate);
        depths.push(r.depth);
        eprintln!(
            "{}: stones {} depth {} nodes {} wall {:?} cpu {:.2}s nps(cpu) {:.0} score {}",
            p.id,
            p.black.len() + p.white.len(),
            r.depth,
            r.nodes,
            r.elapsed,
            cpu as f64 / 1e9,
            rate,
            r.score
        );
    }
    rates.sort_by(f64::total_cmp);
    depths.sort();
    // The median of an even count is the mean of the two middle values.
    let median = |v: &[f64]| (v[(v.len() - 1) / 2] + v[v.len() / 2]) / 2.0;
    let depths_f: Vec<f64> = depths.iter().map(|&d| d as f64).collect();
    eprintln!(
        "{} positions at {ms} ms: median {:.0} nodes per CPU second (aggregate {:.0}), \
         median depth {} (min {}, max {}; {} of {} at 12 or more)",
        positions.len(),
        median(&rates),
        total_nodes as f64 / (total_cpu as f64 / 1e9),
        median(&depths_f),
        depths[0],
        depths[depths.len() - 1],
        depths.iter().filter(|&&d| d >= 12).count(),
        depths.len()
    );
}

/// The caro double three (docs/engine.md, "The caro double three"). X has just made a four on
/// the diagonal `j2`-`f6`; O can block it at `i3` or leave the five blocked at both ends with
/// `k1`, and loses either way to X's double three `g4`: O's open three `e7 f7 g7` only becomes an
/// "open four" that X stops with one stone (`c7`: then `h7` would make a five blocked at both
/// ends by `c7` and `i7`). The search used to let X answer an open three only by blocking it or
/// by a four, so it never looked at `g4` and scored O's `k1` +1448 at depth 12, which lost a
/// game. O must see that it is lost, and X must find `g4`.
#[test]
fn the_caro_double_three_is_not_pruned_against_an_open_three() {
    use caro_engine::{Board, Rule, Rules};
    let sq = |s: &str| caro_engine::positions::parse_square(s).unwrap();
    let game = "h8 h9 i7 j6 f6 g7 g5 j8 h4 e7 h5 f7 f5 i5 h6 h3 f4 e3 f3 f2 j2";
    let moves: Vec<_> = game.split(' ').map(sq).collect();
    let stop = AtomicBool::new(false);
    let limits = Limits {
        max_depth: 64,
        time: None,
        time_max: None,
        nodes: Some(120_000),
    };
    for rule in [Rule::Caro, Rule::CaroOverline] {
        let rules = Rules::caro(15, 15, rule).unwrap();
        let board = Board::from_moves(rules, &moves).unwrap();
        let r = Engine::new(16)
            .search(&board, &limits, &stop, &mut |_| {})
            .unwrap();
        assert!(
            is_mate(r.score) && r.score < 0,
            "{rule}: O is lost to g4, the engine plays {} and scores {} at depth {}",
            square_name(r.best),
            r.score,
            r.depth
        );
        for defence in ["k1", "i3"] {
            let mut b = board.clone();
            b.play(sq(defence));
            let r = Engine::new(16)
                .search(&b, &limits, &stop, &mut |_| {})
                .unwrap();
            assert_eq!(
                (square_name(r.best), is_mate(r.score) && r.score > 0),
                ("g4".to_string(), true),
                "{rule}: after O's {defence} X wins with g4 (score {})",
                r.score
            );
        }
    }
}
