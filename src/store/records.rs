//! What a store gives back: the replay API's games (summaries, moves, the newest-first
//! [`Cursor`] that pages them) and what the server restores at start (unfinished games and the
//! sessions seated in them).
//!
//! Plain data with its wire form (the JSON of `/api/games`): nothing here reads or writes a
//! store, talks to clients or decides anything about a game.

use serde::Serialize;

use super::SeatRecord;
use crate::protocol::{ChatLine, TimeControl};

/// A game as the replay API lists it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GameSummary {
    /// Game (and room) id.
    pub id: String,
    /// `caro` / `tictactoe`.
    pub game: String,
    /// Columns.
    pub width: u8,
    /// Rows.
    pub height: u8,
    /// Caro rule.
    pub rule: Option<String>,
    /// X then O.
    pub players: GamePlayers,
    /// `x`, `o` or `draw`; `None` while unfinished.
    pub result: Option<String>,
    /// `line`, `board_full`, `resign`, `abandoned`, `forfeit`.
    pub reason: Option<String>,
    /// For a forfeit: the fault's code, as in `game_over`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// For a forfeit: what the engine did, as in `game_over`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Number of moves.
    pub moves: u32,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds, `None` while unfinished.
    pub finished_at: Option<i64>,
    /// The time control; absent for none (and for games stored before schema v6).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_control: Option<TimeControl>,
    /// A casual game (absent when not).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub casual: bool,
    /// A rated game (absent when not; games stored before schema v9 are not).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rated: bool,
}

/// The two seats of a stored game.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GamePlayers {
    /// X.
    pub x: SeatRecord,
    /// O.
    pub o: SeatRecord,
}

/// One stored move.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MoveRecord {
    /// Column.
    pub x: u8,
    /// Row.
    pub y: u8,
    /// Room event number.
    pub seq: u64,
    /// Unix milliseconds when it was played.
    pub at: i64,
    /// X's and O's time left after the move, ms (`{"x": .., "o": ..}`); absent without a clock.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "clock_json")]
    pub clock: Option<[u64; 2]>,
}

fn clock_json<S: serde::Serializer>(clock: &Option<[u64; 2]>, s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Clock {
        x: u64,
        o: u64,
    }
    clock.map(|[x, o]| Clock { x, o }).serialize(s)
}

/// A game with its moves (`GET /api/games/{id}`).
#[derive(Clone, Debug, PartialEq)]
pub struct GameRecord {
    /// Everything the list shows.
    pub summary: GameSummary,
    /// In order; X moves first.
    pub moves: Vec<MoveRecord>,
    /// The players' chat, in order.
    pub chat: Vec<ChatLine>,
    /// The last event number of the move log (a move's, or a takeback's): where a restored
    /// room's `seq` continues from. Not part of the JSON.
    pub seq: u64,
}

impl Serialize for GameRecord {
    /// The summary's fields with `moves` as the list of moves instead of their count (a
    /// flattened struct would write the key twice), and `chat` when the players chatted.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error;
        let mut v = serde_json::to_value(&self.summary).map_err(S::Error::custom)?;
        v["moves"] = serde_json::to_value(&self.moves).map_err(S::Error::custom)?;
        if !self.chat.is_empty() {
            v["chat"] = serde_json::to_value(&self.chat).map_err(S::Error::custom)?;
        }
        v.serialize(s)
    }
}

/// A page of finished games: newest first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GameQuery {
    /// Only games where this player id held a seat.
    pub player: Option<String>,
    /// At most this many (1..=100).
    pub limit: u32,
    /// Only games after this point of the newest-first order.
    pub before: Option<Cursor>,
}

/// A position in the newest-first order of finished games. Written `"<finished_at>"` (every game
/// finished strictly before that unix millisecond time) or `"<finished_at>:<id>"` (every game
/// after that one: the `next` cursor of a page, exact even when games finish in the same
/// millisecond).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cursor {
    /// Unix milliseconds.
    pub finished_at: i64,
    /// The last game of the previous page; `None`: all games of `finished_at` are excluded.
    pub id: Option<String>,
}

impl Cursor {
    /// The cursor that continues after `game`, if it is finished.
    pub fn after(game: &GameSummary) -> Option<Cursor> {
        Some(Cursor {
            finished_at: game.finished_at?,
            id: Some(game.id.clone()),
        })
    }

    /// Whether a game finished at `finished_at` with `id` comes after the cursor.
    pub fn admits(&self, finished_at: i64, id: &str) -> bool {
        finished_at < self.finished_at
            || (finished_at == self.finished_at && self.id.as_deref().is_some_and(|c| id < c))
    }
}

impl std::str::FromStr for Cursor {
    type Err = ();

    fn from_str(s: &str) -> Result<Cursor, ()> {
        let (time, id) = match s.split_once(':') {
            Some((t, id)) if !id.is_empty() => (t, Some(id.to_string())),
            Some(_) => return Err(()),
            None => (s, None),
        };
        Ok(Cursor {
            finished_at: time.parse().map_err(|_| ())?,
            id,
        })
    }
}

impl std::fmt::Display for Cursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.id {
            Some(id) => write!(f, "{}:{id}", self.finished_at),
            None => write!(f, "{}", self.finished_at),
        }
    }
}

/// A session to restore.
#[derive(Clone, Debug, PartialEq)]
pub struct RestoredSession {
    /// SHA-256 of the token, hex.
    pub token_hash: String,
    /// Public player id.
    pub player_id: String,
    /// Name.
    pub name: String,
}

/// What the server restores at start: unfinished games and the sessions seated in them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Restored {
    /// Unfinished games with their moves.
    pub games: Vec<GameRecord>,
    /// Sessions holding a seat in one of them.
    pub sessions: Vec<RestoredSession>,
}
