//! Test positions in the `.pos` text format of `tests/data/positions/README.md`: one position per
//! line, `id | rule | to_move | black stones | white stones | expected | label and note`, squares
//! written like `h8` (column letter from `a`, row number from 1). Used by the tactical tests, the
//! benches and the position runner; parsing only, no files. [`BENCH`] is the fixed bench set.

use std::fmt;

use crate::game::SetupError;
use crate::{Board, Move, Player, Rule, Rules};

/// What a position asks of the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Label {
    /// Make five now.
    Win1,
    /// Stop the opponent's five (the only squares that do are listed).
    Block4,
    /// Avoid losing at once: every listed square does, nothing else does.
    Defend,
    /// The side to move has a forced win; the listed move starts one.
    Mate,
    /// The side to move is lost whatever it does.
    Lost,
    /// A midgame position from play with no known forced result, for speed and depth
    /// measurements; there is no answer to check.
    Quiet,
}

/// One parsed position.
#[derive(Clone, Debug)]
pub struct TestPosition {
    /// Identifier from the file.
    pub id: String,
    /// The rule variant.
    pub rule: Rule,
    /// Side to move.
    pub to_move: Player,
    /// X's (black's) stones.
    pub black: Vec<Move>,
    /// O's (white's) stones.
    pub white: Vec<Move>,
    /// Acceptable answers (empty when there is none).
    pub expected: Vec<Move>,
    /// What kind of position it is.
    pub label: Label,
    /// Distance to mate in plies from the note (`+Mn`), when given.
    pub mate_in: Option<u32>,
    /// The label and note text.
    pub note: String,
}

/// A line that could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ParseError {
    /// One-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Parses a square like `h8` (x = 7, y = 7).
pub fn parse_square(s: &str) -> Option<Move> {
    let mut chars = s.chars();
    let col = chars.next()?;
    if !col.is_ascii_lowercase() {
        return None;
    }
    let row: u8 = chars.as_str().parse().ok()?;
    Some(Move::new(col as u8 - b'a', row.checked_sub(1)?))
}

/// Parses an opening book (`data/openings/*.txt`): one opening a line, its squares from the
/// empty board (`h8 i9 j8`), `#` comments. The line number of the first square that does not
/// parse is the error.
pub fn parse_openings(text: &str) -> Result<Vec<Vec<Move>>, ParseError> {
    text.lines()
        .enumerate()
        .map(|(n, l)| (n, l.split('#').next().unwrap_or("").trim()))
        .filter(|(_, l)| !l.is_empty())
        .map(|(n, l)| {
            l.split_whitespace()
                .map(|s| {
                    parse_square(s).ok_or_else(|| ParseError {
                        line: n + 1,
                        message: format!("not a square: {s:?}"),
                    })
                })
                .collect()
        })
        .collect()
}

/// Writes a square like `h8`.
pub fn square_name(mv: Move) -> String {
    format!("{}{}", (b'a' + mv.x) as char, mv.y + 1)
}

/// Depth of the fixed-depth node count (`pbrain-caro bench`, the `bench_set` benchmark).
pub const BENCH_DEPTH: u8 = 10;

/// The fixed midgame positions of `pbrain-caro bench`, `benches/search.rs` and
/// `examples/branching.rs` (one list, so the three measure the same positions), one `.pos` line
/// each. Taken from `tests/data/positions/midgame15.pos`: quiet positions from engine self-play
/// after the match openings, two freestyle and two Vietnamese caro (rule 9), 20 to 26 stones, no
/// forced result known. (Until the threat-space search solved them at once, two of the four were
/// forced wins and two forced defences, which measured the threat solver rather than the
/// search.) Changing this list changes every bench node count: do it in a commit of its own.
pub const BENCH: &str = "\
selfplay_freestyle-o4-s20 | 0 | black | g9 g8 g10 f11 g13 b8 e10 d11 g12 h13 | e11 d10 g11 f12 c9 e12 d9 f9 h10 i14 | - | QUIET
selfplay_freestyle-o18-s26 | 0 | black | h8 i6 i5 j8 j7 j9 e7 f8 g9 h9 e10 k6 e6 | g7 h6 i7 h7 k8 j6 j11 g8 h10 f9 g10 l5 e8 | - | QUIET
selfplay_caro-o1-s23 | 9 | white | g8 e5 f6 e8 i4 g7 e7 h8 h4 g4 e6 f5 | f7 g6 h5 j3 f8 d4 e4 j10 g5 k4 e10 | - | QUIET
selfplay_caro-o21-s23 | 9 | white | h9 j9 g11 f9 h8 e10 g6 j13 h13 i11 k10 l11 | g10 g9 h11 f10 i12 g8 h7 i9 i10 j10 k13 | - | QUIET
";

/// The [`BENCH`] positions as boards, with their ids.
pub fn bench_boards() -> Vec<(String, Board)> {
    parse(BENCH)
        .expect("the bench positions parse")
        .into_iter()
        .map(|p| {
            let board = p.board().expect("the bench positions are legal");
            (p.id, board)
        })
        .collect()
}

