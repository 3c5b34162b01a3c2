//! The match: the schedule of games (each opening twice, colours swapped), the worker threads
//! that play them in parallel (each with its own pair of engine processes), the output files and
//! the running statistics with the optional SPRT stop.
//!
//! Workers send finished games over a channel to the calling thread, which alone writes files
//! and keeps the score, so no lock guards the statistics.

use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File, OpenOptions};
use std::hash::Hash;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use caro_engine::positions::square_name;
use caro_engine::Player;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;

use crate::openings::Opening;
use crate::psq::{PsqGame, Trailer};
use crate::referee::{play_game, GameSettings, Logger, Reason, Slot};
use crate::stats::{EloEstimate, GameScore, Pentanomial, Sprt, SprtDecision, Wdl};

/// An engine of the match.
#[derive(Clone, Debug)]
pub struct EngineSpec {
    /// Display name (in records and the summary).
    pub name: String,
    /// Command line, split by [`crate::process::split_command`].
    pub command: String,
}

/// Everything a match needs.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// Engine 1 (the one the score is counted for) and engine 2.
    pub engines: [EngineSpec; 2],
    /// Rules, clocks and protocol settings.
    pub game: GameSettings,
    /// Games to play (at most; an SPRT may stop earlier).
    pub games: usize,
    /// Openings; empty means every game starts from the empty board.
    pub openings: Vec<Opening>,
    /// Games played at the same time.
    pub concurrency: usize,
    /// Seed of the opening order.
    pub seed: u64,
    /// Where records, the log and the summary go.
    pub out_dir: PathBuf,
    /// Stop when this test decides.
    pub sprt: Option<Sprt>,
    /// Echo the protocol log on stderr.
    pub verbose: bool,
}

/// Why a match could not run.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    /// An output file could not be written.
    #[error(transparent)]
    Io(#[from] OutputError),
    /// Nothing to play.
    #[error("the match needs at least one game and a concurrency of at least 1")]
    Empty,
}

/// A file or directory of a run's output (a match's or a tuning run's) that could not be made
/// or written.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct OutputError {
    /// The file or directory.
    pub path: PathBuf,
    /// What the OS said.
    pub source: std::io::Error,
}

/// For `map_err`: the OS's error about `path`.
pub(crate) fn output_error(path: &Path) -> impl FnOnce(std::io::Error) -> OutputError + '_ {
    move |source| OutputError {
        path: path.to_path_buf(),
        source,
    }
}

/// Whether a run's files start empty or are added to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileMode {
    /// A new run: the log and the record are created empty.
    Fresh,
    /// A resumed run: both are appended to.
    Append,
}

/// What every run opens under its output directory before its first game: a directory of its
/// own files, the protocol log and the record of one JSON line per game or step.
pub(crate) struct RunFiles {
    /// The run's own directory.
    pub dir: PathBuf,
    /// The protocol log.
    pub log: Logger,
    /// The record.
    pub jsonl: File,
    /// Where the record is.
    pub jsonl_path: PathBuf,
}

impl RunFiles {
    /// Makes `out/dir` and opens `out/log` (echoed on stderr when `verbose`) and `out/jsonl`
    /// as `mode` says.
    pub(crate) fn create(
        out: &Path,
        [dir, log, jsonl]: [&str; 3],
        verbose: bool,
        mode: FileMode,
    ) -> Result<RunFiles, OutputError> {
        let dir = out.join(dir);
        fs::create_dir_all(&dir).map_err(output_error(&dir))?;
        let open = |path: &Path| {
            let mut options = OpenOptions::new();
            options.create(true);
            match mode {
                FileMode::Append => options.append(true),
                FileMode::Fresh => options.write(true).truncate(true),
            };
            options.open(path).map_err(output_error(path))
        };
        let log_path = out.join(log);
        let log = open(&log_path)?;
        let jsonl_path = out.join(jsonl);
        Ok(RunFiles {
            dir,
            log: Logger::new(Some(log), verbose),
            jsonl: open(&jsonl_path)?,
            jsonl_path,
        })
    }
}

