//! Texel tuning of the evaluation's weights (docs/engine.md, "Texel tuning"): reads positions
//! written by `selfplay_positions`, keeps the quiet ones without a mate score, fits `K` on the
//! hand-tuned starting weights, tunes the free weights by coordinate descent and writes a
//! weights file in the format the engine builds in (`crates/engine/src/search/weights.txt`).
//!
//! `cargo run --release -p caro-engine --example texel -- POSITIONS OUT [sweeps] [lambda] [free] [start]`
//!
//! `start` is `hand` (default: the hand-tuned values below, so that a re-run never starts from
//! its own last output) or `built` (the weights the engine is built with, to refine what plays
//! now; the fixed weights then stay the built ones too).
//!
//! `free` is `eval` (default: the evaluation's own class terms, `eval_class`, which the move
//! ordering does not read, the same for both sides), `side` (those terms for each side apart:
//! `eval_class` for the side to move's cells, `eval_class_opp` for the opponent's), `all` (the cell values: the level values and the class values
//! below) or `class` (the cells' class values alone, the cross-line combinations). The cell
//! values are also the move ordering's scores, and its thresholds were set for the hand-tuned
//! ones: both fits of them lost their SPRTs badly (docs/engine.md, "Texel tuning").
//!
//! `lambda` (default 1) blends the target: `lambda * result + (1 - lambda) * sigmoid(K0 *
//! score)`, where `score` is the search's score of the position (in the file) and `K0` is
//! fitted first, like `K`, on the search scores against the results. 1 is pure Texel (game
//! outcomes only); less leans on the search's opinion, which is less noisy than one game's
//! result.
//!
//! Deterministic: the same file gives the same weights. One game in five (counted in file
//! order; a game starts where the move list stops growing) is held out to report a validation
//! loss, and takes no part in the fit.

use std::time::Instant;

use caro_engine::positions::parse_square;
use caro_engine::search::position::{Position, CLASSES};
use caro_engine::search::weights::{Weights, LEVELS};
use caro_engine::search::Score;
use caro_engine::texel::{self, Sample, Tuning, EVAL_CLASS, EVAL_CLASS_OPP, FEATURES};
use caro_engine::{Board, Rule, Rules};

