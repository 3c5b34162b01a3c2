//! Tuning our engine by play against another engine (`caro-match spsa`): SPSA, with the
//! arithmetic of [`caro_engine::spsa`] (the one the engine's `spsa` example uses for
//! self-play), where each step's games are played over the protocol by `pbrain-caro` processes
//! given the perturbed numbers (`--weights FILE`, `--search NAME=VALUE`) against a fixed
//! opponent. Self-play gains have reached Rapfi least (docs/engine.md, "What limits
//! strength"): this moves the numbers toward what scores against the engine they must beat.
//!
//! Step `k` (from 0) draws the perturbation's signs and an opening from the seed and `k`. The
//! `+` and the `-` engine each play that opening twice against the opponent, once with each
//! colour; the step's result is the `+` engine's points minus the `-` engine's (-2 to 2), and
//! the numbers move by it ([`Spsa::update`]). Steps run on `concurrency` lanes, each with its
//! own opponent process (kept from step to step) and a fresh pair of our processes per step
//! (their numbers change every step). As in the self-play driver, a lane perturbs the numbers
//! as they are when its step starts, so with more than one lane a step may be updated from
//! numbers a few steps old.
//!
//! Everything goes under the output directory: `steps.jsonl` (a line per step: its games with
//! their moves, its result and the numbers after it), `weights.txt` and `search.txt` (the
//! current numbers, as `--weights` and `--search` take them, rewritten every `save_every` steps
//! and at the end), `tune.log` (the protocol traffic) and `lanes/` (the perturbed files the
//! engines read). A run can be stopped at any time and resumed ([`TuneConfig::resume`]): the
//! steps of `steps.jsonl` are replayed through [`Spsa::update`] in the order they were
//! recorded, which gives back the numbers the run had, and the steps it lacks are played.

use std::collections::HashSet;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use caro_engine::positions::square_name;
use caro_engine::search::params::SearchParams;
use caro_engine::search::weights::Weights;
use caro_engine::spsa::{self, Space, Spsa};
use caro_engine::Player;
use parking_lot::Mutex;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::openings::Opening;
use crate::referee::{play_game, GameSettings, Logger, Slot};
use crate::runner::{output_error, EngineSpec, FileMode, OutputError, RunFiles};
use crate::stats::GameScore;

/// Everything a tuning run needs.
#[derive(Clone, Debug)]
pub struct TuneConfig {
    /// Our engine's command line (`pbrain-caro` and any flags of its own); each step appends
    /// `--weights FILE` and a `--search NAME=VALUE` per search number.
    pub engine: String,
    /// The opponent.
    pub opponent: EngineSpec,
    /// Rules, clocks and protocol settings of every game.
    pub game: GameSettings,
    /// The openings a step draws from (at least one).
    pub openings: Vec<Opening>,
    /// What is tuned.
    pub space: Space,
    /// The numbers the run starts from.
    pub start: (Weights, SearchParams),
    /// Steps to run: the schedule's length ([`Spsa::new`]).
    pub steps: u64,
    /// The learning rate of the last step (see [`caro_engine::spsa`]).
    pub r_end: f64,
    /// Seed of the signs and openings.
    pub seed: u64,
    /// Steps played at the same time.
    pub concurrency: usize,
    /// Write the current numbers every this many steps (and at the end).
    pub save_every: u64,
    /// Where everything goes.
    pub out_dir: PathBuf,
    /// Echo the protocol log on stderr.
    pub verbose: bool,
    /// Go on with the run recorded in `out_dir` rather than start anew: its `steps.jsonl` must
    /// be what these same settings wrote (every recorded step's signs, opening and numbers are
    /// checked as it is replayed), and the steps it lacks are played, the records appended.
    pub resume: bool,
}

/// Why a run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// A file could not be written.
    #[error(transparent)]
    Io(#[from] OutputError),
    /// Nothing to run.
    #[error("a tuning run needs at least one step, one opening and a concurrency of at least 1")]
    Empty,
    /// A resumed run's record is not one these settings wrote.
    #[error("{path}, line {line}: {message}")]
    Resume {
        /// The `steps.jsonl` read.
        path: PathBuf,
        /// Its line, from 1.
        line: usize,
        /// What does not match.
        message: String,
    },
}

/// One game of a step, as written to `steps.jsonl`.
#[derive(Clone, Debug, Serialize)]
pub struct StepGame {
    /// Which perturbed engine played: `+` or `-`.
    pub side: &'static str,
    /// Its colour: `x` (first) or `o`.
    pub color: &'static str,
    /// Its result.
    pub score: GameScore,
    /// Why the game ended (`five`, `timeout`, ...).
    pub reason: &'static str,
    /// Stones on the board at the end, opening included.
    pub stones: usize,
    /// Every move from the empty board, opening included, in square names (as `games.jsonl`
    /// of `caro-match play` keeps them), so a run's games can be looked at again without its
    /// protocol log.
    pub moves: Vec<String>,
}