/// Game `index` (from 0) of a match: pair `index / 2` plays opening `order[pair % len]`; engine 1
/// has X (moves first) in the even game of each pair and O in the odd one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pairing {
    /// Game number from 0.
    pub index: usize,
    /// Pair number from 0.
    pub pair: usize,
    /// Index into the opening list (0 when there are none).
    pub opening: usize,
    /// Which engine (0 or 1) plays X.
    pub x_engine: usize,
}

/// The pairings of a match of `games` games over `openings` openings, the order of openings
/// shuffled by `seed` (reproducible: the same seed gives the same match).
pub fn schedule(games: usize, openings: usize, seed: u64) -> Vec<Pairing> {
    let mut order: Vec<usize> = (0..openings.max(1)).collect();
    order.shuffle(&mut SmallRng::seed_from_u64(seed));
    (0..games)
        .map(|index| {
            let pair = index / 2;
            Pairing {
                index,
                pair,
                opening: order[pair % order.len()],
                x_engine: index % 2,
            }
        })
        .collect()
}

/// One finished game, as written to `games.jsonl`.
#[derive(Clone, Debug, Serialize)]
pub struct GameRecord {
    /// Game number from 1.
    pub game: usize,
    /// Pair number from 1.
    pub pair: usize,
    /// The opening, in square names.
    pub opening: String,
    /// Engine playing X (first).
    pub x: String,
    /// Engine playing O.
    pub o: String,
    /// Engine 1's colour.
    pub engine1_color: String,
    /// All moves from the empty board, opening included, in square names.
    pub moves: Vec<String>,
    /// Thinking time of each move in milliseconds (0 for opening stones).
    pub times_ms: Vec<u64>,
    /// `"x"`, `"o"` or `null` for a draw.
    pub winner: Option<String>,
    /// `1-0` (X won), `0-1` or `1/2-1/2`.
    pub result: String,
    /// Engine 1's result.
    pub engine1_score: GameScore,
    /// Why the game ended.
    pub reason: Reason,
    /// Details: the winning move, the offending answer.
    pub detail: String,
    /// Whether engine 1 and engine 2 were restarted for this game (after a crash or forfeit).
    pub restarted: [bool; 2],
    /// Wall time of the game in milliseconds.
    pub duration_ms: u64,
    /// The `.psq` file, relative to the output directory.
    pub psq: String,
}

/// What the statistics count of a finished game, from engine 1's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CountedGame {
    /// Engine 1's colour.
    pub engine1_color: Player,
    /// Engine 1's result.
    pub engine1_score: GameScore,
    /// Why the game ended.
    pub reason: Reason,
    /// Whether engine 1 and engine 2 were restarted for this game.
    pub restarted: [bool; 2],
}

impl CountedGame {
    /// The same game from engine 2's point of view.
    pub fn swapped(self) -> CountedGame {
        CountedGame {
            engine1_color: self.engine1_color.opponent(),
            engine1_score: self.engine1_score.opponent(),
            reason: self.reason,
            restarted: [self.restarted[1], self.restarted[0]],
        }
    }
}

/// Keeps the score of a match as its games finish, in any order: the two games of a pair (keyed
/// by `K`, the pair number within one match) find each other here, and each game updates the
/// [`Summary`]. The runner counts with it as games finish, `caro-match score` as it reads
/// `games.jsonl` back, so both give the same numbers for the same games in the same order.
#[derive(Clone, Debug)]
pub struct Scorekeeper<K> {
    summary: Summary,
    /// Engine 1's score in the finished game of each pair whose other game is not counted yet.
    open_pairs: HashMap<K, GameScore>,
}

impl<K: Eq + Hash> Scorekeeper<K> {
    /// No game yet; `sprt` is the test to run, if any.
    pub fn new(engines: [String; 2], sprt: Option<Sprt>) -> Scorekeeper<K> {
        Scorekeeper {
            summary: Summary::new(engines, sprt),
            open_pairs: HashMap::new(),
        }
    }

