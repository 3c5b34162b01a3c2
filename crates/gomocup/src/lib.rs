//! # caro-gomocup
//!
//! The Gomocup formats, as text: the lines of the Piskvork manager's protocol 2
//! (<https://plastovicka.github.io/protocl2en.htm>) and the `.psq` game record. Both sides of
//! the protocol use it: the managers (the server's outside-engine bots in `src/outside/`, the
//! match runner's referee in `crates/match`) format [`Command`]s and read [`Reply`]s; the brain
//! (`pbrain-caro`, `crates/pbrain`) reads [`Command`]s and formats [`Reply`]s.
//!
//! This crate formats and parses lines and must never do I/O: each user keeps its own
//! (tokio processes in the server, threads and pipes in the match runner, stdin and stdout in
//! the brain), its own timeouts and its own verdicts.
//!
//! ```
//! use caro_engine::{Board, Move, Rule, Rules};
//! use caro_gomocup::{parse_answer, position_commands, AnswerError, Command, Info, Reply};
//!
//! let rules = Rules::caro(15, 15, Rule::Caro).unwrap();
//! let board = Board::from_moves(rules, &[Move::new(7, 7)]).unwrap();
//! // The manager's side.
//! assert_eq!(Command::start(&rules).to_string(), "START 15");
//! assert_eq!(Command::Info(Info::Rule(Rule::Caro)).to_string(), "INFO rule 9");
//! // O is to move: X's stone is the opponent's (field 2).
//! assert_eq!(position_commands(&board), ["BOARD", "7,7,2", "DONE"]);
//! assert_eq!(parse_answer(&board, "8,7"), Ok(Move::new(8, 7)));
//! assert!(matches!(parse_answer(&board, "7,7"), Err(AnswerError::Illegal { .. })));
//! // The brain's side.
//! assert_eq!(Command::parse("turn 8,7"), Ok(Command::Turn(8, 7)));
//! assert_eq!(Reply::Error("no game".into()).to_string(), "ERROR no game");
//! ```
#![deny(missing_docs)]

mod command;
pub mod psq;
mod reply;

pub use command::{position_commands, BadCommand, Command, Field, Info, Stone};
pub use reply::{is_informational, parse_answer, AnswerError, Reply};

/// A line as read from a pipe (with or without its `\n` or `\r\n`), as text without its line
/// end. Bytes that are not UTF-8 are replaced rather than fatal: garbage gets an `ERROR` reply
/// or a forfeit, never a dead reader.
pub fn decode_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .trim_end_matches(['\n', '\r'])
        .to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn lines_lose_their_end_and_keep_their_garbage() {
        assert_eq!(super::decode_line(b"7,7\r\n"), "7,7");
        assert_eq!(super::decode_line(b" OK"), " OK");
        assert_eq!(super::decode_line(b"\xff1,2\n"), "\u{fffd}1,2");
    }
}
