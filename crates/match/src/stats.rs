//! Match statistics: the Elo difference with a 95% confidence interval from game results
//! (trinomial: win/draw/loss) or from game pairs (pentanomial: the two games of one opening with
//! colours swapped), and the sequential probability ratio test (SPRT) that decides between two
//! Elo hypotheses as results arrive.
//!
//! The formulas are the ones engine testers use (fishtest, cutechess-cli, fastchess), written
//! from their descriptions on the chessprogramming wiki ("Match Statistics", "Sequential
//! Probability Ratio Test") and Michel Van den Bergh's note "Normalized Elo" / the fishtest
//! `LLRcalc` documentation; `docs/match.md` spells them out. Pure arithmetic, no I/O.

use serde::{Deserialize, Serialize};

/// The two-sided 95% quantile of the standard normal distribution.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The logistic Elo difference that yields an expected score of `score` (0..1):
/// `-400 log10(1/score - 1)`. Infinite at 0 and 1.
pub fn elo_from_score(score: f64) -> f64 {
    if score <= 0.0 {
        f64::NEG_INFINITY
    } else if score >= 1.0 {
        f64::INFINITY
    } else {
        // `+ 0.0` turns the -0 of an even score into 0 for printing.
        -400.0 * (1.0 / score - 1.0).log10() + 0.0
    }
}

/// The expected score of a player `elo` logistic Elo points stronger: `1 / (1 + 10^(-elo/400))`.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The size, mean and variance (divided by `n`) of a sample of scores `values[i]` seen
/// `counts[i]` times; `None` with no sample.
fn moments(values: &[f64], counts: &[u64]) -> Option<(f64, f64, f64)> {
    let n: u64 = counts.iter().sum();
    if n == 0 {
        return None;
    }
    let n = n as f64;
    let mean = values
        .iter()
        .zip(counts)
        .map(|(v, &c)| v * c as f64)
        .sum::<f64>()
        / n;
    let var = values
        .iter()
        .zip(counts)
        .map(|(v, &c)| c as f64 * (v - mean).powi(2))
        .sum::<f64>()
        / n;
    Some((n, mean, var))
}

/// An Elo estimate with its 95% confidence interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct EloEstimate {
    /// Mean score per game (0..1).
    pub score: f64,
    /// Elo difference at the mean score.
    pub elo: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
    /// Standard error of the mean score.
    pub stderr: f64,
}

impl EloEstimate {
    /// The estimate from a sample of scores `values[i]` (each in 0..1) seen `counts[i]` times:
    /// the mean, its standard error `sqrt(var / n)` with the sample variance, and the interval
    /// `elo(mean ± 1.96 stderr)` (the interval is built on the score scale, then mapped, so it is
    /// not symmetric in Elo). `None` with no sample.
    fn from_distribution(values: &[f64], counts: &[u64]) -> Option<EloEstimate> {
        let (n, mean, var) = moments(values, counts)?;
        let stderr = (var / n).sqrt();
        Some(EloEstimate {
            score: mean,
            elo: elo_from_score(mean),
            low: elo_from_score(mean - Z95 * stderr),
            high: elo_from_score(mean + Z95 * stderr),
            stderr,
        })
    }
}

/// Wins, draws and losses of one side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Wdl {
    /// Games won.
    pub wins: u64,
    /// Games drawn.
    pub draws: u64,
    /// Games lost.
    pub losses: u64,
}

impl Wdl {
    /// Games counted.
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }
    /// Points: a win 1, a draw 1/2.
    pub fn points(&self) -> f64 {
        self.wins as f64 + self.draws as f64 / 2.0
    }
    /// Adds one game scored 1, 1/2 or 0.
    pub fn add(&mut self, score: GameScore) {
        match score {
            GameScore::Win => self.wins += 1,
            GameScore::Draw => self.draws += 1,
            GameScore::Loss => self.losses += 1,
        }
    }
    /// The trinomial estimate: each game is a sample of 1, 1/2 or 0.
    pub fn elo(&self) -> Option<EloEstimate> {
        EloEstimate::from_distribution(&[1.0, 0.5, 0.0], &[self.wins, self.draws, self.losses])
    }
    /// The SPRT log-likelihood ratio with games as samples (see [`llr`]).
    pub fn llr(&self, elo0: f64, elo1: f64) -> f64 {
        llr(
            &[1.0, 0.5, 0.0],
            &[self.wins, self.draws, self.losses],
            elo0,
            elo1,
        )
    }
}

