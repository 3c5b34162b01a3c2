//! Joint Elo ratings of many engines from the games of many matches: the logistic
//! (Bradley-Terry) model fitted by maximum likelihood, as Ordo and BayesElo do, so that a ladder
//! of bot levels that each played only some of the others gets one consistent scale.
//!
//! The model: engine `i` has a rating `r_i` (Elo); against engine `j` it scores on average
//! `p_ij = 1 / (1 + 10^(-(r_i - r_j) / 400))`, the curve of [`crate::stats::score_from_elo`]. A
//! game is a sample of 1, 1/2 or 0 points and contributes `s ln p_ij + (1 - s) ln(1 - p_ij)` to
//! the log-likelihood: a draw counts as half a win and half a loss (Ordo's convention; BayesElo
//! instead fits a separate draw parameter). One engine, the anchor, is fixed at 0 and the others
//! are found by Newton's method on the concave log-likelihood. With two engines the fit is
//! exactly `elo_from_score` of the score between them; on a chain of matches the differences
//! add up.
//!
//! The maximum-likelihood ratings exist (are finite) exactly when no group of engines scored
//! every point against the others (Zermelo 1929; Hunter, "MM algorithms for generalized
//! Bradley-Terry models", 2004, condition A): in the directed graph with an edge `i -> j` when
//! `i` scored anything against `j`, every engine reaches every other. When that fails, a clean
//! sweep would push a rating to infinity, so we add a weak prior as BayesElo's `prior` does: a
//! number of virtual draws (by default 1) between each engine and the anchor. [`Prior::Auto`]
//! adds it only when it is needed and [`Ratings::prior`] says why.
//!
//! The 95% interval of each rating is `±1.96` standard errors from the inverse of the observed
//! information matrix (minus the Hessian of the log-likelihood, prior included) with the anchor
//! fixed: the uncertainty of each engine relative to the anchor. Games are taken as independent;
//! the pairing of openings in a match makes that slightly pessimistic (see `docs/match.md`,
//! "Pentanomial interval").
//!
//! Pure arithmetic on small dense matrices, plus the reader of `games.jsonl` lines. No I/O.

use serde::{Deserialize, Serialize};

use crate::stats::Z95;

/// Natural-log slope of the logistic Elo curve: `p = 1 / (1 + e^(-K d))` for a difference `d`.
const K: f64 = std::f64::consts::LN_10 / 400.0;

/// Why ratings could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RatingError {
    /// A `games.jsonl` line could not be read.
    #[error("line {line}: {message}")]
    BadRecord {
        /// Line number from 1.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// No game to rate.
    #[error("no games to rate")]
    NoGames,
    /// The anchor did not play.
    #[error("anchor {anchor:?} played no game; engines: {}", engines.join(", "))]
    UnknownAnchor {
        /// The requested anchor.
        anchor: String,
        /// The engines that did play.
        engines: Vec<String>,
    },
    /// Some engine has no chain of games to the anchor, so its rating is undefined.
    #[error("no chain of games links {} to the anchor {anchor:?}", engines.join(", "))]
    Disconnected {
        /// The anchor.
        anchor: String,
        /// The engines out of its reach.
        engines: Vec<String>,
    },
    /// The maximum-likelihood ratings are infinite and the prior was turned off.
    #[error("{0}; allow a prior (--prior auto or a number of virtual draws)")]
    Diverges(String),
    /// A bad prior weight.
    #[error("the prior must be a finite number of virtual draws >= 0, got {0}")]
    BadPrior(f64),
}

/// The colour that won a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Winner {
    /// X, the first player.
    X,
    /// O.
    O,
    /// Nobody: a draw.
    Draw,
}

/// One game between two named engines: the part of a `games.jsonl` record a rating needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RatedGame {
    /// The engine playing X.
    pub x: String,
    /// The engine playing O.
    pub o: String,
    /// Who won.
    pub winner: Winner,
}

/// The fields of a `games.jsonl` line that we read; the others are ignored.
#[derive(Deserialize)]
struct RecordFields {
    x: String,
    o: String,
    winner: Option<String>,
    result: String,
}

