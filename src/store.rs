//! Where finished and running games are recorded. A room calls its [`Store`] for each event of
//! the game record (created, move, result) from its own task, in order. The calls are synchronous
//! and must be quick: an implementation that writes to disk (SQLite, a later issue) queues the
//! event to its own writer thread rather than blocking the room.
//!
//! This module never talks to clients and never decides anything about a game.

use std::sync::Mutex;

use crate::protocol::{Cell, Outcome, Reason, Seat};

/// A game was created: the parameters needed to replay it.
#[derive(Clone, Debug, PartialEq)]
pub struct GameCreated {
    /// The room (and game) id.
    pub room_id: String,
    /// `"caro"` / `"tictactoe"`.
    pub game: &'static str,
    /// Columns.
    pub width: u8,
    /// Rows.
    pub height: u8,
    /// Caro rule.
    pub rule: Option<&'static str>,
    /// Seat descriptions: a player id, or `bot:<level>`, or `open`.
    pub x: String,
    /// See `x`.
    pub o: String,
}

/// One event of a game record.
#[derive(Clone, Debug, PartialEq)]
pub enum StoreEvent {
    /// A new game.
    Created(GameCreated),
    /// A move with its room sequence number.
    Move {
        /// Room.
        room_id: String,
        /// Event number.
        seq: u64,
        /// Mover.
        seat: Seat,
        /// Cell.
        cell: Cell,
    },
    /// The result.
    Result {
        /// Room.
        room_id: String,
        /// Event number.
        seq: u64,
        /// Winner or draw.
        result: Outcome,
        /// Why.
        reason: Reason,
    },
}

/// A sink for game records. Called from room tasks; must not block for long.
pub trait Store: Send + Sync + 'static {
    /// Records one event.
    fn record(&self, event: StoreEvent);
    /// Called once at shutdown after every room has finished: flush what is buffered.
    fn flush(&self) {}
}

/// Forgets everything (the default until persistence lands).
#[derive(Debug, Default)]
pub struct NullStore;

impl Store for NullStore {
    fn record(&self, _event: StoreEvent) {}
}

/// Keeps every event in memory, for tests and tools.
#[derive(Debug, Default)]
pub struct MemoryStore {
    events: Mutex<Vec<StoreEvent>>,
}

impl MemoryStore {
    /// A copy of everything recorded so far.
    pub fn events(&self) -> Vec<StoreEvent> {
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Store for MemoryStore {
    fn record(&self, event: StoreEvent) {
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(event);
    }
}
