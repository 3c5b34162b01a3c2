//! The game state: a board of any size from [`Rules`], whose turn it is, the move history, the
//! Zobrist hash and the result, with three ways to play a move (checked [`Board::try_play`], the
//! panicking [`Board::play`], and [`Board::play_unchecked`] for the search) and an exact
//! [`Board::undo`].
//!
//! Win detection is incremental: after each move only the four lines through that move are
//! scanned, in both directions, and the winning run's cells are kept for the players to see.
//!
//! The cells live in a padded one-dimensional array (a "mailbox"): every board row is followed by
//! [`PAD`] wall cells and there are `PAD + 1` wall rows above and `PAD` below, so that walking up
//! to [`PAD`] steps from any cell in any of the four [`Board::directions`] lands on a wall rather
//! than wrapping or leaving the array. Evaluation code scans lines without bounds checks.

use std::fmt;

use crate::rules::caro::{self, End};
use crate::rules::Rules;
use crate::zobrist;

/// How many wall cells surround the board in every direction.
pub const PAD: usize = 6;

/// A side. X moves first (black in gomoku terms).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Player {
    /// The first player (black).
    X,
    /// The second player (white).
    O,
}

impl Player {
    /// The other side.
    #[inline]
    pub fn opponent(self) -> Player {
        match self {
            Player::X => Player::O,
            Player::O => Player::X,
        }
    }
    /// 0 for X, 1 for O: for indexing per-player tables.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
    /// The cell holding this player's stone.
    #[inline]
    pub fn cell(self) -> Cell {
        match self {
            Player::X => Cell::X,
            Player::O => Cell::O,
        }
    }
    /// `"x"` or `"o"`, the wire name of the seat.
    pub fn as_str(self) -> &'static str {
        match self {
            Player::X => "x",
            Player::O => "o",
        }
    }
}

impl fmt::Display for Player {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a cell of the padded array holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Cell {
    /// No stone.
    Empty = 0,
    /// X's stone.
    X = 1,
    /// O's stone.
    O = 2,
    /// Outside the board.
    Wall = 3,
}

impl Cell {
    /// The owner of a stone, `None` for empty cells and walls.
    #[inline]
    pub fn player(self) -> Option<Player> {
        match self {
            Cell::X => Some(Player::X),
            Cell::O => Some(Player::O),
            _ => None,
        }
    }
}

/// A cell of the board: `x` is the column from the left, `y` the row from the top, both from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move {
    /// Column, from 0 at the left.
    pub x: u8,
    /// Row, from 0 at the top.
    pub y: u8,
}

impl Move {
    /// The cell at column `x`, row `y`.
    #[inline]
    pub const fn new(x: u8, y: u8) -> Move {
        Move { x, y }
    }
}

impl fmt::Display for Move {
    /// Gomocup notation, `x,y`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", self.x, self.y)
    }
}

/// Where a game stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Moves are still to be played.
    Ongoing,
    /// A player made a winning line ([`Board::winning_line`] lists it).
    Won(Player),
    /// The board is full and nobody won.
    Draw,
}

/// Why [`Board::try_play`] refused a move. The state is unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// The cell is not on the board.
    #[error("({x}, {y}) is outside the board")]
    OutOfBounds {
        /// Requested column.
        x: i64,
        /// Requested row.
        y: i64,
    },
    /// The cell already holds a stone.
    #[error("({x}, {y}) is already taken")]
    Occupied {
        /// Requested column.
        x: u8,
        /// Requested row.
        y: u8,
    },
    /// The game has ended.
    #[error("the game is over")]
    GameOver,
}

/// Why [`Board::set_up`] refused a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// A stone is off the board or on a taken cell.
    #[error(transparent)]
    Move(#[from] MoveError),
    /// X must have as many stones as O, or one more.
    #[error("{x} X stones and {o} O stones cannot arise in a game (X moves first)")]
    StoneCount {
        /// X's stones.
        x: usize,
        /// O's stones.
        o: usize,
    },
}

/// A game in progress: the board, the side to move, the history and the result.
#[derive(Clone)]
pub struct Board {
    rules: Rules,
    stride: usize,
    cells: Vec<Cell>,
    history: Vec<Move>,
    hash: u64,
    status: Status,
    winning_line: Vec<Move>,
}

impl Board {
    /// An empty board for `rules`; X to move.
    pub fn new(rules: Rules) -> Board {
        let (w, h) = (rules.width() as usize, rules.height() as usize);
        let stride = w + PAD;
        let mut cells = vec![Cell::Wall; (h + 2 * PAD + 1) * stride];
        for y in 0..h {
            for x in 0..w {
                cells[(PAD + 1 + y) * stride + x] = Cell::Empty;
            }
        }
        Board {
            rules,
            stride,
            cells,
            history: Vec::with_capacity(rules.cells()),
            hash: 0,
            status: Status::Ongoing,
            winning_line: Vec::new(),
        }
    }

