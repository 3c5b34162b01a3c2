//! The protocol's shared vocabulary: seats, cells, time controls and clocks, offers, chat lines,
//! results and their reasons, room statuses.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// A seat: who plays X (first) or O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Seat {
    /// The first player.
    X,
    /// The second player.
    O,
}

impl Seat {
    /// Both seats, X first.
    pub const BOTH: [Seat; 2] = [Seat::X, Seat::O];
    /// 0 for X, 1 for O.
    pub fn index(self) -> usize {
        match self {
            Seat::X => 0,
            Seat::O => 1,
        }
    }
    /// The other seat.
    pub fn other(self) -> Seat {
        match self {
            Seat::X => Seat::O,
            Seat::O => Seat::X,
        }
    }
}

impl From<caro_engine::Player> for Seat {
    fn from(p: caro_engine::Player) -> Seat {
        match p {
            caro_engine::Player::X => Seat::X,
            caro_engine::Player::O => Seat::O,
        }
    }
}

/// A cell on the wire: `[x, y]`.
pub type Cell = [u8; 2];

/// Converts engine moves to wire cells.
pub fn cells(moves: &[caro_engine::Move]) -> Vec<Cell> {
    moves.iter().map(|m| [m.x, m.y]).collect()
}

/// A game's time control, as `create_room` asks for it and every message shows it:
/// `{"kind": "fischer", "base_ms": 180000, "increment_ms": 2000}`,
/// `{"kind": "per_move", "move_ms": 30000}` or `{"kind": "none"}`. A game without a clock
/// (`none`) leaves it out of every message: absent means none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TimeControl {
    /// No clock (an idle limit per move, `rooms.idle_move_ms`, still ends a stalled game).
    None,
    /// Each side has `base_ms` for the game and gains `increment_ms` after each of its moves.
    Fischer {
        /// Time for the whole game, per side.
        base_ms: u64,
        /// Added to the mover's clock after each move.
        increment_ms: u64,
    },
    /// Each move must be played within `move_ms`; the clock resets after every move.
    PerMove {
        /// Time per move.
        move_ms: u64,
    },
}

impl TimeControl {
    /// Whether the game has a clock (anything but `none`).
    pub fn is_clocked(&self) -> bool {
        !matches!(self, TimeControl::None)
    }
}

/// Both clocks as of the server's send: milliseconds left to X and O, and the seat whose clock
/// runs (`null`: none runs, the game is over). The running side's time keeps falling from the
/// moment the message was sent: a client counts it down locally.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ClockState {
    /// X's time left, ms.
    pub x: u64,
    /// O's time left, ms.
    pub o: u64,
    /// Whose clock runs.
    pub running: Option<Seat>,
}

/// What a player may offer or ask of the opponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OfferKind {
    /// End the game as a draw (`reason: "agreement"`).
    Draw,
    /// Take back the asker's last move (and the opponent's reply to it, if any).
    Takeback,
    /// Play again, colours swapped, in a new room (once the game is over).
    Rematch,
}

/// A pending offer, as `room_joined` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PendingOffer {
    /// What.
    pub kind: OfferKind,
    /// Who offered.
    pub by: Seat,
}

/// How an offer ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OfferEnd {
    /// The opponent said yes.
    Accepted,
    /// The opponent said no.
    Declined,
    /// It no longer applies: its maker moved again (a draw), a move was played (a takeback),
    /// the game ended (a draw or a takeback), or a player left (a rematch).
    Lapsed,
}

/// A room's two chat channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChatChannel {
    /// The seated players speak; everyone in the room reads, and the lines are kept with the
    /// game (its replay shows them).
    Players,
    /// Everyone else speaks and reads; the players read it only once the game is over (as on
    /// lichess). Not kept.
    Spectators,
}

/// One line of chat, as `chat` and `room_joined` carry it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChatLine {
    /// Which channel.
    pub channel: ChatChannel,
    /// The speaker's name as the room shows it.
    pub from: Arc<str>,
    /// The speaker's seat (players' channel only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seat: Option<Seat>,
    /// What was said.
    pub text: Arc<str>,
    /// Unix milliseconds when the server took it.
    pub at: i64,
}

/// Where a room stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RoomStatus {
    /// A seat is open.
    Waiting,
    /// The game is on.
    Playing,
    /// The game is over.
    Finished,
}

/// How a game ended: the winner or a draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// X won.
    X,
    /// O won.
    O,
    /// Nobody did.
    Draw,
}

impl From<Seat> for Outcome {
    fn from(s: Seat) -> Outcome {
        match s {
            Seat::X => Outcome::X,
            Seat::O => Outcome::O,
        }
    }
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// A winning row.
    Line,
    /// No cell left.
    BoardFull,
    /// A player resigned (or left).
    Resign,
    /// A player did not come back in time.
    Abandoned,
    /// A bot's outside engine broke the rules of play (see [`Fault`]) and lost.
    Forfeit,
    /// A game between two bots that nobody watched was stopped (`rooms.unwatched_bot_game_ms`);
    /// recorded as a draw.
    Aborted,
    /// A player's clock ran out (a flag fall): that player loses.
    Time,
    /// The players agreed to a draw.
    Agreement,
}

/// How an outside engine forfeited (`game_over.fault`): a stable code clients can match on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// No answer within its time plus the margin.
    Timeout,
    /// A well-formed move on a taken or off-board cell.
    IllegalMove,
    /// An answer that is not a move.
    Garbage,
    /// The engine answered `ERROR ...`.
    EngineError,
    /// The engine exited or closed its output while thinking.
    Crash,
    /// The engine could not be started or did not accept the game (`START`).
    StartFailed,
    /// The engine failed repeatedly and is resting before the next start.
    Unavailable,
}

impl Fault {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Fault::Timeout => "timeout",
            Fault::IllegalMove => "illegal_move",
            Fault::Garbage => "garbage",
            Fault::EngineError => "engine_error",
            Fault::Crash => "crash",
            Fault::StartFailed => "start_failed",
            Fault::Unavailable => "unavailable",
        }
    }
}