impl RatedGame {
    /// Reads the games of a `games.jsonl` file (one JSON object per line, as `caro-match play`
    /// writes; blank lines are skipped). `winner` and `result` must agree.
    pub fn parse_jsonl(text: &str) -> Result<Vec<RatedGame>, RatingError> {
        let mut games = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = |message: String| RatingError::BadRecord {
                line: i + 1,
                message,
            };
            let r: RecordFields = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
            let winner = match (r.winner.as_deref(), r.result.as_str()) {
                (Some("x"), "1-0") => Winner::X,
                (Some("o"), "0-1") => Winner::O,
                (None, "1/2-1/2") => Winner::Draw,
                (w, res) => {
                    return Err(bad(format!(
                        "winner {w:?} and result {res:?} do not describe one result"
                    )))
                }
            };
            if r.x == r.o {
                return Err(bad(format!("{:?} plays itself", r.x)));
            }
            games.push(RatedGame {
                x: r.x,
                o: r.o,
                winner,
            });
        }
        Ok(games)
    }
}

/// Games and points between every two engines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Crosstable {
    /// Engine names, sorted.
    names: Vec<String>,
    /// `games[i][j]`: games between `i` and `j` (symmetric).
    games: Vec<Vec<f64>>,
    /// `points[i][j]`: points `i` scored against `j` (`points[i][j] + points[j][i] = games[i][j]`).
    points: Vec<Vec<f64>>,
}

impl Crosstable {
    /// The table of `games`.
    pub fn from_games(games: &[RatedGame]) -> Crosstable {
        let mut names: Vec<String> = games
            .iter()
            .flat_map(|g| [g.x.clone(), g.o.clone()])
            .collect();
        names.sort();
        names.dedup();
        let n = names.len();
        let mut table = Crosstable {
            names,
            games: vec![vec![0.0; n]; n],
            points: vec![vec![0.0; n]; n],
        };
        for g in games {
            let x_points = match g.winner {
                Winner::X => 1.0,
                Winner::O => 0.0,
                Winner::Draw => 0.5,
            };
            let (x, o) = (table.index(&g.x).unwrap(), table.index(&g.o).unwrap());
            table.add(x, o, 1.0, x_points);
        }
        table
    }

    /// Engine names, sorted.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Index of the engine called `name`.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.names.binary_search_by(|n| n.as_str().cmp(name)).ok()
    }

    /// Adds `games` games between `a` and `b` in which `a` scored `points`.
    fn add(&mut self, a: usize, b: usize, games: f64, points: f64) {
        self.games[a][b] += games;
        self.games[b][a] += games;
        self.points[a][b] += points;
        self.points[b][a] += games - points;
    }

    /// Games played by engine `i`.
    fn games_of(&self, i: usize) -> f64 {
        self.games[i].iter().sum()
    }

    /// Points scored by engine `i`.
    fn points_of(&self, i: usize) -> f64 {
        self.points[i].iter().sum()
    }

    /// `reach[i][j]`: a chain of edges leads from `i` to `j`, where `edge(i, j)` says whether
    /// `i` links to `j` directly (Warshall's transitive closure; a handful of engines).
    fn closure(&self, edge: impl Fn(usize, usize) -> bool) -> Vec<Vec<bool>> {
        let n = self.names.len();
        let mut reach: Vec<Vec<bool>> = (0..n)
            .map(|i| (0..n).map(|j| i == j || edge(i, j)).collect())
            .collect();
        for k in 0..n {
            let via = reach[k].clone();
            for row in reach.iter_mut().filter(|row| row[k]) {
                for (r, &v) in row.iter_mut().zip(&via) {
                    *r |= v;
                }
            }
        }
        reach
    }

    /// `None` when the maximum-likelihood ratings are finite, that is when every engine scored
    /// something, through a chain of opponents, against every other (the table is assumed
    /// connected); otherwise which groups swept or were swept, in words.
    fn divergence(&self) -> Option<String> {
        let n = self.names.len();
        let beats = self.closure(|i, j| self.points[i][j] > 0.0);
        if beats.iter().all(|row| row.iter().all(|&r| r)) {
            return None;
        }
        // Groups of engines that reach each other (strongly connected components); a group no
        // outsider scored against swept its opponents, a group that scored against no outsider
        // was swept.
        let mut group_of: Vec<Option<usize>> = vec![None; n];
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for i in 0..n {
            if group_of[i].is_none() {
                let members: Vec<usize> = (0..n).filter(|&j| beats[i][j] && beats[j][i]).collect();
                for &m in &members {
                    group_of[m] = Some(groups.len());
                }
                groups.push(members);
            }
        }
        // A group that conceded nothing to the others swept them; one that scored nothing was
        // swept. With two groups each is the other's complement: name the smaller one only.
        // Whether `points(member, outsider)` is positive for some member and some outsider.
        let across = |members: &[usize], points: &dyn Fn(usize, usize) -> f64| {
            members.iter().any(|&i| {
                (0..n)
                    .filter(|j| !members.contains(j))
                    .any(|j| points(i, j) > 0.0)
            })
        };
        let mut verdicts: Vec<(&[usize], &str)> = groups
            .iter()
            .filter_map(|members| {
                if !across(members, &|i, j| self.points[j][i]) {
                    Some((&members[..], "won"))
                } else if !across(members, &|i, j| self.points[i][j]) {
                    Some((&members[..], "lost"))
                } else {
                    None
                }
            })
            .collect();
        if groups.len() == 2 {
            // The smaller group, the winners on a tie.
            verdicts.sort_by_key(|(members, verdict)| (members.len(), *verdict != "won"));
            verdicts.truncate(1);
        }
        let parts: Vec<String> = verdicts
            .iter()
            .map(|(members, verdict)| match members {
                [one] => format!("{} {verdict} every game it played", self.names[*one]),
                _ => {
                    let names: Vec<&str> =
                        members.iter().map(|&m| self.names[m].as_str()).collect();
                    format!(
                        "{} {verdict} every game against the other engines",
                        names.join(", ")
                    )
                }
            })
            .collect();
        Some(format!(
            "no finite maximum-likelihood ratings: {}",
            parts.join("; ")
        ))
    }
}