/// One finished step, as written to `steps.jsonl`.
#[derive(Clone, Debug, Serialize)]
pub struct StepRecord {
    /// Step number from 1.
    pub step: u64,
    /// The opening, in square names.
    pub opening: String,
    /// The perturbation's sign for each tuned number, in [`Space::params`] order: `+` where the
    /// `+` engine had the number raised.
    pub signs: String,
    /// The four games.
    pub games: Vec<StepGame>,
    /// The `+` engine's points minus the `-` engine's.
    pub result: f64,
    /// The tuned numbers the step perturbed, in [`Space::params`] order: with one lane, the
    /// numbers after the step before (the start for the first); with more, the numbers as they
    /// were when the step started.
    pub around: Vec<f64>,
    /// The tuned numbers after the update, in [`Space::params`] order.
    pub values: Vec<f64>,
}

/// A line of `steps.jsonl` as a resumed run reads it back.
#[derive(Deserialize)]
struct Recorded {
    step: u64,
    opening: String,
    signs: String,
    games: Vec<RecordedGame>,
    result: f64,
    values: Vec<f64>,
}

/// A game of a [`Recorded`] step: its result is all the tally needs.
#[derive(Deserialize)]
struct RecordedGame {
    score: GameScore,
}

/// The run so far, for progress lines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    /// Steps finished.
    pub steps: u64,
    /// Points of our engines (either sign) against the opponent.
    pub points: f64,
    /// Games played.
    pub games: u64,
    /// Points of the `+` engines minus those of the `-` engines, summed over the steps.
    pub plus_minus: f64,
}

impl Tally {
    /// Counts a finished step: its games' results for our engines and its `result` (the `+`
    /// side's points minus the `-` side's). A played step and a replayed record count alike.
    fn add_step(&mut self, scores: impl IntoIterator<Item = GameScore>, result: f64) {
        self.steps += 1;
        for score in scores {
            self.games += 1;
            self.points += f64::from(score.half_points()) / 2.0;
        }
        self.plus_minus += result;
    }
}

/// The file of weights `w` as `--weights` reads it, with a header saying what wrote it.
pub fn weights_text(w: &Weights, header: &str) -> String {
    let mut text = String::new();
    for line in header.lines() {
        text.push_str("# ");
        text.push_str(line);
        text.push('\n');
    }
    text + &w.to_text()
}

/// What a step's engine is started with: `engine` given the weights in `file` and every search
/// number of `sp`.
fn engine_command(engine: &str, file: &Path, sp: &SearchParams) -> String {
    let mut command = format!("{engine} --weights '{}'", file.display());
    for word in spsa::search_text(sp) {
        command.push_str(" --search ");
        command.push_str(&word);
    }
    command
}

