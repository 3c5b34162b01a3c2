//! The static evaluation of the main search's leaves: the difference of the two players' sums
//! of cell values (kept incrementally by [`Position`](super::position::Position) from the line
//! patterns of every empty cell), plus bonuses for a threat that wins by force when it is the
//! side to move's turn (an open four or double-four square, a four-three, a double three the
//! opponent cannot answer with a four) and a malus for facing two open-four squares with no
//! four to answer them. The values are hand-tuned (docs/engine.md, "What limits strength").
//!
//! It never looks for wins: a five on the board is the search's business, before it evaluates.

use super::negamax::Run;
use super::position::{C_FLEX4, C_FOUR, C_FOUR_THREE, C_THREE_THREE};
use super::Score;

impl Run<'_> {
    /// The position's value for the side to move.
    pub(super) fn evaluate(&self) -> Score {
        let p = &self.pos;
        let me = p.side();
        let opp = 1 - me;
        let mut s = p.total(me) - p.total(opp);
        if p.count(me, C_FLEX4) > 0 {
            s += 3000;
        } else if p.count(me, C_FOUR_THREE) > 0 {
            s += 1500;
        } else if p.count(me, C_THREE_THREE) > 0
            && p.count(opp, C_FOUR) + p.count(opp, C_FOUR_THREE) + p.count(opp, C_FLEX4) == 0
        {
            s += 800;
        }
        if p.count(opp, C_FLEX4) > 1 && p.count(me, C_FOUR) + p.count(me, C_FOUR_THREE) == 0 {
            s -= 800;
        }
        Score::new(s)
    }
}
