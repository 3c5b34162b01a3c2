//! Move generation and ordering for the main search ([`negamax`](super::negamax)): which moves
//! a node searches and in what order.
//!
//! - Candidates are the empty cells within two cells of a stone; facing a five only its
//!   defences ([`threats::defences`]), facing an open three (or a double-four square) only the
//!   moves that stop every such threat plus our own fours; a board of at most 25 cells is
//!   searched full-width.
//! - The ordering score of a move is the transposition table's move first (`1 << 28`), else its
//!   attack value plus four fifths of its defence value (the pattern values of both players,
//!   [`position`](super::position)), plus two killer moves per ply and the history heuristic
//!   (chessprogramming.org/Killer_Heuristic, /History_Heuristic), those two bonuses weighted by
//!   [`SearchParams::bonuses`](super::params::SearchParams::bonuses).
//! - A node may search its TT move before generating the others ([`Run::tt_move_first`]); the
//!   tree is the same as if it had generated first (a journal of history updates restores the
//!   ordering the other moves would have had).
//!
//! Nothing here plays a move or searches: generation reads the position's incremental state.

use super::negamax::{Run, NO_MOVE};
use super::position::{C_FLEX4, C_FOUR};
use super::threats::{self, CellList};

/// With [`SearchParams::by_value`](super::params::SearchParams::by_value), what a tactical
/// move's ordering score is raised by: above every quiet move's, bonuses included.
const TACTICAL_LIFT: i32 = 1 << 20;

/// `a` if `cond`, else `b`, by arithmetic rather than a branch: for selections a branch
/// predictor cannot guess (`std::hint::select_unpredictable` is newer than our MSRV).
#[inline(always)]
pub(super) fn pick(cond: bool, a: usize, b: usize) -> usize {
    let mask = (cond as usize).wrapping_neg();
    (a & mask) | (b & !mask)
}

/// A history or killer bonus at `weight` sixteenths
/// ([`SearchParams::bonuses`](super::params::SearchParams::bonuses)): the one rule for every
/// ordering score that adds a bonus.
#[inline(always)]
fn weighted(bonus: i32, weight: i32) -> i32 {
    bonus * weight / 16
}

/// History counters (chessprogramming.org/History_Heuristic) per side and cell, each with its
/// share of the ordering score beside it, so that ordering a move reads one number. While a node
/// generates its moves, its killers' bonuses are added to that share too (see [`Run::generate`]).
pub(super) struct History {
    pub(super) counts: [Vec<i32>; 2],
    pub(super) bonus: [Vec<i32>; 2],
}

impl History {
    /// The ordering score of a counter.
    #[inline]
    fn bonus_of(count: i32) -> i32 {
        (count >> 6).min(200)
    }

    #[inline]
    pub(super) fn get(&self, side: usize, c: usize) -> i32 {
        self.counts[side][c]
    }

    #[inline]
    pub(super) fn set(&mut self, side: usize, c: usize, count: i32) {
        self.counts[side][c] = count;
        self.bonus[side][c] = History::bonus_of(count);
    }

    /// Fits the tables to `len` cells (zeroed), or ages them when they fit already.
    pub(super) fn prepare(&mut self, len: usize) {
        for side in 0..2 {
            if self.counts[side].len() != len {
                self.counts[side] = vec![0; len];
                self.bonus[side] = vec![0; len];
            } else {
                // Age the statistics so the last search's lessons fade.
                for c in 0..len {
                    self.set(side, c, self.counts[side][c] / 4);
                }
            }
        }
    }

    pub(super) fn clear(&mut self) {
        for side in 0..2 {
            self.counts[side].iter_mut().for_each(|v| *v = 0);
            self.bonus[side].iter_mut().for_each(|v| *v = 0);
        }
    }
}

