//! The search: given a board, find a good move within [`Limits`], reporting progress through a
//! callback and honouring an external stop flag.
//!
//! PLACEHOLDER: this file fixes the public API that the server, `pbrain-caro` and the benches
//! program against; the real negamax search replaces `Engine::search`'s body.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::{Board, Move, Status};

/// A search score from the side to move's point of view. Wins are `WIN - ply`.
pub type Score = i32;

/// Score of a win on the board now; a win in `n` plies scores `WIN - n`.
pub const WIN: Score = 1_000_000;

/// Whether a score announces a forced win or loss rather than an evaluation.
pub fn is_mate(score: Score) -> bool {
    score.abs() > WIN - 1000
}

/// How far and how long to search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Deepest iteration of iterative deepening, in plies.
    pub max_depth: u8,
    /// Wall-clock budget; `None` searches until `max_depth` or the node limit.
    pub time: Option<Duration>,
    /// Node budget, for reproducible tests and benches; `None` for no limit.
    pub nodes: Option<u64>,
}

impl Limits {
    /// Search to `depth` plies with no time or node limit.
    pub fn depth(depth: u8) -> Limits {
        Limits {
            max_depth: depth,
            time: None,
            nodes: None,
        }
    }
    /// Search for at most `time`, as deep as it allows.
    pub fn time(time: Duration) -> Limits {
        Limits {
            max_depth: 64,
            time: Some(time),
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

/// A searcher with its tables, reused from move to move.
pub struct Engine {
    _private: (),
}

impl Engine {
    /// An engine whose transposition table uses about `tt_mb` MiB.
    pub fn new(_tt_mb: usize) -> Engine {
        Engine { _private: () }
    }

    /// Forgets everything learnt (between games).
    pub fn clear(&mut self) {}

    /// Searches `board` for the side to move. Returns `None` only when the game is over.
    pub fn search(
        &mut self,
        board: &Board,
        _limits: &Limits,
        stop: &AtomicBool,
        info: &mut dyn FnMut(&SearchInfo),
    ) -> Option<SearchResult> {
        if board.status() != Status::Ongoing {
            return None;
        }
        let start = Instant::now();
        let _ = stop.load(Ordering::Relaxed);
        let best = board.legal_moves().next()?;
        let report = SearchInfo {
            depth: 1,
            score: 0,
            nodes: 1,
            nps: 0,
            elapsed: start.elapsed(),
            pv: vec![best],
        };
        info(&report);
        Some(SearchResult {
            best,
            score: 0,
            depth: 1,
            nodes: 1,
            pv: vec![best],
            elapsed: start.elapsed(),
        })
    }
}
