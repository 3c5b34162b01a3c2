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
//! engines read). A run can be stopped at any time; it is not resumed.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;

use caro_engine::positions::square_name;
use caro_engine::search::params::SearchParams;
use caro_engine::search::weights::Weights;
use caro_engine::spsa::{self, Space, Spsa};
use caro_engine::Player;
use parking_lot::Mutex;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use crate::openings::Opening;
use crate::referee::{play_game, GameSettings, Logger, Slot};
use crate::runner::{output_error, EngineSpec, OutputError, RunFiles};
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
    /// The tuned numbers after the update, in [`Space::params`] order.
    pub values: Vec<f64>,
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
    let RunFiles {
        log,
        jsonl: mut steps_file,
        jsonl_path: steps_path,
    } = RunFiles::create(out, "lanes", "tune.log", "steps.jsonl", config.verbose)?;
    let lanes_dir = out.join("lanes");
    let (w0, sp0) = config.start;
    let spsa = Mutex::new(Spsa::new(
        config.space.params(&w0, &sp0, config.r_end),
        config.steps,
    ));
    let save = |spsa: &Spsa, done: u64| -> Result<(), TuneError> {
        let (w, sp) = config.space.apply(&w0, &sp0, &spsa.values());
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
    save(&spsa.lock(), 0)?;
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let mut tally = Tally::default();
    let mut result = Ok(());

    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<Played>();
        for lane in 0..config.concurrency.min(config.steps as usize) {
            let tx = tx.clone();
            let (spsa, next, stop, log, lanes_dir) = (&spsa, &next, &stop, &log, &lanes_dir);
            scope.spawn(move || {
                // Seat 0 is ours, a new engine for each perturbed side; seat 1 the opponent's,
                // kept from step to step.
                let mut slots = [
                    Slot::new("+", "-"),
                    Slot::new(&config.opponent.name, &config.opponent.command),
                ];
                while !stop.load(Ordering::Relaxed) {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k >= config.steps {
                        break;
                    }
                    let played = play_step(config, spsa, k, lane, lanes_dir, &mut slots, log);
                    if tx.send(played).is_err() {
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
            let (k, opening, games, points) = match played {
                Ok(p) => p,
                Err(e) => {
                    result = Err(e);
                    stop.store(true, Ordering::Relaxed);
                    continue;
                }
            };
            let step_result = points[0] - points[1];
            let mut spsa = spsa.lock();
            spsa.update(k, &games.signs, step_result);
            tally.steps += 1;
            tally.points += points[0] + points[1];
            tally.games += games.games.len() as u64;
            tally.plus_minus += step_result;
            let record = StepRecord {
                step: k + 1,
                opening,
                signs: games
                    .signs
                    .iter()
                    .map(|&up| if up { '+' } else { '-' })
                    .collect(),
                games: games.games,
                result: step_result,
                values: spsa.values(),
            };
            let line = serde_json::to_string(&record).expect("records serialize");
            let mut written = writeln!(steps_file, "{line}")
                .map_err(output_error(&steps_path))
                .map_err(TuneError::from);
            if written.is_ok() && tally.steps % config.save_every.max(1) == 0 {
                written = save(&spsa, tally.steps);
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
    save(&spsa, tally.steps)?;
    Ok(config.space.apply(&w0, &sp0, &spsa.values()))
}

/// A lane's step: its number, opening, games (with the signs drawn) and the points of the `+`
/// and `-` engines; or why it could not be played.
type Played = Result<(u64, String, StepGames, [f64; 2]), TuneError>;

/// The games of a step and the perturbation's signs they were played with.
struct StepGames {
    signs: Vec<bool>,
    games: Vec<StepGame>,
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
) -> Played {
    let (w0, sp0) = config.start;
    let mut rng = SmallRng::seed_from_u64(config.seed.wrapping_mul(0x9E37_79B9) ^ k);
    let (signs, hi, lo) = {
        let s = spsa.lock();
        let signs: Vec<bool> = (0..s.params.len()).map(|_| rng.random_bool(0.5)).collect();
        let (hi, lo) = s.perturb(k, &signs);
        (signs, hi, lo)
    };
    let opening = &config.openings[rng.random_range(0..config.openings.len())];
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
    Ok((k, opening.to_squares(), StepGames { signs, games }, points))
}