    /// A board with `moves` played in order from the empty board.
    pub fn from_moves(rules: Rules, moves: &[Move]) -> Result<Board, MoveError> {
        let mut board = Board::new(rules);
        for &mv in moves {
            board.try_play(mv)?;
        }
        Ok(board)
    }

    /// A board holding the given stones, as a Gomocup `BOARD` command or a test position gives
    /// them: the order of play is unknown, so the stones are recorded alternately (X first) and
    /// the status is decided from the finished position rather than move by move (under the caro
    /// rules a five that the opponent later blocked at both ends never won). X must have as many
    /// stones as O, or one more.
    pub fn set_up(rules: Rules, x: &[Move], o: &[Move]) -> Result<Board, SetupError> {
        if !(x.len() == o.len() || x.len() == o.len() + 1) {
            return Err(SetupError::StoneCount {
                x: x.len(),
                o: o.len(),
            });
        }
        let mut board = Board::new(rules);
        let mut o_iter = o.iter();
        for &xm in x {
            board.place(xm)?;
            if let Some(&om) = o_iter.next() {
                board.place(om)?;
            }
        }
        let stones: Vec<Move> = board.history.clone();
        for mv in stones {
            let index = board.index(mv);
            let player = board.cells[index].player().expect("a placed stone");
            if board.detect_win(index, player) {
                board.status = Status::Won(player);
                return Ok(board);
            }
        }
        if board.is_full() {
            board.status = Status::Draw;
        }
        Ok(board)
    }

    /// Puts a stone for the side to move without deciding the status (for [`Board::set_up`]).
    fn place(&mut self, mv: Move) -> Result<(), MoveError> {
        let mv = self.check(mv.x as i64, mv.y as i64)?;
        let player = self.to_move();
        let index = self.index(mv);
        self.cells[index] = player.cell();
        self.hash ^= zobrist::key(player, mv.x, mv.y);
        self.history.push(mv);
        Ok(())
    }

