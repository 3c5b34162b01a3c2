//! The search's own board: the stones in the padded layout of [`Board`], plus everything the
//! evaluation and move generation read, kept up to date incrementally as stones are placed and
//! removed (never recomputed from scratch inside the search).
//!
//! Per empty cell and per player it keeps the line [`Level`] in each of the four directions (from
//! the window keys of [`pattern`]), a combined threat [`Class`] and a value; per player the sum
//! of the values over all empty cells (the evaluation) and how many empty cells are of each class
//! (so "can I win now?" is a counter test). A placed stone changes the windows of at most ten
//! cells per direction, so a move costs about eighty table lookups.
//!
//! It never allocates after construction: play and undo only write into fixed arrays.

use std::sync::{Arc, OnceLock};

use crate::game::PAD;
use crate::rules::caro::{self, End};
use crate::rules::Rule;
use crate::{zobrist, Board, Move, Player};

use super::pattern::{self, Level, Table, B4, F3, F3S, F4, F5, RADIUS};
use super::policy::OrderTable;
use super::weights::{Weights, BONUSES, LEVELS, PLUSES};

/// The combined threat a stone on a cell would make for one player, strongest last.
pub type Class = u8;
/// Nothing notable.
pub const C_NONE: Class = 0;
/// Some two or blocked three: worth developing.
pub const C_DEV: Class = 1;
/// One open three.
pub const C_THREE: Class = 2;
/// One four.
pub const C_FOUR: Class = 3;
/// Two open threes (a double three).
pub const C_THREE_THREE: Class = 4;
/// A four and an open three.
pub const C_FOUR_THREE: Class = 5;
/// An open four or two fours: a win next move unless the caro rules offer a block.
pub const C_FLEX4: Class = 6;
/// Five: wins now.
pub const C_WIN: Class = 7;
/// Number of classes.
pub const CLASSES: usize = 8;

/// Hash change of a pass (a fixed random number).
const PASS_KEY: u64 = 0x5D58_8B65_6C07_8965;

/// A cell's class for one player from its four line levels, how many of the lines are
/// developing ones (level `F2` or `B3`, a two or a blocked three), and whether one of them is a
/// strong open three (`F3S`).
fn class_of(levels: [Level; 4]) -> (Class, u32, bool) {
    let (mut n5, mut nf4, mut n4, mut n3, mut dev, mut strong) = (0, 0, 0, 0, 0, false);
    for l in levels {
        match l {
            F5 => n5 += 1,
            F4 => nf4 += 1,
            B4 => n4 += 1,
            F3 => n3 += 1,
            F3S => {
                n3 += 1;
                strong = true;
            }
            l if l >= pattern::F2 => dev += 1,
            _ => {}
        }
    }
    let class = if n5 > 0 {
        C_WIN
    } else if nf4 > 0 || n4 >= 2 {
        C_FLEX4
    } else if n4 == 1 && n3 >= 1 {
        C_FOUR_THREE
    } else if n3 >= 2 {
        C_THREE_THREE
    } else if n4 == 1 {
        C_FOUR
    } else if n3 == 1 {
        C_THREE
    } else if dev > 0 {
        C_DEV
    } else {
        C_NONE
    };
    (class, dev, strong)
}

/// A cell's class and value for one player from its four line levels: the level values, the
/// class value and the cross-line term.
fn combine_slow(levels: [Level; 4], w: &Weights) -> (Class, i32) {
    let value: i32 = levels.iter().map(|&l| w.level[l as usize]).sum();
    let (class, dev, strong) = class_of(levels);
    (
        class,
        value + w.class[class as usize] + cross_term(class, dev, strong, &w.plus),
    )
}

/// The cross-line term ([`Weights::plus`], here `plus`) in the value of a cell whose four lines
/// have levels `levels`: a class that meets developing lines elsewhere on the cell (a double
/// two, an open three or a four with a two or a blocked three on another line), and an open
/// three that is a strong one (`F3S`).
pub fn cross_line(levels: [Level; 4], plus: &[i32; PLUSES]) -> i32 {
    let (class, dev, strong) = class_of(levels);
    cross_term(class, dev, strong, plus)
}

/// [`cross_line`] from the cell's class, its number of developing lines and whether one of its
/// lines is a strong open three ([`class_of`]).
fn cross_term(class: Class, dev: u32, strong: bool, plus: &[i32; PLUSES]) -> i32 {
    let strong_three = if class == C_THREE && strong {
        plus[3]
    } else {
        0
    };
    strong_three
        + match class {
            C_DEV if dev >= 2 => plus[0],
            C_THREE if dev >= 1 => plus[1],
            C_FOUR if dev >= 1 => plus[2],
            _ => 0,
        }
}

/// What a position evaluates with, made from [`Weights`] once: the class and value of every
/// combination of four levels (`combine_slow` for each, 11^4 entries, 117 KB), the
/// evaluation's class terms and its threat terms. Shared by every position of an engine (an
/// [`Arc`]); the built weights' are made once per process ([`Tables::built`]).
#[derive(Clone, Debug)]
pub struct Tables {
    combos: Box<[(Class, i32)]>,
    /// The evaluation's own value of a cell's class: the side to move's
    /// ([`Weights::eval_class`]) and the opponent's ([`Weights::eval_class_opp`]).
    eval_class: [[i32; CLASSES]; 2],
    bonus: [i32; BONUSES],
    plus: [i32; PLUSES],
    /// The learnt ordering of quiet moves ([`OrderTable::built`], of `search/policy.txt`).
    order: Arc<OrderTable>,
}

