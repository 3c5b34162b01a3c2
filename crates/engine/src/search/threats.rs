//! Threat logic shared by the main search and the threat solver: where a player wins now, which
//! moves stop a five (under the caro rules there can be more than the completion square), and a
//! VCF solver ("victory by continuous fours").
//!
//! VCF is the simplest threat-space search (L. V. Allis, *Searching for Solutions in Games and
//! Artificial Intelligence*, 1994, ch. 6; chessprogramming.org/Threat-Space_Search): the attacker
//! only plays fours, so each defender reply is forced and the tree stays narrow enough to search
//! twenty or more fours deep. A win found here is a proof, not an estimate: every defence that
//! stops the five is tried, and a defender who can make five himself refutes the four.
//!
//! Everything here decides wins on the real stones ([`Position::wins_at`]); the pattern classes
//! only choose which cells to look at.

use super::position::{Position, C_FLEX4, C_FOUR, C_FOUR_THREE, C_WIN};

/// A list of padded-array cell indices, on the stack: no allocation in the search.
#[derive(Clone)]
pub struct CellList {
    len: usize,
    cells: [u16; 64],
}

impl CellList {
    /// An empty list.
    pub const fn new() -> CellList {
        CellList {
            len: 0,
            cells: [0; 64],
        }
    }
    /// Adds `c` unless present (or the list is full: the extra cells are never needed in
    /// practice, the lists hold a handful of threat squares).
    #[inline]
    pub fn push(&mut self, c: usize) {
        let c = c as u16;
        if self.len < self.cells.len() && !self.as_slice().contains(&c) {
            self.cells[self.len] = c;
            self.len += 1;
        }
    }
    /// The cells.
    #[inline]
    pub fn as_slice(&self) -> &[u16] {
        &self.cells[..self.len]
    }
    /// Whether the list holds as many cells as it can (a push would be dropped).
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == self.cells.len()
    }
    /// Whether the list is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Number of cells.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    /// Sorts the cells by `key` (stable, no allocation).
    pub fn sort_by_key<K: Ord>(&mut self, mut key: impl FnMut(usize) -> K) {
        // Insertion sort: the lists are short.
        for i in 1..self.len {
            let mut j = i;
            while j > 0 && key(self.cells[j] as usize) < key(self.cells[j - 1] as usize) {
                self.cells.swap(j, j - 1);
                j -= 1;
            }
        }
    }
}

impl Default for CellList {
    fn default() -> Self {
        CellList::new()
    }
}

/// The cells where player `p` makes a winning line now.
pub fn win_cells(pos: &Position, p: usize) -> CellList {
    let mut out = CellList::new();
    if pos.count(p, C_WIN) == 0 {
        return out;
    }
    // A five through `c` needs a stone of `p` next to it: only cells near a stone can win.
    pos.for_each_near_empty(|c| {
        if pos.class(c, p) == C_WIN && pos.wins_at(c, p) {
            out.push(c);
        }
    });
    out
}

/// [`win_cells`] where `p`'s stone on `last` is the last one placed and `p` could not win on
/// the move before it (at a node of the main search below the root, where a win on the board is
/// always played at once, and `p`'s last move was a stone, not a pass): then every win of `p`
/// passes through `last`, and the cells on its lines within `k - 1` of it (32 for five in a
/// row) are all that need a look, instead of every empty cell near a stone. The same cells in
/// the same order as [`win_cells`].
pub fn win_cells_after(pos: &Position, p: usize, last: usize) -> CellList {
    if pos.count(p, C_WIN) == 0 {
        return CellList::new();
    }
    let mut out = win_cells_around(pos, last, p, pos.k() as usize);
    // The board scan's order: by index.
    out.sort_by_key(|c| c);
    debug_assert_eq!(out.as_slice(), win_cells(pos, p).as_slice());
    out
}

/// The cells where `p` wins now among those on the lines through `c` (after `p` played `c`,
/// every new win passes through it).
pub fn win_cells_around(pos: &Position, c: usize, p: usize, k: usize) -> CellList {
    let mut out = CellList::new();
    for d in pos.dirs() {
        for off in 1..k {
            for j in [c + off * d, c - off * d] {
                // The tables never miss a five, so they filter the exact test.
                if pos.is_empty(j) && pos.class(j, p) == C_WIN && pos.wins_at(j, p) {
                    out.push(j);
                }
            }
        }
    }
    out
}