    /// The game being played.
    #[inline]
    pub fn rules(&self) -> &Rules {
        &self.rules
    }
    /// Board width.
    #[inline]
    pub fn width(&self) -> u8 {
        self.rules.width()
    }
    /// Board height.
    #[inline]
    pub fn height(&self) -> u8 {
        self.rules.height()
    }
    /// The side to move (X on an empty board).
    #[inline]
    pub fn to_move(&self) -> Player {
        if self.history.len() % 2 == 0 {
            Player::X
        } else {
            Player::O
        }
    }
    /// The moves played so far, in order.
    #[inline]
    pub fn moves(&self) -> &[Move] {
        &self.history
    }
    /// The last move played.
    #[inline]
    pub fn last_move(&self) -> Option<Move> {
        self.history.last().copied()
    }
    /// The Zobrist hash of the stones on the board (independent of move order).
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }
    /// Where the game stands.
    #[inline]
    pub fn status(&self) -> Status {
        self.status
    }
    /// The cells of the winning run, in order along the line, once someone has won.
    pub fn winning_line(&self) -> Option<&[Move]> {
        (!self.winning_line.is_empty()).then_some(&self.winning_line[..])
    }
    /// Whether every cell is taken.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.history.len() == self.rules.cells()
    }
    /// Whether (`x`, `y`) is on the board.
    #[inline]
    pub fn contains(&self, x: i64, y: i64) -> bool {
        (0..self.width() as i64).contains(&x) && (0..self.height() as i64).contains(&y)
    }
    /// What is on (`x`, `y`); [`Cell::Wall`] off the board.
    pub fn get(&self, x: i64, y: i64) -> Cell {
        if self.contains(x, y) {
            self.cells[self.index(Move::new(x as u8, y as u8))]
        } else {
            Cell::Wall
        }
    }
    /// Every empty cell, row by row (empty once the game is over).
    pub fn legal_moves(&self) -> impl Iterator<Item = Move> + '_ {
        let over = self.status != Status::Ongoing;
        (0..self.height())
            .flat_map(move |y| (0..self.width()).map(move |x| Move::new(x, y)))
            .filter(move |&mv| !over && self.cells[self.index(mv)] == Cell::Empty)
    }

    // --- The padded array, for evaluation and search code. ---

    /// Distance between vertically adjacent cells in the padded array.
    #[inline]
    pub fn stride(&self) -> usize {
        self.stride
    }
    /// The four line directions as index steps: horizontal, vertical, diagonal, anti-diagonal.
    #[inline]
    pub fn directions(&self) -> [usize; 4] {
        [1, self.stride, self.stride + 1, self.stride - 1]
    }
    /// The padded-array index of a cell on the board.
    #[inline]
    pub fn index(&self, mv: Move) -> usize {
        (PAD + 1 + mv.y as usize) * self.stride + mv.x as usize
    }
    /// The cell of a padded-array index that lies on the board.
    #[inline]
    pub fn move_at(&self, index: usize) -> Move {
        let row = index / self.stride - PAD - 1;
        Move::new((index % self.stride) as u8, row as u8)
    }
    /// The padded array itself (walls included); see the module docs for the layout.
    #[inline]
    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }
    /// The cell at a padded-array index.
    #[inline]
    pub fn at(&self, index: usize) -> Cell {
        self.cells[index]
    }

    // --- Playing moves. ---

    /// Plays `mv` for the side to move, or says why it cannot be played and changes nothing.
    pub fn try_play(&mut self, mv: Move) -> Result<Status, MoveError> {
        self.check(mv.x as i64, mv.y as i64)?;
        self.play_unchecked(mv);
        Ok(self.status)
    }

    /// Checks that (`x`, `y`) could be played now, without playing it.
    pub fn check(&self, x: i64, y: i64) -> Result<Move, MoveError> {
        if self.status != Status::Ongoing {
            return Err(MoveError::GameOver);
        }
        if !self.contains(x, y) {
            return Err(MoveError::OutOfBounds { x, y });
        }
        let mv = Move::new(x as u8, y as u8);
        if self.cells[self.index(mv)] != Cell::Empty {
            return Err(MoveError::Occupied { x: mv.x, y: mv.y });
        }
        Ok(mv)
    }

    /// Plays `mv`, panicking if it is illegal. For tests and tools that know their moves.
    pub fn play(&mut self, mv: Move) -> Status {
        match self.try_play(mv) {
            Ok(status) => status,
            Err(e) => panic!("illegal move {mv}: {e}"),
        }
    }

    /// Plays `mv` without checking it: the cell must be empty and on the board, and the game not
    /// over. Updates the hash, the history and the status (win detection from this move).
    #[inline]
    pub fn play_unchecked(&mut self, mv: Move) {
        let player = self.to_move();
        let index = self.index(mv);
        debug_assert_eq!(
            self.cells[index],
            Cell::Empty,
            "play_unchecked on a taken cell"
        );
        self.cells[index] = player.cell();
        self.hash ^= zobrist::key(player, mv.x, mv.y);
        self.history.push(mv);
        if self.detect_win(index, player) {
            self.status = Status::Won(player);
        } else if self.is_full() {
            self.status = Status::Draw;
        }
    }

    /// Takes back the last move, restoring the exact previous state (hash and status included).
    /// Returns the move taken back, `None` on an empty board.
    pub fn undo(&mut self) -> Option<Move> {
        let mv = self.history.pop()?;
        let player = self.to_move();
        let index = self.index(mv);
        self.cells[index] = Cell::Empty;
        self.hash ^= zobrist::key(player, mv.x, mv.y);
        self.status = Status::Ongoing;
        self.winning_line.clear();
        Some(mv)
    }

    /// Whether the stone just placed on `index` by `player` completes a winning line; if so its
    /// cells are recorded. Scans both directions of each of the four lines.
    fn detect_win(&mut self, index: usize, player: Player) -> bool {
        let own = player.cell();
        let k = self.rules.win_length();
        let rule = self.rules.rule();
        for dir in self.directions() {
            let mut back = index;
            while self.cells[back - dir] == own {
                back -= dir;
            }
            let mut fwd = index;
            while self.cells[fwd + dir] == own {
                fwd += dir;
            }
            let len = ((fwd - back) / dir + 1) as u8;
            if len < k {
                continue;
            }
            let end = |cell: Cell| match cell {
                Cell::Empty => End::Open,
                Cell::Wall => End::Edge,
                _ => End::Opponent,
            };
            if caro::wins(
                rule,
                k,
                len,
                end(self.cells[back - dir]),
                end(self.cells[fwd + dir]),
            ) {
                self.winning_line = (0..len as usize)
                    .map(|i| self.move_at(back + i * dir))
                    .collect();
                return true;
            }
        }
        false
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Board {}x{} {:?} {:?}, {} to move, {:?}",
            self.width(),
            self.height(),
            self.rules.kind(),
            self.rules.rule(),
            self.to_move(),
            self.status
        )?;
        for y in 0..self.height() as i64 {
            for x in 0..self.width() as i64 {
                let c = match self.get(x, y) {
                    Cell::X => 'X',
                    Cell::O => 'O',
                    _ => '.',
                };
                write!(f, "{c}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