impl Run<'_> {
    /// The root's moves in search order (win first, forced blocks only when a five is
    /// threatened).
    pub(super) fn root_moves(&mut self) -> Vec<(u16, i32)> {
        let me = self.pos.side();
        let wins = threats::win_cells(&self.pos, me);
        if let Some(&w) = wins.as_slice().first() {
            return vec![(w, i32::MAX)];
        }
        let mut moves = Vec::new();
        let _ = self.generate(&mut moves, 0, NO_MOVE);
        moves.sort_by_key(|m| std::cmp::Reverse(m.1));
        moves
    }

    /// Orders the moves of a node: threats made and stopped, then killers and history. What
    /// does not depend on the cell is read once.
    #[inline]
    fn order_scores(&self, tt_move: u16) -> impl Fn(usize) -> i32 + '_ {
        let me = self.pos.side();
        // History and killer bonuses (the killers' are in only while `generate` runs).
        let bonus = &self.s.history.bonus[me][..];
        let pos = &self.pos;
        let defence = self.params.defence;
        let (policy, tactical) = (self.params.policy, self.params.tactical);
        let lift = self.tactical_lift();
        let weight = self.params.bonuses;
        let order = pos.order();
        // The learnt place terms, by difference from the opponent's last stone and from ours
        // (a stone that is not there is out of every reach). Read off the last two stones
        // placed: below a null move that is the wrong way round (the side to move placed the
        // last one), and reading them by the side to move instead lost in self-play (-25.9
        // Elo [-56.6, +4.5], H0; docs/engine.md, "Changes accepted by SPRT"), so it stays.
        let near = &self.near[..];
        let centre = (near.len() / 2) as isize;
        let history = pos.history();
        let stone = |back: usize| {
            history
                .len()
                .checked_sub(back)
                .map_or(isize::MIN / 2, |k| history[k] as isize)
        };
        let (last, own) = (centre - stone(1), centre - stone(2));
        let place = move |c: usize, from: isize, t: usize| {
            near.get((c as isize + from) as usize).map_or(0, |v| v[t])
        };
        move |c| {
            if c as u16 == tt_move {
                return 1 << 28;
            }
            let st = pos.state(c);
            let value = st.order_value(me, defence);
            let score = if value >= tactical {
                value + lift
            } else if policy == 0 {
                value
            } else {
                // A quiet move: the learnt score's share, and quiet it stays.
                let learnt = order.combo(st.combo[me])[0]
                    + order.combo(st.combo[1 - me])[1]
                    + place(c, last, 0)
                    + place(c, own, 1);
                ((value * (16 - policy) + learnt * policy) / 16).min(tactical - 1)
            };
            score + weighted(bonus[c], weight)
        }
    }

    /// What a tactical move's ordering score is raised by: [`TACTICAL_LIFT`] with
    /// `by_value`, else 0. A move is tactical from ordering score `tactical + tactical_lift()`
    /// on (`by_value`: by its cell values alone; else by its whole score, bonuses included).
    #[inline]
    pub(super) fn tactical_lift(&self) -> i32 {
        if self.params.by_value > 0 {
            TACTICAL_LIFT
        } else {
            0
        }
    }

    /// The killer moves' ordering bonuses at `ply` (250 for the first, 200 for the second by
    /// default: [`SearchParams::killers`](super::params::SearchParams::killers)).
    fn killer_bonuses(&self, ply: usize) -> [(u16, i32); 2] {
        let [k0, k1] = self.s.killers[ply];
        // The two differ unless both are NO_MOVE (a new first killer pushes the old one down).
        debug_assert!(k0 != k1 || k0 == NO_MOVE);
        let [b0, b1] = self.params.killers;
        [(k0, b0), (k1, b1)]
    }

    /// Adds (`sign` 1) or takes back (-1) the killers' bonuses to the side to move's ordering
    /// bonuses.
    fn apply_killer_bonuses(&mut self, ply: usize, sign: i32) {
        let me = self.pos.side();
        for (k, b) in self.killer_bonuses(ply) {
            if k != NO_MOVE {
                self.s.history.bonus[me][k as usize] += sign * b;
            }
        }
    }

    /// Whether `tt_move` is certain to be among the moves [`Run::generate`] would list here,
    /// first (its ordering score, `1 << 28`, is above any other). Then the node can search it
    /// before generating the others, and skip the generation when it cuts: the tree searched is
    /// the same (the same node counts), only cheaper. Checked only where `generate` lists every
    /// near empty cell: no five and no open three of the opponent to answer.
    #[inline]
    pub(super) fn tt_move_first(&self, tt_move: u16, forced: bool) -> bool {
        let p = &self.pos;
        let c = tt_move as usize;
        !forced
            && tt_move != NO_MOVE
            && p.stones() > 0
            && (self.small || p.count(1 - p.side(), C_FLEX4) == 0)
            && c < p.padded_len()
            && p.is_empty(c)
            && (self.small || p.is_near(c))
    }

    /// [`Run::generate`] for a node that has searched its transposition-table move first
    /// (journal entries from `mark` on): with the history values of before that search, so the
    /// list and its scores are the ones generating first would have given. The TT move is
    /// swapped to the front, as the first step of the selection sort would have done.
    pub(super) fn generate_after_tt_move(
        &mut self,
        out: &mut Vec<(u16, i32)>,
        ply: usize,
        tt_move: u16,
        mark: usize,
    ) {
        let n = self.s.journal.len();
        for k in (mark..n).rev() {
            let (side, c, old, _) = self.s.journal[k];
            self.s.history.set(side as usize, c as usize, old);
        }
        let _ = self.generate(out, ply, tt_move);
        for k in mark..n {
            let (side, c, _, new) = self.s.journal[k];
            self.s.history.set(side as usize, c as usize, new);
        }
        let top = out
            .iter()
            .position(|&(m, _)| m == tt_move)
            .expect("tt_move_first checked that generate lists the TT move");
        out.swap(0, top);
        self.release_journal();
    }

    /// A node stops waiting on its TT move.
    #[inline]
    pub(super) fn release_journal(&mut self) {
        self.s.journal_users -= 1;
        if self.s.journal_users == 0 {
            self.s.journal.clear();
        }
    }

    /// Candidate moves of the side to move with their ordering scores, and on the common path
    /// the index of the first of the best (the first step of the selection sort, done while
    /// generating).
    pub(super) fn generate(
        &mut self,
        out: &mut Vec<(u16, i32)>,
        ply: usize,
        tt_move: u16,
    ) -> Option<usize> {
        self.apply_killer_bonuses(ply, 1);
        let top = self.generate_scored(out, tt_move, ply);
        self.apply_killer_bonuses(ply, -1);
        top
    }

    /// [`Run::generate`] with the killers' bonuses in place.
    fn generate_scored(
        &self,
        out: &mut Vec<(u16, i32)>,
        tt_move: u16,
        ply: usize,
    ) -> Option<usize> {
        out.clear();
        let me = self.pos.side();
        let opp = 1 - me;
        let order = self.order_scores(tt_move);
        // Below the root the opponent's wins all pass through his last stone, if his last move
        // was one: a win he had before it, he would have played.
        let last = self.pos.history().last().map(|&c| c as usize);
        let opp_wins = match last {
            Some(c) if ply > 0 && self.pos.cell(c) == opp as u8 + 1 => {
                threats::win_cells_after(&self.pos, opp, c)
            }
            _ => threats::win_cells(&self.pos, opp),
        };
        if !opp_wins.is_empty() {
            for &c in threats::defences(&self.pos, opp, &opp_wins).as_slice() {
                out.push((c, order(c as usize)));
            }
            return None;
        }
        if self.pos.stones() == 0 && !self.small {
            out.push((self.pos.centre() as u16, 0));
            return None;
        }
        // Facing an open three (or a double-four square): block it or make a four.
        if self.pos.count(opp, C_FLEX4) > 0 && !self.small {
            let (mut blocks, mut flex) = (CellList::new(), CellList::new());
            for &c in self.pos.board_cells() {
                let c = c as usize;
                if self.pos.is_empty(c) && self.pos.class(c, opp) >= C_FOUR {
                    blocks.push(c);
                    if self.pos.class(c, opp) == C_FLEX4 {
                        flex.push(c);
                    }
                }
            }
            let mut any = false;
            for &c in blocks.as_slice() {
                if self
                    .pos
                    .removes_all(c as usize, me, opp, flex.as_slice(), C_FLEX4)
                {
                    any = true;
                    out.push((c, order(c as usize)));
                }
            }
            if any {
                // A four needs a stone of ours next to it: only cells near a stone make one.
                self.pos.for_each_near_empty(|c| {
                    if threats::is_four_move(&self.pos, c, me)
                        && !out.iter().any(|&(m, _)| m as usize == c)
                    {
                        out.push((c as u16, order(c)));
                    }
                });
                return None;
            }
        }
        if self.small {
            for &c in self.pos.board_cells() {
                let cu = c as usize;
                if self.pos.is_empty(cu) {
                    out.push((c, order(cu)));
                }
            }
            None
        } else {
            // Written in place: a push's capacity check cost more than the scoring.
            out.reserve(self.pos.size());
            let buf = out.spare_capacity_mut();
            let (mut n, mut top, mut best) = (0, 0, i32::MIN);
            // `keep`: the quiet move best by the cell values, lifted to the front of the quiet
            // ones below.
            let keep = self.params.keep > 0 && self.params.policy > 0;
            let (defence, tactical) = (self.params.defence, self.params.tactical);
            let (mut kept, mut kept_value) = (usize::MAX, i32::MIN);
            self.pos.for_each_near_empty(|c| {
                let s = order(c);
                buf[n].write((c as u16, s));
                top = pick(s > best, n, top);
                best = best.max(s);
                if keep {
                    let v = self.pos.state(c).order_value(me, defence);
                    if v < tactical && v > kept_value && c as u16 != tt_move {
                        (kept, kept_value) = (n, v);
                    }
                }
                n += 1;
            });
            // SAFETY: the first `n` entries were just written.
            unsafe { out.set_len(n) };
            if kept != usize::MAX {
                let c = out[kept].0 as usize;
                let lifted =
                    tactical - 1 + weighted(self.s.history.bonus[me][c], self.params.bonuses);
                if lifted > out[kept].1 {
                    out[kept].1 = lifted;
                    if lifted > best {
                        top = kept;
                    }
                }
            }
            (n > 0).then_some(top)
        }
    }
}
