//! Search scores: a plain evaluation, or a win or loss in a known number of plies
//! (chessprogramming.org/Score, /Mate_Scores). One type for both, ordered so that a quicker win
//! is worth more than a slower one, a slower loss more than a quicker one, and any win more than
//! any evaluation. The search, the transposition table and the results reported to callers all
//! use it; arithmetic with plain `i32` margins (aspiration windows, evaluation terms) is allowed,
//! and the difference of two scores is a plain `i32`.

use std::fmt;
use std::ops::{Add, AddAssign, Neg, Sub, SubAssign};

/// A score from the side to move's point of view: an evaluation, or `WIN - n` for a win in `n`
/// plies and `-(WIN - n)` for a loss in `n` plies (`WIN` = 1,000,000).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct Score(i32);

/// Scores this close to [`Score::WIN`] are wins, not evaluations (no evaluation comes near).
const MATE_RANGE: i32 = 1000;

impl Score {
    /// An even position, and the score of a draw.
    pub const ZERO: Score = Score(0);
    /// A five on the board now: the score of a win in 0 plies.
    pub const WIN: Score = Score(1_000_000);

    /// An evaluation (engine units; far from [`Score::WIN`]).
    #[inline]
    pub const fn new(value: i32) -> Score {
        Score(value)
    }

    /// The score as a plain number.
    #[inline]
    pub const fn get(self) -> i32 {
        self.0
    }

    /// A win for the side to move in `ply` plies.
    #[inline]
    pub const fn win_in(ply: usize) -> Score {
        Score(Score::WIN.0 - ply as i32)
    }

    /// A loss for the side to move in `ply` plies.
    #[inline]
    pub const fn loss_in(ply: usize) -> Score {
        Score(-(Score::WIN.0 - ply as i32))
    }

    /// Whether the side to move has a forced win.
    #[inline]
    pub const fn is_win(self) -> bool {
        self.0 > Score::WIN.0 - MATE_RANGE
    }

    /// Whether the side to move has a forced loss.
    #[inline]
    pub const fn is_loss(self) -> bool {
        self.0 < -(Score::WIN.0 - MATE_RANGE)
    }

    /// Whether this is a forced win or loss rather than an evaluation.
    #[inline]
    pub const fn is_mate(self) -> bool {
        self.is_win() || self.is_loss()
    }

    /// Plies to the end of a forced win or loss, `None` for an evaluation.
    #[inline]
    pub const fn mate_plies(self) -> Option<i32> {
        if self.is_mate() {
            Some(Score::WIN.0 - self.0.abs())
        } else {
            None
        }
    }

    /// The magnitude, as a score for the side to move.
    #[inline]
    pub const fn abs(self) -> Score {
        Score(self.0.abs())
    }
}

impl Neg for Score {
    type Output = Score;
    #[inline]
    fn neg(self) -> Score {
        Score(-self.0)
    }
}

impl Add<i32> for Score {
    type Output = Score;
    #[inline]
    fn add(self, margin: i32) -> Score {
        Score(self.0 + margin)
    }
}

impl Sub<i32> for Score {
    type Output = Score;
    #[inline]
    fn sub(self, margin: i32) -> Score {
        Score(self.0 - margin)
    }
}

impl AddAssign<i32> for Score {
    #[inline]
    fn add_assign(&mut self, margin: i32) {
        self.0 += margin;
    }
}

impl SubAssign<i32> for Score {
    #[inline]
    fn sub_assign(&mut self, margin: i32) {
        self.0 -= margin;
    }
}

/// The margin between two scores.
impl Sub for Score {
    type Output = i32;
    #[inline]
    fn sub(self, other: Score) -> i32 {
        self.0 - other.0
    }
}

/// Compares with a plain number of engine units (`score > 0`: the side to move is better).
impl PartialEq<i32> for Score {
    #[inline]
    fn eq(&self, other: &i32) -> bool {
        self.0 == *other
    }
}

/// See `PartialEq<i32>`.
impl PartialOrd<i32> for Score {
    #[inline]
    fn partial_cmp(&self, other: &i32) -> Option<std::cmp::Ordering> {
        self.0.partial_cmp(other)
    }
}

/// The plain number (a win in 3 plies prints as `999997`), with the formatter's flags.
impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl From<Score> for i32 {
    fn from(s: Score) -> i32 {
        s.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wins_order_by_distance_and_above_evaluations() {
        assert!(Score::win_in(1) > Score::win_in(3));
        assert!(Score::win_in(95) > Score::new(50_000));
        assert!(Score::loss_in(3) > Score::loss_in(1));
        assert!(Score::loss_in(95) < Score::new(-50_000));
        assert_eq!(-Score::win_in(4), Score::loss_in(4));
        assert_eq!(Score::win_in(0), Score::WIN);
    }

    #[test]
    fn mates_know_their_distance() {
        assert!(Score::win_in(7).is_win() && Score::win_in(7).is_mate());
        assert!(Score::loss_in(7).is_loss() && !Score::loss_in(7).is_win());
        assert_eq!(Score::win_in(7).mate_plies(), Some(7));
        assert_eq!(Score::loss_in(12).mate_plies(), Some(12));
        assert_eq!(Score::new(3000).mate_plies(), None);
        assert!(!Score::new(-3000).is_mate());
    }

    #[test]
    fn prints_as_a_number() {
        assert_eq!(Score::new(-42).to_string(), "-42");
        assert_eq!(format!("{:+}", Score::new(7)), "+7");
        assert_eq!(Score::new(5) - Score::new(8), -3);
    }
}