/// The prior added to the games.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Prior {
    /// None when the maximum-likelihood ratings are finite, else [`DEFAULT_VIRTUAL_DRAWS`]
    /// virtual draws of each engine against the anchor.
    Auto,
    /// Always this many virtual draws of each engine against the anchor (0: never a prior, and
    /// an error when the ratings would be infinite).
    VirtualDraws(f64),
}

/// Virtual draws per engine of [`Prior::Auto`] when a prior is needed: as weak as a prior can
/// be while keeping every rating finite (BayesElo's default is 2 per pair of opponents).
pub const DEFAULT_VIRTUAL_DRAWS: f64 = 1.0;

impl std::str::FromStr for Prior {
    type Err = String;
    fn from_str(s: &str) -> Result<Prior, String> {
        if s == "auto" {
            return Ok(Prior::Auto);
        }
        match s.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(Prior::VirtualDraws(v)),
            _ => Err(format!(
                "expected `auto` or a number of virtual draws >= 0, got {s:?}"
            )),
        }
    }
}

/// The prior a fit used.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PriorUsed {
    /// Virtual draws of each engine against the anchor (0: a pure maximum-likelihood fit).
    pub virtual_draws: f64,
    /// Why [`Prior::Auto`] added it (the engines that swept or were swept); `None` when it was
    /// not needed or was asked for explicitly.
    pub reason: Option<String>,
}

/// One engine's rating.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EngineRating {
    /// The engine's name, as in the game records.
    pub name: String,
    /// Games played (real ones, not the prior's).
    pub games: u64,
    /// Points scored (a win 1, a draw 1/2).
    pub points: f64,
    /// `points / games`.
    pub score: f64,
    /// Rating in Elo, the anchor at 0.
    pub elo: f64,
    /// Standard error of `elo` (0 for the anchor).
    pub stderr: f64,
    /// Half-width of the 95% interval: `1.96 stderr`.
    pub ci95: f64,
}

/// The games between two engines.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairResult {
    /// The first engine (by name).
    pub engine1: String,
    /// The second.
    pub engine2: String,
    /// Games between them.
    pub games: u64,
    /// Points `engine1` scored.
    pub points1: f64,
    /// `points1 / games`.
    pub score1: f64,
}

/// The fitted ratings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ratings {
    /// The engine fixed at 0.
    pub anchor: String,
    /// Games rated.
    pub games: u64,
    /// The prior used.
    pub prior: PriorUsed,
    /// Every engine, strongest first.
    pub engines: Vec<EngineRating>,
    /// Every pair of engines that met, by name.
    pub pairs: Vec<PairResult>,
    /// Newton iterations taken.
    pub iterations: usize,
}

impl Ratings {
    /// The rating of the engine called `name`.
    pub fn get(&self, name: &str) -> Option<&EngineRating> {
        self.engines.iter().find(|e| e.name == name)
    }