/// Runs the tuning, calling `progress` after each step; returns the numbers it ends with.
pub fn run_tune(
    config: &TuneConfig,
    mut progress: impl FnMut(&StepRecord, &Tally),
) -> Result<(Weights, SearchParams), TuneError> {
    if config.steps == 0 || config.openings.is_empty() || config.concurrency == 0 {
        return Err(TuneError::Empty);
    }
    let out = &config.out_dir;
    let (w0, sp0) = config.start;
    let mut spsa = Spsa::new(config.space.params(&w0, &sp0, config.r_end), config.steps);
    let (done, mut tally) = if config.resume {
        resume(config, &mut spsa)?
    } else {
        (HashSet::new(), Tally::default())
    };
    let pending: Vec<u64> = (0..config.steps).filter(|k| !done.contains(k)).collect();
    let RunFiles {
        dir: lanes_dir,
        log,
        jsonl: mut steps_file,
        jsonl_path: steps_path,
    } = RunFiles::create(
        out,
        ["lanes", "tune.log", "steps.jsonl"],
        config.verbose,
        if config.resume {
            FileMode::Append
        } else {
            FileMode::Fresh
        },
    )?;
    let save = |values: &[f64], done: u64| -> Result<(), TuneError> {
        let (w, sp) = config.space.apply(&w0, &sp0, values);
        let header = format!(
            "Written by `caro-match spsa` after {done} of {} steps against {}.",
            config.steps, config.opponent.name
        );
        let path = out.join("weights.txt");
        fs::write(&path, weights_text(&w, &header)).map_err(output_error(&path))?;
        let path = out.join("search.txt");
        fs::write(&path, spsa::search_text(&sp).join("\n") + "\n").map_err(output_error(&path))?;
        Ok(())
    };
    save(&spsa.values(), tally.steps)?;
    let spsa = Mutex::new(spsa);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let mut result = Ok(());

    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<Played>();
        for lane in 0..config.concurrency.min(pending.len()) {
            let tx = tx.clone();
            let (spsa, next, stop, log, lanes_dir) = (&spsa, &next, &stop, &log, &lanes_dir);
            let pending = &pending;
            scope.spawn(move || {
                // Seat 0 is ours, a new engine for each perturbed side; seat 1 the opponent's,
                // kept from step to step.
                let mut slots = [
                    Slot::new("+", "-"),
                    Slot::new(&config.opponent.name, &config.opponent.command),
                ];
                while !stop.load(Ordering::Relaxed) {
                    let Some(&k) = pending.get(next.fetch_add(1, Ordering::Relaxed)) else {
                        break;
                    };
                    let sent = match play_step(config, spsa, k, lane, lanes_dir, &mut slots, log) {
                        // The lane applies its step's result before it draws its next step, so
                        // with one lane every step perturbs the numbers after the step before,
                        // as a resumed run replays them; it sends the record under the same
                        // lock, so the records are in the order of the updates.
                        Ok(step) => {
                            let mut spsa = spsa.lock();
                            spsa.update(k, &step.signs, step.result());
                            tx.send(Ok((step, spsa.values())))
                        }
                        Err(e) => tx.send(Err(e)),
                    };
                    if sent.is_err() {
                        break;
                    }
                }
                slots[1].quit();
            });
        }
        drop(tx);
        for played in rx {
            if result.is_err() {
                continue; // drain; the lanes see the stop flag
            }
            let (step, values) = match played {
                Ok(played) => played,
                Err(e) => {
                    result = Err(e);
                    stop.store(true, Ordering::Relaxed);
                    continue;
                }
            };
            let step_result = step.result();
            tally.add_step(step.games.iter().map(|g| g.score), step_result);
            let record = StepRecord {
                step: step.k + 1,
                opening: step.opening,
                signs: step
                    .signs
                    .iter()
                    .map(|&up| if up { '+' } else { '-' })
                    .collect(),
                games: step.games,
                result: step_result,
                around: step.around,
                values,
            };
            let line = serde_json::to_string(&record).expect("records serialize");
            let mut written = writeln!(steps_file, "{line}")
                .map_err(output_error(&steps_path))
                .map_err(TuneError::from);
            if written.is_ok() && tally.steps % config.save_every.max(1) == 0 {
                written = save(&record.values, tally.steps);
            }
            if let Err(e) = written {
                result = Err(e);
                stop.store(true, Ordering::Relaxed);
                continue;
            }
            progress(&record, &tally);
        }
    });
    result?;
    log.flush();
    let spsa = spsa.into_inner();
    save(&spsa.values(), tally.steps)?;
    Ok(config.space.apply(&w0, &sp0, &spsa.values()))
}

/// A lane's step with the numbers after its update, or why it could not be played.
type Played = Result<(PlayedStep, Vec<f64>), TuneError>;

/// A step a lane played.
struct PlayedStep {
    /// Its number, from 0.
    k: u64,
    /// The opening, in square names.
    opening: String,
    /// The perturbation's signs drawn for it.
    signs: Vec<bool>,
    /// The four games.
    games: Vec<StepGame>,
    /// The points of the `+` and `-` engines.
    points: [f64; 2],
    /// The numbers it perturbed.
    around: Vec<f64>,
}

impl PlayedStep {
    /// The `+` engine's points minus the `-` engine's: what the SPSA update takes.
    fn result(&self) -> f64 {
        self.points[0] - self.points[1]
    }
}

/// What the seed draws for step `k` of `n` tuned numbers: the perturbation's signs (`true`
/// raises the number on the `+` side) and the opening.
fn draw(config: &TuneConfig, k: u64, n: usize) -> (Vec<bool>, &Opening) {
    let mut rng = SmallRng::seed_from_u64(config.seed.wrapping_mul(0x9E37_79B9) ^ k);
    let signs = (0..n).map(|_| rng.random_bool(0.5)).collect();
    let opening = &config.openings[rng.random_range(0..config.openings.len())];
    (signs, opening)
}