/// One game's result for the side we count for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GameScore {
    /// 1 point.
    Win,
    /// 1/2 point.
    Draw,
    /// 0 points.
    Loss,
}

impl GameScore {
    /// Half-points: 2, 1 or 0.
    pub fn half_points(self) -> u8 {
        match self {
            GameScore::Win => 2,
            GameScore::Draw => 1,
            GameScore::Loss => 0,
        }
    }
    /// The opponent's result in the same game.
    pub fn opponent(self) -> GameScore {
        match self {
            GameScore::Win => GameScore::Loss,
            GameScore::Draw => GameScore::Draw,
            GameScore::Loss => GameScore::Win,
        }
    }
}

/// Game pairs (one opening, colours swapped) by total score: `counts[k]` pairs scored `k/2`
/// points of 2 (k = 0: lost both, 4: won both).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Pentanomial {
    /// Pairs by half-points scored, 0 to 4.
    pub counts: [u64; 5],
}

impl Pentanomial {
    /// The pair scores on the 0..1 scale.
    const VALUES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

    /// Adds a finished pair.
    pub fn add(&mut self, a: GameScore, b: GameScore) {
        self.counts[(a.half_points() + b.half_points()) as usize] += 1;
    }
    /// Pairs counted.
    pub fn pairs(&self) -> u64 {
        self.counts.iter().sum()
    }
    /// The pentanomial estimate: each pair is one sample of 0, 1/4, 1/2, 3/4 or 1. Pairing
    /// cancels most of the opening's bias, so the variance (and the interval) is smaller than the
    /// trinomial one on the same games when openings favour one colour.
    pub fn elo(&self) -> Option<EloEstimate> {
        EloEstimate::from_distribution(&Self::VALUES, &self.counts)
    }
    /// The SPRT log-likelihood ratio with pairs as samples (see [`llr`]).
    pub fn llr(&self, elo0: f64, elo1: f64) -> f64 {
        llr(&Self::VALUES, &self.counts, elo0, elo1)
    }
}

/// The pseudo-count of an empty category in [`llr`] (fishtest's and fastchess's value).
pub const REGULARIZE: f64 = 1e-3;

/// The generalised SPRT log-likelihood ratio of H1 (Elo = `elo1`) against H0 (Elo = `elo0`)
/// for a sample of scores `values[i]` seen `counts[i]` times, as fishtest (`LLR_logistic` in
/// `LLRcalc.py`) and fastchess compute it for logistic Elo bounds (M. Van den Bergh, "A
/// Generalized SPRT"; chessprogramming wiki, "Sequential Probability Ratio Test"):
///
/// - `p` is the empirical distribution over `values`, an empty category counting as
///   [`REGULARIZE`] samples (without it a run of identical results has no spread and no MLE);
/// - for each hypothesis, `q` is the maximum-likelihood distribution on the same values whose
///   mean is `s = score_from_elo(elo)`: `q_i = p_i / (1 + x (v_i - s))`, with `x` the root of
///   `sum p_i (v_i - s) / (1 + x (v_i - s)) = 0` (found by bisection: the sum decreases in `x`);
/// - `LLR = n sum p_i ln(q1_i / q0_i) = n (sum p_i ln(1 + x0 d0_i) - sum p_i ln(1 + x1 d1_i))`.
///
/// For large samples this agrees with the normal approximation
/// `n (s1 - s0) (2 mean - s0 - s1) / (2 var)` ([`llr_normal`]), which is unusable early on: with
/// one won game its variance estimate is near zero and it would decide at once. Zero with no
/// samples.
pub fn llr(values: &[f64], counts: &[u64], elo0: f64, elo1: f64) -> f64 {
    if counts.iter().all(|&c| c == 0) {
        return 0.0;
    }
    let counts: Vec<f64> = counts
        .iter()
        .map(|&c| if c == 0 { REGULARIZE } else { c as f64 })
        .collect();
    let n: f64 = counts.iter().sum();
    let p: Vec<f64> = counts.iter().map(|c| c / n).collect();
    // sum p_i ln(1 + x d_i) at the constrained MLE: minus the mean log-likelihood ratio of the
    // empirical distribution against the closest distribution with mean `s`.
    let log_q_over_p = |s: f64| -> f64 {
        let d: Vec<f64> = values.iter().map(|v| v - s).collect();
        let (dmax, dmin) = d
            .iter()
            .fold((f64::MIN, f64::MAX), |(hi, lo), &x| (hi.max(x), lo.min(x)));
        if dmax <= 0.0 || dmin >= 0.0 {
            // s outside the values' range: no distribution has that mean.
            return f64::NEG_INFINITY;
        }
        // 1 + x d_i > 0 for every i: x in (-1/dmax, -1/dmin).
        let (mut lo, mut hi) = (-1.0 / dmax, -1.0 / dmin);
        let f = |x: f64| -> f64 { p.iter().zip(&d).map(|(p, d)| p * d / (1.0 + x * d)).sum() };
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if f(mid) > 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let x = 0.5 * (lo + hi);
        -p.iter()
            .zip(&d)
            .map(|(p, d)| p * (1.0 + x * d).ln())
            .sum::<f64>()
    };
    let (s0, s1) = (score_from_elo(elo0), score_from_elo(elo1));
    n * (log_q_over_p(s1) - log_q_over_p(s0))
}

