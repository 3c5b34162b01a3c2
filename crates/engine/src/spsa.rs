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

/// Which evaluation weights a run tunes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Set {
    /// The level and class values, the evaluation's class terms, the threat terms and the
    /// cross-line terms ([`Weights::plus`]).
    Eval,
    /// The cross-line terms alone.
    Plus,
}

/// The tuned weights of `w` in set `set`, in [`params`] order: the one list that both
/// [`params`] and [`apply`] read. [`Set::Eval`]: the level values from one stone to the open
/// four, the class values from development to the open four, the evaluation's class terms of
/// both sides up to what the threat terms take over, the threat terms and the cross-line
/// terms. Not tuned: the empty level and class, the five's (a five is the search's business)
/// and the win class. The cell values stay at 0 or more (the move ordering adds them): a
/// cross-line term may go below zero by less than the least level values of its cells.
fn slots(w: &mut Weights, set: Set) -> Vec<Slot<'_>> {
    // Cell values and threat terms: 0 to four times the value (at least `least`).
    let scaled = |least: i32| move |v: i32| (0.0, 4.0 * v.max(least) as f64);
    let terms = |_: i32| (-500.0, 2000.0);
    let mut out = Vec::new();
    let Weights {
        level,
        class,
        eval_class,
        eval_class_opp,
        bonus,
        plus,
    } = w;
    if set == Set::Eval {
        add(
            &mut out,
            "level",
            1,
            &mut level[1..LEVELS - 1],
            1.0,
            scaled(5),
        );
        add(
            &mut out,
            "class",
            1,
            &mut class[1..CLASSES - 1],
            10.0,
            scaled(100),
        );
        add(
            &mut out,
            "eval_class",
            1,
            &mut eval_class[1..5],
            15.0,
            terms,
        );
        add(
            &mut out,
            "eval_class_opp",
            1,
            &mut eval_class_opp[1..7],
            15.0,
            terms,
        );
        add(&mut out, "bonus", 0, &mut bonus[..], 30.0, scaled(500));
    }
    add(&mut out, "plus", 0, &mut plus[..], 20.0, |_| (-25.0, 400.0));
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
pub fn params(w: &Weights, r_end: f64, set: Set) -> Vec<Param> {
    let mut w = *w;
    slots(&mut w, set)
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

/// `w` with the weights of `set` set to `values` (in [`params`] order), rounded.
///
/// # Panics
/// If there are fewer values than parameters.
pub fn apply(w: &Weights, values: &[f64], set: Set) -> Weights {
    let mut out = *w;
    let slots = slots(&mut out, set);
    assert!(values.len() >= slots.len(), "one value per parameter");
    for (slot, v) in slots.into_iter().zip(values) {
        *slot.value = v.round() as i32;
    }
    out
}

/// One number of [`SearchParams`]: its name, how to read and set it (whole numbers rounded),
/// and, when a tuning run tunes it, its perturbation at the last step and its range.
/// [`search_params`] and [`apply_search`] both read [`SEARCH_FIELDS`], so the order of the
/// values is defined once.
struct SearchField {
    name: &'static str,
    get: fn(&SearchParams) -> f64,
    set: fn(&mut SearchParams, f64),
    /// `(c_end, min, max)`, or `None` for a switch that `--search` sets and a tuning run keeps
    /// as it starts (a 0/1 switch perturbed by ±1 would flip in every pair and blur every
    /// other number's gradient).
    tuned: Option<(f64, f64, f64)>,
}

const fn field(
    name: &'static str,
    get: fn(&SearchParams) -> f64,
    set: fn(&mut SearchParams, f64),
    tuned: (f64, f64, f64),
) -> SearchField {
    SearchField {
        name,
        get,
        set,
        tuned: Some(tuned),
    }
}

/// A whole number tuned as a real one.
fn whole(v: f64) -> i32 {
    v.round() as i32
}

const SEARCH_FIELDS: [SearchField; 19] = [
    field(
        "lmr_k",
        |s| s.lmr_k.into(),
        |s, v| s.lmr_k = v as f32,
        (0.06, 0.2, 1.5),
    ),
    field(
        "lmr_base",
        |s| s.lmr_base.into(),
        |s, v| s.lmr_base = v as f32,
        (0.1, 0.0, 2.0),
    ),
    field(
        "lmp_base",
        |s| s.lmp_base.into(),
        |s, v| s.lmp_base = whole(v),
        (0.6, 1.0, 10.0),
    ),
    field(
        "lmp_quarters",
        |s| s.lmp_quarters.into(),
        |s, v| s.lmp_quarters = whole(v),
        (1.0, 2.0, 24.0),
    ),
    field(
        "nmp_depth",
        |s| s.nmp_depth.into(),
        |s, v| s.nmp_depth = whole(v),
        (0.5, 2.0, 6.0),
    ),
    field(
        "nmp_base",
        |s| s.nmp_base.into(),
        |s, v| s.nmp_base = whole(v),
        (0.5, 1.0, 5.0),
    ),
    field(
        "nmp_div",
        |s| s.nmp_div.into(),
        |s, v| s.nmp_div = whole(v),
        (0.7, 2.0, 10.0),
    ),
    field(
        "rfp_depth",
        |s| s.rfp_depth.into(),
        |s, v| s.rfp_depth = whole(v),
        (0.5, 1.0, 6.0),
    ),
    field(
        "rfp_margin",
        |s| s.rfp_margin.into(),
        |s, v| s.rfp_margin = whole(v),
        (20.0, 50.0, 600.0),
    ),
    field(
        "tactical",
        |s| s.tactical.into(),
        |s, v| s.tactical = whole(v),
        (30.0, 100.0, 1000.0),
    ),
    field(
        "defence",
        |s| s.defence.into(),
        |s, v| s.defence = whole(v),
        (1.5, 5.0, 30.0),
    ),
    field(
        "killer0",
        |s| s.killers[0].into(),
        |s, v| s.killers[0] = whole(v),
        (25.0, 0.0, 1000.0),
    ),
    field(
        "killer1",
        |s| s.killers[1].into(),
        |s, v| s.killers[1] = whole(v),
        (25.0, 0.0, 1000.0),
    ),
    field(
        "aspiration",
        |s| s.aspiration.into(),
        |s, v| s.aspiration = whole(v),
        (15.0, 30.0, 600.0),
    ),
    field(
        "vct_sixteenths",
        |s| s.vct_sixteenths.into(),
        |s, v| s.vct_sixteenths = whole(v).max(0) as u32,
        (0.8, 1.0, 14.0),
    ),
    field(
        "policy",
        |s| s.policy.into(),
        |s, v| s.policy = whole(v),
        (2.0, 0.0, 24.0),
    ),
    field(
        "bonuses",
        |s| s.bonuses.into(),
        |s, v| s.bonuses = whole(v),
        (2.0, 0.0, 32.0),
    ),
    // A switch, not tuned.
    SearchField {
        name: "by_value",
        get: |s| s.by_value.into(),
        set: |s, v| s.by_value = whole(v),
        tuned: None,
    },
    SearchField {
        name: "keep",
        get: |s| s.keep.into(),
        set: |s, v| s.keep = whole(v),
        tuned: None,
    },
];

/// The search's numbers that are tuned (every number of [`SearchParams`] but the switches,
/// `by_value`, `keep`), with their perturbations and ranges. Whole numbers are tuned as real numbers
/// and rounded when used.
pub fn search_params(sp: &SearchParams, r_end: f64) -> Vec<Param> {
    tuned_fields()
        .map(|(f, (c_end, min, max))| Param {
            name: f.name.to_string(),
            value: (f.get)(sp),
            c_end,
            r_end,
            min,
            max,
        })
        .collect()
}

/// The tuned fields of [`SEARCH_FIELDS`] with their `(c_end, min, max)`, in order: what
/// [`search_params`] lists and [`apply_search`] sets.
fn tuned_fields() -> impl Iterator<Item = (&'static SearchField, (f64, f64, f64))> + Clone {
    SEARCH_FIELDS.iter().filter_map(|f| f.tuned.map(|t| (f, t)))
}

/// `sp` with its tuned numbers set to `values` (in [`search_params`] order), whole ones
/// rounded; the switches stay as `sp` has them.
///
/// # Panics
/// Unless there is one value per tuned number.
pub fn apply_search(sp: &SearchParams, values: &[f64]) -> SearchParams {
    let tuned = tuned_fields();
    assert_eq!(
        values.len(),
        tuned.clone().count(),
        "one value per parameter"
    );
    let mut out = *sp;
    for ((f, _), &v) in tuned.zip(values) {
        (f.set)(&mut out, v);
    }
    out
}

/// What a run tunes: some of the evaluation's weights ([`Set`]), the search's numbers, or
/// both, their parameters in that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Space {
    /// The evaluation's weights tuned, if any.
    pub eval: Option<Set>,
    /// Whether the search's numbers are tuned.
    pub search: bool,
}