/// Replays the `steps.jsonl` of a stopped run into `spsa` (fresh, from the run's settings):
/// each recorded step's signs and opening must be what the seed draws for it, and the numbers
/// after its update what the record says, or the record is another run's. A last line cut
/// short (the run was killed while writing it) is dropped from the file. Returns the steps
/// played (from 0) and the tally so far.
fn resume(config: &TuneConfig, spsa: &mut Spsa) -> Result<(HashSet<u64>, Tally), TuneError> {
    let path = config.out_dir.join("steps.jsonl");
    let text = fs::read_to_string(&path).map_err(output_error(&path))?;
    let whole = text.rfind('\n').map_or(0, |i| i + 1);
    let (mut done, mut tally) = (HashSet::new(), Tally::default());
    for (i, line) in text[..whole].lines().enumerate() {
        let bad = |message: String| TuneError::Resume {
            path: path.clone(),
            line: i + 1,
            message,
        };
        let r: Recorded = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
        if !(1..=config.steps).contains(&r.step) {
            return Err(bad(format!(
                "step {} is not one of the run's {} steps",
                r.step, config.steps
            )));
        }
        let k = r.step - 1;
        if !done.insert(k) {
            return Err(bad(format!("step {} is recorded twice", r.step)));
        }
        let (signs, opening) = draw(config, k, spsa.params.len());
        let recorded: Vec<bool> = r.signs.chars().map(|c| c == '+').collect();
        if recorded != signs || r.opening != opening.to_squares() {
            return Err(bad(format!(
                "step {} was drawn with another seed, space or openings file",
                r.step
            )));
        }
        spsa.update(k, &signs, r.result);
        if spsa.values() != r.values {
            return Err(bad(format!(
                "the numbers after step {} are not the record's: another start, --r-end or \
                 --steps",
                r.step
            )));
        }
        tally.add_step(r.games.iter().map(|g| g.score), r.result);
    }
    // Only once the record is known to be this run's is the cut line dropped.
    if whole < text.len() {
        OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_len(whole as u64))
            .map_err(output_error(&path))?;
    }
    Ok((done, tally))
}

/// Plays step `k` on lane `lane`: the perturbed numbers written to the lane's files, then each
/// perturbed engine, in seat 0 of `slots`, against the opponent in seat 1 with both colours.
fn play_step(
    config: &TuneConfig,
    spsa: &Mutex<Spsa>,
    k: u64,
    lane: usize,
    lanes_dir: &Path,
    slots: &mut [Slot; 2],
    log: &Logger,
) -> Result<PlayedStep, TuneError> {
    let (w0, sp0) = config.start;
    let (signs, hi, lo, opening, around) = {
        let s = spsa.lock();
        let (signs, opening) = draw(config, k, s.params.len());
        let (hi, lo) = s.perturb(k, &signs);
        (signs, hi, lo, opening, s.values())
    };
    let mut games = Vec::new();
    let mut points = [0.0; 2];
    for (i, (side, values)) in [("+", &hi), ("-", &lo)].into_iter().enumerate() {
        let (w, sp) = config.space.apply(&w0, &sp0, values);
        let file = lanes_dir.join(format!("lane{lane}{}.txt", ["plus", "minus"][i]));
        let header = format!("Step {} of {}, the {side} side.", k + 1, config.steps);
        fs::write(&file, weights_text(&w, &header)).map_err(output_error(&file))?;
        slots[0] = Slot::new(side, &engine_command(&config.engine, &file, &sp));
        for x_slot in [0, 1] {
            let color = ["x", "o"][x_slot];
            let tag = format!("[step {} {side}{color}]", k + 1);
            let (outcome, _) = play_game(&config.game, slots, x_slot, opening, log, &tag);
            let ours = [Player::X, Player::O][x_slot];
            let score = match outcome.winner {
                None => GameScore::Draw,
                Some(p) if p == ours => GameScore::Win,
                Some(_) => GameScore::Loss,
            };
            points[i] += f64::from(score.half_points()) / 2.0;
            games.push(StepGame {
                side,
                color,
                score,
                reason: outcome.reason.as_str(),
                stones: outcome.moves.len(),
                moves: outcome.moves.iter().map(|&(m, _)| square_name(m)).collect(),
            });
        }
        slots[0].quit();
    }
    Ok(PlayedStep {
        k,
        opening: opening.to_squares(),
        signs,
        games,
        points,
        around,
    })
}

#[cfg(test)]
mod tests {
    /// The replay's arithmetic is the run's own, bit for bit, so a resume compares the numbers
    /// exactly, and the record must read back exactly: serde_json's `float_roundtrip` (its
    /// default reader missed this number of a real run by an ulp, and a resume refused it).
    #[test]
    fn recorded_numbers_read_back_exactly() {
        let text = "192.67583056957434";
        let read: f64 = serde_json::from_str(text).unwrap();
        assert_eq!(read.to_bits(), text.parse::<f64>().unwrap().to_bits());
    }
}