/// The moves of the side to move that leave `attacker` (the opponent) without a win on any of
/// `wins`. Under freestyle and exact five only the win squares themselves can; under the caro
/// rules a stone just beyond the would-be five also does, by blocking it at both ends.
pub fn defences(pos: &Position, attacker: usize, wins: &CellList) -> CellList {
    if !pos.rule().blocked_ends_matter() {
        // Without the caro rule a stone can only stop the five it stands on (it cannot shorten
        // or lengthen another run of the attacker's), so there is nothing to try.
        return if wins.len() == 1 {
            wins.clone()
        } else {
            CellList::new()
        };
    }
    let mut cand = CellList::new();
    for &w in wins.as_slice() {
        cand.push(w as usize);
    }
    if pos.rule().blocked_ends_matter() {
        for &w in wins.as_slice() {
            let w = w as usize;
            let dirs = pos.five_dirs(w, attacker);
            for (d, step) in pos.dirs().into_iter().enumerate() {
                if dirs & (1 << d) == 0 {
                    continue;
                }
                for off in 1..=5 {
                    for j in [w + off * step, w - off * step] {
                        if pos.is_empty(j) {
                            cand.push(j);
                        }
                    }
                }
            }
        }
    }
    // A defence is tested on the stones without playing it (a play and an undo would
    // recompute the patterns of eighty cells): see `Position::wins_at_blocked`.
    let mut out = CellList::new();
    for &m in cand.as_slice() {
        let m = m as usize;
        let stopped = wins
            .as_slice()
            .iter()
            .all(|&w| w as usize == m || !pos.wins_at_blocked(w as usize, attacker, m));
        if stopped {
            out.push(m);
        }
    }
    out
}

/// Whether a stone of `p` on `c` makes a four (some line then has a winning square).
#[inline]
pub fn is_four_move(pos: &Position, c: usize, p: usize) -> bool {
    matches!(pos.class(c, p), C_FOUR | C_FOUR_THREE | C_FLEX4)
}

/// A VCF solver with a node budget.
pub struct Vcf {
    /// Nodes visited.
    pub nodes: u64,
    /// Give up after this many nodes.
    pub limit: u64,
    k: usize,
}

impl Vcf {
    /// A solver that gives up after `limit` nodes, for win length `k`.
    pub fn new(limit: u64, k: usize) -> Vcf {
        Vcf { nodes: 0, limit, k }
    }

    /// If the side to move wins by continuous fours within `depth` of its own moves, the first
    /// move and the number of plies to the five.
    pub fn solve(&mut self, pos: &mut Position, depth: u32) -> Option<(usize, u32)> {
        self.nodes += 1;
        let me = pos.side();
        let opp = 1 - me;
        if let Some(&w) = win_cells(pos, me).as_slice().first() {
            return Some((w as usize, 1));
        }
        if depth == 0 || self.nodes > self.limit {
            return None;
        }
        let opp_wins = win_cells(pos, opp);
        let fours = pos.count(me, C_FOUR) + pos.count(me, C_FOUR_THREE) + pos.count(me, C_FLEX4);
        if fours == 0 {
            return None; // the counters say there is no four to play: skip the scan
        }
        let mut cand = CellList::new();
        if opp_wins.is_empty() {
            for &c in pos.board_cells() {
                let c = c as usize;
                if pos.is_empty(c) && is_four_move(pos, c, me) {
                    cand.push(c);
                }
            }
        } else {
            // A five is threatened: only a defence that is also a four keeps the initiative.
            for &c in defences(pos, opp, &opp_wins).as_slice() {
                if is_four_move(pos, c as usize, me) {
                    cand.push(c as usize);
                }
            }
        }
        // Strongest fours first: a four-three or an open four usually ends it.
        cand.sort_by_key(|c| std::cmp::Reverse(pos.class(c, me)));
        for &c in cand.as_slice() {
            let c = c as usize;
            pos.play(c);
            let result = self.defend(pos, c, me, depth);
            pos.undo();
            if let Some(plies) = result {
                return Some((c, plies + 1));
            }
            if self.nodes > self.limit {
                break;
            }
        }
        None
    }

    /// The defender's turn after the attacker's four on `c`: the plies to the attacker's five
    /// if every defence loses.
    fn defend(&mut self, pos: &mut Position, c: usize, att: usize, depth: u32) -> Option<u32> {
        let def = 1 - att;
        if !win_cells(pos, def).is_empty() {
            return None; // the defender makes five first
        }
        let wins = win_cells_around(pos, c, att, self.k);
        if wins.is_empty() {
            return None; // not a real four (the window tables guessed)
        }
        let defs = defences(pos, att, &wins);
        let mut longest = 1;
        for &m in defs.as_slice() {
            pos.play(m as usize);
            let r = self.solve(pos, depth - 1);
            pos.undo();
            longest = longest.max(r?.1 + 1);
        }
        Some(longest)
    }
}
