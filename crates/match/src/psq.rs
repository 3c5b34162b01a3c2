//! Game records in the Piskvork `.psq` format, which Piskvork, the Gomocup result archives and
//! most gomoku tools read:
//!
//! ```text
//! Piskvorky 15x15, 11:11, 0
//! 8,8,0
//! 9,9,153
//! ...
//! pbrain-caro
//! pbrain-caro classic 2
//! -1
//! 1,caro
//! ```
//!
//! The header names the board size (readers ignore the `11:11, 0` after it, which Piskvork uses
//! for itself; we write it as a constant). Then one line per move, `x,y,time_ms`, with 1-based
//! coordinates and the thinking time in milliseconds (0 for opening stones). Readers take moves
//! up to the first line that is not three integers. What follows is free; we follow a trailer
//! seen in published Gomocup-style records: the first player's (X's) and the second player's
//! engine names, `-1`, and a result line: `1`, `2` or `0` (first player won, second won, draw)
//! with the rule name. `docs/match.md` shows a real file.

use caro_engine::Move;

/// One game as a `.psq` file holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PsqGame {
    /// Board width.
    pub width: u8,
    /// Board height.
    pub height: u8,
    /// Moves from the empty board (opening included), with thinking times in milliseconds.
    pub moves: Vec<(Move, u64)>,
    /// Engine of the first player (X) and of the second (O).
    pub names: [String; 2],
    /// 1: first player won, 2: second won, 0: draw; `None` when unknown.
    pub winner: Option<u8>,
    /// The rule name (`caro`, `freestyle`, ...), free text.
    pub rule: String,
}

/// A `.psq` text that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PsqError {
    /// The first line is not `Piskvorky WxH, ...`.
    #[error("bad .psq header {0:?}")]
    Header(String),
    /// A move is off the board.
    #[error("move {0} is off the board")]
    OffBoard(String),
}

impl PsqGame {
    /// The `.psq` text, lines ended by `\n`.
    pub fn to_text(&self) -> String {
        let mut out = format!("Piskvorky {}x{}, 11:11, 0\n", self.width, self.height);
        for (mv, ms) in &self.moves {
            out.push_str(&format!("{},{},{}\n", mv.x as u32 + 1, mv.y as u32 + 1, ms));
        }
        for name in &self.names {
            // A name must not be read back as a move or spill onto two lines.
            out.push_str(&name.replace(['\n', '\r'], " "));
            out.push('\n');
        }
        out.push_str("-1\n");
        match self.winner {
            Some(w) => out.push_str(&format!("{w},{}\n", self.rule)),
            None => out.push_str(&format!("-,{}\n", self.rule)),
        }
        out
    }

    /// Reads a `.psq` text: the header and the moves are required, the trailer is read if it
    /// has our shape (two names, `-1`, a result line) and ignored otherwise.
    pub fn parse(text: &str) -> Result<PsqGame, PsqError> {
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let header = lines.next().unwrap_or("");
        let size = header
            .strip_prefix("Piskvorky ")
            .and_then(|rest| rest.split(',').next())
            .and_then(|s| s.trim().split_once('x'))
            .and_then(|(w, h)| Some((w.parse::<u8>().ok()?, h.parse::<u8>().ok()?)));
        let Some((width, height)) = size else {
            return Err(PsqError::Header(header.to_string()));
        };
        let mut moves = Vec::new();
        let mut rest = Vec::new();
        for line in lines.by_ref() {
            let fields: Vec<Option<i64>> = line.split(',').map(|f| f.trim().parse().ok()).collect();
            match fields[..] {
                [Some(x), Some(y), Some(t)] => {
                    if !(1..=width as i64).contains(&x) || !(1..=height as i64).contains(&y) {
                        return Err(PsqError::OffBoard(line.to_string()));
                    }
                    moves.push((Move::new(x as u8 - 1, y as u8 - 1), t.max(0) as u64));
                }
                _ => {
                    rest.push(line);
                    break;
                }
            }
        }
        rest.extend(lines);
        let (names, winner, rule) = match rest[..] {
            [a, b, "-1", result, ..] => {
                let (w, rule) = result.split_once(',').unwrap_or((result, ""));
                (
                    [a.to_string(), b.to_string()],
                    w.parse().ok(),
                    rule.to_string(),
                )
            }
            _ => (Default::default(), None, String::new()),
        };
        Ok(PsqGame {
            width,
            height,
            moves,
            names,
            winner,
            rule,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game() -> PsqGame {
        PsqGame {
            width: 15,
            height: 15,
            moves: vec![
                (Move::new(7, 7), 0),
                (Move::new(8, 8), 153),
                (Move::new(0, 14), 2),
            ],
            names: ["pbrain-caro".into(), "pbrain-caro classic 2".into()],
            winner: Some(2),
            rule: "caro".into(),
        }
    }

    #[test]
    fn writes_one_based_coordinates() {
        let text = game().to_text();
        assert!(text.starts_with("Piskvorky 15x15, 11:11, 0\n8,8,0\n9,9,153\n1,15,2\n"));
        assert!(text.ends_with("pbrain-caro\npbrain-caro classic 2\n-1\n2,caro\n"));
    }

    #[test]
    fn round_trip() {
        let g = game();
        assert_eq!(PsqGame::parse(&g.to_text()).unwrap(), g);
        let draw = PsqGame {
            winner: Some(0),
            width: 20,
            height: 17,
            ..game()
        };
        assert_eq!(PsqGame::parse(&draw.to_text()).unwrap(), draw);
    }

    #[test]
    fn foreign_files_read_their_moves() {
        // Header and moves only, as some tools write; CRLF line ends.
        let g = PsqGame::parse("Piskvorky 20x20, 11:11, 0\r\n10,10,0\r\n11,11,515\r\n").unwrap();
        assert_eq!(
            g.moves,
            vec![(Move::new(9, 9), 0), (Move::new(10, 10), 515)]
        );
        assert_eq!(g.winner, None);
        assert!(PsqGame::parse("Gomoku 15x15\n").is_err());
        assert!(PsqGame::parse("Piskvorky 15x15, 11:11, 0\n16,1,0\n").is_err());
    }
}
