//! Texel-style tuning of the evaluation's [`Weights`] (chessprogramming.org/Texel%27s_Tuning_Method):
//! choose the weights so that `sigmoid(K * eval)` best predicts the outcomes of the games the
//! positions come from. This module is the arithmetic, pure and deterministic; reading the
//! positions and writing `search/weights.txt` is the `texel` example's job (docs/engine.md,
//! "Texel tuning").
//!
//! The evaluation is linear in the weights: a cell's value is the sum of its four lines' level
//! values plus its class's value, and the evaluation sums the cells of the side to move minus
//! the opponent's, plus the evaluation's own class terms (per class, [`Weights::eval_class`]
//! times the side to move's count of cells of that class minus [`Weights::eval_class_opp`]
//! times the opponent's) and [`threat_bonus`]. So a position becomes a vector of counts
//! ([`Sample`]: per level and per class, the side to move's cells minus the opponent's; then
//! the side to move's class counts, and the opponent's negated) and a fixed offset,
//! and `eval = weights · counts + offset` exactly (a test checks it against the engine's own
//! totals). The loss is the mean log loss (cross-entropy) of `sigmoid(K * eval)` against the
//! result; `K` is fitted first on the current weights, then held while the weights move by
//! coordinate descent on integers (Texel's local search, with steps that halve).

use crate::search::eval::threat_bonus;
use crate::search::position::{cross_line, Position, CLASSES, C_FLEX4, C_FOUR_THREE, C_WIN};
use crate::search::weights::{Weights, LEVELS};

/// Number of features: one per level, one per class for the cell values, and the class counts
/// of each side again for the evaluation's own class terms ([`Weights::eval_class`],
/// [`Weights::eval_class_opp`]).
pub const FEATURES: usize = LEVELS + 3 * CLASSES;

/// Index of the first [`Weights::eval_class`] entry in a vector.
pub const EVAL_CLASS: usize = LEVELS + CLASSES;

/// Index of the first [`Weights::eval_class_opp`] entry in a vector.
pub const EVAL_CLASS_OPP: usize = LEVELS + 2 * CLASSES;

/// One training position, reduced to what the evaluation reads.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Per level then per class: the side to move's empty cells' count minus the opponent's
    /// (a level is counted once per line of a cell); then per class the side to move's count,
    /// then per class the opponent's, negated.
    pub counts: [i32; FEATURES],
    /// The evaluation's terms that are not features: [`threat_bonus`] and the position's
    /// cross-line terms ([`Weights::plus`], which SPSA tunes and this tuner holds).
    pub offset: i32,
    /// The game's result for the side to move: 1 win, 0.5 draw, 0 loss.
    pub result: f64,
}

/// Whether a position is quiet enough for its static evaluation to mean something: the side to
/// move has no winning threat (a five, an open four or double four, a four-three square) and
/// the opponent no five to complete (which must be blocked now). Such positions are what the
/// search would resolve before trusting an evaluation.
pub fn is_quiet(pos: &Position) -> bool {
    let me = pos.side();
    let opp = 1 - me;
    pos.count(me, C_WIN) + pos.count(me, C_FLEX4) + pos.count(me, C_FOUR_THREE) == 0
        && pos.count(opp, C_WIN) == 0
}

/// The features of `pos` with the game's `result` for the side to move.
pub fn sample(pos: &Position, result: f64) -> Sample {
    let me = pos.side();
    let mut counts = [0; FEATURES];
    let mut offset = threat_bonus(pos);
    for &i in pos.board_cells() {
        let i = i as usize;
        if !pos.is_empty(i) {
            continue;
        }
        for p in 0..2 {
            let sign = if p == me { 1 } else { -1 };
            let levels = [0, 1, 2, 3].map(|d| pos.level(i, p, d));
            for l in levels {
                counts[l as usize] += sign;
            }
            offset += sign * cross_line(levels, pos.plus());
            let class = pos.class(i, p) as usize;
            counts[LEVELS + class] += sign;
            counts[if p == me { EVAL_CLASS } else { EVAL_CLASS_OPP } + class] += sign;
        }
    }
    Sample {
        counts,
        offset,
        result,
    }
}

