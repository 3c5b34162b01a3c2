//! Texel tuning of the evaluation's weights (docs/engine.md, "Texel tuning"): reads positions
//! written by `selfplay_positions`, keeps the quiet ones without a mate score, fits `K` on the
//! hand-tuned starting weights, tunes the free weights by coordinate descent and writes a
//! weights file in the format the engine builds in (`crates/engine/src/search/weights.txt`).
//!
//! `cargo run --release -p caro-engine --example texel -- POSITIONS OUT [sweeps] [lambda] [free]`
//!
//! `free` is `eval` (default: the evaluation's own class terms, `eval_class`, which the move
//! ordering does not read, the same for both sides), `side` (those terms for each side apart:
//! `eval_class` for the side to move's cells, `eval_class_opp` for the opponent's), `combo`
//! (the corrections per combination of four levels, `eval_combo`, on top of the built weights:
//! below), `all` (the cell values: the level values and the class values below) or `class` (the cells' class values alone, the cross-line combinations). The cell
//! values are also the move ordering's scores, and its thresholds were set for the hand-tuned
//! ones: both fits of them lost their SPRTs badly (docs/engine.md, "Texel tuning").
//!
//! `lambda` (default 1) blends the target: `lambda * result + (1 - lambda) * sigmoid(K0 *
//! score)`, where `score` is the search's score of the position (in the file) and `K0` is
//! fitted first, like `K`, on the search scores against the results. 1 is pure Texel (game
//! outcomes only); less leans on the search's opinion, which is less noisy than one game's
//! result.
//!
//! `combo` starts from the weights built into the engine (their own `eval_combo` left out) and
//! fits the 1,430 corrections by gradient descent (`texel::fit_combos`, `sweeps` steps of it)
//! with an L2 penalty. It tries several penalties and keeps the one with the lowest held-out
//! loss, so that loss is slightly optimistic (it chose the penalty).
//!
//! Deterministic: the same file gives the same weights. One game in five (counted in file
//! order; a game starts where the move list stops growing) is held out to report a validation
//! loss, and takes no part in the fit.

use std::time::Instant;

