//! The static evaluation of the main search's leaves: the difference of the two players' sums
//! of cell values (kept incrementally by [`Position`] from the line
//! patterns of every empty cell), plus bonuses for a threat that wins by force when it is the
//! side to move's turn (an open four or double-four square, a four-three, a double three the
//! opponent cannot answer with a four) and a malus for facing two open-four squares with no
//! four to answer them. The cell values are `search/weights.txt` (docs/engine.md, "Texel tuning").
//!
//! It never looks for wins: a five on the board is the search's business, before it evaluates.

use super::negamax::Run;
use super::position::{Position, C_FLEX4, C_FOUR, C_FOUR_THREE, C_THREE_THREE};
use super::Score;

impl Run<'_> {
    /// The position's value for the side to move.
    pub(super) fn evaluate(&self) -> Score {
        let p = &self.pos;
        Score::new(p.total(p.side()) - p.total(1 - p.side()) + p.class_terms() + threat_bonus(p))
    }
}

/// The evaluation's terms beyond the cell values, for the side to move: a winning threat on
/// the move, or two open-four squares of the opponent with no four to answer them. (Not tuned:
/// the tuner keeps out positions where they apply, see `texel`, except the double three.) The
/// four values are the weights' `bonus` ([`Weights::bonus`](super::weights::Weights::bonus)).
pub fn threat_bonus(p: &Position) -> i32 {
    let me = p.side();
    let opp = 1 - me;
    let [flex4, four_three, three_three, facing_flex4] = *p.bonus();
    let mut s = 0;
    if p.count(me, C_FLEX4) > 0 {
        s += flex4;
    } else if p.count(me, C_FOUR_THREE) > 0 {
        s += four_three;
    } else if p.count(me, C_THREE_THREE) > 0
        && p.count(opp, C_FOUR) + p.count(opp, C_FOUR_THREE) + p.count(opp, C_FLEX4) == 0
    {
        s += three_three;
    }
    if p.count(opp, C_FLEX4) > 1 && p.count(me, C_FOUR) + p.count(me, C_FOUR_THREE) == 0 {
        s -= facing_flex4;
    }
    s
}
