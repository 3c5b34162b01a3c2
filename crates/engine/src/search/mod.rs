//! The search: given a board, find a good move within [`Limits`], reporting progress through a
//! callback and honouring an external stop flag. This module fixes the public API (the server,
//! `pbrain-caro` and the benches program against it) and drives the parts:
//!
//! - [`pattern`]: line-pattern tables per rule variant, built once;
//! - [`position`]: the search's board with incrementally maintained patterns and evaluation;
//! - [`threats`]: immediate wins, the defences against a five, and the VCF solver;
//! - [`vct`]: the threat-space search (fours and threes) by df-pn;
//! - [`tt`]: the transposition table;
//! - [`score`]: the [`Score`] type, evaluations and distances to a win;
//! - [`negamax`]: the alpha-beta search (principal variation search, the pruning), its tables
//!   and the state of a search in progress;
//! - `deepening`: iterative deepening and aspiration windows, after the threat searches at the
//!   root (private);
//! - `smp`: the helper threads of a multi-threaded search, Lazy SMP (private);
//! - [`weights`]: the evaluation's level and class values, built in from `weights.txt`;
//! - [`policy`]: the learnt ordering of quiet moves, built in from `policy.txt`;
//! - [`params`]: the main search's tunable numbers (reductions, pruning, ordering bonuses);
//! - [`time`]: the clock's share for a move and how stability scales it;
//! - [`eval`]: the static evaluation (a method of the search in progress, and its threat
//!   terms for the tuner);
//! - `ordering`: the main search's move generation and ordering (private).
//!
//! `docs/engine.md` explains the design and cites the sources. Nothing here allocates per node,
//! blocks, or does I/O.

mod deepening;
pub mod eval;
pub mod negamax;
mod ordering;
pub mod params;
pub mod pattern;
pub mod policy;
pub mod position;
pub mod score;
mod smp;
pub mod threats;
pub mod time;
pub mod tt;
pub mod vct;
pub mod weights;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::{Board, Move};

pub use score::Score;

/// Score of a win on the board now; a win in `n` plies scores `WIN - n` ([`Score::win_in`]).
pub const WIN: Score = Score::WIN;

/// Whether a score announces a forced win or loss rather than an evaluation
/// ([`Score::is_mate`]).
pub fn is_mate(score: Score) -> bool {
    score.is_mate()
}

/// How far and how long to search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Deepest iteration of iterative deepening, in plies.
    pub max_depth: u8,
    /// Wall-clock budget; `None` searches until `max_depth` or the node limit. With
    /// `time_max`, the optimum time, scaled by how settled the answer is ([`time::Stability`]).
    pub time: Option<Duration>,
    /// The most the search may take while its answer is unstable (a match clock's maximum,
    /// [`time::Budget`]); `None`: `time` is a fixed budget, spent as it is.
    pub time_max: Option<Duration>,
    /// Node budget, for reproducible tests and benches; `None` for no limit.
    pub nodes: Option<u64>,
}

impl Limits {
    /// Search to `depth` plies with no time or node limit.
    pub fn depth(depth: u8) -> Limits {
        Limits {
            max_depth: depth,
            time: None,
            time_max: None,
            nodes: None,
        }
    }
    /// Search for at most `time`, as deep as it allows.
    pub fn time(time: Duration) -> Limits {
        Limits {
            max_depth: 64,
            time: Some(time),
            time_max: None,
            nodes: None,
        }
    }
}

/// A progress report, sent after each completed iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchInfo {
    /// Depth just completed.
    pub depth: u8,
    /// Its score for the side to move.
    pub score: Score,
    /// Nodes searched so far.
    pub nodes: u64,
    /// Nodes per second so far.
    pub nps: u64,
    /// Time since the search started.
    pub elapsed: Duration,
    /// Principal variation, starting with the move to play.
    pub pv: Vec<Move>,
}

/// What a search found.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// The move to play.
    pub best: Move,
    /// Its score for the side to move.
    pub score: Score,
    /// Deepest completed iteration.
    pub depth: u8,
    /// Nodes searched.
    pub nodes: u64,
    /// Principal variation.
    pub pv: Vec<Move>,
    /// Time taken.
    pub elapsed: Duration,
}

/// A searcher with its tables, reused from move to move, and from game to game if wanted: the
/// transposition table ages its entries at each search and keys them by the kind of game (rule,
/// win length, board size), and the threat-space table starts afresh on another board size, so
/// a used engine searches any game correctly, and [`Engine::clear`] is never needed for
/// correctness.
pub struct Engine {
    searcher: negamax::Searcher,
}

impl Engine {
    /// An engine whose transposition table uses about `tt_mb` MiB.
    pub fn new(tt_mb: usize) -> Engine {
        Engine {
            searcher: negamax::Searcher::new(tt_mb),
        }
    }

    /// Searches with `threads` threads from now on (Lazy SMP, docs/engine.md "Threads (Lazy
    /// SMP)"), clamped to `1..=`[`negamax::MAX_THREADS`]; a new engine has one. The helper
    /// threads are started for each search and joined before it returns; they share the
    /// transposition table and keep their own ordering statistics between searches. With one
    /// thread the search is exactly the single-threaded one (same nodes, same moves).
    pub fn set_threads(&mut self, threads: usize) {
        self.searcher.set_threads(threads);
    }

    /// Evaluates with `weights` from now on instead of the built-in ones (`search/weights.txt`):
    /// for tuning by play (`spsa`), which pits engines with different weights against each
    /// other in one process.
    pub fn set_weights(&mut self, weights: &weights::Weights) {
        self.searcher.set_weights(weights);
    }

    /// Searches with `params` from now on instead of [`params::SearchParams::default`] (for
    /// tuning by play, as [`Engine::set_weights`], and for a bot level's own numbers).
    pub fn set_search_params(&mut self, params: &params::SearchParams) {
        self.searcher.params = *params;
    }

    /// The numbers the engine searches with ([`Engine::set_search_params`]).
    pub fn search_params(&self) -> &params::SearchParams {
        &self.searcher.params
    }

    /// Gives the engine a transposition table of about `tt_mb` MiB, forgetting what it learnt;
    /// its threads, weights and search numbers stay (the protocol's `INFO max_memory`).
    pub fn resize_table(&mut self, tt_mb: usize) {
        self.searcher.resize(tt_mb);
    }

    /// The number of search threads (see [`Engine::set_threads`]).
    pub fn threads(&self) -> usize {
        self.searcher.threads()
    }

    /// Forgets everything learnt (between games).
    pub fn clear(&mut self) {
        self.searcher.clear();
    }

    /// Searches `board` for the side to move. Returns `None` only when the game is over.
    ///
    /// Always answers with a move once it has started: the best move of the deepest completed
    /// iteration, or if stopped before the first one completes, the first candidate in move
    /// ordering (which is an immediate win or a forced block when there is one).
    pub fn search(
        &mut self,
        board: &Board,
        limits: &Limits,
        stop: &AtomicBool,
        info: &mut dyn FnMut(&SearchInfo),
    ) -> Option<SearchResult> {
        self.searcher.search(board, limits, stop, info)
    }

    /// Up to `n` of the best-ordered moves that do not let the opponent make five at once (all
    /// of them are forced blocks when a five is threatened), best first. For weaker bot levels.
    /// Empty when the game is over.
    pub fn sane_candidates(&mut self, board: &Board, n: usize) -> Vec<Move> {
        self.searcher.sane_candidates(board, n)
    }
}