/// Where the tuning starts: the hand-tuned values the engine shipped before it (fixed here so
/// that a re-run does not start from its own last output).
const HAND_TUNED: &str = "level 0 1 2 4 10 12 40 50 200 1000\nclass 0 0 0 0 150 300 400 2000\n\
                          eval_class 0 0 0 0 0 0 0 0\n";

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: texel POSITIONS OUT [sweeps]";
    let input = args.next().expect(usage);
    let out = args.next().expect(usage);
    let sweeps: usize = args.next().map_or(300, |s| s.parse().expect("a number"));
    let lambda: f64 = args.next().map_or(1.0, |s| s.parse().expect("a number"));
    let free_name = args.next().unwrap_or_else(|| "eval".to_string());
    let start_name = args.next().unwrap_or_else(|| "hand".to_string());
    let (levels_free, classes_free, eval_free, split) = match free_name.as_str() {
        "eval" => (false, false, true, false),
        "side" => (false, false, true, true),
        "all" => (true, true, false, false),
        "class" => (false, true, false, false),
        other => panic!("free: `eval`, `side`, `all` or `class`, not {other:?}"),
    };
    let start_time = Instant::now();

    let text = std::fs::read_to_string(&input).unwrap_or_else(|e| panic!("{input}: {e}"));
    let (mut train, mut valid) = (Vec::<Sample>::new(), Vec::<Sample>::new());
    // The search's scores of the training positions, as samples whose evaluation is the score.
    let mut train_scores = Vec::<Sample>::new();
    let (mut lines, mut mates, mut loud, mut games, mut last_len) = (0, 0, 0, 0usize, usize::MAX);
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        lines += 1;
        let f: Vec<&str> = line.split('|').map(str::trim).collect();
        assert_eq!(f.len(), 4, "bad line: {line}");
        let rule = Rule::from_gomocup(f[0].parse().expect("rule code")).expect("known rule");
        let moves: Vec<_> = f[1]
            .split_whitespace()
            .map(|s| parse_square(s).expect("a square"))
            .collect();
        let result: f64 = f[2].parse().expect("result");
        let score = Score::new(f[3].parse().expect("score"));
        if moves.len() <= last_len {
            games += 1;
        }
        last_len = moves.len();
        if score.is_mate() {
            mates += 1;
            continue;
        }
        let mut board = Board::new(Rules::caro(15, 15, rule).expect("15x15"));
        for &m in &moves {
            board.play(m);
        }
        let pos = Position::new(&board);
        if !texel::is_quiet(&pos) {
            loud += 1;
            continue;
        }
        let s = texel::sample(&pos, result);
        if games % 5 == 0 {
            valid.push(s);
        } else {
            train.push(s);
            train_scores.push(Sample {
                counts: [0; FEATURES],
                offset: score.get(),
                result,
            });
        }
    }
    eprintln!(
        "{lines} positions from {games} games: {mates} with a mate score, {loud} not quiet, \
         {} for training, {} held out",
        train.len(),
        valid.len()
    );

    if lambda < 1.0 {
        let k0 = texel::fit_k(&[0; FEATURES], &train_scores);
        eprintln!(
            "K0 = {k0:.6} (search scores: log loss {:.6}); targets blended, lambda = {lambda}",
            texel::loss(&[0; FEATURES], k0, &train_scores)
        );
        for (s, t) in train.iter_mut().zip(&train_scores) {
            let p = 1.0 / (1.0 + (-k0 * t.offset as f64).exp());
            s.result = lambda * s.result + (1.0 - lambda) * p;
        }
    }

    let start = match start_name.as_str() {
        "hand" => texel::to_vector(&Weights::parse(HAND_TUNED).expect("hand-tuned weights")),
        "built" => texel::to_vector(Weights::built()),
        other => panic!("start: `hand` or `built`, not {other:?}"),
    };
    let k = texel::fit_k(&start, &train);
    let (l0, v0) = (
        texel::loss(&start, k, &train),
        texel::loss(&start, k, &valid),
    );
    eprintln!("K = {k:.6}; start: training loss {l0:.6}, held-out {v0:.6}");

    // Free (by `free`): the level values from one stone to the open four, the class values
    // from "development" to the double three (fixed: nothing (0), five, and the classes the
    // move ordering's "quiet" threshold (300) and the threat rules lean on: four-three and
    // up), or the evaluation's class terms from "development" to the double three (the classes both
    // sides have in quiet positions: a four-three or open-four square of the side to move
    // makes a position loud, so those classes are seen from one side only). With `side` the
    // two sides' class terms move apart, and the opponent's four-three and open-four squares
    // (which a quiet position can have: the side to move must answer them) are free too.
    let mut free = [false; FEATURES];
    for (i, f) in free.iter_mut().enumerate() {
        *f = (levels_free && (1..LEVELS - 1).contains(&i))
            || (classes_free && (LEVELS + 1..=LEVELS + 4).contains(&i))
            || (eval_free && (EVAL_CLASS + 1..=EVAL_CLASS + 4).contains(&i))
            || (split && (EVAL_CLASS_OPP + 1..=EVAL_CLASS_OPP + 6).contains(&i));
    }
    let mut how = Tuning {
        free,
        step: 16,
        max_sweeps: sweeps,
        // The cell values stay positive (the ordering adds them); the evaluation's class terms
        // may be negative, but only the cell values can reach this floor.
        min: if eval_free { -100_000 } else { 0 },
        // Levels in order (pattern::B1 = 1, F1, B2, F2, B3, F3, F3S, B4, F4, F5 = 10): within
        // the blocked and the open shapes, more stones are worth more, a strong three at least
        // a three, an open shape at least its blocked one (an open three may outweigh a four:
        // nothing here orders them). The move ordering reads these values too, and an
        // unordered table made it try a two before a three.
        ordered: vec![
            (1, 3),
            (3, 5),
            (5, 8),
            (8, 10),
            (2, 4),
            (4, 6),
            (6, 7),
            (7, 9),
            (9, 10),
            (1, 2),
            (3, 4),
            (5, 6),
            (8, 9),
            // A double three is worth no more than a four-three (which wins outright).
            (LEVELS + 4, LEVELS + 5),
        ],
        // `eval`: one table for both sides (the opponent's follows the side to move's).
        tied: if split {
            Vec::new()
        } else {
            (EVAL_CLASS..EVAL_CLASS_OPP)
                .map(|i| (i, i + CLASSES))
                .collect()
        },
    };
    // A start that breaks an order already (the built weights are tuned by play, which has no
    // such constraint: their one-stone levels are 2 blocked, 1 open) would make every step
    // infeasible: only the orders it keeps are kept.
    how.ordered.retain(|&(a, b)| start[a] <= start[b]);
    let (tuned, history) = texel::tune(&start, k, &train, &how);
    let (l1, v1) = (
        texel::loss(&tuned, k, &train),
        texel::loss(&tuned, k, &valid),
    );
    let w = texel::from_vector(&tuned);
    eprintln!(
        "{} sweeps: training loss {l0:.6} -> {l1:.6}, held-out {v0:.6} -> {v1:.6} ({:.1} s)",
        history.len() - 1,
        start_time.elapsed().as_secs_f64()
    );
    eprint!("{}", w.to_text());

    let file = format!(
        "# The pattern evaluation's weights (docs/engine.md, \"Texel tuning\"). Built into the engine\n\
         # with include_str! (search::weights) once copied to crates/engine/src/search/weights.txt.\n\
         # Written by the `texel` example (scripts/texel.sh).\n\
         # level: value of one line level (none, B1, F1, B2, F2, B3, F3, F3S, B4, F4, F5);\n\
         # class: extra value of a cell by its combined class over its four lines (none, dev,\n\
         # three, four, three-three, four-three, flex4, win); eval_class: the same, for the\n\
         # evaluation alone, the side to move's cells (the move ordering reads level and class,\n\
         # not eval_class); eval_class_opp: the same for the opponent's cells, subtracted.\n\
         # Fitted on {} quiet positions ({} held out) of {input}, lambda {lambda},\n\
         # free: {free_name}: K = {k:.6},\n\
         # log loss {l0:.5} -> {l1:.5} (training), {v0:.5} -> {v1:.5} (held out).\n\
         {}",
        train.len(),
        valid.len(),
        w.to_text()
    );
    std::fs::write(&out, file).unwrap_or_else(|e| panic!("{out}: {e}"));
}
