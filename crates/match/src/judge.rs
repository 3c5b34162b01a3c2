//! The judge: asks an outside Gomocup engine for its evaluation of openings, the step that
//! turns `caro-match openings` candidates into a book balanced by a stronger engine than ours
//! (`docs/match.md`, "The v3 freestyle book").
//!
//! Each opening goes to a fresh process of the engine, as the first position of a game: `START`,
//! the `INFO` lines of [`crate::referee`] with `timeout_turn` the thinking time and a match time
//! that never binds, then the whole position as `BOARD` ... `DONE`. The evaluation is the last
//! one the engine reports in a `MESSAGE` line before its move, in Rapfi's form `Eval N` (see
//! [`reported_eval`]): for the side to move, turned here into one for X. A fresh process per
//! opening keeps each evaluation independent of the openings judged before it (an engine keeps
//! its hash table from one game to the next).
//!
//! This module never decides which openings to keep, and never prints: the `caro-match judge`
//! command does both.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use caro_engine::{Board, Player, Rules};
use caro_gomocup::Reply;
use parking_lot::Mutex;

use crate::openings::Opening;
use crate::referee::{self, GameSettings, Logger, Reason, Slot};

/// `INFO timeout_match`: a match time no judgement comes near (27 hours), so that the turn time
/// alone bounds the engine's thinking.
const MATCH_MS: u64 = 100_000_000;
/// How long the engine may take to answer `START` (its start-up included).
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// What the judge is and how long it thinks.
#[derive(Clone, Debug)]
pub struct JudgeSettings {
    /// The engine's command line (see [`crate::process::split_command`]).
    pub engine: String,
    /// Rule and board.
    pub rules: Rules,
    /// `INFO timeout_turn`, milliseconds: the thinking time on each opening.
    pub turn_ms: u64,
    /// How much longer than `turn_ms` the move may take before the opening fails.
    pub tolerance: Duration,
}

/// An opening the judge could not evaluate.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    /// The engine did not start, exited, was late, or answered something that is not a legal
    /// move.
    #[error("{engine} failed on {opening}: {detail} ({})", reason.as_str())]
    Engine {
        /// The engine's command line.
        engine: String,
        /// The opening, in square names.
        opening: String,
        /// What went wrong, as the referee would score it.
        reason: Reason,
        /// Details (the line it answered, the time it took, ...).
        detail: String,
    },
    /// The engine moved without a `MESSAGE ... Eval N` line before its move.
    #[error("{engine} reported no evaluation for {opening} (no MESSAGE line with `Eval N` before its move)")]
    NoEvaluation {
        /// The engine's command line.
        engine: String,
        /// The opening, in square names.
        opening: String,
    },
}

/// The evaluation in the text of a `MESSAGE` line, as Rapfi reports it
/// (`Depth 14-22 | Eval -37 | Time 1994ms`): the first `Eval` that starts a word, followed by
/// one space, an optional minus sign and digits; for the side to move.
pub fn reported_eval(text: &str) -> Option<i64> {
    text.match_indices("Eval ").find_map(|(at, word)| {
        let before = text[..at].chars().next_back();
        if matches!(before, Some(c) if c.is_alphanumeric() || c == '_') {
            return None;
        }
        let rest = &text[at + word.len()..];
        let sign = usize::from(rest.starts_with('-'));
        let digits = rest[sign..].bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest[..sign + digits].parse().ok()
    })
}

/// The judge's evaluation of `opening` for X (positive: X is better). `tag` prefixes the
/// protocol lines written to `log`.
pub fn judge(
    settings: &JudgeSettings,
    opening: &Opening,
    log: &Logger,
    tag: &str,
) -> Result<i64, JudgeError> {
    let rules = settings.rules;
    let board = Board::from_moves(rules, &opening.moves).expect("openings are validated");
    let game = GameSettings {
        rules,
        turn_ms: settings.turn_ms,
        match_ms: MATCH_MS,
        tolerance: settings.tolerance,
        delay: Duration::ZERO,
        start_timeout: START_TIMEOUT,
        max_memory: None,
    };
    let mut slot = Slot::new(&settings.engine, &settings.engine);
    let mut eval = None;
    let answered = slot
        .ensure(log, tag)
        .and_then(|_| referee::start(&game, &mut slot, log, tag))
        .and_then(|()| {
            for line in caro_gomocup::position_commands(&board) {
                slot.send(&line, log, tag)?;
            }
            let wait = Duration::from_millis(settings.turn_ms) + settings.tolerance;
            let line = slot
                .answer_with(Instant::now() + wait, log, tag, &mut |line| {
                    if let Reply::Message(text) = Reply::parse(line) {
                        eval = reported_eval(&text).or(eval);
                    }
                })
                .map_err(|r| referee::no_move(r, wait))?;
            referee::parse_answer(&board, &line)
        });
    let opening = opening.to_squares();
    let engine = settings.engine.clone();
    if let Err(fault) = answered {
        slot.discard();
        return Err(JudgeError::Engine {
            engine,
            opening,
            reason: fault.reason,
            detail: fault.detail,
        });
    }
    slot.quit();
    let eval = eval.ok_or(JudgeError::NoEvaluation { engine, opening })?;
    Ok(match board.to_move() {
        Player::X => eval,
        Player::O => eval.saturating_neg(),
    })
}

/// [`judge`] on every opening, `jobs` engines at a time; the evaluations for X in the order of
/// `openings`. When an opening fails no other is started, and the error is the one of the first
/// failing opening in that order.
pub fn judge_all(
    settings: &JudgeSettings,
    openings: &[Opening],
    jobs: usize,
    log: &Logger,
) -> Result<Vec<i64>, JudgeError> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Mutex<Vec<Option<Result<i64, JudgeError>>>> =
        Mutex::new(openings.iter().map(|_| None).collect());
    thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, openings.len().max(1)) {
            scope.spawn(|| {
                while !failed.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(opening) = openings.get(i) else {
                        return;
                    };
                    let result = judge(settings, opening, log, &format!("opening {}", i + 1));
                    if result.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    results.lock()[i] = Some(result);
                }
            });
        }
    });
    // Openings are handed out in order and a started one is always finished, so every opening
    // before a failed one has its result.
    results
        .into_inner()
        .into_iter()
        .map(|r| r.expect("a result before the first failure"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluations_are_read_as_rapfi_writes_them() {
        assert_eq!(
            reported_eval("Depth 14-22 | Eval -37 | Time 1994ms"),
            Some(-37)
        );
        assert_eq!(reported_eval("Eval 45"), Some(45));
        assert_eq!(reported_eval("(Eval 12ms)"), Some(12));
        // The first one that is a number counts.
        assert_eq!(reported_eval("Eval - | Eval 3 | Eval 4"), Some(3));
        for none in [
            "NoEval 5",
            "Evaluation 5",
            "Eval",
            "Eval +M5",
            "eval 5",
            "Eval  5",
        ] {
            assert_eq!(reported_eval(none), None, "{none}");
        }
    }
}
