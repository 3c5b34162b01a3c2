//! A bot's time under a game clock: how much of the time it has left one move may use.
//!
//! The allocation (docs/bots.md, "Bots under a clock"): under Fischer, a thirtieth of the time
//! left plus four fifths of the increment (a game is assumed to last about thirty more of the
//! bot's moves, the usual rule of thumb of chess engines' time managers); under a fixed time per
//! move, half of it (the other half covers waiting for a search slot and the room's round trip).
//! Never more than half the time left, never more than the level's own `time_ms`: a clock makes
//! a bot faster, never slower or stronger.
//!
//! Pure arithmetic: this module never sees a room or a clock that runs.

use std::time::Duration;

/// What a bot to move knows of its clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeLeft {
    /// Its time left now.
    pub left: Duration,
    /// Its Fischer increment (zero per move).
    pub increment: Duration,
    /// A fixed time per move (the clock resets after each move) rather than Fischer.
    pub per_move: bool,
}

/// The least a search is given, so a bot with almost no time still answers with a move of its
/// first finished depth rather than nothing.
const FLOOR: Duration = Duration::from_millis(1);

/// How long this move's search may take (see the module docs), at most `level_time`.
pub fn budget(level_time: Duration, clock: TimeLeft) -> Duration {
    let half = clock.left / 2;
    let share = if clock.per_move {
        half
    } else {
        (clock.left / 30 + clock.increment * 4 / 5).min(half)
    };
    share.min(level_time).max(FLOOR)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_budget_follows_the_clock_and_never_exceeds_the_level() {
        let fischer = |left, inc| TimeLeft {
            left: ms(left),
            increment: ms(inc),
            per_move: false,
        };
        // 3+2: 180 s / 30 + 0.8 * 2 s = 7.6 s, but the level allows 2 s.
        assert_eq!(budget(ms(2_000), fischer(180_000, 2_000)), ms(2_000));
        assert_eq!(budget(ms(60_000), fischer(180_000, 2_000)), ms(7_600));
        // Low on time: never more than half of what is left.
        assert_eq!(budget(ms(60_000), fischer(1_000, 5_000)), ms(500));
        // Per move: half the move time.
        let per_move = TimeLeft {
            left: ms(30_000),
            increment: ms(0),
            per_move: true,
        };
        assert_eq!(budget(ms(60_000), per_move), ms(15_000));
        assert_eq!(budget(ms(300), per_move), ms(300));
        assert_eq!(budget(ms(300), fischer(0, 0)), ms(1));
    }
}