impl Tables {
    /// The tables of weights `w`.
    pub fn new(w: &Weights) -> Tables {
        let combos = (0..LEVELS.pow(4))
            .map(|n| combine_slow(combo_levels(n), w))
            .collect();
        Tables {
            combos,
            eval_class: [w.eval_class, w.eval_class_opp],
            bonus: w.bonus,
            plus: w.plus,
            order: OrderTable::built(),
        }
    }

    /// The learnt ordering of quiet moves.
    #[inline]
    pub fn order(&self) -> &OrderTable {
        &self.order
    }

    /// The tables of the built-in weights (`search/weights.txt`), made on first use.
    pub fn built() -> Arc<Tables> {
        static BUILT: OnceLock<Arc<Tables>> = OnceLock::new();
        BUILT
            .get_or_init(|| Arc::new(Tables::new(Weights::built())))
            .clone()
    }
}

/// Weight of direction `d`'s level in an index of [`Tables`]' combinations: the four levels are the
/// digits of the index in base [`LEVELS`], so one direction's change is one addition.
const DIGIT: [u16; 4] = {
    let b = LEVELS as u16;
    [b * b * b, b * b, b, 1]
};

/// The four levels (direction 0 first) of combination index `n`, whose digits in base
/// [`LEVELS`] they are, direction 0 the highest.
pub fn combo_levels(n: usize) -> [Level; 4] {
    DIGIT.map(|w| (n / w as usize % LEVELS) as Level)
}

/// The index in [`Tables`]' combinations of player `p`'s levels in the four `lines` pairs.
#[inline]
fn combine_index(lines: [u16; 4], p: usize) -> u16 {
    (0..4)
        .map(|d| DIGIT[d] * ((lines[d] >> (8 * p)) & 0xFF))
        .sum()
}

/// Everything derived from the stones, in comparable form (see [`Position::snapshot`]): cell
/// states, whether a stone is near, value totals, class counts and the hash.
pub type Snapshot = (Vec<CellState>, Vec<u8>, [i32; 2], [[u16; CLASSES]; 2], u64);

/// What is kept per padded-array index.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct CellState {
    /// Window keys per direction, from X's point of view.
    pub keys: [u32; 4],
    /// Line levels per direction, X's in the low byte and O's in the high byte (meaningful on
    /// empty cells); see [`Table::pair`](pattern::Table::pair).
    pub lines: [u16; 4],
    /// Per player, the index of the four levels in the class and value table.
    pub combo: [u16; 2],
    /// Class per player.
    pub class: [Class; 2],
    /// Value per player.
    pub value: [i32; 2],
}

impl CellState {
    /// The move ordering's score of this empty cell for player `me` by the cell values: its value
    /// plus `defence / 20` of the opponent's. The search orders by it, and the learnt ordering's
    /// fit calls a move quiet by it ([`policy::sample`](crate::policy::sample)).
    #[inline]
    pub fn order_value(&self, me: usize, defence: i32) -> i32 {
        debug_assert!(self.value[1 - me] >= 0 && defence >= 0);
        // Values are never negative: an unsigned division is the same and cheaper.
        self.value[me] + (self.value[1 - me] as u32 * defence as u32 / 20) as i32
    }
}

/// The search's incremental board. See the module docs.
#[derive(Clone)]
pub struct Position {
    rule: Rule,
    k: u8,
    width: usize,
    height: usize,
    stride: usize,
    dirs: [usize; 4],
    table: &'static Table,
    /// The weights' tables (class and value per combination of levels, the evaluation's terms).
    tables: Arc<Tables>,
    /// 0 empty, 1 X, 2 O, 3 wall.
    cells: Box<[u8]>,
    state: Box<[CellState]>,
    /// Occupied cells per board row (bit `x` of row `y`), for candidate moves: the cells near a
    /// stone are found with a few shifts per row instead of a count per cell kept up to date.
    rows: Vec<u64>,
    /// Board column and row of each padded index (walls: anything), as `y << 8 | x`.
    xy: Vec<u16>,
    /// Padded indices of the board's cells, row by row.
    board_cells: Vec<u16>,
    zobrist: [Vec<u64>; 2],
    hash: u64,
    history: Vec<u16>,
    /// Passes made by [`Position::pass`] and not yet taken back: each flips the side to move.
    passes: usize,
    /// Sum of values over empty cells, per player.
    total: [i32; 2],
    /// Number of empty cells of each class, per player.
    counts: [[u16; CLASSES]; 2],
    /// What each stone placed by [`Position::play`] overwrote, for [`Position::undo`]: the
    /// totals and counts, and (in `saved_states`) the states of the cells whose levels changed.
    saved: Vec<Saved>,
    /// Index and former state of each cell whose levels a [`Position::play`] changed, oldest
    /// play first. (The cells whose levels it left alone only had a key change, which undo
    /// takes back by clearing two bits.)
    saved_states: Vec<SavedCell>,
}

