//! Fitting the learnt move ordering ([`search::policy`](crate::search::policy)) to the quiet
//! moves a stronger engine chose: a softmax over a position's quiet candidates of
//! `me[code] + opp[code] + last[bucket] + own[bucket]`, the chosen move's log-probability
//! maximised by Adam (Kingma and Ba, arXiv 1412.6980) over minibatches. This module is the
//! arithmetic, pure and deterministic; reading the moves and writing `search/policy.txt` is the
//! `policy` example's job (docs/engine.md, "A move ordering learnt from Rapfi's moves").
//!
//! A position's candidates are the ones the search's move generation lists on its common path
//! (every empty cell near a stone: no five to complete or block, no open three to answer), and of
//! those the quiet ones: below the search's `tactical` threshold by the cell values, as the search
//! scores them. Those are what move-count pruning and late move reductions cut, in the order the
//! learnt scores give them; the tactical ones keep their value order ahead of them.

use crate::search::params::SearchParams;
use crate::search::policy::{bucket, code, Policy, BUCKETS, CODES};
use crate::search::position::{Position, C_FLEX4};
use crate::search::threats;
use crate::texel::golden_section;

/// One quiet candidate: what the ordering reads of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// [`code`] of the side to move's levels at the cell.
    pub me: u16,
    /// [`code`] of the opponent's levels at the cell.
    pub opp: u16,
    /// [`bucket`] of the cell from the opponent's last stone.
    pub last: u8,
    /// [`bucket`] of the cell from the side to move's last stone.
    pub own: u8,
    /// The ordering score the cell values give it (attack plus the `defence` share).
    pub value: i32,
}

/// A position's quiet candidates and which of them was chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The quiet candidates, in the order the position lists its near cells.
    pub candidates: Vec<Candidate>,
    /// Index of the chosen move in `candidates`.
    pub chosen: usize,
}

/// Why a position gives no sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// A five to complete or to block, or an open three to answer: the search generates those
    /// moves apart.
    Forced,
    /// The chosen move is tactical by the cell values: ordered ahead of the quiet ones anyway.
    Tactical,
    /// The chosen move is not among the candidates (far from every stone, or the empty board).
    Outside,
}

/// The candidates of `pos` as the search orders them with `params`, and `chosen` (a padded
/// index) among them.
pub fn sample(pos: &Position, chosen: usize, params: &SearchParams) -> Result<Sample, Skip> {
    let me = pos.side();
    let opp = 1 - me;
    if pos.stones() == 0 {
        return Err(Skip::Outside);
    }
    if !threats::win_cells(pos, opp).is_empty()
        || !threats::win_cells(pos, me).is_empty()
        || pos.count(opp, C_FLEX4) > 0
    {
        return Err(Skip::Forced);
    }
    let history = pos.history();
    let xy = |c: usize| {
        let m = pos.move_at(c);
        (m.x as i32, m.y as i32)
    };
    let last = history.last().map(|&c| xy(c as usize));
    let own = history
        .len()
        .checked_sub(2)
        .map(|k| xy(history[k] as usize));
    let place = |p: (i32, i32), stone: Option<(i32, i32)>| {
        stone.map_or(0, |s| bucket(p.0 - s.0, p.1 - s.1)) as u8
    };
    let (mut candidates, mut found, mut tactical) = (Vec::new(), None, false);
    pos.for_each_near_empty(|c| {
        let st = pos.state(c);
        let value = st.order_value(me, params.defence);
        if value >= params.tactical {
            tactical |= c == chosen;
            return;
        }
        if c == chosen {
            found = Some(candidates.len());
        }
        let p = xy(c);
        candidates.push(Candidate {
            me: code_of(pos, c, me),
            opp: code_of(pos, c, opp),
            last: place(p, last),
            own: place(p, own),
            value,
        });
    });
    if tactical {
        return Err(Skip::Tactical);
    }
    let chosen = found.ok_or(Skip::Outside)?;
    Ok(Sample { candidates, chosen })
}

fn code_of(pos: &Position, c: usize, p: usize) -> u16 {
    code([0, 1, 2, 3].map(|d| pos.level(c, p, d))) as u16
}

/// The model's parameters as reals: [`CODES`] side-to-move terms, [`CODES`] opponent terms,
/// [`BUCKETS`] terms of the opponent's last stone and [`BUCKETS`] of our own.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// All the terms, in that order.
    pub w: Vec<f64>,
}

const PARAMS: usize = 2 * CODES + 2 * BUCKETS;

impl Model {
    /// All zeros.
    pub fn zero() -> Model {
        Model {
            w: vec![0.0; PARAMS],
        }
    }

