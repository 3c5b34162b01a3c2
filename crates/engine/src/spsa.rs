//! Tuning the evaluation's weights by play: SPSA, simultaneous perturbation stochastic
//! approximation (J. C. Spall, "An Overview of the Simultaneous Perturbation Method for
//! Efficient Optimization", Johns Hopkins APL Technical Digest 19(4), 1998;
//! chessprogramming.org/SPSA; the parameters `c_end` and `r_end` are those of the chess
//! engines' testing frameworks). Where Texel's method fits the evaluation to predict outcomes
//! (`texel`), SPSA moves the weights toward what wins games: each step perturbs every weight
//! at once by `±c_k` (a random sign each), plays a pair of games between the two perturbed
//! sets (one opening, each colour once) and moves the weights along the perturbation by the
//! pair's result.
//!
//! This module is the arithmetic and the mapping between a parameter vector and [`Weights`];
//! the games are `selfplay::duel`'s and the driver (threads, openings, files) is the `spsa`
//! example's. It does no I/O.
//!
//! The schedule, after Spall: `c_k = c / (k + 1)^0.101`, `a_k = a / (A + k + 1)^0.602`, with
//! `A` a tenth of the iterations; `c` and `a` are set so that the last step has perturbation
//! `c_end` and learning rate `r_end = a_end / c_end^2`. A step moves each parameter by
//! `a_k / c_k * result * sign` and clamps it to its range.

use crate::search::params::SearchParams;
use crate::search::position::CLASSES;
use crate::search::weights::{Weights, LEVELS};

/// Spall's exponent of the learning rate's decay.
const ALPHA: f64 = 0.602;
/// Spall's exponent of the perturbation's decay.
const GAMMA: f64 = 0.101;

/// One tuned number.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Where it lives in the weights file: the table and the index (`level[6]`).
    pub name: String,
    /// Its current value.
    pub value: f64,
    /// The perturbation of the last step.
    pub c_end: f64,
    /// The learning rate of the last step (`a_end / c_end^2`).
    pub r_end: f64,
    /// The least value it may take.
    pub min: f64,
    /// The most.
    pub max: f64,
}

/// An SPSA run over a fixed number of iterations.
#[derive(Clone, Debug)]
pub struct Spsa {
    /// The parameters, their values moving as results come in.
    pub params: Vec<Param>,
    /// The planned number of iterations (game pairs).
    pub iterations: u64,
    /// Per parameter, `c` of the schedule.
    c: Vec<f64>,
    /// Per parameter, `a` of the schedule.
    a: Vec<f64>,
    /// `A` of the schedule: a tenth of the iterations.
    big_a: f64,
}

impl Spsa {
    /// A run of `iterations` steps from `params`.
    pub fn new(params: Vec<Param>, iterations: u64) -> Spsa {
        let n = iterations.max(1) as f64;
        let big_a = 0.1 * n;
        let c = params.iter().map(|p| p.c_end * n.powf(GAMMA)).collect();
        let a = params
            .iter()
            .map(|p| p.r_end * p.c_end * p.c_end * (big_a + n).powf(ALPHA))
            .collect();
        Spsa {
            params,
            iterations,
            c,
            a,
            big_a,
        }
    }

    /// The perturbation of parameter `i` at step `k` (from 0).
    pub fn c_k(&self, i: usize, k: u64) -> f64 {
        self.c[i] / (k as f64 + 1.0).powf(GAMMA)
    }

    /// The gain of parameter `i` at step `k`.
    pub fn a_k(&self, i: usize, k: u64) -> f64 {
        self.a[i] / (self.big_a + k as f64 + 1.0).powf(ALPHA)
    }

    /// The two perturbed vectors of step `k` for the signs `plus` (true: `+c_k`): the values
    /// plus and minus the perturbation, each clamped to the parameter's range.
    pub fn perturb(&self, k: u64, plus: &[bool]) -> (Vec<f64>, Vec<f64>) {
        let (mut hi, mut lo) = (Vec::new(), Vec::new());
        for (i, p) in self.params.iter().enumerate() {
            let d = if plus[i] { 1.0 } else { -1.0 } * self.c_k(i, k);
            hi.push((p.value + d).clamp(p.min, p.max));
            lo.push((p.value - d).clamp(p.min, p.max));
        }
        (hi, lo)
    }

    /// Takes the result of step `k`'s game pair: `result` is the points of the `+` side
    /// (first vector of [`Spsa::perturb`]) minus the `-` side's, from -2 to 2.
    pub fn update(&mut self, k: u64, plus: &[bool], result: f64) {
        let steps: Vec<f64> = (0..self.params.len())
            .map(|i| self.a_k(i, k) / self.c_k(i, k) * result)
            .collect();
        for ((p, step), &up) in self.params.iter_mut().zip(steps).zip(plus) {
            let step = if up { step } else { -step };
            p.value = (p.value + step).clamp(p.min, p.max);
        }
    }

