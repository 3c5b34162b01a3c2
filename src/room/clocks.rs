//! A game's clocks: the time each side has left under its time control (Fischer: a base for the
//! game plus an increment after each move; per move: a fixed time that resets after each move),
//! which side's clock runs and since when, and the idle limit of a game without a clock.
//!
//! Server-authoritative: the room asks [`Clocks::state`] for what goes on the wire (both
//! remaining times as of now and the running side), and the client only counts down from it.
//! The clock of the side to move runs from the moment its turn starts (the game's start for X's
//! first move, then each move); a flag falls exactly at [`Clocks::deadline`].
//!
//! Like `timers`, this module keeps instants and compares them: it never ends a game or sends
//! anything itself; the actor asks [`Clocks::flagged`] and answers with a loss on time.

use std::time::Duration;

use tokio::time::Instant;

use crate::protocol::{ClockState, Seat, TimeControl};

/// Both sides' time and the running clock of one game.
pub(super) struct Clocks {
    tc: TimeControl,
    /// The idle limit per move, for a game without a clock.
    idle: Duration,
    /// Time left to X and O at the start of the running side's turn (or now, when none runs).
    left: [Duration; 2],
    /// Whose clock runs, and since when.
    running: Option<(Seat, Instant)>,
}

/// Whole milliseconds, rounded up: a clock shows 0 only once its flag has fallen, and a clock
/// that started a few microseconds before the message shows its full time.
fn ms(d: Duration) -> u64 {
    d.as_micros().div_ceil(1000) as u64
}

impl Clocks {
    /// Full clocks for `tc`, none running; `idle` bounds a move of a game without a clock.
    pub(super) fn new(tc: TimeControl, idle: Duration) -> Clocks {
        let full = match tc {
            TimeControl::None => Duration::ZERO,
            TimeControl::Fischer { base_ms, .. } => Duration::from_millis(base_ms),
            TimeControl::PerMove { move_ms } => Duration::from_millis(move_ms),
        };
        Clocks {
            tc,
            idle,
            left: [full; 2],
            running: None,
        }
    }

    /// The time control.
    pub(super) fn time_control(&self) -> TimeControl {
        self.tc
    }

    /// Clocks restored from a stored game: the times left as of its last stored move
    /// (`None`: no move stored, full clocks). Per move, every clock starts full again.
    pub(super) fn restored(&mut self, left_ms: Option<[u64; 2]>) {
        if let (TimeControl::Fischer { .. }, Some(left)) = (self.tc, left_ms) {
            self.left = left.map(Duration::from_millis);
        }
    }

    /// Starts `seat`'s clock now (its turn began). A clock already running for that side keeps
    /// its start.
    pub(super) fn start(&mut self, seat: Seat) {
        if self.running.map(|(s, _)| s) != Some(seat) {
            self.stop();
            self.running = Some((seat, Instant::now()));
        }
    }

    /// Stops the running clock, charging its side the time it ran (the game ended).
    pub(super) fn stop(&mut self) {
        if let Some((seat, since)) = self.running.take() {
            let i = seat.index();
            self.left[i] = self.left[i].saturating_sub(since.elapsed());
        }
    }

    /// `seat` moved now: its time is charged and then credited (Fischer: the increment; per
    /// move: back to full). No clock runs until the next [`Clocks::start`].
    pub(super) fn moved(&mut self, seat: Seat) {
        self.stop();
        let i = seat.index();
        match self.tc {
            TimeControl::None => {}
            TimeControl::Fischer { increment_ms, .. } => {
                self.left[i] += Duration::from_millis(increment_ms);
            }
            TimeControl::PerMove { move_ms } => self.left[i] = Duration::from_millis(move_ms),
        }
    }

    /// Time `seat` has left now.
    pub(super) fn left(&self, seat: Seat) -> Duration {
        let i = seat.index();
        match self.running {
            Some((s, since)) if s == seat => self.left[i].saturating_sub(since.elapsed()),
            _ => self.left[i],
        }
    }

    /// The Fischer increment (zero for the other controls).
    pub(super) fn increment(&self) -> Duration {
        match self.tc {
            TimeControl::Fischer { increment_ms, .. } => Duration::from_millis(increment_ms),
            _ => Duration::ZERO,
        }
    }

    /// Both times left, as stored with a move (`None` without a clock).
    pub(super) fn left_ms(&self) -> Option<[u64; 2]> {
        self.tc
            .is_clocked()
            .then(|| Seat::BOTH.map(|s| ms(self.left(s))))
    }

    /// What the wire shows now (`None` without a clock).
    pub(super) fn state(&self) -> Option<ClockState> {
        let [x, o] = self.left_ms()?;
        Some(ClockState {
            x,
            o,
            running: self.running.map(|(s, _)| s),
        })
    }

    /// When the running side's flag falls (or, without a clock, its idle limit runs out).
    pub(super) fn deadline(&self) -> Option<Instant> {
        let (seat, since) = self.running?;
        Some(match self.tc {
            TimeControl::None => since + self.idle,
            _ => since + self.left[seat.index()],
        })
    }

    /// The side whose flag has fallen (or whose idle limit ran out) by `now`.
    pub(super) fn flagged(&self, now: Instant) -> Option<Seat> {
        let (seat, _) = self.running?;
        (now >= self.deadline()?).then_some(seat)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDLE: Duration = Duration::from_secs(900);

    #[tokio::test(start_paused = true)]
    async fn fischer_charges_the_mover_and_credits_the_increment() {
        let mut c = Clocks::new(
            TimeControl::Fischer {
                base_ms: 10_000,
                increment_ms: 2_000,
            },
            IDLE,
        );
        c.start(Seat::X);
        tokio::time::advance(Duration::from_millis(3_500)).await;
        c.moved(Seat::X);
        c.start(Seat::O);
        assert_eq!(
            c.state(),
            Some(ClockState {
                x: 8_500,
                o: 10_000,
                running: Some(Seat::O)
            })
        );
        tokio::time::advance(Duration::from_millis(1_000)).await;
        assert_eq!(c.left(Seat::O), Duration::from_millis(9_000));
        let at = Instant::now() + Duration::from_millis(9_000);
        assert_eq!(c.deadline(), Some(at));
        assert_eq!(c.flagged(at - Duration::from_millis(1)), None);
        assert_eq!(c.flagged(at), Some(Seat::O));
    }

    #[tokio::test(start_paused = true)]
    async fn per_move_resets_and_none_has_only_the_idle_limit() {
        let mut c = Clocks::new(TimeControl::PerMove { move_ms: 5_000 }, IDLE);
        c.start(Seat::X);
        tokio::time::advance(Duration::from_millis(4_000)).await;
        c.moved(Seat::X);
        c.start(Seat::O);
        assert_eq!(c.left_ms(), Some([5_000, 5_000]));
        let mut none = Clocks::new(TimeControl::None, IDLE);
        assert_eq!(none.state(), None);
        none.start(Seat::X);
        assert_eq!(none.deadline(), Some(Instant::now() + IDLE));
    }
}
