//! The manager's side of the Gomocup protocol (protocol 2 of the Piskvork manager,
//! <https://plastovicka.github.io/protocl2en.htm>): the lines a manager sends to put a game and a
//! position in front of an engine, and how it reads the engine's answer.
//!
//! Pure functions on strings and boards, shared by everything in the workspace that drives an
//! outside engine: the match runner's referee (`crates/match`) and the server's outside-engine
//! bots. The engine's own side of the protocol is `src/bin/pbrain.rs`.
//!
//! ```
//! use caro_engine::gomocup::{parse_answer, position_commands, start_command, AnswerError};
//! use caro_engine::{Board, Move, Rule, Rules};
//!
//! let rules = Rules::caro(15, 15, Rule::Caro).unwrap();
//! let board = Board::from_moves(rules, &[Move::new(7, 7)]).unwrap();
//! assert_eq!(start_command(&rules), "START 15");
//! // O is to move: X's stone is the opponent's (field 2).
//! assert_eq!(position_commands(&board), ["BOARD", "7,7,2", "DONE"]);
//! assert_eq!(parse_answer(&board, "8,7"), Ok(Move::new(8, 7)));
//! assert!(matches!(parse_answer(&board, "7,7"), Err(AnswerError::Illegal { .. })));
//! ```

use crate::game::{Board, Move, MoveError};
use crate::rules::Rules;

/// `START n` for a square board, `RECTSTART w,h` otherwise. The engine answers `OK` (or
/// `ERROR message` for a size it cannot play).
pub fn start_command(rules: &Rules) -> String {
    if rules.width() == rules.height() {
        format!("START {}", rules.width())
    } else {
        format!("RECTSTART {},{}", rules.width(), rules.height())
    }
}

/// The commands that give an engine the whole position and ask it to move: `BEGIN` on an empty
/// board, otherwise `BOARD`, one `x,y,field` line per stone in the order they were played
/// (field 1 for the side to move, which the engine plays, 2 for its opponent), and `DONE`.
/// The answer to the last line is the engine's move.
pub fn position_commands(board: &Board) -> Vec<String> {
    if board.moves().is_empty() {
        return vec!["BEGIN".to_string()];
    }
    let me = board.to_move();
    let mut lines = Vec::with_capacity(board.moves().len() + 2);
    lines.push("BOARD".to_string());
    for (i, m) in board.moves().iter().enumerate() {
        // X plays the even plies.
        let mine = (i % 2 == 0) == (me == crate::Player::X);
        lines.push(format!("{},{},{}", m.x, m.y, if mine { 1 } else { 2 }));
    }
    lines.push("DONE".to_string());
    lines
}

/// Whether an engine's output line is informational rather than an answer: empty, or starting
/// with `MESSAGE` or `DEBUG` (text for the manager's log) or `UNKNOWN` (the engine's reply to a
/// command it does not know). Such lines are logged and never read as a move.
pub fn is_informational(line: &str) -> bool {
    let line = line.trim_start();
    line.is_empty()
        || ["MESSAGE", "DEBUG", "UNKNOWN"].iter().any(|p| {
            line.get(..p.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(p))
        })
}

/// Why an answer line is not a legal move.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// The engine answered `ERROR message`.
    #[error("answered {0:?}")]
    Error(String),
    /// A well-formed `x,y` that cannot be played: off the board, taken, or the game is over.
    #[error("played {answer}: {error}")]
    Illegal {
        /// The answer, trimmed.
        answer: String,
        /// Why it cannot be played.
        error: MoveError,
    },
    /// Not `x,y` at all.
    #[error("answered {0:?}, which is not a move")]
    Garbage(String),
}

/// Reads an answer line (not [informational](is_informational)) as a legal move on `board`:
/// two integers separated by a comma, spaces allowed around them.
pub fn parse_answer(board: &Board, line: &str) -> Result<Move, AnswerError> {
    let line = line.trim();
    if line
        .get(..5)
        .is_some_and(|head| head.eq_ignore_ascii_case("ERROR"))
    {
        return Err(AnswerError::Error(line.to_string()));
    }
    let coords: Option<Vec<i64>> = line
        .split(',')
        .map(|f| f.trim().parse::<i64>().ok())
        .collect();
    match coords.as_deref() {
        Some(&[x, y]) => board.check(x, y).map_err(|error| AnswerError::Illegal {
            answer: line.to_string(),
            error,
        }),
        _ => Err(AnswerError::Garbage(line.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rule;

    fn board(moves: &[(u8, u8)]) -> Board {
        let rules = Rules::caro(15, 15, Rule::Freestyle).unwrap();
        let moves: Vec<Move> = moves.iter().map(|&(x, y)| Move::new(x, y)).collect();
        Board::from_moves(rules, &moves).unwrap()
    }

    #[test]
    fn start_is_square_or_rectangular() {
        assert_eq!(
            start_command(&Rules::caro(20, 20, Rule::Freestyle).unwrap()),
            "START 20"
        );
        assert_eq!(
            start_command(&Rules::caro(15, 9, Rule::Caro).unwrap()),
            "RECTSTART 15,9"
        );
    }

    #[test]
    fn the_position_is_seen_from_the_side_to_move() {
        assert_eq!(position_commands(&board(&[])), ["BEGIN"]);
        // X to move: its own stones are field 1, in the order played.
        assert_eq!(
            position_commands(&board(&[(7, 7), (8, 8)])),
            ["BOARD", "7,7,1", "8,8,2", "DONE"]
        );
        assert_eq!(
            position_commands(&board(&[(7, 7), (8, 8), (0, 14)])),
            ["BOARD", "7,7,2", "8,8,1", "0,14,2", "DONE"]
        );
    }

    #[test]
    fn chatter_is_not_an_answer() {
        for line in [
            "",
            "  ",
            "MESSAGE 7,7",
            "message hi",
            "DEBUG 1,1",
            "UNKNOWN x",
        ] {
            assert!(is_informational(line), "{line:?}");
        }
        for line in ["7,7", "OK", "ERROR no", "MESS", "é"] {
            assert!(!is_informational(line), "{line:?}");
        }
    }

    #[test]
    fn answers_are_classified() {
        let b = board(&[(7, 7)]);
        assert_eq!(parse_answer(&b, "8,7"), Ok(Move::new(8, 7)));
        assert_eq!(parse_answer(&b, " 8 , 7 \r"), Ok(Move::new(8, 7)));
        let illegal = |l: &str| matches!(parse_answer(&b, l), Err(AnswerError::Illegal { .. }));
        assert!(illegal("7,7") && illegal("15,0") && illegal("-1,3"));
        assert_eq!(
            parse_answer(&b, "7,7").unwrap_err().to_string(),
            "played 7,7: (7, 7) is already taken"
        );
        assert_eq!(
            parse_answer(&b, "hello"),
            Err(AnswerError::Garbage("hello".into()))
        );
        assert!(matches!(
            parse_answer(&b, "1,2,3"),
            Err(AnswerError::Garbage(_))
        ));
        assert_eq!(
            parse_answer(&b, "error no idea"),
            Err(AnswerError::Error("error no idea".into()))
        );
    }
}