    /// Counts a finished game of pair `pair`: the pentanomial gets the pair when this is its
    /// second game.
    pub fn add(&mut self, pair: K, game: &CountedGame) {
        let pair_done = self.open_pairs.remove(&pair);
        if pair_done.is_none() {
            self.open_pairs.insert(pair, game.engine1_score);
        }
        self.summary.add(game, pair_done);
    }

    /// The score so far.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// The pairs only one game of which is counted: those games are in the trinomial numbers,
    /// not in the pentanomial.
    pub fn open_pairs(&self) -> impl Iterator<Item = &K> {
        self.open_pairs.keys()
    }

    /// The final score.
    pub fn into_summary(self) -> Summary {
        self.summary
    }
}

/// SPRT state in the summary.
#[derive(Clone, Debug, Serialize)]
pub struct SprtReport {
    /// The test.
    pub params: Sprt,
    /// Log-likelihood ratio after every counted game.
    pub llr: f64,
    /// Lower bound (accept H0 below).
    pub lower: f64,
    /// Upper bound (accept H1 above).
    pub upper: f64,
    /// The decision; kept from the first crossing of a bound.
    pub decision: SprtDecision,
    /// Games counted when the decision was made.
    pub decided_after: Option<u64>,
    /// Whether the LLR is computed over pairs (pentanomial) or games (trinomial).
    pub model: &'static str,
}

/// The score so far, from engine 1's point of view.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Engine 1 and engine 2 names.
    pub engines: [String; 2],
    /// Games finished.
    pub games: u64,
    /// Engine 1's results.
    pub total: Wdl,
    /// Engine 1's results with X (moving first).
    pub as_x: Wdl,
    /// Engine 1's results with O.
    pub as_o: Wdl,
    /// Engine 1's mean score.
    pub score: Option<f64>,
    /// Trinomial Elo estimate.
    pub elo: Option<EloEstimate>,
    /// Finished pairs by engine 1's pair score.
    pub pentanomial: Pentanomial,
    /// Pentanomial Elo estimate.
    pub elo_pentanomial: Option<EloEstimate>,
    /// Games by how they ended.
    pub reasons: BTreeMap<Reason, u64>,
    /// Losses by fault (not by five), per engine: engine 1's then engine 2's.
    pub faults: [BTreeMap<Reason, u64>; 2],
    /// Times each engine was restarted.
    pub restarts: [u64; 2],
    /// The SPRT, when one runs.
    pub sprt: Option<SprtReport>,
}

impl Summary {
    fn new(engines: [String; 2], sprt: Option<Sprt>) -> Summary {
        Summary {
            engines,
            games: 0,
            total: Wdl::default(),
            as_x: Wdl::default(),
            as_o: Wdl::default(),
            score: None,
            elo: None,
            pentanomial: Pentanomial::default(),
            elo_pentanomial: None,
            reasons: BTreeMap::new(),
            faults: Default::default(),
            restarts: [0; 2],
            sprt: sprt.map(|params| {
                let (lower, upper) = params.bounds();
                SprtReport {
                    params,
                    llr: 0.0,
                    lower,
                    upper,
                    decision: SprtDecision::Continue,
                    decided_after: None,
                    model: "pentanomial",
                }
            }),
        }
    }

