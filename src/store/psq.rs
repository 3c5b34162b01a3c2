//! The Piskvork / Gomocup game record (`.psq`), which gomoku tools (Piskvork, the Gomocup
//! result viewers) open. What we write:
//!
//! ```text
//! Piskvorky 15x15, 11:11, 0
//! 8,8,1520
//! 9,8,312
//! ```
//!
//! The first line is `Piskvorky WxH, 11:11, 0` (board size; the `11:11, 0` fields are the
//! window position and a flag that Piskvork writes and ignores on reading). Then one line per
//! move, X first: `x,y,time_ms` with 1-based coordinates (column, row from the top) and the
//! milliseconds the mover used (the time since the previous move, or since the game started).
//! Nothing follows the moves (Piskvork may append engine names; readers stop at the first line
//! that is not a move).

use super::GameRecord;

/// Why a `.psq` text cannot be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PsqError {
    /// The first line is not `Piskvorky WxH, ...`.
    #[error("not a Piskvork record: bad header {0:?}")]
    Header(String),
    /// A move line with a coordinate outside the board.
    #[error("line {line}: move outside the {width}x{height} board")]
    OutOfBoard {
        /// 1-based line number.
        line: usize,
        /// Board width.
        width: u8,
        /// Board height.
        height: u8,
    },
}

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
    let mut out = format!(
        "Piskvorky {}x{}, 11:11, 0\n",
        g.summary.width, g.summary.height
    );
    let mut prev = g.summary.created_at;
    for m in &g.moves {
        let used = (m.at - prev).max(0);
        prev = m.at;
        out.push_str(&format!("{},{},{}\n", m.x as u32 + 1, m.y as u32 + 1, used));
    }
    out
}

/// Reads `.psq` text: the header, then move lines until the first line that is not one.
pub fn read(text: &str) -> Result<Psq, PsqError> {
    let mut lines = text.lines();
    let header = lines.next().unwrap_or("").trim();
    let bad = || PsqError::Header(header.to_string());
    let size = header
        .strip_prefix("Piskvorky ")
        .and_then(|r| r.split(',').next())
        .ok_or_else(bad)?;
    let (w, h) = size.trim().split_once('x').ok_or_else(bad)?;
    let width: u8 = w.parse().map_err(|_| bad())?;
    let height: u8 = h.parse().map_err(|_| bad())?;
    let mut moves = Vec::new();
    for (i, line) in lines.enumerate() {
        let mut f = line.trim().split(',').map(|s| s.trim().parse::<i64>());
        let (Some(Ok(x)), Some(Ok(y))) = (f.next(), f.next()) else {
            break;
        };
        if !(1..=width as i64).contains(&x) || !(1..=height as i64).contains(&y) {
            return Err(PsqError::OutOfBoard {
                line: i + 2,
                width,
                height,
            });
        }
        moves.push(((x - 1) as u8, (y - 1) as u8));
    }
    Ok(Psq {
        width,
        height,
        moves,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_it_writes_and_stops_at_trailer_lines() {
        let p = read("Piskvorky 15x15, 11:11, 0\n8,8,10\n9,8,0\n-1\npbrain-x.zip\n").unwrap();
        assert_eq!(
            p,
            Psq {
                width: 15,
                height: 15,
                moves: vec![(7, 7), (8, 7)]
            }
        );
        assert!(matches!(read("hello\n"), Err(PsqError::Header(_))));
        assert!(matches!(
            read("Piskvorky 3x3, 11:11, 0\n4,1,0\n"),
            Err(PsqError::OutOfBoard { line: 2, .. })
        ));
    }
}
