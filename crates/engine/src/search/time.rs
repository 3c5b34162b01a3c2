//! Time management: how much of the clock one move gets ([`allocate`]), and how iterative
//! deepening spends it ([`Stability`]): more on a position whose best move or score is still
//! moving, less on one that has settled.
//!
//! Under a per-move limit alone (Gomocup's `timeout_turn`) time not spent is lost, so the whole
//! turn is the budget and nothing is scaled; a forced reply is already quick (a single legal
//! answer is searched to depth 2, a win on the board or a proven win by threats is played at
//! once). Under a match clock (`timeout_match`, `time_left`) time saved on a settled move is
//! there for a later one: the move gets an *optimum* share of the clock, and the search may
//! stretch it up to a *maximum* while its answer is unstable, or stop at part of it once the
//! answer has settled. The idea is the one chess engines use (chessprogramming.org/
//! Time_Management: Stockfish scales its optimum time by best-move changes and by a falling
//! score); the numbers are ours.
//!
//! Nothing here reads a clock: the functions are pure, so they are unit-tested.

use std::time::Duration;

use super::score::Score;

/// Moves we expect still to play, for sharing out the match clock: Gomocup games rarely last
/// more than 30 more moves for one side, and a fraction of the remaining time per move leaves
/// a reserve for long games.
pub const MOVES_TO_GO: u64 = 20;
/// The most one move may take of what is left on the match clock, however unstable it is: a
/// tenth (with [`MOVES_TO_GO`] 20, twice the optimum). A fifth lost a game on time in a timed
/// SPRT at 10 s a game (docs/engine.md, "Time management").
pub const MAX_SHARE: u64 = 10;
/// The budget when `timeout_turn` is 0, which the protocol defines as "play as fast as possible".
pub const FASTEST_MS: u64 = 10;

/// What one move may spend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The time aimed at (the search's `Limits::time`).
    pub optimum: Duration,
    /// The most it may take when its answer keeps changing (`Limits::time_max`); `None` when
    /// nothing is gained by saving time (a per-move limit alone), so the optimum is all of it.
    pub maximum: Option<Duration>,
}

impl Budget {
    /// The latest the search may run: the maximum, or the optimum when there is none.
    pub fn hard(&self) -> Duration {
        self.maximum.unwrap_or(self.optimum)
    }
}

/// The safety margin kept from a limit of `ms` milliseconds: the manager counts its own
/// overhead (process switching, pipes) against us. A tenth, at least 30 ms.
pub fn margin(ms: u64) -> u64 {
    (ms / 10).max(30)
}

/// The budget of the next move from the protocol's clock: `turn_ms` the per-move limit (0:
/// "as fast as possible"), `left_ms` what remains of the match clock (`None`: no match clock),
/// `cap` a level's own time per move. Never more than the turn allows less its margin, nor than
/// the match clock holds less its margin; at least 1 ms.
pub fn allocate(turn_ms: u64, left_ms: Option<u64>, cap: Duration) -> Budget {
    let turn = if turn_ms == 0 {
        FASTEST_MS
    } else {
        turn_ms.saturating_sub(margin(turn_ms))
    };
    let cap = cap.as_millis().try_into().unwrap_or(u64::MAX);
    let fit = |ms: u64| Duration::from_millis(ms.min(turn).min(cap).max(1));
    match left_ms {
        None => Budget {
            optimum: fit(u64::MAX),
            maximum: None,
        },
        Some(left) => {
            let safe = left.saturating_sub(margin(left));
            let optimum = fit((left / MOVES_TO_GO).min(safe));
            let maximum = fit((left / MAX_SHARE).min(safe)).max(optimum);
            Budget {
                optimum,
                maximum: Some(maximum),
            }
        }
    }
}

/// How settled the search's answer is, updated after every iteration; its [`Stability::factor`]
/// scales the optimum time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stability {
    /// Best-move changes, each worth 1 when it happens and halved at every later iteration.
    changes: f64,
    /// How far the score fell in the last iteration (centipawn-like units, 0 if it rose).
    drop: i32,
}

impl Default for Stability {
    fn default() -> Stability {
        Stability::new()
    }
}

impl Stability {
    /// Nothing known yet: the optimum as it is.
    pub fn new() -> Stability {
        Stability {
            changes: 0.5,
            drop: 0,
        }
    }