    /// The current values.
    pub fn values(&self) -> Vec<f64> {
        self.params.iter().map(|p| p.value).collect()
    }
}

/// One tuned weight: its name (`level[6]`), where it lives, the least perturbation it gets and
/// its range.
struct Slot<'a> {
    name: String,
    value: &'a mut i32,
    floor: f64,
    min: f64,
    max: f64,
}

/// The tuned weights of `w`, in [`params`] order: the one list that both [`params`] and
/// [`apply`] read. The level values from one stone to the open four, the class values from
/// development to the open four, the evaluation's class terms of both sides up to what the
/// threat terms take over, and the threat terms. Not tuned: the empty level and class, the
/// five's (a five is the search's business) and the win class. The cell values stay at 0 or
/// more (the move ordering adds them).
fn slots(w: &mut Weights) -> Vec<Slot<'_>> {
    // Cell values and threat terms: 0 to four times the value (at least `least`).
    let scaled = |least: i32| move |v: i32| (0.0, 4.0 * v.max(least) as f64);
    let terms = |_: i32| (-500.0, 2000.0);
    let mut out = Vec::new();
    add(
        &mut out,
        "level",
        1,
        &mut w.level[1..LEVELS - 1],
        1.0,
        scaled(5),
    );
    add(
        &mut out,
        "class",
        1,
        &mut w.class[1..CLASSES - 1],
        10.0,
        scaled(100),
    );
    add(
        &mut out,
        "eval_class",
        1,
        &mut w.eval_class[1..5],
        15.0,
        terms,
    );
    add(
        &mut out,
        "eval_class_opp",
        1,
        &mut w.eval_class_opp[1..7],
        15.0,
        terms,
    );
    add(&mut out, "bonus", 0, &mut w.bonus[..], 30.0, scaled(500));
    out
}

/// Appends the entries `values` of table `table` (the first at index `first`) to `out`.
fn add<'a>(
    out: &mut Vec<Slot<'a>>,
    table: &str,
    first: usize,
    values: &'a mut [i32],
    floor: f64,
    range: impl Fn(i32) -> (f64, f64),
) {
    for (i, value) in values.iter_mut().enumerate() {
        let (min, max) = range(*value);
        out.push(Slot {
            name: format!("{table}[{}]", first + i),
            value,
            floor,
            min,
            max,
        });
    }
}

/// Which weights are tuned (`slots`), with their perturbations and ranges: a perturbation of
/// about a sixth of the value, at least one point (small values) or a fixed amount where the
/// value is zero.
pub fn params(w: &Weights, r_end: f64) -> Vec<Param> {
    let mut w = *w;
    slots(&mut w)
        .into_iter()
        .map(|s| Param {
            name: s.name,
            value: *s.value as f64,
            c_end: (s.value.abs() as f64 / 6.0).max(s.floor),
            r_end,
            min: s.min,
            max: s.max,
        })
        .collect()
}

/// `w` with the tuned weights set to `values` (in [`params`] order), rounded.
///
/// # Panics
/// If there are fewer values than parameters.
pub fn apply(w: &Weights, values: &[f64]) -> Weights {
    let mut out = *w;
    let slots = slots(&mut out);
    assert!(values.len() >= slots.len(), "one value per parameter");
    for (slot, v) in slots.into_iter().zip(values) {
        *slot.value = v.round() as i32;
    }
    out
}

/// The search's numbers that are tuned ([`SearchParams`], all of them), with their
/// perturbations and ranges. Whole numbers are tuned as real numbers and rounded when used.
pub fn search_params(sp: &SearchParams, r_end: f64) -> Vec<Param> {
    let p = |name: &str, value: f64, c_end: f64, min: f64, max: f64| Param {
        name: name.to_string(),
        value,
        c_end,
        r_end,
        min,
        max,
    };
    vec![
        p("lmr_k", sp.lmr_k as f64, 0.06, 0.2, 1.5),
        p("lmr_base", sp.lmr_base as f64, 0.1, 0.0, 2.0),
        p("lmp_base", sp.lmp_base as f64, 0.6, 1.0, 10.0),
        p("lmp_quarters", sp.lmp_quarters as f64, 1.0, 2.0, 24.0),
        p("nmp_depth", sp.nmp_depth as f64, 0.5, 2.0, 6.0),
        p("nmp_base", sp.nmp_base as f64, 0.5, 1.0, 5.0),
        p("nmp_div", sp.nmp_div as f64, 0.7, 2.0, 10.0),
        p("rfp_depth", sp.rfp_depth as f64, 0.5, 1.0, 6.0),
        p("rfp_margin", sp.rfp_margin as f64, 20.0, 50.0, 600.0),
        p("tactical", sp.tactical as f64, 30.0, 100.0, 1000.0),
        p("defence", sp.defence as f64, 1.5, 5.0, 30.0),
        p("killer0", sp.killers[0] as f64, 25.0, 0.0, 1000.0),
        p("killer1", sp.killers[1] as f64, 25.0, 0.0, 1000.0),
        p("aspiration", sp.aspiration as f64, 15.0, 30.0, 600.0),
        p("vct_sixteenths", sp.vct_sixteenths as f64, 0.8, 1.0, 14.0),
    ]
}