    /// Counts a game; `pair_done` is engine 1's score in the other game of its pair if that
    /// one is already counted.
    fn add(&mut self, game: &CountedGame, pair_done: Option<GameScore>) {
        self.games += 1;
        self.total.add(game.engine1_score);
        if game.engine1_color == Player::X {
            self.as_x.add(game.engine1_score)
        } else {
            self.as_o.add(game.engine1_score)
        }
        *self.reasons.entry(game.reason).or_default() += 1;
        let loser = match game.engine1_score {
            GameScore::Win => Some(1),
            GameScore::Loss => Some(0),
            GameScore::Draw => None,
        };
        if let Some(l) = loser.filter(|_| !matches!(game.reason, Reason::Five)) {
            *self.faults[l].entry(game.reason).or_default() += 1;
        }
        for (r, &restarted) in self.restarts.iter_mut().zip(&game.restarted) {
            *r += restarted as u64;
        }
        if let Some(other) = pair_done {
            self.pentanomial.add(other, game.engine1_score);
        }
        self.score =
            (self.total.games() > 0).then(|| self.total.points() / self.total.games() as f64);
        self.elo = self.total.elo();
        self.elo_pentanomial = self.pentanomial.elo();
        let (penta, total, games) = (self.pentanomial, self.total, self.games);
        if let Some(s) = &mut self.sprt {
            s.llr = penta.llr(s.params.elo0, s.params.elo1);
            // Fall back to games as samples until a pair is complete (or with unpaired games).
            if penta.pairs() == 0 {
                s.llr = total.llr(s.params.elo0, s.params.elo1);
                s.model = "trinomial";
            } else {
                s.model = "pentanomial";
            }
            if s.decision == SprtDecision::Continue {
                s.decision = s.params.decide(s.llr);
                if s.decision != SprtDecision::Continue {
                    s.decided_after = Some(games);
                }
            }
        }
    }

    /// The human-readable report printed at the end (and the progress line's numbers).
    pub fn report(&self) -> String {
        let mut out = String::new();
        let wdl = |w: &Wdl| format!("+{} ={} -{}", w.wins, w.draws, w.losses);
        let elo = |e: &Option<EloEstimate>| match e {
            // Every sample equal (all won, say): no spread, so no interval to speak of.
            Some(e) if e.stderr == 0.0 => format!("{:+.1} (no interval: no spread yet)", e.elo),
            Some(e) => format!("{:+.1} [{:+.1}, {:+.1}] (95%)", e.elo, e.low, e.high),
            None => "-".to_string(),
        };
        out.push_str(&format!(
            "{} vs {}: {} games\n",
            self.engines[0], self.engines[1], self.games
        ));
        out.push_str(&format!(
            "  {}: {} total, {} as X (first), {} as O; score {:.1}/{} = {:.3}\n",
            self.engines[0],
            wdl(&self.total),
            wdl(&self.as_x),
            wdl(&self.as_o),
            self.total.points(),
            self.total.games(),
            self.score.unwrap_or(0.0)
        ));
        out.push_str(&format!(
            "  Elo (trinomial):   {}\n  Elo (pentanomial): {}  pairs [0, 1/2, 1, 3/2, 2] = {:?}\n",
            elo(&self.elo),
            elo(&self.elo_pentanomial),
            self.pentanomial.counts
        ));
        let reasons: Vec<String> = self
            .reasons
            .iter()
            .map(|(r, n)| format!("{} {n}", r.as_str()))
            .collect();
        out.push_str(&format!("  endings: {}\n", reasons.join(", ")));
        for (i, faults) in self.faults.iter().enumerate() {
            if !faults.is_empty() || self.restarts[i] > 0 {
                let f: Vec<String> = faults
                    .iter()
                    .map(|(r, n)| format!("{} {n}", r.as_str()))
                    .collect();
                out.push_str(&format!(
                    "  {} lost by fault: {}; restarted {} times\n",
                    self.engines[i],
                    if f.is_empty() {
                        "none".into()
                    } else {
                        f.join(", ")
                    },
                    self.restarts[i]
                ));
            }
        }
        if let Some(s) = &self.sprt {
            let verdict = match s.decision {
                SprtDecision::H0 => "H0 accepted (elo0)",
                SprtDecision::H1 => "H1 accepted (elo1)",
                SprtDecision::Continue => "no decision",
            };
            out.push_str(&format!(
                "  SPRT elo0={} elo1={} alpha={} beta={} ({}): LLR {:.3} bounds [{:.3}, {:.3}] -> {}{}\n",
                s.params.elo0,
                s.params.elo1,
                s.params.alpha,
                s.params.beta,
                s.model,
                s.llr,
                s.lower,
                s.upper,
                verdict,
                s.decided_after
                    .map(|g| format!(" after {g} games"))
                    .unwrap_or_default()
            ));
        }
        out
    }
}