    /// After an iteration: whether its best move differs from the previous iteration's, and the
    /// two scores. A mate score is a result, not an estimate: no drop is counted to or from one.
    pub fn update(&mut self, best_changed: bool, previous: Score, score: Score) {
        self.changes = self.changes / 2.0 + if best_changed { 1.0 } else { 0.0 };
        self.drop = if previous.is_mate() || score.is_mate() {
            0
        } else {
            (previous - score).max(0)
        };
    }

    /// The share of the optimum time to spend: 0.6 once the best move has held for a few
    /// iterations, about 1.4 just after it changed, up to 2 after changes in a row; times up to
    /// 2 more when the score just fell (by 400 or more for the full factor). Between 0.5 and 3.
    pub fn factor(&self) -> f64 {
        let moving = 0.6 + 0.8 * self.changes;
        let falling = 1.0 + f64::from(self.drop.min(DROP_FULL)) / f64::from(DROP_FULL);
        (moving * falling).clamp(0.5, 3.0)
    }
}

/// The score drop that doubles the time.
const DROP_FULL: i32 = 400;

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(d: Duration) -> u64 {
        d.as_millis() as u64
    }

    const NO_CAP: Duration = Duration::from_secs(24 * 3600);

    #[test]
    fn a_turn_limit_alone_is_spent_whole_less_the_margin() {
        let b = allocate(5_000, None, NO_CAP);
        assert_eq!((ms(b.optimum), b.maximum), (4_500, None));
        assert_eq!(ms(b.hard()), 4_500);
        assert_eq!(ms(allocate(100, None, NO_CAP).optimum), 70);
        assert_eq!(ms(allocate(0, None, NO_CAP).optimum), FASTEST_MS);
        assert_eq!(
            ms(allocate(5_000, None, Duration::from_millis(200)).optimum),
            200
        );
    }

    #[test]
    fn a_match_clock_gives_an_optimum_and_a_larger_maximum() {
        let b = allocate(30_000, Some(60_000), NO_CAP);
        assert_eq!(ms(b.optimum), 60_000 / MOVES_TO_GO);
        assert_eq!(b.maximum.map(ms), Some(60_000 / MAX_SHARE));
        // The turn limit bounds both.
        let b = allocate(5_000, Some(600_000), NO_CAP);
        assert_eq!((ms(b.optimum), b.maximum.map(ms)), (4_500, Some(4_500)));
        // So does a level's own time.
        let b = allocate(30_000, Some(60_000), Duration::from_millis(1_000));
        assert_eq!((ms(b.optimum), b.maximum.map(ms)), (1_000, Some(1_000)));
    }

    #[test]
    fn never_more_than_the_clock_holds_less_its_margin() {
        for left in [0, 1, 20, 29, 30, 31, 100, 299, 300, 1_000, 7_777, 180_000] {
            let b = allocate(30_000, Some(left), NO_CAP);
            let max = b.maximum.unwrap();
            assert!(b.optimum <= max, "{left}");
            // A move always gets 1 ms (a reply must be sent); beyond that, the margin stays.
            assert!(
                ms(max) <= left.saturating_sub(margin(left)).max(1),
                "{left}: {b:?}"
            );
        }
        assert_eq!(allocate(30_000, Some(20), NO_CAP).maximum.map(ms), Some(1));
    }

    #[test]
    fn stability_spends_more_on_a_moving_answer_and_less_on_a_settled_one() {
        let s = |v: i32| Score::new(v);
        let mut st = Stability::new();
        assert!((st.factor() - 1.0).abs() < 1e-9, "unknown: the optimum");
        for _ in 0..6 {
            st.update(false, s(50), s(60));
        }
        let settled = st.factor();
        assert!((0.6..0.62).contains(&settled), "{settled}");
        st.update(true, s(60), s(60));
        let changed = st.factor();
        assert!((1.4..1.42).contains(&changed), "{changed}");
        st.update(true, s(60), s(60));
        assert!(st.factor() > changed, "two changes in a row");
        // A falling score doubles it at most; a rising one adds nothing.
        let mut fall = Stability::new();
        fall.update(false, s(300), s(-300));
        let mut rise = Stability::new();
        rise.update(false, s(-300), s(300));
        assert!((fall.factor() - 2.0 * rise.factor()).abs() < 1e-9);
        // A mate found is no drop, and the factor stays within its bounds.
        let mut mate = Stability::new();
        mate.update(false, s(100), Score::loss_in(9));
        assert!((mate.factor() - rise.factor()).abs() < 1e-9);
        let mut wild = Stability::new();
        for _ in 0..10 {
            wild.update(true, s(500), s(-500));
        }
        assert_eq!(wild.factor(), 3.0);
    }
}