    /// The human report: a table of engines, strongest first, and the prior used.
    pub fn report(&self) -> String {
        let width = self
            .engines
            .iter()
            .map(|e| e.name.chars().count())
            .max()
            .unwrap_or(0)
            .max("engine".len());
        let mut out = format!(
            "Elo of {} engines from {} games: logistic model, a draw counts 1/2, {} = 0\n",
            self.engines.len(),
            self.games,
            self.anchor
        );
        out += &format!(
            "{:>4}  {:<width$}  {:>6}  {:>6}  {:>6}  {:>6}\n",
            "rank", "engine", "games", "score", "Elo", "±95%"
        );
        for (rank, e) in self.engines.iter().enumerate() {
            let ci = if e.name == self.anchor {
                "anchor".to_string()
            } else {
                format!("{:.0}", e.ci95)
            };
            let elo = if e.name == self.anchor {
                "0".to_string()
            } else {
                format!("{:+.0}", e.elo)
            };
            out += &format!(
                "{:>4}  {:<width$}  {:>6}  {:>5.1}%  {:>6}  {:>6}\n",
                rank + 1,
                e.name,
                e.games,
                100.0 * e.score,
                elo,
                ci
            );
        }
        let draws = self.prior.virtual_draws;
        match (&self.prior.reason, draws > 0.0) {
            (_, false) => out += "prior: none (maximum-likelihood ratings)\n",
            (None, true) => {
                out += &format!(
                    "prior: {draws} virtual draw(s) of each engine against {} (asked for)\n",
                    self.anchor
                )
            }
            (Some(why), true) => {
                out += &format!(
                    "prior: {draws} virtual draw(s) of each engine against {}, because {why}\n",
                    self.anchor
                )
            }
        }
        out
    }
}

/// Fits the ratings of every engine of `table`, `anchor` at 0 (see the module docs).
pub fn fit(table: &Crosstable, anchor: &str, prior: Prior) -> Result<Ratings, RatingError> {
    let n = table.names.len();
    if n == 0 {
        return Err(RatingError::NoGames);
    }
    let a = table
        .index(anchor)
        .ok_or_else(|| RatingError::UnknownAnchor {
            anchor: anchor.to_string(),
            engines: table.names.clone(),
        })?;
    let met = table.closure(|i, j| table.games[i][j] > 0.0);
    let lost: Vec<String> = (0..n)
        .filter(|&i| !met[a][i])
        .map(|i| table.names[i].clone())
        .collect();
    if !lost.is_empty() {
        return Err(RatingError::Disconnected {
            anchor: anchor.to_string(),
            engines: lost,
        });
    }
    let prior = match prior {
        Prior::VirtualDraws(v) if !(v.is_finite() && v >= 0.0) => {
            return Err(RatingError::BadPrior(v))
        }
        Prior::VirtualDraws(v) => {
            if v == 0.0 {
                if let Some(why) = table.divergence() {
                    return Err(RatingError::Diverges(why));
                }
            }
            PriorUsed {
                virtual_draws: v,
                reason: None,
            }
        }
        Prior::Auto => match table.divergence() {
            None => PriorUsed {
                virtual_draws: 0.0,
                reason: None,
            },
            Some(why) => PriorUsed {
                virtual_draws: DEFAULT_VIRTUAL_DRAWS,
                reason: Some(why),
            },
        },
    };
    // The prior's virtual draws are games like the others for the fit.
    let mut fitted = table.clone();
    if prior.virtual_draws > 0.0 {
        for i in (0..n).filter(|&i| i != a) {
            fitted.add(i, a, prior.virtual_draws, prior.virtual_draws / 2.0);
        }
    }
    let (elo, info, iterations) = newton(&fitted, a);
    // Covariance of the free ratings: the inverse of the information matrix.
    let free: Vec<usize> = (0..n).filter(|&i| i != a).collect();
    let cov = cholesky(&info)
        .map(|l| cholesky_inverse(&l))
        .expect("the information matrix of a connected table is positive definite");
    let mut engines: Vec<EngineRating> = (0..n)
        .map(|i| {
            let stderr = free
                .iter()
                .position(|&f| f == i)
                .map_or(0.0, |k| cov[k][k].sqrt());
            let games = table.games_of(i);
            EngineRating {
                name: table.names[i].clone(),
                games: games as u64,
                points: table.points_of(i),
                score: table.points_of(i) / games,
                // `+ 0.0` turns a -0 into 0 for printing.
                elo: elo[i] + 0.0,
                stderr,
                ci95: Z95 * stderr,
            }
        })
        .collect();
    engines.sort_by(|x, y| y.elo.total_cmp(&x.elo).then(x.name.cmp(&y.name)));
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            if table.games[i][j] > 0.0 {
                pairs.push(PairResult {
                    engine1: table.names[i].clone(),
                    engine2: table.names[j].clone(),
                    games: table.games[i][j] as u64,
                    points1: table.points[i][j],
                    score1: table.points[i][j] / table.games[i][j],
                });
            }
        }
    }
    Ok(Ratings {
        anchor: anchor.to_string(),
        games: (0..n).map(|i| table.games_of(i)).sum::<f64>() as u64 / 2,
        prior,
        engines,
        pairs,
        iterations,
    })
}