impl Space {
    /// The space a tuning run names: `eval` (the evaluation's weights), `plus` (its
    /// cross-line terms alone), `search` (the search's numbers) or `both` (`eval` and
    /// `search`).
    pub fn named(name: &str) -> Option<Space> {
        let (eval, search) = match name {
            "eval" => (Some(Set::Eval), false),
            "plus" => (Some(Set::Plus), false),
            "search" => (None, true),
            "both" => (Some(Set::Eval), true),
            _ => return None,
        };
        Some(Space { eval, search })
    }

    /// The tuned parameters of `w` and `sp` ([`params`], then [`search_params`]).
    pub fn params(self, w: &Weights, sp: &SearchParams, r_end: f64) -> Vec<Param> {
        let mut p = Vec::new();
        if let Some(set) = self.eval {
            p.extend(params(w, r_end, set));
        }
        if self.search {
            p.extend(search_params(sp, r_end));
        }
        p
    }

    /// `w` and `sp` with the tuned parameters set to `values` (in [`Space::params`] order).
    ///
    /// # Panics
    /// Unless there is one value per parameter.
    pub fn apply(self, w: &Weights, sp: &SearchParams, values: &[f64]) -> (Weights, SearchParams) {
        let (n, weights) = match self.eval {
            Some(set) => {
                let n = params(w, 0.0, set).len();
                (n, apply(w, &values[..n], set))
            }
            None => (0, *w),
        };
        let search = if self.search {
            apply_search(sp, &values[n..])
        } else {
            assert_eq!(values.len(), n, "one value per parameter");
            *sp
        };
        (weights, search)
    }
}