/// A cell state as it was before a [`Position::play`] changed its levels.
#[derive(Clone, Copy)]
struct SavedCell {
    index: u32,
    state: CellState,
}

/// Runs `$body` for each of the 40 cells within `RADIUS` of `$i` on its four lines, with `$j`
/// the cell, `$d` the direction and `$sh` the bit shift at which `$j`'s window key holds `$i`.
/// Unrolled by hand so that every shift is a constant (`clear_keys` and `update_lines`, the
/// engine's hottest code).
macro_rules! around {
    ($self:ident, $i:expr, |$j:ident, $d:ident, $sh:ident| $body:expr) => {{
        const _: () = assert!(RADIUS == 5);
        let i = $i;
        for $d in 0..4 {
            let step = $self.dirs[$d];
            around!(@pair $j, $sh, i, step, 1, $body);
            around!(@pair $j, $sh, i, step, 2, $body);
            around!(@pair $j, $sh, i, step, 3, $body);
            around!(@pair $j, $sh, i, step, 4, $body);
            around!(@pair $j, $sh, i, step, 5, $body);
        }
    }};
    // The cell `off` steps after `i` sees `i` at offset -off, and vice versa.
    (@pair $j:ident, $sh:ident, $i:expr, $step:expr, $off:literal, $body:expr) => {
        for ($j, $sh) in [
            ($i + $off * $step, const { pattern::shift(-$off) }),
            ($i - $off * $step, const { pattern::shift($off) }),
        ] {
            $body;
        }
    };
}

/// Cells whose state a stone changes: the cell itself and `RADIUS` cells each way on four lines.
const TOUCHED: usize = 1 + 8 * RADIUS;

/// What a [`Position::play`] overwrote besides the cell states. Restoring it all undoes the move
/// without a table lookup; the incremental update it replaces costs about forty.
#[derive(Clone)]
struct Saved {
    /// Stones on the board before the move.
    stones: u16,
    total: [i32; 2],
    counts: [[u16; CLASSES]; 2],
    /// Length of `saved_states` before the move.
    states: u32,
}

impl Position {
    /// The position of `board`, side to move included, evaluated with the built-in weights.
    pub fn new(board: &Board) -> Position {
        Position::with_tables(board, Tables::built())
    }

    /// The position of `board`, evaluated with `tables`.
    pub fn with_tables(board: &Board, tables: Arc<Tables>) -> Position {
        let rules = board.rules();
        let (width, height) = (rules.width() as usize, rules.height() as usize);
        let stride = board.stride();
        let len = board.cells().len();
        let mut board_cells = Vec::with_capacity(width * height);
        let mut zobrist = [vec![0; len], vec![0; len]];
        let mut xy = vec![0; len];
        for y in 0..height {
            for x in 0..width {
                let mv = Move::new(x as u8, y as u8);
                let i = board.index(mv);
                board_cells.push(i as u16);
                xy[i] = (y << 8 | x) as u16;
                zobrist[0][i] = zobrist::key(Player::X, mv.x, mv.y);
                zobrist[1][i] = zobrist::key(Player::O, mv.x, mv.y);
            }
        }
        let mut pos = Position {
            rule: rules.rule(),
            k: rules.win_length(),
            width,
            height,
            stride,
            dirs: board.directions(),
            table: pattern::table(rules.rule(), rules.win_length()),
            tables,
            cells: board.cells().iter().map(|&c| c as u8).collect(),
            state: vec![CellState::default(); len].into_boxed_slice(),
            rows: vec![0; height],
            xy,
            board_cells,
            zobrist,
            hash: board.hash(),
            passes: 0,
            history: board
                .moves()
                .iter()
                .map(|&m| board.index(m) as u16)
                .collect(),
            total: [0; 2],
            counts: [[0; CLASSES]; 2],
            saved: Vec::with_capacity(width * height),
            saved_states: Vec::with_capacity(width * height * TOUCHED),
        };
        pos.recompute();
        pos
    }

    /// Rebuilds every derived table from the stones alone. Used once at construction, and by
    /// tests to check the incremental updates.
    pub fn recompute(&mut self) {
        self.total = [0; 2];
        self.counts = [[0; CLASSES]; 2];
        self.rows.iter_mut().for_each(|r| *r = 0);
        self.hash = 0;
        for i in 0..self.cells.len() {
            let mut keys = [0u32; 4];
            if self.cells[i] != 3 {
                for (d, key) in keys.iter_mut().enumerate() {
                    let step = self.dirs[d] as isize;
                    for off in (-(RADIUS as isize)..=RADIUS as isize).filter(|&o| o != 0) {
                        let j = i as isize + off * step;
                        let v = self
                            .cells
                            .get(j as usize)
                            .copied()
                            .filter(|_| j >= 0)
                            .unwrap_or(3);
                        *key |= (v as u32) << pattern::shift(off);
                    }
                }
            }
            self.state[i] = CellState {
                keys,
                ..CellState::default()
            };
        }
        for n in 0..self.board_cells.len() {
            let i = self.board_cells[n] as usize;
            match self.cells[i] {
                0 => self.refresh_all(i),
                v => {
                    self.hash ^= self.zobrist[v as usize - 1][i];
                    self.set_occupied(i, true);
                }
            }
        }
        if self.passes & 1 == 1 {
            self.hash ^= PASS_KEY;
        }
    }

