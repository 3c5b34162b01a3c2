//! The `classic` baseline: the seed project's engine, reproduced to measure against. Plain
//! alpha-beta (no PVS, no transposition table, no threat search) to a fixed depth of 4 with the
//! seed's evaluation (+300 for a three, +600 for a four), and plain minimax for the
//! branching-factor measurements in `docs/engine.md`.
//!
//! PLACEHOLDER: the signature is fixed; the body arrives with the classic engine.

use std::sync::atomic::AtomicBool;

use crate::search::{Engine, Limits, SearchInfo, SearchResult};
use crate::Board;

/// Searches `board` like the seed project did, to `depth` plies. `None` only when the game is over.
pub fn search(
    board: &Board,
    depth: u8,
    stop: &AtomicBool,
    info: &mut dyn FnMut(&SearchInfo),
) -> Option<SearchResult> {
    Engine::new(1).search(board, &Limits::depth(depth), stop, info)
}
