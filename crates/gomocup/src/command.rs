//! The manager's commands to a brain (protocol 2): formatted by managers with `Display`, read
//! by brains with [`Command::parse`], and the board encoding of `BOARD` (one [`Stone`] per line).

use std::fmt;

use caro_engine::{Board, Move, Player, Rule, Rules};

/// One command line from the manager. Coordinates and sizes are kept as the numbers sent (a
/// brain checks them against its board and names them in its `ERROR`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `START n`: a new game on an n x n board; answered `OK` or `ERROR`.
    Start(u64),
    /// `RECTSTART w,h`: a new game on a w x h board.
    RectStart(u64, u64),
    /// `RESTART`: a new game on the same board.
    Restart,
    /// `INFO key value`: never answered.
    Info(Info),
    /// `BEGIN`: the brain plays the first move.
    Begin,
    /// `TURN x,y`: the opponent's move; the brain answers its own.
    Turn(u64, u64),
    /// `BOARD`: a whole position follows, one [`Stone`] per line, then `DONE`; the brain
    /// answers its move.
    Board,
    /// `TAKEBACK x,y`: remove that stone; answered `OK`.
    Takeback(u64, u64),
    /// `PLAY x,y` (Yixin board extension): play this move for the brain's side.
    Play(u64, u64),
    /// `ABOUT`: the brain's `key="value"` list.
    About,
    /// `END`: the brain exits.
    End,
    /// Anything else, with the word as sent; protocol 2 asks for `UNKNOWN` in reply.
    Unknown(String),
}

/// A known command whose arguments cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{command} expects {expected}, got {args:?}")]
pub struct BadCommand {
    /// The command, upper case (`START`, `RECTSTART`, `TURN`, `TAKEBACK` or `PLAY`).
    pub command: &'static str,
    /// What it takes (`a board size`, `x,y`, ...).
    pub expected: &'static str,
    /// The arguments as sent, trimmed.
    pub args: String,
}

impl Command {
    /// `START n` for a square board, `RECTSTART w,h` otherwise.
    pub fn start(rules: &Rules) -> Command {
        let (w, h) = (u64::from(rules.width()), u64::from(rules.height()));
        if w == h {
            Command::Start(w)
        } else {
            Command::RectStart(w, h)
        }
    }

    /// `TURN x,y` with the opponent's move.
    pub fn turn(mv: Move) -> Command {
        Command::Turn(mv.x.into(), mv.y.into())
    }

    /// Reads one command line (the command word in any case, arguments after the first
    /// whitespace). Extra arguments of the commands that take none are ignored.
    pub fn parse(line: &str) -> Result<Command, BadCommand> {
        let line = line.trim();
        let (word, args) = match line.split_once(char::is_whitespace) {
            Some((w, a)) => (w, a.trim()),
            None => (line, ""),
        };
        let bad = |command, expected| BadCommand {
            command,
            expected,
            args: args.to_string(),
        };
        let pair = |command| parse_pair(args).ok_or_else(|| bad(command, "x,y"));
        Ok(match word.to_ascii_uppercase().as_str() {
            "START" => Command::Start(args.parse().map_err(|_| bad("START", "a board size"))?),
            "RECTSTART" => {
                let (w, h) = parse_pair(args).ok_or_else(|| bad("RECTSTART", "width,height"))?;
                Command::RectStart(w, h)
            }
            "RESTART" => Command::Restart,
            "INFO" => Command::Info(Info::parse(args)),
            "BEGIN" => Command::Begin,
            "TURN" => pair("TURN").map(|(x, y)| Command::Turn(x, y))?,
            "BOARD" => Command::Board,
            "TAKEBACK" => pair("TAKEBACK").map(|(x, y)| Command::Takeback(x, y))?,
            "PLAY" => pair("PLAY").map(|(x, y)| Command::Play(x, y))?,
            "ABOUT" => Command::About,
            "END" => Command::End,
            _ => Command::Unknown(word.to_string()),
        })
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Start(n) => write!(f, "START {n}"),
            Command::RectStart(w, h) => write!(f, "RECTSTART {w},{h}"),
            Command::Restart => f.write_str("RESTART"),
            Command::Info(info) => write!(f, "INFO {info}"),
            Command::Begin => f.write_str("BEGIN"),
            Command::Turn(x, y) => write!(f, "TURN {x},{y}"),
            Command::Board => f.write_str("BOARD"),
            Command::Takeback(x, y) => write!(f, "TAKEBACK {x},{y}"),
            Command::Play(x, y) => write!(f, "PLAY {x},{y}"),
            Command::About => f.write_str("ABOUT"),
            Command::End => f.write_str("END"),
            Command::Unknown(word) => f.write_str(word),
        }
    }
}

