//! A stored game as a Piskvork / Gomocup game record (`.psq`, written by
//! [`caro_gomocup::psq`], the workspace's one writer), which gomoku tools (Piskvork, the
//! Gomocup result viewers) open:
//!
//! ```text
//! Piskvorky 15x15, 11:11, 0
//! 8,8,1520
//! 9,8,312
//! ```
//!
//! One line per move, X first: `x,y,time_ms` with 1-based coordinates and the milliseconds the
//! mover used (the time since the previous move, or since the game started). No trailer: the
//! rule variant and the players' names are only in the JSON.

pub use caro_gomocup::psq::PsqError;
use caro_gomocup::psq::PsqGame;

use super::GameRecord;

/// A record read back: the board size and the moves as 0-based `(x, y)`.
#[derive(Debug, PartialEq, Eq)]
pub struct Psq {
    /// Columns.
    pub width: u8,
    /// Rows.
    pub height: u8,
    /// Moves in order, 0-based.
    pub moves: Vec<(u8, u8)>,
}

/// Writes a game as `.psq` text.
pub fn write(g: &GameRecord) -> String {
    let mut prev = g.summary.created_at;
    let moves = g
        .moves
        .iter()
        .map(|m| {
            let used = (m.at - prev).max(0) as u64;
            prev = m.at;
            (caro_engine::Move::new(m.x, m.y), used)
        })
        .collect();
    PsqGame {
        width: g.summary.width,
        height: g.summary.height,
        moves,
        trailer: None,
    }
    .to_text()
}

/// Reads `.psq` text: the header, then move lines until the first line that is not one.
pub fn read(text: &str) -> Result<Psq, PsqError> {
    let game = PsqGame::parse(text)?;
    Ok(Psq {
        width: game.width,
        height: game.height,
        moves: game.moves.iter().map(|(m, _)| (m.x, m.y)).collect(),
    })
}