use caro_engine::positions::parse_square;
use caro_engine::search::position::{eval_table, Position, CLASSES};
use caro_engine::search::weights::{Weights, COMBOS, LEVELS};
use caro_engine::search::Score;
use caro_engine::texel::{self, ComboSample, Sample, Tuning, EVAL_CLASS, EVAL_CLASS_OPP, FEATURES};
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
    let (levels_free, classes_free, eval_free, split) = match free_name.as_str() {
        "eval" => (false, false, true, false),
        "side" => (false, false, true, true),
        "all" => (true, true, false, false),
        "class" => (false, true, false, false),
        "combo" => (false, false, false, false),
        other => panic!("free: `eval`, `side`, `combo`, `all` or `class`, not {other:?}"),
    };
    // `combo`: the built weights without their corrections, which the corrections add to.
    let mut base = *Weights::built();
    base.eval_combo = [[0; 2]; COMBOS];
    let table = eval_table(&base);
    let (mut combo_train, mut combo_valid) = (Vec::<ComboSample>::new(), Vec::new());
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
        let c = texel::combo_sample(&pos, &table, result);
        if games % 5 == 0 {
            valid.push(s);
            combo_valid.push(c);
        } else {
            train.push(s);
            combo_train.push(c);
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
        for ((s, c), t) in train.iter_mut().zip(&mut combo_train).zip(&train_scores) {
            let p = 1.0 / (1.0 + (-k0 * t.offset as f64).exp());
            s.result = lambda * s.result + (1.0 - lambda) * p;
            c.result = s.result;
        }
    }

    if free_name == "combo" {
        let k = texel::fit_k(&texel::to_vector(&base), &train);
        let zero = vec![0.0; 2 * COMBOS];
        let (l0, v0) = (
            texel::combo_loss(&zero, k, &combo_train),
            texel::combo_loss(&zero, k, &combo_valid),
        );
        eprintln!("K = {k:.6}; built weights: training loss {l0:.6}, held-out {v0:.6}");
        let mut best: Option<(f64, f64, Vec<f64>)> = None;
        // Smaller penalties (0, 1e-10) fitted the held-out games a little better still, but
        // with corrections up to about 1,000 on combinations seen a handful of times, which
        // the search would meet in the tactical positions the fit never saw.
        let penalties = [1e-9, 1e-8, 1e-7];
        for l2 in penalties {
            let delta: Vec<f64> = texel::fit_combos(&combo_train, k, l2, sweeps)
                .iter()
                .map(|d| d.round())
                .collect();
            let (l1, v1) = (
                texel::combo_loss(&delta, k, &combo_train),
                texel::combo_loss(&delta, k, &combo_valid),
            );
            eprintln!("L2 {l2:e}: training loss {l1:.6}, held-out {v1:.6}");
            if best.as_ref().map_or(true, |b| v1 < b.1) {
                best = Some((l2, v1, delta));
            }
        }
        let (l2, v1, delta) = best.expect("penalties tried");
        let mut w = base;
        for (id, e) in w.eval_combo.iter_mut().enumerate() {
            *e = [delta[2 * id] as i32, delta[2 * id + 1] as i32];
        }
        let l1 = texel::combo_loss(&delta, k, &combo_train);
        let set = w.eval_combo.iter().filter(|e| **e != [0, 0]).count();
        eprintln!(
            "kept L2 {l2:e}: {set} combinations corrected ({:.1} s)",
            start_time.elapsed().as_secs_f64()
        );
        let fit = format!(
            "# free: combo, {sweeps} steps, L2 {l2:e} (lowest held-out loss of {}): K = {k:.6},\n\
             # log loss {l0:.5} -> {l1:.5} (training), {v0:.5} -> {v1:.5} (held out).",
            penalties.len()
        );
        write_weights(&out, &w, train.len(), valid.len(), &input, lambda, &fit);
        return;
    }

    let hand = Weights::parse(HAND_TUNED).expect("hand-tuned weights");
    let start = texel::to_vector(&hand);
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
    let how = Tuning {
        free,
        step: 16,
        max_sweeps: sweeps,
        // The cell values stay positive (the ordering adds them); the evaluation's class terms
        // may be negative, but only the cell values can reach this floor.
        min: if eval_free { -100_000 } else { 0 },
        // Levels in order (pattern::B1 = 1, F1, B2, F2, B3, F3, B4, F4, F5 = 9): within the
        // blocked and the open shapes, more stones are worth more, an open shape at least its
        // blocked one (an open three may outweigh a four: nothing here orders them). The move ordering reads these
        // values too, and an unordered table made it try a two before a three.
        ordered: vec![
            (1, 3),
            (3, 5),
            (5, 7),
            (7, 9),
            (2, 4),
            (4, 6),
            (6, 8),
            (8, 9),
            (1, 2),
            (3, 4),
            (5, 6),
            (7, 8),
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

    let fit = format!(
        "# free: {free_name}: K = {k:.6},\n\
         # log loss {l0:.5} -> {l1:.5} (training), {v0:.5} -> {v1:.5} (held out)."
    );
    write_weights(&out, &w, train.len(), valid.len(), &input, lambda, &fit);
}

/// Writes the weights file: the format's comments, what it was fitted on, `fit` (how) and the
/// numbers.
fn write_weights(
    out: &str,
    w: &Weights,
    train: usize,
    valid: usize,
    input: &str,
    lambda: f64,
    fit: &str,
) {
    let file = format!(
        "# The pattern evaluation's weights (docs/engine.md, \"Texel tuning\"). Built into the engine\n\
         # with include_str! (search::weights) once copied to crates/engine/src/search/weights.txt.\n\
         # Written by the `texel` example (scripts/texel.sh).\n\
         # level: value of one line level (none, B1, F1, B2, F2, B3, F3, B4, F4, F5);\n\
         # class: extra value of a cell by its combined class over its four lines (none, dev,\n\
         # three, four, three-three, four-three, flex4, win); eval_class: the same, for the\n\
         # evaluation alone, the side to move's cells (the move ordering reads level and class,\n\
         # not eval_class); eval_class_opp: the same for the opponent's cells, subtracted;\n\
         # eval_combo: a correction for the evaluation alone per combination of a cell's four\n\
         # levels (highest first, as level numbers 0-9), for the side to move's cells and the\n\
         # opponent's (subtracted); combinations not listed have none.\n\
         # Fitted on {train} quiet positions ({valid} held out) of {input}, lambda {lambda},\n\
         {fit}\n\
         {}",
        w.to_text()
    );
    std::fs::write(out, file).unwrap_or_else(|e| panic!("{out}: {e}"));
}
