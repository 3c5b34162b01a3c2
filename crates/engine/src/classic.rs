//! The `classic` baseline: the seed project's engine, reproduced to measure our search against.
//!
//! What the seed did, and so what this module does:
//! - plain negamax with alpha-beta pruning to a fixed depth (4 for the `classic` level): no
//!   principal-variation search, no transposition table, no threat search, no move ordering
//!   beyond the board's row-by-row order, and no iterative deepening beyond one depth-2 pass
//!   first, so that a search stopped by the clock still has a sound move (see [`search`]);
//! - candidate moves: the empty cells within [`RADIUS`] (Chebyshev distance) of any stone, the
//!   centre on an empty board;
//! - the seed's evaluation, counted over every window of `k` cells in a row (`k` = the win
//!   length, five in Caro) along the four directions: a window holding no opponent stone and
//!   exactly `k - 2` own stones (a "three") scores +300, one with `k - 1` own stones (a "four")
//!   +600; the opponent's windows count the same, negated. So an open three `..XXX..` counts in
//!   three windows, and an open four `..XXXX..` in two as a four and two more as a three. Fives are not scored by windows: a
//!   finished game is seen through [`Board::status`] (which knows the rule variant) and scores
//!   `WIN - ply`, so quicker wins are preferred.
//!
//! The evaluation is a sum over windows, so it is kept incrementally: playing a stone changes
//! only the `4 * k` windows through it. That changes the speed, never the value (a test checks
//! it against a full recount).
//!
//! It also gives [`minimax_nodes`] and [`alphabeta_nodes`], plain minimax and plain alpha-beta
//! with the same generator and order, for the effective-branching-factor table
//! (`examples/branching.rs`): with perfect ordering alpha-beta visits about `b^(d/2)` leaves
//! instead of minimax's `b^d` (Knuth and Moore, "An analysis of alpha-beta pruning", 1975;
//! chessprogramming.org "Alpha-Beta"), with this unordered generator it lands in between.
//!
//! This module must stay what the seed was: improvements belong in `search/`, not here.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::search::{SearchInfo, SearchResult};

/// The seed's scores are plain numbers, its evaluation sums of window values; they become a
/// [`crate::search::Score`] only in the result.
type Score = i32;

/// A win on the board now; a win in `n` plies scores `WIN - n`, as in our search.
const WIN: Score = crate::search::WIN.get();
use crate::{Board, Cell, Move, Player, Status};

/// How far from a stone a candidate move may be (Chebyshev distance).
pub const RADIUS: i64 = 2;
/// The seed's value of a window with `k - 2` own stones and no opponent stone.
pub const THREE: Score = 300;
/// The seed's value of a window with `k - 1` own stones and no opponent stone.
pub const FOUR: Score = 600;

/// Depth of the quick pass that gives [`search`] a move if it is stopped.
pub const FALLBACK_DEPTH: u8 = 2;

/// Larger than any score, for the initial alpha-beta window.
const INF: Score = WIN + 1;

/// How often (in nodes) the stop flag is read.
const STOP_CHECK: u64 = 1024;

/// Searches `board` like the seed project did, to `depth` plies (at least 1). Reports one
/// [`SearchInfo`] at the end. `None` only when the game is over.
///
/// If `stop` is raised the search returns at once. So that it still has a sound move then, a
/// depth-[`FALLBACK_DEPTH`] pass runs first (it sees a five to make or to stop) and its move is
/// played when the full-depth pass is cut short: the only iterative deepening the seed needed,
/// and all the classic search does.
pub fn search(
    board: &Board,
    depth: u8,
    stop: &AtomicBool,
    info: &mut dyn FnMut(&SearchInfo),
) -> Option<SearchResult> {
    if board.status() != Status::Ongoing {
        return None;
    }
    let start = Instant::now();
    let depth = depth.max(1);
    let mut s = Searcher::new(board, Some(stop));
    let moves = s.candidates();
    let first = *moves.first()?;
    let mut done = (first, 0, 0);
    for d in [depth.min(FALLBACK_DEPTH), depth] {
        match s.root(&moves, d) {
            Some((best, score)) => done = (best, score, d),
            None => break,
        }
        if d == depth {
            break;
        }
    }
    let (best, score, reached) = done;
    let elapsed = start.elapsed();
    let nps = (s.nodes as f64 / elapsed.as_secs_f64().max(1e-9)) as u64;
    let score = crate::search::Score::new(score);
    let result = SearchResult {
        best,
        score,
        depth: reached,
        nodes: s.nodes,
        pv: vec![best],
        elapsed,
    };
    info(&SearchInfo {
        depth: reached,
        score,
        nodes: s.nodes,
        nps,
        elapsed,
        pv: result.pv.clone(),
    });
    Some(result)
}

