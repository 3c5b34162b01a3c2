//! Outside engines as bots: bot levels played by a Gomocup program (Piskvork protocol 2,
//! <https://plastovicka.github.io/protocl2en.htm>) run as child processes with `tokio::process`.
//!
//! Each outside level has an [`EnginePool`]: at most `max_processes` processes, started when
//! first needed and kept idle between moves. A process is never tied to a game: every request
//! gives it the whole game again (`START`/`RECTSTART`, the `INFO` lines, then `BEGIN` or `BOARD`
//! ... `DONE`, see [`caro_gomocup`]), so any idle process serves any room, and a room
//! restored after a restart needs nothing from a process that is gone.
//!
//! The engine is trusted with nothing. Its answer must come within the level's time (or what is
//! left of its game clock) plus the margin, and be a legal move; `MESSAGE`, `DEBUG` and `UNKNOWN`
//! lines are logged, never read as a move. A timeout, an illegal move, garbage, an `ERROR` answer
//! or an exit mid-move is a [`Forfeit`]: the process is killed, with its process group so that a
//! wrapper script's children go too, and its bot loses that game. The next request starts a
//! fresh process. Failures in a row make the level rest before the next start (see `Health` in
//! `pool.rs`), so a broken command cannot spin.
//!
//! This module runs processes and speaks the protocol; [`crate::bot`] schedules the moves
//! (permits, cancellation, events to rooms). It never touches rooms or clients.
//!
//! The files: this one holds what callers see of a move (its [`Answer`] or [`Forfeit`], the
//! [`GameClock`]); `pool.rs` the [`EnginePool`] of a level (slots, idle processes, restarts,
//! the protocol exchange of a move); `process.rs` one child process (its start, its pipes read
//! line by line, its kill with its process group).

mod pool;
mod process;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use caro_engine::Move;

use crate::protocol::Fault;

pub use pool::EnginePool;

/// How much of an engine's answer a forfeit's detail quotes.
const QUOTE_CHARS: usize = 60;

/// Why an outside engine lost its game: a stable code and a sentence for the players.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forfeit {
    /// What went wrong.
    pub fault: Fault,
    /// What happened, for humans (quotes at most a short piece of the engine's output).
    pub detail: String,
}

fn forfeit(fault: Fault, detail: impl Into<String>) -> Forfeit {
    Forfeit {
        fault,
        detail: detail.into(),
    }
}

/// A legal move and the time the engine took for it.
#[derive(Clone, Copy, Debug)]
pub struct Answer {
    /// The move, checked against the board.
    pub mv: Move,
    /// From sending the position to reading the answer.
    pub elapsed: Duration,
}

/// One bot seat's time used in its game, for levels with a match clock (`match_time_ms`), and,
/// in a game with a time control, what the room's clock allows this move (set before it).
#[derive(Debug, Default)]
pub struct GameClock {
    spent_ms: AtomicU64,
    /// Under a game clock: this move's budget and the seat's time left, ms.
    game: parking_lot::Mutex<Option<(u64, u64)>>,
}

impl GameClock {
    /// Adds a move's time.
    pub fn spend(&self, d: Duration) {
        self.spent_ms.fetch_add(d.as_millis() as u64, Relaxed);
    }

    /// The room's game clock for the next move: `(budget, time left)`, or `None` without one.
    /// The engine is told them (`INFO timeout_turn`, `INFO time_left`); the forfeit deadline
    /// stays the level's own (`time_ms` + `margin_ms`): a slow engine flags on the game clock.
    pub fn set_game_time(&self, game: Option<(Duration, Duration)>) {
        *self.game.lock() = game.map(|(b, l)| (b.as_millis() as u64, l.as_millis() as u64));
    }

    /// What [`GameClock::set_game_time`] set.
    fn game_time(&self) -> Option<(u64, u64)> {
        *self.game.lock()
    }

    /// Milliseconds left of `total` (negative once overdrawn within the margin).
    fn left_ms(&self, total: Duration) -> i64 {
        total.as_millis() as i64 - self.spent_ms.load(Relaxed) as i64
    }
}

/// An engine's output, quoted and cut short for a forfeit's detail.
fn quote(line: &str) -> String {
    let line = line.trim();
    if line.chars().count() <= QUOTE_CHARS {
        format!("{line:?}")
    } else {
        let head: String = line.chars().take(QUOTE_CHARS).collect();
        format!("{head:?}...")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_quote_a_short_piece_of_the_output() {
        assert_eq!(quote(" hello "), "\"hello\"");
        let long = "x".repeat(500);
        assert_eq!(quote(&long), format!("\"{}\"...", "x".repeat(QUOTE_CHARS)));
    }
}