/// The normal approximation of [`llr`], `n (s1 - s0) (2 mean - s0 - s1) / (2 var)` with the
/// sample mean and variance (the older fastchess and cutechess formula). Kept as a reference for
/// tests; zero when the variance is zero.
pub fn llr_normal(values: &[f64], counts: &[u64], elo0: f64, elo1: f64) -> f64 {
    let Some((n, mean, var)) = moments(values, counts) else {
        return 0.0;
    };
    if var <= 0.0 {
        return 0.0;
    }
    let (s0, s1) = (score_from_elo(elo0), score_from_elo(elo1));
    n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)
}

/// The parameters of an SPRT: `--sprt elo0,elo1,alpha,beta`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Sprt {
    /// Elo under the null hypothesis.
    pub elo0: f64,
    /// Elo under the alternative hypothesis.
    pub elo1: f64,
    /// False positive rate (accepting H1 when H0 holds).
    pub alpha: f64,
    /// False negative rate (accepting H0 when H1 holds).
    pub beta: f64,
}

/// What an SPRT says after the games so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SprtDecision {
    /// The LLR fell below the lower bound: H0 (`elo0`) accepted, the change is rejected.
    H0,
    /// The LLR rose above the upper bound: H1 (`elo1`) accepted.
    H1,
    /// Keep playing.
    Continue,
}

/// Why `--sprt` could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad SPRT parameters {0:?}: expected elo0,elo1,alpha,beta with elo0 < elo1 and 0 < alpha, beta < 1")]
pub struct SprtParseError(pub String);

impl std::str::FromStr for Sprt {
    type Err = SprtParseError;
    fn from_str(s: &str) -> Result<Sprt, SprtParseError> {
        let err = || SprtParseError(s.to_string());
        let v: Vec<f64> = s
            .split(',')
            .map(|t| t.trim().parse::<f64>().map_err(|_| err()))
            .collect::<Result<_, _>>()?;
        let [elo0, elo1, alpha, beta] = v[..] else {
            return Err(err());
        };
        let unit = |p: f64| p > 0.0 && p < 1.0;
        if !(elo0 < elo1 && unit(alpha) && unit(beta)) {
            return Err(err());
        }
        Ok(Sprt {
            elo0,
            elo1,
            alpha,
            beta,
        })
    }
}