/// A finished game as a worker reports it.
struct Finished {
    pairing: Pairing,
    outcome: crate::referee::GameOutcome,
    restarted: [bool; 2],
    duration_ms: u64,
    /// Answered once the game is counted: the worker waits for it before taking the next game,
    /// so that after an SPRT decision no worker starts another one (at most `concurrency - 1`
    /// games already running finish after the deciding one).
    counted: mpsc::Sender<()>,
}

/// Acknowledges a finished game to its worker when dropped, after it has been counted.
struct AckOnDrop(mpsc::Sender<()>);

impl Drop for AckOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// Plays the match, writing `games/NNNN.psq`, `games.jsonl`, `match.log` and `summary.json`
/// under the output directory, and calls `progress` after each game. Returns the final summary.
pub fn run_match(
    config: &MatchConfig,
    mut progress: impl FnMut(&GameRecord, &Summary),
) -> Result<Summary, MatchError> {
    if config.games == 0 || config.concurrency == 0 {
        return Err(MatchError::Empty);
    }
    let out = &config.out_dir;
    let RunFiles {
        log,
        mut jsonl,
        jsonl_path,
        ..
    } = RunFiles::create(
        out,
        ["games", "match.log", "games.jsonl"],
        config.verbose,
        FileMode::Fresh,
    )?;

    let pairings = schedule(config.games, config.openings.len(), config.seed);
    let empty = Opening::empty();
    let opening_of = |p: &Pairing| config.openings.get(p.opening).unwrap_or(&empty);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let mut score = Scorekeeper::new(
        [
            config.engines[0].name.clone(),
            config.engines[1].name.clone(),
        ],
        config.sprt,
    );
    let mut result = Ok(());

    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<Finished>();
        for _ in 0..config.concurrency.min(config.games) {
            let tx = tx.clone();
            let (pairings, next, stop, log) = (&pairings, &next, &stop, &log);
            scope.spawn(move || {
                let mut slots = [
                    Slot::new(&config.engines[0].name, &config.engines[0].command),
                    Slot::new(&config.engines[1].name, &config.engines[1].command),
                ];
                let (counted, wait_counted) = mpsc::channel();
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(p) = pairings.get(i) else { break };
                    let tag = format!("[game {}]", i + 1);
                    let started = Instant::now();
                    let (outcome, restarted) = play_game(
                        &config.game,
                        &mut slots,
                        p.x_engine,
                        opening_of(p),
                        log,
                        &tag,
                    );
                    let finished = Finished {
                        pairing: p.clone(),
                        outcome,
                        restarted,
                        duration_ms: started.elapsed().as_millis() as u64,
                        counted: counted.clone(),
                    };
                    if tx.send(finished).is_err() || wait_counted.recv().is_err() {
                        break;
                    }
                }
                for slot in &mut slots {
                    slot.quit();
                }
            });
        }
        drop(tx);
        for finished in rx {
            // However this game is handled, its worker may go on (or see the stop flag) after.
            let _counted = AckOnDrop(finished.counted.clone());
            if result.is_err() {
                continue; // drain so workers are not blocked; they stop below
            }
            let (record, counted) = record_of(config, &finished, opening_of(&finished.pairing));
            let written = write_game(out, &record, &finished, config).and_then(|_| {
                let line = serde_json::to_string(&record).expect("records serialize");
                writeln!(jsonl, "{line}").map_err(output_error(&jsonl_path))
            });
            if let Err(e) = written {
                result = Err(e);
                stop.store(true, Ordering::Relaxed);
                continue;
            }
            score.add(finished.pairing.pair, &counted);
            progress(&record, score.summary());
            if score
                .summary()
                .sprt
                .as_ref()
                .is_some_and(|s| s.decision != SprtDecision::Continue)
            {
                stop.store(true, Ordering::Relaxed);
            }
        }
    });
    result?;
    let summary = score.into_summary();
    log.flush();
    let summary_path = out.join("summary.json");
    let json = serde_json::to_string_pretty(&summary).expect("the summary serializes");
    fs::write(&summary_path, json + "\n").map_err(output_error(&summary_path))?;
    Ok(summary)
}