    /// Everything derived, for comparing an incremental state with a recomputed one.
    pub fn snapshot(&self) -> Snapshot {
        let state = self
            .board_cells
            .iter()
            .map(|&i| {
                let mut s = self.state[i as usize];
                if self.cells[i as usize] != 0 {
                    // Levels of occupied cells are not maintained (nothing reads them).
                    s = CellState {
                        keys: s.keys,
                        ..CellState::default()
                    };
                }
                s
            })
            .collect();
        let near = self
            .board_cells
            .iter()
            .map(|&i| self.is_near(i as usize) as u8)
            .collect();
        (state, near, self.total, self.counts, self.hash)
    }

    // --- Reading. ---

    /// Whose turn it is: 0 for X, 1 for O.
    #[inline]
    pub fn side(&self) -> usize {
        (self.history.len() + self.passes) & 1
    }
    /// Number of stones on the board.
    #[inline]
    pub fn stones(&self) -> usize {
        self.history.len()
    }
    /// Whether every cell is taken.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.history.len() == self.board_cells.len()
    }
    /// Zobrist hash, the same as [`Board::hash`].
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }
    /// The hash after the side to move plays on empty cell `i`, without playing it.
    #[inline]
    pub fn hash_after(&self, i: usize) -> u64 {
        self.hash ^ self.zobrist[self.side()][i]
    }
    /// The rule variant.
    #[inline]
    pub fn rule(&self) -> Rule {
        self.rule
    }
    /// How many in a row win.
    #[inline]
    pub fn k(&self) -> u8 {
        self.k
    }
    /// Number of cells on the board.
    #[inline]
    pub fn size(&self) -> usize {
        self.board_cells.len()
    }
    /// Length of the padded array: every cell index is below it.
    #[inline]
    pub fn padded_len(&self) -> usize {
        self.cells.len()
    }
    /// Padded indices of the board's cells.
    #[inline]
    pub fn board_cells(&self) -> &[u16] {
        &self.board_cells
    }
    /// Whether the cell at `i` is empty.
    #[inline]
    pub fn is_empty(&self, i: usize) -> bool {
        self.cells[i] == 0
    }
    /// What lies at `i` (0 empty, 1 X, 2 O, 3 wall).
    #[inline]
    pub fn cell(&self, i: usize) -> u8 {
        self.cells[i]
    }
    /// Whether a stone lies within two cells of board cell `i` (in its 5x5 square).
    #[inline]
    pub fn is_near(&self, i: usize) -> bool {
        self.near_mask(i) != 0
    }

    /// The stones in the 5x5 square around board cell `i`, as row bits OR-ed over its rows.
    #[inline]
    fn near_mask(&self, i: usize) -> u64 {
        let (x, y) = ((self.xy[i] & 0xFF) as u32, (self.xy[i] >> 8) as usize);
        let cols = (0x1Fu64 << x) >> 2;
        let rows = &self.rows[y.saturating_sub(2)..(y + 3).min(self.height)];
        rows.iter().fold(0, |m, r| m | r) & cols
    }

    /// Calls `f` on every empty cell with a stone within two cells (the candidate moves), in
    /// the order of [`Position::board_cells`] (so that move lists, and ties in their ordering,
    /// are the same as a scan of the board would give).
    #[inline]
    pub fn for_each_near_empty(&self, mut f: impl FnMut(usize)) {
        let h = self.height;
        let full = (1u64 << self.width) - 1;
        // Each row's stones widened by two columns each way, then OR-ed over five rows.
        let mut wide = [0u64; 32];
        for (w, &r) in wide.iter_mut().zip(&self.rows) {
            *w = r | r << 1 | r << 2 | r >> 1 | r >> 2;
        }
        let mut base = (PAD + 1) * self.stride;
        for y in 0..h {
            let lo = y.saturating_sub(2);
            let hi = (y + 3).min(h);
            let near = wide[lo..hi].iter().fold(0, |m, w| m | w);
            let mut m = near & !self.rows[y] & full;
            while m != 0 {
                f(base + m.trailing_zeros() as usize);
                m &= m - 1;
            }
            base += self.stride;
        }
    }

    /// Marks board cell `i` as taken or free in the row bits.
    #[inline]
    fn set_occupied(&mut self, i: usize, taken: bool) {
        let (x, y) = ((self.xy[i] & 0xFF) as u32, (self.xy[i] >> 8) as usize);
        if taken {
            self.rows[y] |= 1 << x;
        } else {
            self.rows[y] &= !(1 << x);
        }
    }
    /// The derived state of cell `i`.
    #[inline]
    pub fn state(&self, i: usize) -> &CellState {
        &self.state[i]
    }
    /// The line level in direction `d` of a stone of player `p` on empty cell `i`.
    #[inline]
    pub fn level(&self, i: usize, p: usize, d: usize) -> Level {
        (self.state[i].lines[d] >> (8 * p)) as Level
    }
    /// The class of empty cell `i` for player `p`.
    #[inline]
    pub fn class(&self, i: usize, p: usize) -> Class {
        self.state[i].class[p]
    }
    /// How many empty cells have class `c` for player `p`.
    #[inline]
    pub fn count(&self, p: usize, c: Class) -> u16 {
        self.counts[p][c as usize]
    }
    /// The evaluation's class terms for the side to move: per class, its value in
    /// [`Weights::eval_class`] times the side to move's cells of that class, minus the value in
    /// [`Weights::eval_class_opp`] times the opponent's. (Not part of the cell values, so the
    /// move ordering does not see them.)
    #[inline]
    pub fn class_terms(&self) -> i32 {
        let me = self.side();
        let [mine, theirs] = &self.tables.eval_class;
        (0..CLASSES)
            .map(|c| {
                mine[c] * self.counts[me][c] as i32 - theirs[c] * self.counts[1 - me][c] as i32
            })
            .sum()
    }

    /// The learnt ordering of quiet moves this position is searched with.
    #[inline]
    pub fn order(&self) -> &OrderTable {
        self.tables.order()
    }

    /// The evaluation's threat terms ([`Weights::bonus`]).
    #[inline]
    pub fn bonus(&self) -> &[i32; BONUSES] {
        &self.tables.bonus
    }

    /// The cross-line terms in the cell values ([`Weights::plus`]).
    #[inline]
    pub fn plus(&self) -> &[i32; PLUSES] {
        &self.tables.plus
    }

    /// The sum of cell values for player `p`.
    #[inline]
    pub fn total(&self, p: usize) -> i32 {
        self.total[p]
    }
    /// The four direction steps.
    #[inline]
    pub fn dirs(&self) -> [usize; 4] {
        self.dirs
    }
    /// The board move of padded index `i`.
    #[inline]
    pub fn move_at(&self, i: usize) -> Move {
        let row = i / self.stride - PAD - 1;
        Move::new((i % self.stride) as u8, row as u8)
    }
    /// The padded index of `mv`.
    #[inline]
    pub fn index(&self, mv: Move) -> usize {
        (PAD + 1 + mv.y as usize) * self.stride + mv.x as usize
    }
    /// The centre cell of the board.
    pub fn centre(&self) -> usize {
        self.index(Move::new((self.width / 2) as u8, (self.height / 2) as u8))
    }
    /// The moves played, as padded indices.
    pub fn history(&self) -> &[u16] {
        &self.history
    }

    /// Whether a stone of player `p` on empty cell `i` wins now, decided on the real stones
    /// (the window tables cannot see the far end of a long run).
    pub fn wins_at(&self, i: usize, p: usize) -> bool {
        self.wins_at_blocked(i, p, usize::MAX)
    }

    /// [`Position::wins_at`] as if the opponent of `p` had a stone on the empty cell `block`
    /// (`usize::MAX` for none): the test of a defence without playing it. Such a stone can
    /// only change a run's end from open to blocked (it is not one of `p`'s stones, so it
    /// never lengthens or shortens a run), which matters under the caro rules alone.
    #[inline]
    pub fn wins_at_blocked(&self, i: usize, p: usize, block: usize) -> bool {
        let own = p as u8 + 1;
        self.dirs.iter().any(|&d| {
            let mut lo = i;
            while self.cells[lo - d] == own {
                lo -= d;
            }
            let mut hi = i;
            while self.cells[hi + d] == own {
                hi += d;
            }
            let end = |j: usize| match self.cells[j] {
                _ if j == block => End::Opponent,
                0 => End::Open,
                3 => End::Edge,
                _ => End::Opponent,
            };
            caro::wins(
                self.rule,
                self.k,
                ((hi - lo) / d + 1) as u8,
                end(lo - d),
                end(hi + d),
            )
        })
    }

    /// The direction (0..4) and signed offset from cell `j` to cell `c` if `c` lies on one of
    /// `j`'s lines within a window's reach (`RADIUS`), else `None`.
    #[inline]
    pub fn line_offset(&self, j: usize, c: usize) -> Option<(usize, isize)> {
        let s = self.stride as isize;
        let (jx, jy) = (j as isize % s, j as isize / s);
        let (cx, cy) = (c as isize % s, c as isize / s);
        let (dx, dy) = (cx - jx, cy - jy);
        let d = if dy == 0 {
            0
        } else if dx == 0 {
            1
        } else if dx == dy {
            2
        } else if dx == -dy {
            3
        } else {
            return None;
        };
        let off = if d == 0 { dx } else { dy };
        (off != 0 && off.unsigned_abs() <= RADIUS).then_some((d, off))
    }

    /// The class player `p` would have on empty cell `j` if the empty cell `c` held a stone of
    /// `by` (0 X, 1 O), computed from `j`'s window keys without playing: only the line through
    /// both changes. `c` must lie on one of `j`'s lines within reach ([`Position::line_offset`]).
    #[inline]
    pub fn class_if(&self, j: usize, p: usize, c: usize, by: usize) -> Class {
        match self.line_offset(j, c) {
            Some((d, off)) => self.class_with(j, p, d, off, by),
            None => self.state[j].class[p],
        }
    }

    /// [`Position::class_if`] with the line and offset from `j` to the new stone known.
    #[inline]
    fn class_with(&self, j: usize, p: usize, d: usize, off: isize, by: usize) -> Class {
        let st = &self.state[j];
        let sh = pattern::shift(off);
        let key = (st.keys[d] & !(3 << sh)) | ((by as u32 + 1) << sh);
        let new = (self.table.pair(key) >> (8 * p)) & 0xFF;
        let old = (st.lines[d] >> (8 * p)) & 0xFF;
        let combo = st.combo[p] + DIGIT[d] * new - DIGIT[d] * old;
        self.tables.combos[combo as usize].0
    }

    /// Whether a stone of `by` on empty cell `c` would leave player `p` some empty cell of class
    /// at least `class` among the cells on `c`'s lines within reach, besides `c`. (Cells off those
    /// lines keep their classes.)
    pub fn makes_class_near(&self, c: usize, by: usize, p: usize, class: Class) -> bool {
        self.dirs.iter().enumerate().any(|(d, &step)| {
            (1..=RADIUS).any(|off| {
                // From the cell `off` steps after `c`, `c` is `off` steps before, and back.
                let o = off as isize;
                [(c + off * step, -o), (c - off * step, o)]
                    .into_iter()
                    .any(|(j, o)| self.cells[j] == 0 && self.class_with(j, p, d, o, by) >= class)
            })
        })
    }

    /// Whether a stone of `by` on empty cell `c` would take every cell of `cells` (empty cells
    /// of player `p`, usually all those of some class) below class `class` for `p`. A stone
    /// never raises the other player's levels, so no new cell of that class can appear: with
    /// `cells` the full list, this is the test "after the move, `p` has no cell of `class`",
    /// without playing the move.
    pub fn removes_all(&self, c: usize, by: usize, p: usize, cells: &[u16], class: Class) -> bool {
        cells
            .iter()
            .all(|&f| f as usize == c || self.class_if(f as usize, p, c, by) < class)
    }

    /// The directions (bit set) in which a stone of `p` on `i` makes five per the tables.
    #[inline]
    pub fn five_dirs(&self, i: usize, p: usize) -> u8 {
        let mut bits = 0;
        for d in 0..4 {
            if self.level(i, p, d) == F5 {
                bits |= 1 << d;
            }
        }
        bits
    }

    // --- Playing. ---

    /// Places a stone for the side to move on empty cell `i`.
    #[inline]
    pub fn play(&mut self, i: usize) {
        let p = self.side();
        debug_assert_eq!(self.cells[i], 0);
        // Room for every state this play can save (see `patch`).
        self.saved_states.reserve(TOUCHED);
        self.saved.push(Saved {
            stones: self.history.len() as u16,
            total: self.total,
            counts: self.counts,
            states: self.saved_states.len() as u32,
        });
        self.unrefresh(i);
        self.cells[i] = p as u8 + 1;
        self.hash ^= self.zobrist[p][i];
        self.history.push(i as u16);
        self.set_occupied(i, true);
        self.update_lines::<true>(i, p as u32 + 1);
    }

    /// Passes the turn without placing a stone, for null-move pruning; take it back with
    /// [`Position::undo_pass`] before any stone placed before it. The hash changes so that the
    /// same stones with the other side to move are another position.
    #[inline]
    pub fn pass(&mut self) {
        self.passes += 1;
        self.hash ^= PASS_KEY;
    }

    /// Passes not yet taken back.
    #[inline]
    pub fn passes(&self) -> usize {
        self.passes
    }

    /// Takes back a [`Position::pass`].
    #[inline]
    pub fn undo_pass(&mut self) {
        self.passes -= 1;
        self.hash ^= PASS_KEY;
    }

    /// Takes back the last stone.
    #[inline]
    pub fn undo(&mut self) {
        let i = self.history.pop().expect("undo on an empty history") as usize;
        let p = self.side();
        self.cells[i] = 0;
        self.hash ^= self.zobrist[p][i];
        self.set_occupied(i, false);
        // Stones of the starting position were not placed by `play`: nothing was saved for
        // them, and they are taken back the slow way.
        if self
            .saved
            .last()
            .is_some_and(|s| s.stones as usize == self.history.len())
        {
            let saved = self.saved.pop().expect("just looked");
            self.clear_keys(i);
            let base = saved.states as usize;
            for saved in &self.saved_states[base..] {
                let j = saved.index as usize;
                debug_assert!(j < self.state.len());
                // SAFETY: `j` was an index of `state` when it was saved.
                unsafe { *self.state.get_unchecked_mut(j) = saved.state };
            }
            self.saved_states.truncate(base);
            self.total = saved.total;
            self.counts = saved.counts;
        } else {
            self.update_lines::<false>(i, 0);
            self.refresh_all(i);
        }
    }

    /// Takes the stone on `i` out of the window keys of the cells around it (sets it to empty),
    /// without refreshing anything: the rest of those cells' states is restored from
    /// `saved_states`.
    #[inline]
    fn clear_keys(&mut self, i: usize) {
        around!(self, i, |j, d, sh| {
            debug_assert!(j < self.state.len());
            // SAFETY: as in `patch`.
            let st = unsafe { self.state.get_unchecked_mut(j) };
            st.keys[d] &= !(3 << sh);
        });
    }

    /// Writes `v` (0 empty, 1 X, 2 O) into the windows of the cells around `i` and refreshes
    /// those that are empty; with `SAVE`, first saves the state of each cell whose levels change
    /// (for [`Position::undo`]). This is the engine's hottest code: every play runs it (an undo
    /// only when nothing was saved for the stone).
    #[inline]
    fn update_lines<const SAVE: bool>(&mut self, i: usize, v: u32) {
        around!(self, i, |j, d, sh| self.patch::<SAVE>(j, d, sh, v));
    }

    /// Writes `v` at bit `sh` of cell `j`'s key in direction `d` and, if `j` is empty,
    /// refreshes that direction's levels.
    #[inline(always)]
    fn patch<const SAVE: bool>(&mut self, j: usize, d: usize, sh: u32, v: u32) {
        debug_assert!(j < self.state.len() && d < 4);
        // SAFETY: `j` is within RADIUS < PAD steps of a board cell along a direction, so it
        // lies in the padded array (see `game.rs`), of which `state` and `cells` have the length.
        let st = unsafe { self.state.get_unchecked_mut(j) };
        let key = (st.keys[d] & !(3 << sh)) | (v << sh);
        if unsafe { *self.cells.get_unchecked(j) } != 0 {
            st.keys[d] = key;
            return;
        }
        let new = self.table.pair(key);
        let old = st.lines[d];
        if new == old {
            // Most cells a stone touches keep their levels: nothing else to update.
            st.keys[d] = key;
            return;
        }
        if SAVE {
            // Saved with the old key: a cell lies on one line through the stone, so it
            // changes (and is saved) at most once per play.
            // Written in place, with the room `play` reserved: a `push` copied the state
            // through the stack (for its reallocation path) and stalled on the copy.
            let n = self.saved_states.len();
            self.saved_states.spare_capacity_mut()[0].write(SavedCell {
                index: j as u32,
                state: *st,
            });
            // SAFETY: the entry at `n` was just written.
            unsafe { self.saved_states.set_len(n + 1) };
        }
        st.keys[d] = key;
        st.lines[d] = new;
        // Both players are updated without testing what changed (a player's level unchanged
        // gives the same combination, class and value: no-op writes). Those tests were
        // mispredicted branches.
        for p in 0..2 {
            let (n, o) = ((new >> (8 * p)) & 0xFF, (old >> (8 * p)) & 0xFF);
            let combo = st.combo[p] + DIGIT[d] * n - DIGIT[d] * o;
            st.combo[p] = combo;
            debug_assert!((combo as usize) < self.tables.combos.len());
            // SAFETY: levels are below LEVELS, so a combination index is below LEVELS^4, the
            // table's length.
            let (class, value) = unsafe { *self.tables.combos.get_unchecked(combo as usize) };
            self.total[p] += value - st.value[p];
            st.value[p] = value;
            self.counts[p][st.class[p] as usize & (CLASSES - 1)] -= 1;
            self.counts[p][class as usize & (CLASSES - 1)] += 1;
            st.class[p] = class;
        }
    }

    /// Removes empty cell `i`'s contribution before it is filled.
    #[inline]
    fn unrefresh(&mut self, i: usize) {
        let st = &self.state[i];
        for p in 0..2 {
            self.total[p] -= st.value[p];
            self.counts[p][st.class[p] as usize] -= 1;
        }
    }

    /// Recomputes every direction of empty cell `i`, which has no contribution yet (it was just
    /// emptied, or at construction).
    fn refresh_all(&mut self, i: usize) {
        let st = &mut self.state[i];
        for d in 0..4 {
            st.lines[d] = self.table.pair(st.keys[d]);
        }
        for p in 0..2 {
            let combo = combine_index(st.lines, p);
            let (class, value) = self.tables.combos[combo as usize];
            st.combo[p] = combo;
            st.class[p] = class;
            st.value[p] = value;
            self.total[p] += value;
            self.counts[p][class as usize] += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Rule, Rules};
    use proptest::prelude::*;

    #[test]
    fn cross_line_terms_go_to_a_threat_that_meets_a_developing_line() {
        use pattern::{B2, B3, F2, NONE};
        let plus = [10, 20, 30, 40];
        let term = |levels| cross_line(levels, &plus);
        // A double two (or a two and a blocked three), and not a lone two or a two beside a
        // blocked two.
        assert_eq!(term([F2, F2, NONE, NONE]), 10);
        assert_eq!(term([B3, NONE, F2, B2]), 10);
        assert_eq!(term([F2, NONE, NONE, NONE]), 0);
        assert_eq!(term([F2, B2, B2, NONE]), 0);
        // An open three or a four with a developing line beside it, and not alone.
        assert_eq!(term([F3, NONE, NONE, B3]), 20);
        assert_eq!(term([F3, NONE, NONE, B2]), 0);
        assert_eq!(term([NONE, B4, F2, NONE]), 30);
        assert_eq!(term([NONE, B4, NONE, NONE]), 0);
        // A strong open three, alone or beside a developing line.
        assert_eq!(term([F3S, NONE, NONE, B2]), 40);
        assert_eq!(term([NONE, F3S, F2, NONE]), 60);
        // The stronger classes have terms of their own and get none.
        assert_eq!(term([F3, F3, F2, NONE]), 0);
        assert_eq!(term([B4, F3, F2, NONE]), 0);
        assert_eq!(term([F3S, F3, F2, NONE]), 0);
        assert_eq!(term([F4, F2, F2, NONE]), 0);
        // The term is part of the cell's value in the combination table.
        let mut w = *Weights::built();
        w.plus = plus;
        let base = combine_slow(
            [F3, B3, NONE, NONE],
            &Weights {
                plus: [0; PLUSES],
                ..w
            },
        );
        assert_eq!(
            combine_slow([F3, B3, NONE, NONE], &w),
            (C_THREE, base.1 + 20)
        );
    }

    /// Plays `script` (cell choices among the empty cells, negative = undo) on a `size` board
    /// and checks after every step that the incremental state equals a recomputation. Halfway
    /// the position is rebuilt from a board with its stones, so that later undos also take back
    /// stones it did not play (nothing saved for them: `undo`'s slow path).
    fn check(rules: Rules, script: &[i16]) -> Result<(), TestCaseError> {
        let board = Board::new(rules);
        let mut pos = Position::new(&board);
        for (n, &step) in script.iter().enumerate() {
            if n == script.len() / 2 {
                let mut board = Board::new(rules);
                for &i in pos.history() {
                    board.play_unchecked(pos.move_at(i as usize));
                }
                pos = Position::new(&board);
            }
            if step < 0 {
                if pos.stones() > 0 {
                    pos.undo();
                }
            } else {
                let empty = empty_cells(&pos);
                if empty.is_empty() {
                    continue;
                }
                pos.play(empty[step as usize % empty.len()]);
            }
            let mut fresh = pos.clone();
            fresh.recompute();
            prop_assert_eq!(pos.snapshot(), fresh.snapshot());
            check_trials(&mut pos)?;
        }
        Ok(())
    }

    /// The empty cells of the board, in index order.
    fn empty_cells(pos: &Position) -> Vec<usize> {
        pos.board_cells()
            .iter()
            .map(|&c| c as usize)
            .filter(|&c| pos.is_empty(c))
            .collect()
    }

    /// The move-free tests agree with playing the move: `class_if` with the class after the
    /// move, `removes_all` and `makes_class_near` with the class counts after it.
    fn check_trials(pos: &mut Position) -> Result<(), TestCaseError> {
        if pos.is_full() {
            return Ok(());
        }
        let empty = empty_cells(pos);
        let me = pos.side();
        // A few moves spread over the board.
        for &c in empty.iter().step_by(empty.len() / 3 + 1) {
            let mut before = Vec::new();
            for &j in &empty {
                if j != c && pos.line_offset(j, c).is_some() {
                    before.push((j, [pos.class_if(j, 0, c, me), pos.class_if(j, 1, c, me)]));
                }
            }
            let lists: Vec<Vec<u16>> = (0..CLASSES as u8)
                .map(|k| {
                    empty
                        .iter()
                        .filter(|&&j| pos.class(j, 1 - me) >= k)
                        .map(|&j| j as u16)
                        .collect()
                })
                .collect();
            let removes: Vec<bool> = (0..CLASSES as u8)
                .map(|k| pos.removes_all(c, me, 1 - me, &lists[k as usize], k))
                .collect();
            let makes: Vec<bool> = (0..CLASSES as u8)
                .map(|k| pos.makes_class_near(c, me, me, k))
                .collect();
            pos.play(c);
            for (j, classes) in before {
                prop_assert_eq!(classes, [pos.class(j, 0), pos.class(j, 1)]);
            }
            for k in 1..CLASSES as u8 {
                let left = (k..CLASSES as u8).any(|q| pos.count(1 - me, q) > 0);
                prop_assert_eq!(removes[k as usize], !left, "class {}", k);
                let near = empty
                    .iter()
                    .any(|&j| j != c && pos.line_offset(j, c).is_some() && pos.class(j, me) >= k);
                prop_assert_eq!(makes[k as usize], near, "class {}", k);
            }
            pos.undo();
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn incremental_patterns_equal_a_recomputation(
            rule in 0usize..Rule::ALL.len(),
            script in prop::collection::vec(-3i16..200, 1..120),
        ) {
            let rules = Rules::caro(9, 9, Rule::ALL[rule]).unwrap();
            check(rules, &script)?;
        }

        #[test]
        fn incremental_patterns_on_small_boards(
            script in prop::collection::vec(-2i16..50, 1..40),
        ) {
            check(Rules::tictactoe(), &script)?;
            check(Rules::mnk(7, 6, 4).unwrap(), &script)?;
        }
    }

    #[test]
    fn hash_matches_the_board() {
        let mut board = Board::new(Rules::caro_default());
        for (x, y) in [(7, 7), (8, 8), (6, 8), (9, 9)] {
            board.play(Move::new(x, y));
        }
        let pos = Position::new(&board);
        assert_eq!(pos.hash(), board.hash());
    }
}