/// The names of the search's numbers, the switches included, the tuned ones in
/// [`search_params`] order (`lmr_k`, ..., `killer0`, `killer1`, ..., `vct_sixteenths`,
/// `policy`, `bonuses`, `by_value`, `keep`).
pub fn search_names() -> impl Iterator<Item = &'static str> {
    SEARCH_FIELDS.iter().map(|f| f.name)
}

/// Sets the search's number `name` (one of [`search_names`]) to `value` (whole numbers
/// rounded), as a tuning run names it; `false` if there is no such number.
pub fn set_search(sp: &mut SearchParams, name: &str, value: f64) -> bool {
    match SEARCH_FIELDS.iter().find(|f| f.name == name) {
        Some(f) => {
            (f.set)(sp, value);
            true
        }
        None => false,
    }
}

/// Why a `NAME=VALUE` word names no search number and value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchWordError {
    /// No `=` in the word.
    #[error("{0:?} is not NAME=VALUE (names: {names})", names = names_list())]
    NotNameValue(String),
    /// The value is not a finite number.
    #[error("{0:?} is not a number")]
    NotANumber(String),
    /// The name is not one of [`search_names`].
    #[error("no search number {0:?} (names: {names})", names = names_list())]
    UnknownName(String),
}

fn names_list() -> String {
    search_names().collect::<Vec<_>>().join(", ")
}

/// Reads a `NAME=VALUE` word (`pbrain-caro --search`, a line of a tuning run's `search.txt`):
/// a known name (one of [`search_names`]) and a finite number, for [`set_search`].
pub fn parse_search_word(word: &str) -> Result<(&str, f64), SearchWordError> {
    let (name, value) = word
        .split_once('=')
        .ok_or_else(|| SearchWordError::NotNameValue(word.to_string()))?;
    let value = value
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| SearchWordError::NotANumber(value.to_string()))?;
    if !search_names().any(|n| n == name) {
        return Err(SearchWordError::UnknownName(name.to_string()));
    }
    Ok((name, value))
}