/// The JSON record of a finished game and what the statistics count of it.
fn record_of(
    config: &MatchConfig,
    finished: &Finished,
    opening: &Opening,
) -> (GameRecord, CountedGame) {
    let p = &finished.pairing;
    let o = &finished.outcome;
    let names = [&config.engines[0].name, &config.engines[1].name];
    let engine1_color = if p.x_engine == 0 {
        Player::X
    } else {
        Player::O
    };
    let (winner, result, score) = match o.winner {
        None => (None, "1/2-1/2", GameScore::Draw),
        Some(w) => (
            Some(w.as_str().to_string()),
            if w == Player::X { "1-0" } else { "0-1" },
            if w == engine1_color {
                GameScore::Win
            } else {
                GameScore::Loss
            },
        ),
    };
    let counted = CountedGame {
        engine1_color,
        engine1_score: score,
        reason: o.reason,
        restarted: finished.restarted,
    };
    let record = GameRecord {
        game: p.index + 1,
        pair: p.pair + 1,
        opening: opening.to_squares(),
        x: names[p.x_engine].clone(),
        o: names[1 - p.x_engine].clone(),
        engine1_color: engine1_color.as_str().to_string(),
        moves: o.moves.iter().map(|(m, _)| square_name(*m)).collect(),
        times_ms: o.moves.iter().map(|(_, t)| *t).collect(),
        winner,
        result: result.to_string(),
        engine1_score: score,
        reason: o.reason,
        detail: o.detail.clone(),
        restarted: finished.restarted,
        duration_ms: finished.duration_ms,
        psq: psq_name(p.index),
    };
    (record, counted)
}

fn psq_name(index: usize) -> String {
    format!("games/{:04}.psq", index + 1)
}

fn write_game(
    out: &Path,
    record: &GameRecord,
    finished: &Finished,
    config: &MatchConfig,
) -> Result<(), OutputError> {
    let rules = config.game.rules;
    let psq = PsqGame {
        width: rules.width(),
        height: rules.height(),
        moves: finished.outcome.moves.clone(),
        trailer: Some(Trailer {
            names: [record.x.clone(), record.o.clone()],
            winner: Some(match finished.outcome.winner {
                None => 0,
                Some(Player::X) => 1,
                Some(Player::O) => 2,
            }),
            rule: rules.rule().as_str().to_string(),
        }),
    };
    let path = out.join(&record.psq);
    fs::write(&path, psq.to_text()).map_err(output_error(&path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_opening_is_played_twice_with_colours_swapped() {
        let s = schedule(8, 3, 42);
        assert_eq!(s.len(), 8);
        for pair in s.chunks(2) {
            assert_eq!(pair[0].pair, pair[1].pair);
            assert_eq!(pair[0].opening, pair[1].opening, "same opening in a pair");
            assert_eq!(pair[0].x_engine, 0);
            assert_eq!(pair[1].x_engine, 1, "colours swapped");
        }
        // The first three pairs use three different openings; the fourth wraps around.
        let mut first: Vec<usize> = s.iter().step_by(2).take(3).map(|p| p.opening).collect();
        first.sort_unstable();
        assert_eq!(first, [0, 1, 2]);
        assert_eq!(s[6].opening, s[0].opening);
        // Reproducible from the seed.
        assert_eq!(schedule(8, 3, 42), s);
        let orders: std::collections::HashSet<Vec<usize>> = (0..20)
            .map(|seed| schedule(6, 3, seed).iter().map(|p| p.opening).collect())
            .collect();
        assert!(orders.len() > 1, "the seed changes the order");
    }

    #[test]
    fn no_openings_means_the_empty_board() {
        let s = schedule(3, 0, 1);
        assert!(s.iter().all(|p| p.opening == 0));
        assert_eq!(s.iter().map(|p| p.x_engine).collect::<Vec<_>>(), [0, 1, 0]);
    }
}