/// The search's numbers of `values` (in [`search_params`] order), whole ones rounded.
pub fn apply_search(values: &[f64]) -> SearchParams {
    assert_eq!(values.len(), 15, "one value per parameter");
    let int = |i: usize| values[i].round() as i32;
    SearchParams {
        lmr_k: values[0] as f32,
        lmr_base: values[1] as f32,
        lmp_base: int(2),
        lmp_quarters: int(3),
        nmp_depth: int(4),
        nmp_base: int(5),
        nmp_div: int(6),
        rfp_depth: int(7),
        rfp_margin: int(8),
        tactical: int(9),
        defence: int(10),
        killers: [int(11), int(12)],
        aspiration: int(13),
        vct_sixteenths: int(14) as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parameters_map_to_the_weights_and_back() {
        let w = *Weights::built();
        let p = params(&w, 0.002);
        let values: Vec<f64> = p.iter().map(|p| p.value).collect();
        assert_eq!(apply(&w, &values), w);
        assert!(p
            .iter()
            .all(|p| p.min <= p.value && p.value <= p.max && p.c_end > 0.0));
        // Moving one parameter moves its own weight alone.
        let i = p
            .iter()
            .position(|p| p.name == "eval_class_opp[5]")
            .unwrap();
        let mut moved = values.clone();
        moved[i] += 10.4;
        let m = apply(&w, &moved);
        assert_eq!(m.eval_class_opp[5], w.eval_class_opp[5] + 10);
        assert_eq!(
            Weights {
                eval_class_opp: w.eval_class_opp,
                ..m
            },
            w
        );
    }

    #[test]
    fn the_search_parameters_map_to_the_search_params_and_back() {
        let sp = SearchParams::default();
        let p = search_params(&sp, 0.002);
        let values: Vec<f64> = p.iter().map(|p| p.value).collect();
        assert_eq!(apply_search(&values), sp);
        assert!(p
            .iter()
            .all(|p| p.min <= p.value && p.value <= p.max && p.c_end > 0.0));
        let i = p.iter().position(|p| p.name == "killer1").unwrap();
        let mut moved = values;
        moved[i] += 0.6;
        let m = apply_search(&moved);
        assert_eq!(m.killers, [sp.killers[0], sp.killers[1] + 1]);
        assert_eq!(
            SearchParams {
                killers: sp.killers,
                ..m
            },
            sp
        );
    }

    #[test]
    fn the_schedule_ends_at_c_end_and_r_end() {
        let p = Param {
            name: "x".into(),
            value: 0.0,
            c_end: 4.0,
            r_end: 0.002,
            min: -1e9,
            max: 1e9,
        };
        let s = Spsa::new(vec![p], 1000);
        let last = 999;
        assert!((s.c_k(0, last) - 4.0).abs() < 0.01, "{}", s.c_k(0, last));
        let r = s.a_k(0, last) / (s.c_k(0, last) * s.c_k(0, last));
        assert!((r - 0.002).abs() < 1e-5, "{r}");
        // Both shrink along the way.
        assert!(s.c_k(0, 0) > s.c_k(0, 500) && s.a_k(0, 0) > s.a_k(0, 500));
    }

    #[test]
    fn steps_climb_a_noiseless_slope_and_respect_the_ranges() {
        // A toy "match": the side nearer 30 wins the pair by the difference in distance. The
        // run ends near 30 from 0, and a range that stops short of 30 holds.
        let mk = |max: f64| Param {
            name: "x".into(),
            value: 0.0,
            c_end: 2.0,
            r_end: 0.05,
            min: -100.0,
            max,
        };
        for (max, want) in [(100.0, 30.0), (20.0, 20.0)] {
            let mut s = Spsa::new(vec![mk(max)], 400);
            let mut rng = 7u64;
            for k in 0..400 {
                rng = rng
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let plus = [rng >> 63 == 1];
                let (hi, lo) = s.perturb(k, &plus);
                let result = ((lo[0] - 30.0).abs() - (hi[0] - 30.0).abs()).clamp(-2.0, 2.0);
                s.update(k, &plus, result);
                assert!(s.params[0].value <= max);
            }
            assert!(
                (s.params[0].value - want).abs() < 2.0,
                "{}",
                s.params[0].value
            );
        }
    }
}