    /// The parameter indices a candidate's score sums.
    fn terms(c: &Candidate) -> [usize; 4] {
        [
            c.me as usize,
            CODES + c.opp as usize,
            2 * CODES + c.last as usize,
            2 * CODES + BUCKETS + c.own as usize,
        ]
    }

    /// A candidate's score (a logit).
    pub fn score(&self, c: &Candidate) -> f64 {
        Model::terms(c).iter().map(|&i| self.w[i]).sum()
    }

    /// The policy file of the model: each logit times `scale` (ordering units per logit),
    /// rounded, plus `offset` on the side to move's terms.
    pub fn to_policy(&self, scale: f64, offset: f64) -> Policy {
        let at = |i: usize| (self.w[i] * scale).round() as i32;
        let mut p = Policy::zero();
        for c in 0..CODES {
            p.me[c] = (self.w[c] * scale + offset).round() as i32;
            p.opp[c] = at(CODES + c);
        }
        for b in 0..BUCKETS {
            p.last[b] = at(2 * CODES + b);
            p.own[b] = at(2 * CODES + BUCKETS + b);
        }
        p
    }
}

/// How well scores rank the chosen moves of some samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ranking {
    /// Mean negative log-likelihood of the chosen move under the softmax of the scores divided
    /// by the temperature.
    pub nll: f64,
    /// Share of samples whose chosen move ranks first, in the first 3, 5 and 10 (ties count
    /// half).
    pub top: [f64; 4],
    /// Mean number of candidates ranked above the chosen one (ties count half).
    pub mean_rank: f64,
}

/// [`Ranking`] of `samples` under `score` at `temperature`.
pub fn ranking(samples: &[Sample], score: impl Fn(&Candidate) -> f64, temperature: f64) -> Ranking {
    let (mut nll, mut top, mut ranks) = (0.0, [0.0; 4], 0.0);
    for s in samples {
        let v: Vec<f64> = s.candidates.iter().map(&score).collect();
        let t = v[s.chosen];
        let above = v.iter().filter(|&&x| x > t).count() as f64;
        let ties = v.iter().filter(|&&x| x == t).count() as f64 - 1.0;
        let rank = above + ties / 2.0;
        ranks += rank;
        for (k, limit) in [1.0, 3.0, 5.0, 10.0].into_iter().enumerate() {
            top[k] += f64::from(u8::from(rank < limit));
        }
        nll += log_sum_exp(&v, temperature) - t / temperature;
    }
    let n = samples.len().max(1) as f64;
    Ranking {
        nll: nll / n,
        top: top.map(|x| x / n),
        mean_rank: ranks / n,
    }
}

/// `ln sum exp(v / t)`, computed stably.
fn log_sum_exp(v: &[f64], t: f64) -> f64 {
    let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    m / t + v.iter().map(|x| ((x - m) / t).exp()).sum::<f64>().ln()
}

/// The temperature (ordering units per logit) at which the cell values' scores best predict the
/// chosen moves: a golden-section search on its logarithm between 1 and 1000.
pub fn fit_temperature(samples: &[Sample]) -> f64 {
    let loss = |lt: f64| ranking(samples, |c| f64::from(c.value), lt.exp()).nll;
    golden_section(loss, 0.0, 1000f64.ln(), 40).exp()
}

/// How the model is fitted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    /// Passes over the samples.
    pub epochs: usize,
    /// Samples per step.
    pub batch: usize,
    /// Adam's step size.
    pub rate: f64,
    /// L2 penalty on every term.
    pub l2: f64,
}

impl Default for Fit {
    fn default() -> Fit {
        Fit {
            epochs: 6,
            batch: 512,
            rate: 0.02,
            l2: 1e-5,
        }
    }
}

