//! Runs the spectators' post-game analysis (docs/analysis.md) over the games of a match and
//! counts its marks per player: a check that the thresholds still separate the moves that lose
//! a game from the rest when the engine's evaluation changes.
//!
//! `cargo run --release --example review_games -- GAMES.jsonl RULE [nodes] [limit]`
//!
//! `GAMES.jsonl` is a `caro-match play` output (docs/match.md), `RULE` its rule (`freestyle`,
//! `caro`, ...; 15x15), `nodes` the budget per position (default 200,000: the shipped
//! `[analysis] nodes_per_position`), `limit` the number of games read (default all). The
//! opening's moves are not counted: the book chose them. Prints, per player, the moves judged
//! and marked, and for decisive games how often the loser's and the winner's moves carry a
//! mark; then the evaluation drops (the measure of docs/analysis.md's third rule) of the moves
//! that were the analysis's own choice in the position before, whose drop is the analysis's
//! noise (the side to move's bias between two searches), against the other moves'.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use caro_arena::analysis::{
    analyse, Cell, Judgement, PositionEval, BLUNDER_DROP, EVAL_CAP, MISTAKE_DROP,
};
use caro_engine::positions::parse_square;
use caro_engine::search::{Engine, Limits};
use caro_engine::{Rule, Rules};
use serde::Deserialize;

/// The fields of a `games.jsonl` line this tool reads.
#[derive(Deserialize)]
struct Game {
    opening: String,
    x: String,
    o: String,
    moves: Vec<String>,
    /// `x`, `o` or absent for a draw.
    winner: Option<String>,
}

/// A position's value for X, clamped as the judgement clamps it (forced wins and losses at the
/// cap).
fn value_for_x(p: &PositionEval) -> i32 {
    match (p.mate, p.eval) {
        (Some(m), _) => EVAL_CAP * m.signum(),
        (None, Some(e)) => e.clamp(-EVAL_CAP, EVAL_CAP),
        (None, None) => 0,
    }
}

/// The `q` quantile of sorted `v`.
fn quantile(v: &[i32], q: f64) -> i32 {
    v.get(((v.len() as f64 - 1.0) * q).round() as usize)
        .copied()
        .unwrap_or(0)
}

/// Marks and moves of one player.
#[derive(Default)]
struct Tally {
    moves: usize,
    mistakes: usize,
    blunders: usize,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: review_games GAMES.jsonl RULE [nodes] [limit]";
    let path = args.next().expect(usage);
    let rule: Rule = args
        .next()
        .expect(usage)
        .parse()
        .expect("a rule name (freestyle, caro, ...)");
    let nodes: u64 = args.next().map_or(200_000, |s| s.parse().expect("nodes"));
    let limit: usize = args
        .next()
        .map_or(usize::MAX, |s| s.parse().expect("limit"));
    let rules = Rules::caro(15, 15, rule).expect("15x15");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));

    let mut engine = Engine::new(16);
    let stop = AtomicBool::new(false);
    let limits = Limits {
        max_depth: 64,
        time: None,
        time_max: None,
        nodes: Some(nodes),
    };
    let mut tally: BTreeMap<String, Tally> = BTreeMap::new();
    let (mut decisive, mut loser_marked, mut winner_marked, mut draws) = (0, 0, 0, 0);
    // Drops of the analysis's own choices, and of the other moves, where neither position has
    // a forced win found (the third rule's evaluations); and the own choices with one.
    let (mut chosen, mut others) = (Vec::new(), Vec::new());
    let (mut chosen_mate, mut chosen_mate_marked) = (0usize, 0usize);
    for (n, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        if n >= limit {
            break;
        }
        let game: Game = serde_json::from_str(line).unwrap_or_else(|e| panic!("line {n}: {e}"));
        let moves: Vec<_> = game
            .moves
            .iter()
            .map(|s| parse_square(s).unwrap_or_else(|| panic!("line {n}: square {s:?}")))
            .collect();
        let book = game.opening.split_whitespace().count();
        // As the server does (`bot::threads::analyse`): a cleared engine for every position.
        let analysis = analyse(rules, &moves, nodes, |board| {
            engine.clear();
            engine.search(board, &limits, &stop, &mut |_| {})
        })
        .unwrap_or_else(|e| panic!("line {n}: {e}"));
        // Marks per colour (0 X, 1 O) in this game, on moves after the book.
        let mut marks = [0usize; 2];
        for pos in analysis.positions.iter().skip(book + 1) {
            let colour = (pos.ply as usize - 1) % 2;
            let before = &analysis.positions[pos.ply as usize - 1];
            let sign = if colour == 0 { 1 } else { -1 };
            let drop = sign * (value_for_x(before) - value_for_x(pos));
            let played = moves[pos.ply as usize - 1];
            // The test `analysis::assemble` makes before it judges a move.
            let own = before.best == Some(Cell::from(played));
            if before.mate.is_some() || pos.mate.is_some() {
                if own {
                    chosen_mate += 1;
                    chosen_mate_marked += usize::from(drop >= MISTAKE_DROP);
                }
            } else if own {
                chosen.push(drop);
            } else {
                others.push(drop);
            }
            let name = if colour == 0 { &game.x } else { &game.o };
            let t = tally.entry(name.clone()).or_default();
            t.moves += 1;
            match pos.judgement {
                Some(Judgement::Mistake) => t.mistakes += 1,
                Some(Judgement::Blunder) => t.blunders += 1,
                None => continue,
            }
            marks[colour] += 1;
        }
        match game.winner.as_deref() {
            Some(w) => {
                let winner = usize::from(w == "o");
                decisive += 1;
                loser_marked += usize::from(marks[1 - winner] > 0);
                winner_marked += usize::from(marks[winner] > 0);
            }
            None => draws += 1,
        }
        eprintln!(
            "game {}: {} moves, marks X {} O {}, winner {}",
            n + 1,
            moves.len(),
            marks[0],
            marks[1],
            game.winner.as_deref().unwrap_or("none")
        );
    }
    println!("{path}: {rule:?}, {nodes} nodes a position");
    for (name, t) in &tally {
        println!(
            "  {name}: {} moves judged, {} mistakes, {} blunders ({:.1} marks per 100 moves)",
            t.moves,
            t.mistakes,
            t.blunders,
            100.0 * (t.mistakes + t.blunders) as f64 / t.moves.max(1) as f64
        );
    }
    println!(
        "  {decisive} decisive games ({draws} drawn): the loser has a mark in {loser_marked}, \
         the winner in {winner_marked}"
    );
    println!(
        "  the analysis's own choice with a forced win found before or after: {chosen_mate} \
         moves, {chosen_mate_marked} of them with a drop of {MISTAKE_DROP} or more"
    );
    for (what, v) in [
        ("evaluations only, the analysis's own choice", &mut chosen),
        ("evaluations only, another move", &mut others),
    ] {
        v.sort_unstable();
        let share =
            |t: i32| 100.0 * v.iter().filter(|&&d| d >= t).count() as f64 / v.len().max(1) as f64;
        println!(
            "  {what}: {} moves, drop median {}, 90% {}, 95% {}, 99% {}; at least \
             {MISTAKE_DROP}: {:.1}%, at least {BLUNDER_DROP}: {:.1}%",
            v.len(),
            quantile(v, 0.5),
            quantile(v, 0.9),
            quantile(v, 0.95),
            quantile(v, 0.99),
            share(MISTAKE_DROP),
            share(BLUNDER_DROP)
        );
    }
}