/// Nodes visited (the root included) by plain minimax to `depth` plies with the classic move
/// generator and evaluation.
pub fn minimax_nodes(board: &Board, depth: u8) -> u64 {
    let mut s = Searcher::new(board, None);
    s.minimax(depth, 0);
    s.nodes
}

/// Nodes visited (the root included) by plain fail-soft alpha-beta to `depth` plies with the
/// classic move generator, order and evaluation, from a full window.
pub fn alphabeta_nodes(board: &Board, depth: u8) -> u64 {
    let mut s = Searcher::new(board, None);
    s.alphabeta(depth, -INF, INF, 0);
    s.nodes
}

/// The search state: a private copy of the board, the neighbourhood counts behind the move
/// generator and the running evaluation.
struct Searcher<'a> {
    board: Board,
    /// For every cell `(x, y)` at `y * width + x`, how many stones lie within [`RADIUS`].
    near: Vec<u16>,
    /// The evaluation from X's point of view.
    eval_x: Score,
    /// Evaluation changes of the moves played, for [`Searcher::undo`].
    deltas: Vec<Score>,
    nodes: u64,
    stop: Option<&'a AtomicBool>,
    stopped: bool,
}

impl<'a> Searcher<'a> {
    fn new(board: &Board, stop: Option<&'a AtomicBool>) -> Searcher<'a> {
        let mut s = Searcher {
            board: board.clone(),
            near: vec![0; board.rules().cells()],
            eval_x: full_eval(board),
            deltas: Vec::new(),
            nodes: 0,
            stop,
            stopped: false,
        };
        for mv in board.moves().to_vec() {
            s.mark(mv, 1);
        }
        s
    }

    /// Adds `by` to the neighbourhood count of every cell within [`RADIUS`] of `mv`.
    fn mark(&mut self, mv: Move, by: i16) {
        let (w, h) = (self.board.width() as i64, self.board.height() as i64);
        for y in (mv.y as i64 - RADIUS).max(0)..=(mv.y as i64 + RADIUS).min(h - 1) {
            for x in (mv.x as i64 - RADIUS).max(0)..=(mv.x as i64 + RADIUS).min(w - 1) {
                let n = &mut self.near[(y * w + x) as usize];
                *n = n.wrapping_add_signed(by);
            }
        }
    }

    /// Empty cells near a stone, row by row; the centre on an empty board.
    fn candidates(&self) -> Vec<Move> {
        if self.board.status() != Status::Ongoing {
            return Vec::new();
        }
        if self.board.moves().is_empty() {
            return vec![Move::new(self.board.width() / 2, self.board.height() / 2)];
        }
        let w = self.board.width();
        let mut moves = Vec::with_capacity(64);
        for y in 0..self.board.height() {
            for x in 0..w {
                if self.near[y as usize * w as usize + x as usize] > 0
                    && self.board.get(x as i64, y as i64) == Cell::Empty
                {
                    moves.push(Move::new(x, y));
                }
            }
        }
        moves
    }

    fn play(&mut self, mv: Move) {
        let delta = window_delta(&self.board, mv, self.board.to_move());
        self.eval_x += delta;
        self.deltas.push(delta);
        self.board.play_unchecked(mv);
        self.mark(mv, 1);
    }

    fn undo(&mut self) {
        let mv = self.board.undo().expect("a move to undo");
        self.mark(mv, -1);
        self.eval_x -= self.deltas.pop().expect("a delta per move");
    }

    /// Alpha-beta over the root `moves` to `depth`: the best move and its score, `None` if
    /// stopped before the end.
    fn root(&mut self, moves: &[Move], depth: u8) -> Option<(Move, Score)> {
        let (mut best, mut best_score) = (moves[0], -INF);
        self.nodes += 1;
        for &mv in moves {
            self.play(mv);
            let score = -self.alphabeta(depth - 1, -INF, -best_score, 1);
            self.undo();
            if self.stopped {
                return None;
            }
            if score > best_score {
                best_score = score;
                best = mv;
            }
        }
        Some((best, best_score))
    }

    /// Counts the node and reads the stop flag every [`STOP_CHECK`] nodes.
    fn visit(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes % STOP_CHECK == 0 {
            if let Some(stop) = self.stop {
                self.stopped |= stop.load(Ordering::Relaxed);
            }
        }
        self.stopped
    }

    /// The score of a finished game for the side to move, or the static evaluation at depth 0.
    fn leaf(&self, depth: u8, ply: u32) -> Option<Score> {
        match self.board.status() {
            // The side that just moved made the line: the side to move has lost.
            Status::Won(_) => Some(-(WIN - ply as Score)),
            Status::Draw => Some(0),
            Status::Ongoing if depth == 0 => Some(match self.board.to_move() {
                Player::X => self.eval_x,
                Player::O => -self.eval_x,
            }),
            Status::Ongoing => None,
        }
    }

    /// Fail-soft negamax alpha-beta. Returns 0 once stopped; callers check `stopped`.
    fn alphabeta(&mut self, depth: u8, mut alpha: Score, beta: Score, ply: u32) -> Score {
        if self.visit() {
            return 0;
        }
        if let Some(score) = self.leaf(depth, ply) {
            return score;
        }
        let mut best = -INF;
        for mv in self.candidates() {
            self.play(mv);
            let score = -self.alphabeta(depth - 1, -beta, -alpha, ply + 1);
            self.undo();
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                alpha = alpha.max(score);
                if alpha >= beta {
                    break;
                }
            }
        }
        best
    }