/// `x,y` as two numbers, spaces allowed around them.
fn parse_pair(s: &str) -> Option<(u64, u64)> {
    let (a, b) = s.split_once(',')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// The `INFO` keys we send or read (all times in milliseconds). A value that cannot be read
/// makes the line an [`Info::Other`]: protocol 2 asks brains to ignore what they do not know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Info {
    /// `timeout_turn`: time for one move; 0 means "as fast as possible".
    TimeoutTurn(u64),
    /// `timeout_match`: time for the whole game; 0 means no limit.
    TimeoutMatch(u64),
    /// `time_left`: what remains of the match time; negative once overdrawn, 2147483647 when
    /// there is no match limit.
    TimeLeft(i64),
    /// `max_memory`: bytes; 0 means no limit.
    MaxMemory(u64),
    /// `game_type`: 0 the opponent is a human, 1 another brain (and more in protocol 2).
    GameType(u8),
    /// `thread_num`: how many threads the brain may search with (Gomocup's addition to
    /// protocol 2; a brain that cannot use threads ignores it).
    ThreadNum(u64),
    /// `rule`: a rule variant we know.
    Rule(Rule),
    /// `rule` with a value that is not a rule we know (renju, say), as sent.
    UnsupportedRule(String),
    /// Any other key (`folder`, `evaluate`, ...) or an unreadable value, key lower case.
    Other {
        /// The key.
        key: String,
        /// The value, trimmed (empty when none).
        value: String,
    },
}

impl Info {
    /// Reads the arguments of `INFO` (`key value`; the key in any case).
    pub fn parse(args: &str) -> Info {
        let args = args.trim();
        let (key, value) = match args.split_once(char::is_whitespace) {
            Some((k, v)) => (k.to_ascii_lowercase(), v.trim()),
            None => (args.to_ascii_lowercase(), ""),
        };
        let other = |key: String| Info::Other {
            key,
            value: value.to_string(),
        };
        if value.is_empty() {
            return other(key);
        }
        let read = match key.as_str() {
            "timeout_turn" => value.parse().ok().map(Info::TimeoutTurn),
            "timeout_match" => value.parse().ok().map(Info::TimeoutMatch),
            "time_left" => value.parse().ok().map(Info::TimeLeft),
            "max_memory" => value.parse().ok().map(Info::MaxMemory),
            "game_type" => value.parse().ok().map(Info::GameType),
            "thread_num" => value.parse().ok().map(Info::ThreadNum),
            "rule" => Some(
                value
                    .parse::<u32>()
                    .ok()
                    .and_then(Rule::from_gomocup)
                    .map_or_else(|| Info::UnsupportedRule(value.to_string()), Info::Rule),
            ),
            _ => None,
        };
        read.unwrap_or_else(|| other(key))
    }
}

impl fmt::Display for Info {
    /// `key value`, as it follows `INFO `.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Info::TimeoutTurn(ms) => write!(f, "timeout_turn {ms}"),
            Info::TimeoutMatch(ms) => write!(f, "timeout_match {ms}"),
            Info::TimeLeft(ms) => write!(f, "time_left {ms}"),
            Info::MaxMemory(bytes) => write!(f, "max_memory {bytes}"),
            Info::GameType(t) => write!(f, "game_type {t}"),
            Info::ThreadNum(n) => write!(f, "thread_num {n}"),
            Info::Rule(rule) => write!(f, "rule {}", rule.gomocup_code()),
            Info::UnsupportedRule(value) => write!(f, "rule {value}"),
            Info::Other { key, value } => write!(f, "{key} {value}"),
        }
    }
}

/// Whose stone a `BOARD` line gives, seen from the brain (the side to move).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// 1: the brain's own stone.
    Own,
    /// 2: the opponent's.
    Opponent,
    /// 3: a cell of a previous game's winning line, in continuous mode: no stone, but not to
    /// be played on.
    WinningLine,
}

/// One `x,y,field` line of `BOARD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stone {
    /// The cell.
    pub mv: Move,
    /// Whose it is.
    pub field: Field,
}

impl Stone {
    /// Reads `x,y,field` (spaces allowed around the numbers).
    pub fn parse(line: &str) -> Option<Stone> {
        let fields: Vec<Option<u8>> = line.split(',').map(|f| f.trim().parse().ok()).collect();
        let [Some(x), Some(y), Some(field)] = fields[..] else {
            return None;
        };
        let field = match field {
            1 => Field::Own,
            2 => Field::Opponent,
            3 => Field::WinningLine,
            _ => return None,
        };
        Some(Stone {
            mv: Move::new(x, y),
            field,
        })
    }
}

impl fmt::Display for Stone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = match self.field {
            Field::Own => 1,
            Field::Opponent => 2,
            Field::WinningLine => 3,
        };
        write!(f, "{},{},{field}", self.mv.x, self.mv.y)
    }
}