/// The weights as one vector in [`Sample::counts`] order.
pub fn to_vector(w: &Weights) -> [i32; FEATURES] {
    let mut v = [0; FEATURES];
    v[..LEVELS].copy_from_slice(&w.level);
    v[LEVELS..EVAL_CLASS].copy_from_slice(&w.class);
    v[EVAL_CLASS..EVAL_CLASS_OPP].copy_from_slice(&w.eval_class);
    v[EVAL_CLASS_OPP..].copy_from_slice(&w.eval_class_opp);
    v
}

/// The weights of a vector in [`Sample::counts`] order, with the built weights' threat terms
/// (which are no features: [`Sample::offset`]).
pub fn from_vector(v: &[i32; FEATURES]) -> Weights {
    let mut w = Weights {
        level: [0; LEVELS],
        class: [0; CLASSES],
        eval_class: [0; CLASSES],
        eval_class_opp: [0; CLASSES],
        bonus: Weights::built().bonus,
        plus: Weights::built().plus,
    };
    w.level.copy_from_slice(&v[..LEVELS]);
    w.class.copy_from_slice(&v[LEVELS..EVAL_CLASS]);
    w.eval_class.copy_from_slice(&v[EVAL_CLASS..EVAL_CLASS_OPP]);
    w.eval_class_opp.copy_from_slice(&v[EVAL_CLASS_OPP..]);
    w
}

/// The evaluation of a sample under weights `v`.
pub fn eval(v: &[i32; FEATURES], s: &Sample) -> i64 {
    s.counts
        .iter()
        .zip(v)
        .map(|(&c, &w)| c as i64 * w as i64)
        .sum::<i64>()
        + s.offset as i64
}

/// Mean log loss of `sigmoid(k * eval)` against the results.
pub fn loss(v: &[i32; FEATURES], k: f64, samples: &[Sample]) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let eps = 1e-12;
    samples
        .iter()
        .map(|s| {
            let p = 1.0 / (1.0 + (-k * eval(v, s) as f64).exp());
            let p = p.clamp(eps, 1.0 - eps);
            -(s.result * p.ln() + (1.0 - s.result) * (1.0 - p).ln())
        })
        .sum::<f64>()
        / samples.len() as f64
}

/// The `K` in `[1e-5, 1e-1]` that minimises the loss of weights `v`: a golden-section search on
/// `ln K` (the loss is unimodal in `K` for a fixed evaluation).
pub fn fit_k(v: &[i32; FEATURES], samples: &[Sample]) -> f64 {
    let ln_k = golden_section(
        |x| loss(v, x.exp(), samples),
        (1e-5f64).ln(),
        (1e-1f64).ln(),
        60,
    );
    ln_k.exp()
}

/// The minimum of `f` on `[lo, hi]`, where `f` is unimodal, by `steps` steps of a golden-section
/// search (one new evaluation a step). Also fits the learnt ordering's temperature
/// ([`policy::fit_temperature`](crate::policy::fit_temperature)).
pub fn golden_section(f: impl Fn(f64) -> f64, lo: f64, hi: f64, steps: usize) -> f64 {
    let (mut a, mut b) = (lo, hi);
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let (mut c, mut d) = (b - g * (b - a), a + g * (b - a));
    let (mut fc, mut fd) = (f(c), f(d));
    for _ in 0..steps {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - g * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + g * (b - a);
            fd = f(d);
        }
    }
    (a + b) / 2.0
}

/// How [`tune`] moves the weights.
#[derive(Clone, Debug, PartialEq)]
pub struct Tuning {
    /// Which entries of the vector may change (the others stay as given).
    pub free: [bool; FEATURES],
    /// First step size; it halves whenever a sweep over the free weights improves nothing.
    pub step: i32,
    /// At most this many sweeps.
    pub max_sweeps: usize,
    /// Weights are kept at or above this.
    pub min: i32,
    /// Pairs `(a, b)` of entries kept in order, `v[a] <= v[b]` (a step that breaks one is not
    /// tried): e.g. a three is worth at least a two.
    pub ordered: Vec<(usize, usize)>,
    /// Pairs `(a, b)` of entries that move together: whenever `a` moves, `b` takes its value
    /// (the symmetric class terms: the opponent's equal to the side to move's). Only `a` need
    /// be free.
    pub tied: Vec<(usize, usize)>,
}

