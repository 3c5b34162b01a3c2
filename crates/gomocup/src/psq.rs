//! Game records in the Piskvork `.psq` format, which Piskvork, the Gomocup result archives and
//! most gomoku tools read; the one writer of the workspace (the server's `/api/games/{id}.psq`,
//! the match runner's `games/NNNN.psq`):
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
//! The header names the board size (readers ignore the `11:11, 0` after it, the window position
//! and a flag that Piskvork writes for itself; we write it as a constant). Then one line per
//! move, X first, `x,y,time_ms`, with 1-based coordinates (column, row from the top) and the
//! milliseconds the mover used. Readers take moves up to the first line that is not one. What
//! follows is free; the optional [`Trailer`] follows one seen in published Gomocup-style
//! records: the first player's (X's) and the second player's names, `-1`, and a result line:
//! `1`, `2` or `0` (first player won, second won, draw) with the rule name.

use caro_engine::Move;

/// One game as a `.psq` file holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PsqGame {
    /// Board width.
    pub width: u8,
    /// Board height.
    pub height: u8,
    /// Moves from the empty board, with the milliseconds each mover used.
    pub moves: Vec<(Move, u64)>,
    /// Names and result after the moves; `None` writes nothing after them.
    pub trailer: Option<Trailer>,
}

/// The players and the result, after the moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trailer {
    /// The first player (X) and the second (O).
    pub names: [String; 2],
    /// 1: first player won, 2: second won, 0: draw; `None` when unknown (written `-`).
    pub winner: Option<u8>,
    /// The rule name (`caro`, `freestyle`, ...), free text.
    pub rule: String,
}

/// A `.psq` text that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PsqError {
    /// The first line is not `Piskvorky WxH, ...`.
    #[error("not a Piskvork record: bad header {0:?}")]
    Header(String),
    /// A move is off the board.
    #[error("line {line}: move {text:?} is off the board")]
    OffBoard {
        /// 1-based line number.
        line: usize,
        /// The move line.
        text: String,
    },
}

impl PsqGame {
    /// The `.psq` text, lines ended by `\n`.
    pub fn to_text(&self) -> String {
        let mut out = format!("Piskvorky {}x{}, 11:11, 0\n", self.width, self.height);
        for (mv, ms) in &self.moves {
            out.push_str(&format!("{},{},{}\n", mv.x as u32 + 1, mv.y as u32 + 1, ms));
        }
        if let Some(t) = &self.trailer {
            for name in &t.names {
                // A name must not be read back as a move or spill onto two lines.
                out.push_str(&name.replace(['\n', '\r'], " "));
                out.push('\n');
            }
            out.push_str("-1\n");
            match t.winner {
                Some(w) => out.push_str(&format!("{w},{}\n", t.rule)),
                None => out.push_str(&format!("-,{}\n", t.rule)),
            }
        }
        out
    }

    /// Reads a `.psq` text: the header and the moves are required (`x,y,time_ms`, or `x,y` as
    /// some tools write), the trailer is read if it has our shape and ignored otherwise.
    pub fn parse(text: &str) -> Result<PsqGame, PsqError> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty());
        let header = lines.next().map_or("", |(_, l)| l);
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
        for (number, line) in lines.by_ref() {
            let fields: Vec<Option<i64>> = line.split(',').map(|f| f.trim().parse().ok()).collect();
            let (x, y, ms) = match fields[..] {
                [Some(x), Some(y)] => (x, y, 0),
                [Some(x), Some(y), Some(ms)] => (x, y, ms),
                _ => {
                    rest.push(line);
                    break;
                }
            };
            if !(1..=width as i64).contains(&x) || !(1..=height as i64).contains(&y) {
                return Err(PsqError::OffBoard {
                    line: number,
                    text: line.to_string(),
                });
            }
            moves.push((Move::new(x as u8 - 1, y as u8 - 1), ms.max(0) as u64));
        }
        rest.extend(lines.map(|(_, l)| l));
        let trailer = match rest[..] {
            [a, b, "-1", result, ..] => {
                let (w, rule) = result.split_once(',').unwrap_or((result, ""));
                Some(Trailer {
                    names: [a.to_string(), b.to_string()],
                    winner: w.parse().ok(),
                    rule: rule.to_string(),
                })
            }
            _ => None,
        };
        Ok(PsqGame {
            width,
            height,
            moves,
            trailer,
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
            trailer: Some(Trailer {
                names: ["pbrain-caro".into(), "pbrain-caro classic 2".into()],
                winner: Some(2),
                rule: "caro".into(),
            }),
        }
    }

    #[test]
    fn writes_one_based_coordinates() {
        let text = game().to_text();
        assert!(text.starts_with("Piskvorky 15x15, 11:11, 0\n8,8,0\n9,9,153\n1,15,2\n"));
        assert!(text.ends_with("pbrain-caro\npbrain-caro classic 2\n-1\n2,caro\n"));
        let bare = PsqGame {
            trailer: None,
            ..game()
        };
        assert_eq!(
            bare.to_text(),
            "Piskvorky 15x15, 11:11, 0\n8,8,0\n9,9,153\n1,15,2\n"
        );
    }

    #[test]
    fn round_trip() {
        let g = game();
        assert_eq!(PsqGame::parse(&g.to_text()).unwrap(), g);
        let mut draw = PsqGame {
            width: 20,
            height: 17,
            ..game()
        };
        draw.trailer.as_mut().unwrap().winner = Some(0);
        assert_eq!(PsqGame::parse(&draw.to_text()).unwrap(), draw);
        let bare = PsqGame {
            trailer: None,
            ..game()
        };
        assert_eq!(PsqGame::parse(&bare.to_text()).unwrap(), bare);
    }

    #[test]
    fn foreign_files_read_their_moves_and_stop_at_other_trailers() {
        // Header and moves only, as some tools write; CRLF line ends.
        let g = PsqGame::parse("Piskvorky 20x20, 11:11, 0\r\n10,10,0\r\n11,11,515\r\n").unwrap();
        assert_eq!(
            g.moves,
            vec![(Move::new(9, 9), 0), (Move::new(10, 10), 515)]
        );
        assert_eq!(g.trailer, None);
        let g =
            PsqGame::parse("Piskvorky 15x15, 11:11, 0\n8,8,10\n9,8\n-1\npbrain-x.zip\n").unwrap();
        assert_eq!(g.moves, vec![(Move::new(7, 7), 10), (Move::new(8, 7), 0)]);
        assert_eq!(g.trailer, None);
        assert!(matches!(
            PsqGame::parse("Gomoku 15x15\n"),
            Err(PsqError::Header(_))
        ));
        assert_eq!(
            PsqGame::parse("Piskvorky 3x3, 11:11, 0\n4,1,0\n"),
            Err(PsqError::OffBoard {
                line: 2,
                text: "4,1,0".into()
            })
        );
    }
}