/// Fits a model to `samples` from zero; `each_epoch` sees the model and the epoch's mean training
/// loss after every pass. Deterministic: the samples are taken in their order.
pub fn fit(samples: &[Sample], how: &Fit, mut each_epoch: impl FnMut(usize, &Model, f64)) -> Model {
    let mut model = Model::zero();
    let (mut m1, mut m2) = (vec![0.0; PARAMS], vec![0.0; PARAMS]);
    let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-8);
    let mut grad = vec![0.0; PARAMS];
    let mut step = 0;
    for epoch in 0..how.epochs {
        let mut total = 0.0;
        for batch in samples.chunks(how.batch.max(1)) {
            grad.iter_mut().for_each(|g| *g = 0.0);
            for s in batch {
                let logits: Vec<f64> = s.candidates.iter().map(|c| model.score(c)).collect();
                let z = log_sum_exp(&logits, 1.0);
                total += z - logits[s.chosen];
                for (j, c) in s.candidates.iter().enumerate() {
                    let g = (logits[j] - z).exp() - f64::from(u8::from(j == s.chosen));
                    for i in Model::terms(c) {
                        grad[i] += g;
                    }
                }
            }
            step += 1;
            let n = batch.len() as f64;
            let (c1, c2) = (1.0 - b1.powi(step), 1.0 - b2.powi(step));
            for (i, w) in model.w.iter_mut().enumerate() {
                let g = grad[i] / n + how.l2 * *w;
                m1[i] = b1 * m1[i] + (1.0 - b1) * g;
                m2[i] = b2 * m2[i] + (1.0 - b2) * g * g;
                *w -= how.rate * (m1[i] / c1) / ((m2[i] / c2).sqrt() + eps);
            }
        }
        each_epoch(epoch, &model, total / samples.len().max(1) as f64);
    }
    model
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::positions::parse_square;
    use crate::{Board, Rule, Rules};

    fn cand(me: u16, opp: u16, value: i32) -> Candidate {
        Candidate {
            me,
            opp,
            last: 0,
            own: 0,
            value,
        }
    }

    /// Samples where the chosen move is always the candidate whose own code is 5, among
    /// decoys of codes 1 to 4: the fit must learn to put code 5 first.
    #[test]
    fn the_fit_learns_what_is_chosen() {
        let samples: Vec<Sample> = (0..200)
            .map(|k| {
                let mut candidates: Vec<Candidate> = (1..5).map(|c| cand(c, 0, 0)).collect();
                let at = k % 5;
                candidates.insert(at, cand(5, 0, 0));
                Sample {
                    candidates,
                    chosen: at,
                }
            })
            .collect();
        let before = ranking(&samples, |_| 0.0, 1.0);
        let mut losses = Vec::new();
        let model = fit(
            &samples,
            &Fit {
                epochs: 30,
                batch: 50,
                rate: 0.1,
                ..Fit::default()
            },
            |_, _, loss| losses.push(loss),
        );
        let after = ranking(&samples, |c| model.score(c), 1.0);
        assert!((before.nll - 5f64.ln()).abs() < 1e-12);
        assert!(after.nll < 0.1, "{after:?}");
        assert_eq!(after.top[0], 1.0);
        assert!(losses.windows(2).all(|w| w[1] <= w[0] + 1e-9), "{losses:?}");
        let p = model.to_policy(50.0, 7.0);
        assert!(p.me[5] > p.me[1] && p.me[5] > p.me[4]);
    }

    /// The temperature of scores that pick the chosen move with probability `e / (e + 1)`
    /// between two candidates 30 apart is 30.
    #[test]
    fn the_temperature_is_recovered() {
        let e = std::f64::consts::E;
        // Out of 1000 samples, round(1000 e / (e + 1)) choose the higher one.
        let high = (1000.0 * e / (e + 1.0)).round() as usize;
        let samples: Vec<Sample> = (0..1000)
            .map(|k| Sample {
                candidates: vec![cand(0, 0, 30), cand(0, 0, 0)],
                chosen: usize::from(k >= high),
            })
            .collect();
        let t = fit_temperature(&samples);
        assert!((t - 30.0).abs() < 0.2, "{t}");
    }

    #[test]
    fn samples_follow_the_search() {
        let rules = Rules::caro(15, 15, Rule::Freestyle).unwrap();
        let play = |moves: &str| {
            let mut b = Board::new(rules);
            for m in moves.split_whitespace() {
                b.try_play(parse_square(m).unwrap()).unwrap();
            }
            Position::new(&b)
        };
        let params = SearchParams::default();
        let at = |pos: &Position, m: &str| pos.index(parse_square(m).unwrap());
        // X to move with an open three (h8 i8 j8), O's last stone on a1.
        let pos = play("h8 h9 i8 i9 j8 a1");
        let s = sample(&pos, at(&pos, "b2"), &params).unwrap();
        let chosen = s.candidates[s.chosen];
        assert_eq!((chosen.last, chosen.own), (1, 0), "next to a1, far from j8");
        let s = sample(&pos, at(&pos, "j10"), &params).unwrap();
        let chosen = s.candidates[s.chosen];
        assert_eq!((chosen.last, chosen.own), (0, 2), "two up from j8");
        assert!(s.candidates.iter().all(|c| c.value < params.tactical));
        assert_eq!(
            s.candidates.len() + 2,
            {
                let mut near = 0;
                pos.for_each_near_empty(|_| near += 1);
                near
            },
            "all near cells but the two that make an open four"
        );
        // g8 makes X's open four: tactical by the cell values.
        assert_eq!(sample(&pos, at(&pos, "g8"), &params), Err(Skip::Tactical));
        assert_eq!(sample(&pos, at(&pos, "f13"), &params), Err(Skip::Outside));
        // O faces X's open three: forced.
        let pos = play("h8 h9 i8 i9 j8");
        assert_eq!(sample(&pos, at(&pos, "g8"), &params), Err(Skip::Forced));
    }
}