/// `ln(1 / (1 + e^(-x)))` without overflow.
fn log_sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        -(-x).exp().ln_1p()
    } else {
        x - x.exp().ln_1p()
    }
}

/// `1 / (1 + e^(-x))`.
fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The log-likelihood of ratings `r` (Elo) under `table`.
fn log_likelihood(table: &Crosstable, r: &[f64]) -> f64 {
    let n = r.len();
    let mut ll = 0.0;
    for i in 0..n {
        for j in i + 1..n {
            let games = table.games[i][j];
            if games > 0.0 {
                let d = K * (r[i] - r[j]);
                let w = table.points[i][j];
                ll += w * log_sigmoid(d) + (games - w) * log_sigmoid(-d);
            }
        }
    }
    ll
}

/// Maximises the log-likelihood over the ratings with `r[anchor] = 0` by Newton's method with
/// step halving (the log-likelihood is concave, and finite at its maximum when the table
/// satisfies the existence condition, which the prior guarantees). Returns the ratings, the
/// information matrix (minus the Hessian) over the engines other than the anchor, in index
/// order, and the number of iterations.
fn newton(table: &Crosstable, anchor: usize) -> (Vec<f64>, Vec<Vec<f64>>, usize) {
    let n = table.names.len();
    let free: Vec<usize> = (0..n).filter(|&i| i != anchor).collect();
    let m = free.len();
    let mut r = vec![0.0; n];
    // Gradient (Elo units) and information matrix at `r`.
    let derivatives = |r: &[f64]| {
        let mut grad = vec![0.0; n];
        let mut info = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in 0..n {
                let games = table.games[i][j];
                if i != j && games > 0.0 {
                    let p = sigmoid(K * (r[i] - r[j]));
                    grad[i] += K * (table.points[i][j] - games * p);
                    let h = K * K * games * p * (1.0 - p);
                    info[i][i] += h;
                    info[i][j] -= h;
                }
            }
        }
        let g: Vec<f64> = free.iter().map(|&i| grad[i]).collect();
        let h: Vec<Vec<f64>> = free
            .iter()
            .map(|&i| free.iter().map(|&j| info[i][j]).collect())
            .collect();
        (g, h)
    };
    let mut iterations = 0;
    while iterations < 500 {
        iterations += 1;
        let (g, h) = derivatives(&r);
        let Some(l) = cholesky(&h) else { break };
        let step = cholesky_solve(&l, &g);
        let ll = log_likelihood(table, &r);
        let mut t = 1.0;
        loop {
            let mut trial = r.clone();
            for (k, &i) in free.iter().enumerate() {
                trial[i] += t * step[k];
            }
            if log_likelihood(table, &trial) >= ll || t < 1e-12 {
                r = trial;
                break;
            }
            t /= 2.0;
        }
        if step.iter().all(|s| (t * s).abs() < 1e-10) {
            break;
        }
    }
    let (_, info) = derivatives(&r);
    debug_assert_eq!(info.len(), m);
    (r, info, iterations)
}

/// The Cholesky factor `L` (lower triangular, `A = L L^T`) of a symmetric matrix, `None` if it
/// is not positive definite.
fn cholesky(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let s: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let d = a[i][i] - s;
                if d <= 0.0 || !d.is_finite() {
                    return None;
                }
                l[i][i] = d.sqrt();
            } else {
                l[i][j] = (a[i][j] - s) / l[j][j];
            }
        }
    }
    Some(l)
}

/// Solves `L L^T x = b`.
fn cholesky_solve(l: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let n = b.len();
    let mut y = vec![0.0; n];
    for i in 0..n {
        y[i] = (b[i] - (0..i).map(|k| l[i][k] * y[k]).sum::<f64>()) / l[i][i];
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        x[i] = (y[i] - (i + 1..n).map(|k| l[k][i] * x[k]).sum::<f64>()) / l[i][i];
    }
    x
}