impl Sprt {
    /// Wald's bounds `(ln(beta / (1 - alpha)), ln((1 - beta) / alpha))`.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }
    /// The decision for a log-likelihood ratio.
    pub fn decide(&self, llr: f64) -> SprtDecision {
        let (lower, upper) = self.bounds();
        if llr >= upper {
            SprtDecision::H1
        } else if llr <= lower {
            SprtDecision::H0
        } else {
            SprtDecision::Continue
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, eps: f64) -> bool {
        (a - b).abs() < eps
    }

    #[test]
    fn elo_of_known_scores() {
        assert_eq!(elo_from_score(0.5), 0.0);
        // 75%: -400 log10(1/3) = 190.848...
        assert!(close(elo_from_score(0.75), 190.848, 1e-3));
        assert!(close(elo_from_score(0.25), -190.848, 1e-3));
        assert!(close(score_from_elo(elo_from_score(0.64)), 0.64, 1e-12));
        assert_eq!(elo_from_score(1.0), f64::INFINITY);
    }

    #[test]
    fn trinomial_interval() {
        // Reference values computed independently (Python, same formulas) for 100/50/80.
        let wdl = Wdl {
            wins: 100,
            draws: 50,
            losses: 80,
        };
        let e = wdl.elo().unwrap();
        assert!(close(e.score, 0.543_478, 1e-6));
        assert!(close(e.elo, 30.2883, 1e-3), "{e:?}");
        assert!(close(e.low, -9.3201, 1e-3), "{e:?}");
        assert!(close(e.high, 70.7014, 1e-3), "{e:?}");
        // Even results: 0 Elo, a symmetric interval.
        let even = Wdl {
            wins: 10,
            draws: 0,
            losses: 10,
        }
        .elo()
        .unwrap();
        assert_eq!(even.elo, 0.0);
        assert!(close(even.low, -even.high, 1e-9));
        assert!(Wdl::default().elo().is_none());
    }

    #[test]
    fn pentanomial_interval() {
        let p = Pentanomial {
            counts: [5, 20, 40, 25, 10],
        };
        let e = p.elo().unwrap();
        assert!(close(e.score, 0.5375, 1e-9));
        assert!(close(e.elo, 26.1067, 1e-3), "{e:?}");
        assert!(close(e.low, -8.4570, 1e-3), "{e:?}");
        assert!(close(e.high, 61.1958, 1e-3), "{e:?}");
    }

    #[test]
    fn pairs_are_counted_by_total_score() {
        let mut p = Pentanomial::default();
        p.add(GameScore::Win, GameScore::Loss);
        p.add(GameScore::Win, GameScore::Draw);
        p.add(GameScore::Loss, GameScore::Loss);
        assert_eq!(p.counts, [1, 0, 1, 1, 0]);
    }

    #[test]
    fn llr_on_known_counts() {
        // Reference values from an independent Python implementation of the same MLE.
        let wdl = Wdl {
            wins: 100,
            draws: 50,
            losses: 80,
        };
        assert!(
            close(wdl.llr(0.0, 10.0), 0.614_076, 1e-5),
            "{}",
            wdl.llr(0.0, 10.0)
        );
        let p = Pentanomial {
            counts: [5, 20, 40, 25, 10],
        };
        assert!(
            close(p.llr(0.0, 10.0), 0.671_580, 1e-5),
            "{}",
            p.llr(0.0, 10.0)
        );
        // The normal approximation agrees on samples this size (0.6197 and 0.6790 by hand).
        let tri = [1.0, 0.5, 0.0];
        assert!(close(
            llr_normal(&tri, &[100, 50, 80], 0.0, 10.0),
            0.619_667,
            1e-5
        ));
        assert!(close(
            llr_normal(&Pentanomial::VALUES, &p.counts, 0.0, 10.0),
            0.678_967,
            1e-5
        ));
        assert_eq!(Wdl::default().llr(0.0, 5.0), 0.0);
    }

    /// Regression: the normal approximation, used at first, accepted H1 after a single won
    /// game between real engines (near-zero variance estimate); the MLE form must not.
    #[test]
    fn one_sided_samples_move_the_llr_gradually() {
        // Won pairs only: the regularised MLE grows by about 0.134 per pair for [0, 50], so
        // one won pair decides nothing and 22 do (Python reference: 1 pair 0.13384, 10 pairs
        // 1.33616; 0.028424 per pair for [0, 10]).
        let won = |n| Pentanomial {
            counts: [0, 0, 0, 0, n],
        };
        assert!(close(won(1).llr(0.0, 50.0), 0.133_837, 1e-5));
        assert!(close(won(10).llr(0.0, 50.0), 1.336_165, 1e-5));
        assert!(close(won(1).llr(0.0, 10.0), 0.028_424, 1e-5));
        let sprt: Sprt = "0,50,0.05,0.05".parse().unwrap();
        assert_eq!(sprt.decide(won(21).llr(0.0, 50.0)), SprtDecision::Continue);
        assert_eq!(sprt.decide(won(23).llr(0.0, 50.0)), SprtDecision::H1);
        let lost = Pentanomial {
            counts: [30, 0, 0, 0, 0],
        };
        assert_eq!(sprt.decide(lost.llr(0.0, 50.0)), SprtDecision::H0);
    }

    #[test]
    fn sprt_bounds_and_parsing() {
        let sprt: Sprt = "0,10,0.05,0.05".parse().unwrap();
        let (lo, hi) = sprt.bounds();
        assert!(close(lo, -2.944_439, 1e-6) && close(hi, 2.944_439, 1e-6));
        assert_eq!(sprt.decide(3.0), SprtDecision::H1);
        assert_eq!(sprt.decide(-3.0), SprtDecision::H0);
        assert_eq!(sprt.decide(0.0), SprtDecision::Continue);
        assert!("10,0,0.05,0.05".parse::<Sprt>().is_err());
        assert!("0,10,0.05".parse::<Sprt>().is_err());
        assert!("0,10,1.5,0.05".parse::<Sprt>().is_err());
    }
}