    /// Plain negamax, every candidate searched.
    fn minimax(&mut self, depth: u8, ply: u32) -> Score {
        self.visit();
        if let Some(score) = self.leaf(depth, ply) {
            return score;
        }
        let mut best = -INF;
        for mv in self.candidates() {
            self.play(mv);
            best = best.max(-self.minimax(depth - 1, ply + 1));
            self.undo();
        }
        best
    }
}

/// The four line directions as (dx, dy).
const DIRECTIONS: [(i64, i64); 4] = [(1, 0), (0, 1), (1, 1), (1, -1)];

/// The seed's value of one window from X's point of view, given its stone counts.
fn window_value(x: u8, o: u8, k: u8) -> Score {
    let side = |own: u8| {
        if own + 1 == k {
            FOUR
        } else if own + 2 == k {
            THREE
        } else {
            0
        }
    };
    match (x, o) {
        (x, 0) => side(x),
        (0, o) => -side(o),
        _ => 0,
    }
}

/// Stone counts `(x, o)` of the `k`-cell window from `(x0, y0)` along `(dx, dy)`, leaving out
/// `skip`; `None` if the window leaves the board.
fn window_counts(
    board: &Board,
    (x0, y0): (i64, i64),
    (dx, dy): (i64, i64),
    skip: Option<Move>,
) -> Option<(u8, u8)> {
    let k = board.rules().win_length() as i64;
    let (mut xs, mut os) = (0, 0);
    for j in 0..k {
        let (x, y) = (x0 + j * dx, y0 + j * dy);
        if skip.is_some_and(|m| (m.x as i64, m.y as i64) == (x, y)) {
            continue;
        }
        match board.get(x, y) {
            Cell::X => xs += 1,
            Cell::O => os += 1,
            Cell::Empty => {}
            Cell::Wall => return None,
        }
    }
    Some((xs, os))
}