/// `(L L^T)^-1`, column by column.
fn cholesky_inverse(l: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = l.len();
    let mut inv = vec![vec![0.0; n]; n];
    for c in 0..n {
        let mut e = vec![0.0; n];
        e[c] = 1.0;
        for (r, v) in cholesky_solve(l, &e).into_iter().enumerate() {
            inv[r][c] = v;
        }
    }
    inv
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::elo_from_score;

    fn close(a: f64, b: f64, eps: f64) -> bool {
        (a - b).abs() < eps
    }

    /// `wins`, `draws` and `losses` of `a` against `b`, colours alternating.
    fn games(a: &str, b: &str, wins: usize, draws: usize, losses: usize) -> Vec<RatedGame> {
        let results = std::iter::repeat(1.0)
            .take(wins)
            .chain(std::iter::repeat(0.5).take(draws))
            .chain(std::iter::repeat(0.0).take(losses));
        results
            .enumerate()
            .map(|(k, a_points)| {
                let a_is_x = k % 2 == 0;
                let x_points = if a_is_x { a_points } else { 1.0 - a_points };
                RatedGame {
                    x: if a_is_x { a } else { b }.to_string(),
                    o: if a_is_x { b } else { a }.to_string(),
                    winner: match x_points {
                        1.0 => Winner::X,
                        0.0 => Winner::O,
                        _ => Winner::Draw,
                    },
                }
            })
            .collect()
    }

    fn rate(games: &[RatedGame], anchor: &str, prior: Prior) -> Ratings {
        fit(&Crosstable::from_games(games), anchor, prior).unwrap()
    }

    #[test]
    fn two_engines_reproduce_elo_from_score() {
        // 25 wins, 10 draws, 5 losses: 30/40 = 75%.
        let g = games("a", "b", 25, 10, 5);
        let r = rate(&g, "b", Prior::Auto);
        assert_eq!(r.prior.virtual_draws, 0.0);
        assert!(close(r.get("a").unwrap().elo, elo_from_score(0.75), 1e-9));
        assert_eq!(r.get("b").unwrap().elo, 0.0);
        assert_eq!(r.get("a").unwrap().games, 40);
        assert_eq!(r.get("a").unwrap().points, 30.0);
        assert_eq!(r.games, 40);
        // The standard error from the information: 1 / (K sqrt(n p (1 - p))).
        let se = 1.0 / (K * (40.0f64 * 0.75 * 0.25).sqrt());
        assert!(close(r.get("a").unwrap().stderr, se, 1e-9));
        assert!(close(r.get("a").unwrap().ci95, Z95 * se, 1e-9));
        // Anchored on the other engine: the same difference, the same interval.
        let r = rate(&g, "a", Prior::Auto);
        assert!(close(r.get("b").unwrap().elo, -elo_from_score(0.75), 1e-9));
        assert!(close(r.get("b").unwrap().stderr, se, 1e-9));
        assert_eq!(r.get("a").unwrap().stderr, 0.0);
    }

    #[test]
    fn a_chain_adds_up() {
        // a-b 75%, b-c 64%, no game between a and c: the fit decouples along the chain.
        let mut g = games("a", "b", 30, 0, 10);
        g.extend(games("b", "c", 16, 0, 9));
        let r = rate(&g, "c", Prior::Auto);
        let (ab, bc) = (elo_from_score(0.75), elo_from_score(0.64));
        assert!(close(r.get("b").unwrap().elo, bc, 1e-9));
        assert!(close(r.get("a").unwrap().elo, ab + bc, 1e-9));
        assert_eq!(r.get("c").unwrap().elo, 0.0);
        assert_eq!(
            r.engines
                .iter()
                .map(|e| e.name.as_str())
                .collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        // On a chain the variances add: a is as uncertain as both links together.
        let var = |n: f64, p: f64| 1.0 / (K * K * n * p * (1.0 - p));
        let se_a = (var(40.0, 0.75) + var(25.0, 0.64)).sqrt();
        assert!(close(r.get("a").unwrap().stderr, se_a, 1e-9));
        // The pairs, by name.
        assert_eq!(r.pairs.len(), 2);
        assert_eq!(
            (r.pairs[0].engine1.as_str(), r.pairs[0].engine2.as_str()),
            ("a", "b")
        );
        assert_eq!(r.pairs[0].points1, 30.0);
        assert_eq!(r.pairs[1].games, 25);
    }

    #[test]
    fn a_cycle_matches_expected_and_actual_scores() {
        // With every pair met, the maximum likelihood makes each engine's expected score equal
        // its actual score (the likelihood equations).
        let mut g = games("a", "b", 12, 3, 5);
        g.extend(games("b", "c", 9, 4, 7));
        g.extend(games("c", "a", 6, 2, 12));
        g.extend(games("a", "d", 3, 0, 1));
        let table = Crosstable::from_games(&g);
        let r = fit(&table, "a", Prior::Auto).unwrap();
        assert_eq!(r.get("a").unwrap().elo, 0.0);
        for e in &r.engines {
            let expected: f64 = r
                .engines
                .iter()
                .filter(|o| o.name != e.name)
                .map(|o| {
                    let n =
                        table.games[table.index(&e.name).unwrap()][table.index(&o.name).unwrap()];
                    n * crate::stats::score_from_elo(e.elo - o.elo)
                })
                .sum();
            assert!(close(expected, e.points, 1e-9), "{e:?}: {expected}");
        }
    }

    #[test]
    fn swapping_results_negates_ratings() {
        let mut g = games("a", "b", 12, 3, 5);
        g.extend(games("b", "c", 9, 4, 7));
        g.extend(games("c", "a", 6, 2, 12));
        let swapped: Vec<RatedGame> = g
            .iter()
            .map(|x| RatedGame {
                winner: match x.winner {
                    Winner::X => Winner::O,
                    Winner::O => Winner::X,
                    Winner::Draw => Winner::Draw,
                },
                ..x.clone()
            })
            .collect();
        let (r, s) = (rate(&g, "b", Prior::Auto), rate(&swapped, "b", Prior::Auto));
        for e in &r.engines {
            let f = s.get(&e.name).unwrap();
            assert!(close(e.elo, -f.elo, 1e-9), "{e:?} {f:?}");
            assert!(close(e.stderr, f.stderr, 1e-9));
            assert!(close(e.score, 1.0 - f.score, 1e-12));
        }
        // Which colour won does not matter, only who: swapping colours changes nothing.
        let recoloured: Vec<RatedGame> = g
            .iter()
            .map(|x| RatedGame {
                x: x.o.clone(),
                o: x.x.clone(),
                winner: match x.winner {
                    Winner::X => Winner::O,
                    Winner::O => Winner::X,
                    Winner::Draw => Winner::Draw,
                },
            })
            .collect();
        assert_eq!(rate(&recoloured, "b", Prior::Auto), r);
    }

    #[test]
    fn a_sweep_gets_the_prior_and_says_so() {
        // top beats mid 10-0, mid and anchor split: the MLE of top is +infinity.
        let mut g = games("top", "mid", 10, 0, 0);
        g.extend(games("mid", "anchor", 5, 0, 5));
        g.extend(games("anchor", "low", 6, 0, 0));
        let table = Crosstable::from_games(&g);
        let err = fit(&table, "anchor", Prior::VirtualDraws(0.0)).unwrap_err();
        assert!(matches!(err, RatingError::Diverges(_)), "{err}");
        let r = fit(&table, "anchor", Prior::Auto).unwrap();
        assert_eq!(r.prior.virtual_draws, DEFAULT_VIRTUAL_DRAWS);
        let why = r.prior.reason.clone().unwrap();
        assert!(
            why.contains("top won every game") && why.contains("low lost every game"),
            "{why}"
        );
        assert!(r.report().contains("because no finite maximum-likelihood"));
        for e in &r.engines {
            assert!(e.elo.is_finite() && e.stderr.is_finite(), "{e:?}");
        }
        let (top, mid, low) = (
            r.get("top").unwrap(),
            r.get("mid").unwrap(),
            r.get("low").unwrap(),
        );
        assert!(top.elo > mid.elo + 200.0 && low.elo < -200.0, "{r:?}");
        // low played only the anchor: 6 losses and 1 virtual draw is 0.5 / 7 exactly.
        assert!(close(low.elo, elo_from_score(0.5 / 7.0), 1e-9), "{low:?}");
        assert_eq!(low.points, 0.0);
        assert_eq!(low.games, 6);
        // An explicit prior is applied without a reason.
        let r = fit(&table, "anchor", Prior::VirtualDraws(2.0)).unwrap();
        assert_eq!(r.prior.reason, None);
        assert!(close(
            r.get("low").unwrap().elo,
            elo_from_score(1.0 / 8.0),
            1e-9
        ));
    }

    #[test]
    fn a_ladder_solves_the_likelihood_equations_with_and_without_the_prior() {
        // A ladder like the real one: the top two sweep classic, but not each other or the
        // levels below, so the maximum-likelihood ratings exist and auto adds no prior.
        let mut g = games("novice", "beginner", 9, 2, 9);
        g.extend(games("casual", "beginner", 14, 1, 5));
        g.extend(games("strong", "casual", 17, 0, 3));
        g.extend(games("master", "strong", 12, 0, 8));
        for (level, w, d, l) in [
            ("novice", 4, 0, 16),
            ("beginner", 6, 1, 13),
            ("casual", 15, 0, 5),
            ("strong", 20, 0, 0),
            ("master", 20, 0, 0),
        ] {
            g.extend(games(level, "classic", w, d, l));
        }
        let table = Crosstable::from_games(&g);
        for (prior, draws) in [(Prior::Auto, 0.0), (Prior::VirtualDraws(1.0), 1.0)] {
            let r = fit(&table, "classic", prior).unwrap();
            assert_eq!(r.prior.virtual_draws, draws);
            assert_eq!(r.prior.reason, None);
            assert!(r.iterations < 50);
            // Each engine's expected score equals its actual score, counting the virtual draws
            // against classic as half a point each.
            for e in r.engines.iter().filter(|e| e.name != "classic") {
                let i = table.index(&e.name).unwrap();
                let mut expected = draws * crate::stats::score_from_elo(e.elo);
                for o in &r.engines {
                    let j = table.index(&o.name).unwrap();
                    expected += table.games[i][j] * crate::stats::score_from_elo(e.elo - o.elo);
                }
                let actual = e.points + draws / 2.0;
                assert!(
                    close(expected, actual, 1e-9),
                    "{e:?}: {expected} vs {actual}"
                );
            }
            let order: Vec<&str> = r.engines.iter().map(|e| e.name.as_str()).collect();
            assert_eq!(
                order,
                ["master", "strong", "casual", "classic", "beginner", "novice"]
            );
        }
    }

    #[test]
    fn two_engines_sweep() {
        // The smallest divergent case: a won every game against the anchor.
        let r = rate(&games("a", "b", 8, 0, 0), "b", Prior::Auto);
        assert!(close(
            r.get("a").unwrap().elo,
            elo_from_score(8.5 / 9.0),
            1e-9
        ));
        assert!(r.prior.reason.unwrap().contains("a won every game"));
    }

    #[test]
    fn errors() {
        let g = games("a", "b", 3, 0, 1);
        let table = Crosstable::from_games(&g);
        assert!(matches!(
            fit(&table, "zz", Prior::Auto),
            Err(RatingError::UnknownAnchor { .. })
        ));
        let mut g2 = g.clone();
        g2.extend(games("c", "d", 2, 0, 2));
        let err = fit(&Crosstable::from_games(&g2), "a", Prior::Auto).unwrap_err();
        assert_eq!(
            err,
            RatingError::Disconnected {
                anchor: "a".into(),
                engines: vec!["c".into(), "d".into()]
            }
        );
        assert_eq!(
            fit(&Crosstable::default(), "a", Prior::Auto),
            Err(RatingError::NoGames)
        );
        assert!(fit(&table, "a", Prior::VirtualDraws(-1.0)).is_err());
        assert_eq!("auto".parse::<Prior>(), Ok(Prior::Auto));
        assert_eq!("0.5".parse::<Prior>(), Ok(Prior::VirtualDraws(0.5)));
        assert!("-1".parse::<Prior>().is_err() && "x".parse::<Prior>().is_err());
    }

    #[test]
    fn reads_games_jsonl() {
        let text = r#"{"game":1,"x":"p","o":"q","winner":"x","result":"1-0","reason":"five"}

{"game":2,"x":"q","o":"p","winner":null,"result":"1/2-1/2"}
{"game":3,"x":"q","o":"p","winner":"o","result":"0-1"}
"#;
        let g = RatedGame::parse_jsonl(text).unwrap();
        assert_eq!(
            g.iter().map(|g| g.winner).collect::<Vec<_>>(),
            [Winner::X, Winner::Draw, Winner::O]
        );
        assert_eq!((g[1].x.as_str(), g[1].o.as_str()), ("q", "p"));
        let bad = r#"{"x":"p","o":"q","winner":"x","result":"0-1"}"#;
        assert!(matches!(
            RatedGame::parse_jsonl(&format!("\n{bad}")),
            Err(RatingError::BadRecord { line: 2, .. })
        ));
        assert!(RatedGame::parse_jsonl("{}").is_err());
        assert!(
            RatedGame::parse_jsonl(r#"{"x":"p","o":"p","winner":null,"result":"1/2-1/2"}"#)
                .is_err()
        );
    }
}