/// The commands that give a brain the whole position and ask it to move: `BEGIN` on an empty
/// board, otherwise `BOARD`, one [`Stone`] per line in the order they were played (seen from
/// the side to move, which the brain plays), and `DONE`. The answer to the last line is the
/// brain's move.
pub fn position_commands(board: &Board) -> Vec<String> {
    if board.moves().is_empty() {
        return vec![Command::Begin.to_string()];
    }
    let me = board.to_move();
    let mut lines = Vec::with_capacity(board.moves().len() + 2);
    lines.push(Command::Board.to_string());
    for (i, &mv) in board.moves().iter().enumerate() {
        // X plays the even plies.
        let mine = (i % 2 == 0) == (me == Player::X);
        let field = if mine { Field::Own } else { Field::Opponent };
        lines.push(Stone { mv, field }.to_string());
    }
    lines.push("DONE".to_string());
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(moves: &[(u8, u8)]) -> Board {
        let rules = Rules::caro(15, 15, Rule::Freestyle).unwrap();
        let moves: Vec<Move> = moves.iter().map(|&(x, y)| Move::new(x, y)).collect();
        Board::from_moves(rules, &moves).unwrap()
    }

    #[test]
    fn start_is_square_or_rectangular() {
        let start = |w, h| Command::start(&Rules::caro(w, h, Rule::Freestyle).unwrap());
        assert_eq!(start(20, 20).to_string(), "START 20");
        assert_eq!(start(15, 9).to_string(), "RECTSTART 15,9");
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
    fn commands_read_back_what_managers_write() {
        for c in [
            Command::Start(15),
            Command::RectStart(20, 15),
            Command::Restart,
            Command::Info(Info::TimeoutTurn(500)),
            Command::Info(Info::TimeLeft(-3)),
            Command::Info(Info::Rule(Rule::Caro)),
            Command::Begin,
            Command::turn(Move::new(3, 4)),
            Command::Board,
            Command::Takeback(1, 2),
            Command::Play(0, 0),
            Command::About,
            Command::End,
        ] {
            assert_eq!(Command::parse(&c.to_string()), Ok(c.clone()), "{c}");
        }
        assert_eq!(Command::parse(" turn  7 , 8 "), Ok(Command::Turn(7, 8)));
        assert_eq!(Command::parse("end now"), Ok(Command::End));
        assert_eq!(
            Command::parse("Swap2"),
            Ok(Command::Unknown("Swap2".into()))
        );
    }

    #[test]
    fn bad_arguments_name_the_command() {
        let err = |l: &str| Command::parse(l).unwrap_err().to_string();
        assert_eq!(err("START x"), "START expects a board size, got \"x\"");
        assert_eq!(
            err("RECTSTART 20"),
            "RECTSTART expects width,height, got \"20\""
        );
        assert_eq!(err("TURN 7,7,1"), "TURN expects x,y, got \"7,7,1\"");
        assert_eq!(err("PLAY -1,2").split(' ').next(), Some("PLAY"));
    }

    #[test]
    fn info_lines() {
        assert_eq!(Info::parse("TIMEOUT_TURN 100"), Info::TimeoutTurn(100));
        assert_eq!(Info::parse("time_left -20"), Info::TimeLeft(-20));
        assert_eq!(Info::parse("rule 1"), Info::Rule(Rule::ExactFive));
        assert_eq!(Info::parse("THREAD_NUM 4"), Info::ThreadNum(4));
        assert_eq!(Info::ThreadNum(2).to_string(), "thread_num 2");
        assert_eq!(Info::parse("rule 4"), Info::UnsupportedRule("4".into()));
        assert_eq!(Info::parse("rule x"), Info::UnsupportedRule("x".into()));
        let other = |key: &str, value: &str| Info::Other {
            key: key.into(),
            value: value.into(),
        };
        assert_eq!(
            Info::parse("timeout_turn soon"),
            other("timeout_turn", "soon")
        );
        assert_eq!(Info::parse("rule"), other("rule", ""));
        assert_eq!(Info::parse("folder /tmp/x y"), other("folder", "/tmp/x y"));
        assert_eq!(Info::GameType(1).to_string(), "game_type 1");
        assert_eq!(Info::MaxMemory(1 << 20).to_string(), "max_memory 1048576");
    }

    #[test]
    fn board_lines() {
        let s = Stone::parse(" 7, 8 ,3").unwrap();
        assert_eq!((s.mv, s.field), (Move::new(7, 8), Field::WinningLine));
        assert_eq!(s.to_string(), "7,8,3");
        for bad in ["7,8", "7,8,4", "a,1,1", "300,1,1", "1,2,1,1"] {
            assert_eq!(Stone::parse(bad), None, "{bad}");
        }
    }
}