/// How the evaluation (X's view) changes when `player` puts a stone on the empty cell `mv`:
/// only the windows through `mv` change.
fn window_delta(board: &Board, mv: Move, player: Player) -> Score {
    let k = board.rules().win_length();
    let mut delta = 0;
    for (dx, dy) in DIRECTIONS {
        for back in 0..k as i64 {
            let start = (mv.x as i64 - back * dx, mv.y as i64 - back * dy);
            if let Some((x, o)) = window_counts(board, start, (dx, dy), Some(mv)) {
                let after = match player {
                    Player::X => window_value(x + 1, o, k),
                    Player::O => window_value(x, o + 1, k),
                };
                delta += after - window_value(x, o, k);
            }
        }
    }
    delta
}

/// The seed's evaluation of the whole board from X's point of view, window by window.
fn full_eval(board: &Board) -> Score {
    let k = board.rules().win_length();
    let mut total = 0;
    for y in 0..board.height() as i64 {
        for x in 0..board.width() as i64 {
            for dir in DIRECTIONS {
                if let Some((xs, os)) = window_counts(board, (x, y), dir, None) {
                    total += window_value(xs, os, k);
                }
            }
        }
    }
    total
}

/// The seed's evaluation for the side to move: what the classic search sees at its leaves.
pub fn evaluate(board: &Board) -> Score {
    match board.to_move() {
        Player::X => full_eval(board),
        Player::O => -full_eval(board),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Rule, Rules};
    use proptest::prelude::*;

    fn caro15() -> Rules {
        Rules::caro(15, 15, Rule::Freestyle).unwrap()
    }

    fn classic(board: &Board, depth: u8) -> SearchResult {
        search(board, depth, &AtomicBool::new(false), &mut |_| {}).unwrap()
    }

    fn stones(list: &[(u8, u8)]) -> Vec<Move> {
        list.iter().map(|&(x, y)| Move::new(x, y)).collect()
    }

    #[test]
    fn takes_an_immediate_five() {
        // X: four in a row on row 7 (open at 3,7 and 8,7); O has an open four of its own on row 9.
        let x = stones(&[(4, 7), (5, 7), (6, 7), (7, 7), (6, 5)]);
        let o = stones(&[(4, 9), (5, 9), (6, 9), (7, 9), (5, 5)]);
        let board = Board::set_up(caro15(), &x, &o).unwrap();
        let r = classic(&board, 4);
        assert!(
            [Move::new(3, 7), Move::new(8, 7)].contains(&r.best),
            "{r:?}"
        );
        assert_eq!(r.score, WIN - 1);
    }

    #[test]
    fn blocks_a_four() {
        // O to move; X threatens five at (8,7) (the other end is blocked by O).
        let x = stones(&[(4, 7), (5, 7), (6, 7), (7, 7)]);
        let o = stones(&[(3, 7), (9, 9), (10, 10)]);
        let board = Board::set_up(caro15(), &x, &o).unwrap();
        assert_eq!(board.to_move(), Player::O);
        assert_eq!(classic(&board, 4).best, Move::new(8, 7));
    }

    #[test]
    fn blocks_a_split_four() {
        // X: XX.XX on row 7; the gap is the only defence.
        let x = stones(&[(4, 7), (5, 7), (7, 7), (8, 7)]);
        let o = stones(&[(6, 6), (6, 8), (9, 9)]);
        let board = Board::set_up(caro15(), &x, &o).unwrap();
        assert_eq!(classic(&board, 4).best, Move::new(6, 7));
    }

    #[test]
    fn plays_the_centre_on_an_empty_board() {
        assert_eq!(classic(&Board::new(caro15()), 4).best, Move::new(7, 7));
    }

    #[test]
    fn honours_the_stop_flag() {
        let board = Board::from_moves(caro15(), &stones(&[(7, 7), (8, 8), (6, 8)])).unwrap();
        let stop = AtomicBool::new(true);
        let r = search(&board, 8, &stop, &mut |_| {}).unwrap();
        assert!(r.nodes <= 2 * STOP_CHECK, "{} nodes", r.nodes);
        assert!(r.depth <= FALLBACK_DEPTH);
        assert!(board.check(r.best.x as i64, r.best.y as i64).is_ok());
    }

    #[test]
    fn a_stopped_search_still_takes_a_five() {
        // Depth 6 cannot finish in 50 ms; the depth-2 pass has found the five by then.
        let x = stones(&[(4, 7), (5, 7), (6, 7), (7, 7), (10, 2)]);
        let o = stones(&[(4, 9), (5, 9), (6, 9), (7, 9), (0, 0)]);
        let board = Board::set_up(caro15(), &x, &o).unwrap();
        let stop = AtomicBool::new(false);
        let r = std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(50));
                stop.store(true, Ordering::Relaxed);
            });
            search(&board, 6, &stop, &mut |_| {}).unwrap()
        });
        assert_eq!(r.depth, FALLBACK_DEPTH);
        assert!(
            [Move::new(3, 7), Move::new(8, 7)].contains(&r.best),
            "{r:?}"
        );
    }

    #[test]
    fn returns_none_when_the_game_is_over() {
        let x = stones(&[(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)]);
        let o = stones(&[(0, 5), (1, 5), (2, 5), (3, 5)]);
        let board = Board::set_up(caro15(), &x, &o).unwrap();
        assert!(search(&board, 4, &AtomicBool::new(false), &mut |_| {}).is_none());
    }

    #[test]
    fn seed_evaluation_counts_windows() {
        // An open three in the middle of an empty row: three windows with three X stones.
        let board = Board::set_up(
            caro15(),
            &stones(&[(5, 7), (6, 7), (7, 7)]),
            &stones(&[(0, 14), (14, 14)]),
        )
        .unwrap();
        // O to move (3 X, 2 O), so the score is negated; O's lone stones score nothing.
        assert_eq!(evaluate(&board), -3 * THREE);
        // An open four: two windows as a four, two more as a three.
        let board = Board::set_up(
            caro15(),
            &stones(&[(5, 7), (6, 7), (7, 7), (8, 7)]),
            &stones(&[(0, 0), (14, 14), (0, 14)]),
        )
        .unwrap();
        assert_eq!(evaluate(&board), -(2 * FOUR + 2 * THREE));
    }

    #[test]
    fn alphabeta_prunes() {
        let board = Board::from_moves(caro15(), &stones(&[(7, 7), (8, 8), (6, 8)])).unwrap();
        let (mm, ab) = (minimax_nodes(&board, 3), alphabeta_nodes(&board, 3));
        assert!(ab < mm, "alpha-beta {ab} vs minimax {mm}");
    }

    /// Random small positions: a board size, a rule, and a sequence of distinct cells played
    /// until the game ends.
    fn small_position() -> impl Strategy<Value = Board> {
        (
            prop_oneof![
                Just(Rules::caro(7, 7, Rule::Freestyle).unwrap()),
                Just(Rules::caro(7, 7, Rule::Caro).unwrap()),
                Just(Rules::mnk(4, 4, 3).unwrap()),
                Just(Rules::tictactoe()),
            ],
            proptest::collection::vec((0u8..7, 0u8..7), 0..12),
        )
            .prop_map(|(rules, cells)| {
                let mut board = Board::new(rules);
                for (x, y) in cells {
                    if board.status() != Status::Ongoing {
                        break;
                    }
                    let _ = board.try_play(Move::new(x % rules.width(), y % rules.height()));
                }
                board
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn minimax_and_alphabeta_agree(board in small_position(), depth in 1u8..=3) {
            let mut mm = Searcher::new(&board, None);
            let mut ab = Searcher::new(&board, None);
            let exact = mm.minimax(depth, 0);
            prop_assert_eq!(ab.alphabeta(depth, -INF, INF, 0), exact);
            prop_assert!(ab.nodes <= mm.nodes);
        }

        #[test]
        fn incremental_evaluation_matches_a_recount(board in small_position()) {
            let mut s = Searcher::new(&board, None);
            for mv in s.candidates().into_iter().take(5) {
                s.play(mv);
                prop_assert_eq!(s.eval_x, full_eval(&s.board));
                s.undo();
                prop_assert_eq!(s.eval_x, full_eval(&board));
            }
        }
    }
}