/// Coordinate descent from `start` with `k` fixed: each free weight in turn tries `+step` and
/// `-step` and keeps what lowers the loss. Deterministic. Returns the weights and the loss
/// after each sweep (the first entry is the starting loss).
pub fn tune(
    start: &[i32; FEATURES],
    k: f64,
    samples: &[Sample],
    how: &Tuning,
) -> ([i32; FEATURES], Vec<f64>) {
    let mut v = *start;
    let mut best = loss(&v, k, samples);
    let mut history = vec![best];
    let mut step = how.step.max(1);
    for _ in 0..how.max_sweeps {
        let mut improved = false;
        for i in (0..FEATURES).filter(|&i| how.free[i]) {
            for delta in [step, -step] {
                let mut t = v;
                t[i] = (t[i] + delta).max(how.min);
                for &(_, b) in how.tied.iter().filter(|&&(a, _)| a == i) {
                    t[b] = t[i];
                }
                if t[i] == v[i] || how.ordered.iter().any(|&(a, b)| t[a] > t[b]) {
                    continue;
                }
                let l = loss(&t, k, samples);
                if l < best {
                    best = l;
                    v = t;
                    improved = true;
                    break;
                }
            }
        }
        history.push(best);
        if !improved {
            if step == 1 {
                break;
            }
            step /= 2;
        }
    }
    (v, history)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::position::Tables;
    use crate::search::weights::PLUSES;
    use crate::{Board, Move, Rule, Rules};
    use std::sync::Arc;

    #[test]
    fn features_times_the_weights_are_the_engines_evaluation() {
        // The built weights, the same with class terms that differ by side (the built file's
        // are zeros, which would leave those features untested), with cross-line terms and
        // without.
        let built = *Weights::built();
        let mut split = built;
        split.eval_class = [0, 7, 91, 168, 357, -20, 5, 0];
        split.eval_class_opp = [0, 3, 150, 120, 500, 40, -9, 0];
        let mut crossed = built;
        crossed.plus = [25, -12, 60, 15];
        let mut plain = built;
        plain.plus = [0; PLUSES];
        for w in [built, split, crossed, plain] {
            features_match(&w);
        }
    }

    fn features_match(weights: &Weights) {
        let w = to_vector(weights);
        // Whether a cross-line term counted in some position.
        let mut crossed = false;
        for rule in [Rule::Freestyle, Rule::Caro] {
            let mut board = Board::new(Rules::caro(15, 15, rule).unwrap());
            // A deterministic walk of moves near the centre.
            let mut x = 7u8;
            for n in 0..30u8 {
                x = (x * 5 + n * 3 + 1) % 9 + 3;
                let y = (n * 7 + x) % 9 + 3;
                if board.try_play(Move::new(x, y)).is_err() {
                    continue;
                }
                let pos = Position::with_tables(&board, Arc::new(Tables::new(weights)));
                let s = sample(&pos, 0.5);
                crossed |= s.offset != threat_bonus(&pos);
                let me = pos.side();
                assert_eq!(
                    eval(&w, &s),
                    (pos.total(me) - pos.total(1 - me) + pos.class_terms() + threat_bonus(&pos))
                        as i64,
                    "{rule:?} after {} moves",
                    board.moves().len()
                );
            }
        }
        assert_eq!(crossed, weights.plus != [0; PLUSES], "{:?}", weights.plus);
    }

    /// Synthetic samples whose results are exactly `sigmoid(k * eval)` under weights `truth`.
    fn synthetic(truth: &[i32; FEATURES], k: f64) -> Vec<Sample> {
        let mut rng = 12345u64;
        let mut next = || {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((rng >> 33) % 21) as i32 - 10
        };
        (0..400)
            .map(|_| {
                let mut counts = [0; FEATURES];
                for c in counts.iter_mut() {
                    *c = next();
                }
                let mut s = Sample {
                    counts,
                    offset: next() * 10,
                    result: 0.0,
                };
                s.result = 1.0 / (1.0 + (-k * eval(truth, &s) as f64).exp());
                s
            })
            .collect()
    }

    fn truth() -> [i32; FEATURES] {
        let mut v = [0; FEATURES];
        for (i, w) in v.iter_mut().enumerate() {
            *w = (i as i32 * 7) % 23;
        }
        v
    }

    #[test]
    fn fit_k_recovers_the_scale_of_synthetic_results() {
        let samples = synthetic(&truth(), 0.004);
        let k = fit_k(&truth(), &samples);
        assert!((k / 0.004 - 1.0).abs() < 0.01, "{k}");
    }

    #[test]
    fn tuning_lowers_the_loss_and_moves_toward_the_weights_that_made_the_results() {
        let truth = truth();
        let samples = synthetic(&truth, 0.004);
        let start = [5; FEATURES];
        let how = Tuning {
            free: [true; FEATURES],
            step: 8,
            max_sweeps: 200,
            min: 0,
            ordered: Vec::new(),
            tied: Vec::new(),
        };
        let (tuned, history) = tune(&start, 0.004, &samples, &how);
        assert!(history.windows(2).all(|w| w[1] <= w[0]), "{history:?}");
        let (first, last) = (history[0], *history.last().unwrap());
        let floor = loss(&truth, 0.004, &samples);
        assert!(last < first, "{first} -> {last}");
        // Most of the way from the start to the truth's own loss (the entropy of the results).
        assert!(
            last - floor < (first - floor) * 0.05,
            "{first} {last} {floor}"
        );
        let dist =
            |v: &[i32; FEATURES]| -> i32 { v.iter().zip(&truth).map(|(a, b)| (a - b).abs()).sum() };
        assert!(dist(&tuned) < dist(&start) / 4, "{tuned:?}");
    }

    #[test]
    fn fixed_weights_do_not_move_the_minimum_holds_and_tied_weights_follow() {
        let samples = synthetic(&truth(), 0.004);
        let mut free = [true; FEATURES];
        free[3] = false;
        free[8] = false;
        let how = Tuning {
            free,
            step: 4,
            max_sweeps: 50,
            min: 2,
            ordered: vec![(4, 5), (5, 6)],
            tied: vec![(7, 8)],
        };
        let mut start = [5; FEATURES];
        start[3] = 40;
        let (tuned, _) = tune(&start, 0.004, &samples, &how);
        assert_eq!(tuned[3], 40);
        // The truth has 7 -> 3 and 8 -> 10: apart they would part; tied, 8 follows 7.
        assert_ne!(tuned[7], 5, "{tuned:?}");
        assert_eq!(tuned[8], tuned[7], "{tuned:?}");
        assert!(tuned.iter().all(|&w| w >= 2), "{tuned:?}");
        assert!(tuned[4] <= tuned[5] && tuned[5] <= tuned[6], "{tuned:?}");
        // Unconstrained, the truth (4: 5, 5: 12, 6: 19) is in order anyway; reversed it is not.
        let mut reversed = truth();
        reversed.swap(4, 6);
        let samples = synthetic(&reversed, 0.004);
        let (tuned, _) = tune(&start, 0.004, &samples, &how);
        assert!(tuned[4] <= tuned[5] && tuned[5] <= tuned[6], "{tuned:?}");
    }

    #[test]
    fn the_vector_order_is_the_weights_order() {
        let w = *Weights::built();
        assert_eq!(from_vector(&to_vector(&w)), w);
        assert_eq!(to_vector(&w)[LEVELS + 4], w.class[4]);
        let mut w = w;
        w.eval_class[2] = 11;
        w.eval_class_opp[2] = 13;
        assert_eq!(to_vector(&w)[EVAL_CLASS + 2], 11);
        assert_eq!(to_vector(&w)[EVAL_CLASS_OPP + 2], 13);
        assert_eq!(from_vector(&to_vector(&w)), w);
    }
}