/// `sp` as `name=value` words, one per number in [`search_names`] order: what
/// `pbrain-caro --search` takes.
pub fn search_text(sp: &SearchParams) -> Vec<String> {
    SEARCH_FIELDS
        .iter()
        // Six decimals: an `f32` field read as `f64` (0.68 as 0.6800000071525574) reads
        // back as the same `f32`.
        .map(|f| format!("{}={}", f.name, ((f.get)(sp) * 1e6).round() / 1e6))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parameters_map_to_the_weights_and_back() {
        let w = *Weights::built();
        let p = params(&w, 0.002, Set::Eval);
        let values: Vec<f64> = p.iter().map(|p| p.value).collect();
        assert_eq!(apply(&w, &values, Set::Eval), w);
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
        let m = apply(&w, &moved, Set::Eval);
        assert_eq!(m.eval_class_opp[5], w.eval_class_opp[5] + 10);
        assert_eq!(
            Weights {
                eval_class_opp: w.eval_class_opp,
                ..m
            },
            w
        );
        // The cross-line set is the last four of the whole set, alone.
        let plus = params(&w, 0.002, Set::Plus);
        let names = |p: &[Param]| p.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&plus), ["plus[0]", "plus[1]", "plus[2]", "plus[3]"]);
        assert_eq!(names(&p[p.len() - 4..]), names(&plus));
        let m = apply(&w, &[12.0, -3.0, 40.0, 7.0], Set::Plus);
        assert_eq!(m.plus, [12, -3, 40, 7]);
        assert_eq!(Weights { plus: w.plus, ..m }, w);
    }

    #[test]
    fn the_search_parameters_map_to_the_search_params_and_back() {
        let sp = SearchParams::default();
        let p = search_params(&sp, 0.002);
        let values: Vec<f64> = p.iter().map(|p| p.value).collect();
        assert_eq!(apply_search(&sp, &values), sp);
        assert!(p
            .iter()
            .all(|p| p.min <= p.value && p.value <= p.max && p.c_end > 0.0));
        let i = p.iter().position(|p| p.name == "killer1").unwrap();
        let mut moved = values;
        moved[i] += 0.6;
        let m = apply_search(&sp, &moved);
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
    fn a_switch_is_set_by_name_and_kept_by_a_tuning_run() {
        let mut sp = SearchParams::default();
        assert!(set_search(&mut sp, "by_value", 1.0));
        assert!(set_search(&mut sp, "keep", 0.0));
        assert_eq!((sp.by_value, sp.keep), (1, 0));
        let p = search_params(&sp, 0.002);
        assert!(
            p.iter().all(|p| p.name != "by_value" && p.name != "keep"),
            "a switch is not tuned"
        );
        assert_eq!(p.len() + 2, search_names().count());
        let mut values: Vec<f64> = p.iter().map(|p| p.value).collect();
        let i = p.iter().position(|p| p.name == "policy").unwrap();
        values[i] = 4.0;
        let space = Space::named("search").unwrap();
        let (_, m) = space.apply(Weights::built(), &sp, &values);
        assert_eq!((m.by_value, m.keep, m.policy), (1, 0, 4));
        assert_eq!(
            SearchParams {
                policy: sp.policy,
                ..m
            },
            sp
        );
    }

    #[test]
    fn the_search_numbers_go_by_name_and_back() {
        let sp = SearchParams {
            lmr_k: 0.68,
            killers: [300, 7],
            vct_sixteenths: 2,
            ..SearchParams::default()
        };
        let words = search_text(&sp);
        assert_eq!(words.len(), search_names().count());
        assert_eq!(words[0], "lmr_k=0.68");
        assert!(words.contains(&"killer1=7".to_string()));
        let mut back = SearchParams::default();
        for w in &words {
            let (name, value) = w.split_once('=').unwrap();
            assert!(set_search(&mut back, name, value.parse().unwrap()), "{w}");
        }
        assert_eq!(back, sp);
        assert!(!set_search(&mut back, "lmr", 1.0));
        assert_eq!(back, sp);
        assert_eq!(parse_search_word("killer1=7"), Ok(("killer1", 7.0)));
        assert!(matches!(
            parse_search_word("lmr_k"),
            Err(SearchWordError::NotNameValue(w)) if w == "lmr_k"
        ));
        for bad in ["lmr_k=fast", "lmr_k=inf", "lmr_k=NaN"] {
            assert!(matches!(
                parse_search_word(bad),
                Err(SearchWordError::NotANumber(_))
            ));
        }
        assert_eq!(
            parse_search_word("lmr=1"),
            Err(SearchWordError::UnknownName("lmr".to_string()))
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
