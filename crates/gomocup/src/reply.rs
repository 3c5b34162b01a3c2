//! A brain's lines to the manager (protocol 2): formatted by brains with `Display`, read by
//! managers with [`Reply::parse`], and [`parse_answer`], which turns an answer into a legal move.

use std::fmt;

use caro_engine::{Board, Move, MoveError};

/// One line from a brain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// An empty line: ignored.
    Empty,
    /// `OK`: the answer to `START`, `RECTSTART`, `RESTART` and `TAKEBACK`.
    Ok,
    /// `ERROR message`: the brain cannot do what it was asked.
    Error(String),
    /// `MESSAGE text`: for the manager's log (search reports, say).
    Message(String),
    /// `DEBUG text`: for the manager's log.
    Debug(String),
    /// `UNKNOWN text`: the reply to a command the brain does not know.
    Unknown(String),
    /// `x,y`: a move, not yet checked against any board.
    Coords(i64, i64),
    /// Anything else: the `ABOUT` answer, or garbage where a move was due.
    Other(String),
}

impl Reply {
    /// The answer that plays `mv`.
    pub fn mv(mv: Move) -> Reply {
        Reply::Coords(mv.x.into(), mv.y.into())
    }

    /// Reads one line. The keywords are matched in any case and at the start of the line
    /// (`MESSAGEhello` is a message: managers read it so).
    pub fn parse(line: &str) -> Reply {
        let line = line.trim();
        if line.is_empty() {
            return Reply::Empty;
        }
        if line.eq_ignore_ascii_case("OK") {
            return Reply::Ok;
        }
        let after = |keyword: &str| {
            line.get(..keyword.len())
                .filter(|head| head.eq_ignore_ascii_case(keyword))
                .map(|_| line[keyword.len()..].trim().to_string())
        };
        if let Some(text) = after("ERROR") {
            return Reply::Error(text);
        }
        if let Some(text) = after("MESSAGE") {
            return Reply::Message(text);
        }
        if let Some(text) = after("DEBUG") {
            return Reply::Debug(text);
        }
        if let Some(text) = after("UNKNOWN") {
            return Reply::Unknown(text);
        }
        let coords: Option<Vec<i64>> = line
            .split(',')
            .map(|f| f.trim().parse::<i64>().ok())
            .collect();
        match coords.as_deref() {
            Some(&[x, y]) => Reply::Coords(x, y),
            _ => Reply::Other(line.to_string()),
        }
    }

    /// Whether the line is for the log rather than an answer: empty, `MESSAGE`, `DEBUG` or
    /// `UNKNOWN`. Managers never read such a line as a move.
    pub fn is_informational(&self) -> bool {
        matches!(
            self,
            Reply::Empty | Reply::Message(_) | Reply::Debug(_) | Reply::Unknown(_)
        )
    }
}

impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::Empty => Ok(()),
            Reply::Ok => f.write_str("OK"),
            Reply::Error(text) => write!(f, "ERROR {text}"),
            Reply::Message(text) => write!(f, "MESSAGE {text}"),
            Reply::Debug(text) => write!(f, "DEBUG {text}"),
            Reply::Unknown(text) => write!(f, "UNKNOWN {text}"),
            Reply::Coords(x, y) => write!(f, "{x},{y}"),
            Reply::Other(text) => f.write_str(text),
        }
    }
}

/// Whether an output line is [informational](Reply::is_informational).
pub fn is_informational(line: &str) -> bool {
    Reply::parse(line).is_informational()
}

/// Why an answer line is not a legal move.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// The brain answered `ERROR message` (the whole line, trimmed).
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

/// Reads an answer line (not [informational](is_informational)) as a legal move on `board`.
pub fn parse_answer(board: &Board, line: &str) -> Result<Move, AnswerError> {
    let line = line.trim();
    match Reply::parse(line) {
        Reply::Error(_) => Err(AnswerError::Error(line.to_string())),
        Reply::Coords(x, y) => board.check(x, y).map_err(|error| AnswerError::Illegal {
            answer: line.to_string(),
            error,
        }),
        _ => Err(AnswerError::Garbage(line.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use caro_engine::{Rule, Rules};

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
    fn replies_read_back_what_brains_write() {
        for r in [
            Reply::Ok,
            Reply::Error("no game".into()),
            Reply::Message("depth 3 score 10".into()),
            Reply::Debug("x".into()),
            Reply::Unknown("command \"SWAP2\"".into()),
            Reply::mv(Move::new(14, 0)),
            Reply::Other("name=\"pbrain-caro\"".into()),
        ] {
            assert_eq!(Reply::parse(&r.to_string()), r, "{r}");
        }
        assert_eq!(Reply::parse(" ok\r"), Reply::Ok);
        assert_eq!(Reply::parse("-1 , 3"), Reply::Coords(-1, 3));
    }

    #[test]
    fn answers_are_classified() {
        let rules = Rules::caro(15, 15, Rule::Freestyle).unwrap();
        let b = Board::from_moves(rules, &[Move::new(7, 7)]).unwrap();
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