/// The short part of a position id (`freestyle-o4-s20` of `selfplay_freestyle-o4-s20`, `g0-s10`
/// of `match_x_vs_y_500ms-g0-s10`), enough to tell the bench positions apart in tables and
/// benchmark names.
pub fn short_id(id: &str) -> &str {
    if let Some(rest) = id.strip_prefix("selfplay_") {
        return rest;
    }
    id.rsplit_once('_')
        .and_then(|(_, tail)| tail.split_once('-'))
        .map_or(id, |(_, rest)| rest)
}

/// Parses a whole `.pos` file; comment (`#`) and blank lines are skipped.
pub fn parse(text: &str) -> Result<Vec<TestPosition>, ParseError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|(i, l)| {
            parse_line(l).map_err(|message| ParseError {
                line: i + 1,
                message,
            })
        })
        .collect()
}

fn parse_line(line: &str) -> Result<TestPosition, String> {
    let fields: Vec<&str> = line.split('|').map(str::trim).collect();
    let [id, rule, to_move, black, white, expected, note] = fields[..] else {
        return Err(format!("expected 7 fields, found {}", fields.len()));
    };
    let code: u32 = rule.parse().map_err(|_| format!("bad rule {rule:?}"))?;
    // The position files' own convention (their README): 8 is caro with overlines, blocked
    // or not, as `caro_overline`, not the Gomocup referee's rule that `from_gomocup` maps 8 to.
    let rule = match code {
        8 => Rule::CaroOverline,
        _ => Rule::from_gomocup(code).ok_or_else(|| format!("unsupported rule {code}"))?,
    };
    let to_move = match to_move {
        "black" => Player::X,
        "white" => Player::O,
        other => return Err(format!("bad side {other:?}")),
    };
    let squares = |s: &str| -> Result<Vec<Move>, String> {
        s.split(|c: char| c.is_whitespace() || c == '/')
            .filter(|t| !t.is_empty() && *t != "-")
            .map(|t| parse_square(t).ok_or_else(|| format!("bad square {t:?}")))
            .collect()
    };
    let label_word = note.split([';', ' ', '(']).next().unwrap_or("");
    let label = match label_word {
        "WIN1" => Label::Win1,
        "BLOCK4" => Label::Block4,
        "DEFEND" => Label::Defend,
        "MATE" => Label::Mate,
        "MATED" | "LOST" => Label::Lost,
        "QUIET" => Label::Quiet,
        other => return Err(format!("unknown label {other:?}")),
    };
    let mate_in = note
        .split("+M")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok());
    Ok(TestPosition {
        id: id.to_string(),
        rule,
        to_move,
        black: squares(black)?,
        white: squares(white)?,
        expected: squares(expected)?,
        label,
        mate_in,
        note: note.to_string(),
    })
}

impl TestPosition {
    /// The position on a 15x15 board (see [`Board::set_up`]: the history is not the game's).
    pub fn board(&self) -> Result<Board, SetupError> {
        self.board_sized(15, 15)
    }

    /// The position on a `width` x `height` board.
    pub fn board_sized(&self, width: u8, height: u8) -> Result<Board, SetupError> {
        let rules = Rules::caro(width, height, self.rule).expect("valid board size");
        Board::set_up(rules, &self.black, &self.white)
    }
}

impl fmt::Display for TestPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({:?}, {})", self.id, self.label, self.rule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squares() {
        assert_eq!(parse_square("h8"), Some(Move::new(7, 7)));
        assert_eq!(parse_square("a15"), Some(Move::new(0, 14)));
        assert_eq!(parse_square("a0"), None);
        assert_eq!(square_name(Move::new(7, 7)), "h8");
    }

    #[test]
    fn opening_books() {
        let text = "# a book\nh8 i9 j8  # judge +64\n\n  g7\n";
        assert_eq!(
            parse_openings(text),
            Ok(vec![
                vec![Move::new(7, 7), Move::new(8, 8), Move::new(9, 7)],
                vec![Move::new(6, 6)]
            ])
        );
        let bad = parse_openings("h8\nh8 zz\n").unwrap_err();
        assert_eq!(
            (bad.line, bad.message.as_str()),
            (2, "not a square: \"zz\"")
        );
        let book = include_str!("../../../data/openings/freestyle15-v3.txt");
        assert_eq!(parse_openings(book).map(|b| b.len()), Ok(40));
    }

    #[test]
    fn the_bench_positions_load() {
        let boards = bench_boards();
        assert_eq!(boards.len(), 4);
        assert_eq!(short_id(&boards[0].0), "freestyle-o4-s20");
        assert_eq!(short_id("match_x_vs_y_500ms-g0-s10"), "g0-s10");
    }

    #[test]
    fn a_line() {
        let text = "# comment\nid1 | 9 | white | h8 i9 | g9 | c12/d12 | DEFEND\n";
        let p = &parse(text).unwrap()[0];
        assert_eq!(p.rule, Rule::Caro);
        assert_eq!(p.to_move, Player::O);
        assert_eq!(p.expected, vec![Move::new(2, 11), Move::new(3, 11)]);
        assert_eq!(p.label, Label::Defend);
        let p = &parse("x | 0 | black | h8 | g9 | j9 | MATE; eval=+M13").unwrap()[0];
        assert_eq!(p.mate_in, Some(13));
    }
}
