//! Protocol v2 (v1 plus time controls; every v1 message is still accepted): the serde types of every message, one JSON object per WebSocket text frame,
//! tagged by `"type"`. `docs/protocol.md` is the contract; this module is its code.
//!
//! Client messages are parsed in two steps (see [`parse`]): the optional `id` is taken first, so
//! that even a message whose body is wrong gets an error that echoes it as `re`.
//! Server messages are serialized once ([`encode`]) and the same bytes go to every recipient.

use std::fmt::Write as _;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_tungstenite::tungstenite::Utf8Bytes;

/// The protocol version announced in `welcome`: 2 since time controls (`create_room`'s
/// `time_control`, `clock` on `move`, `room_joined` and `game_over`, `abandon_ms` on an away
/// player). Every v1 client message is still valid, and means what it meant.
pub const PROTOCOL_VERSION: u32 = 2;

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

/// How a seat is filled in `create_room`: `"me"`, `"open"` or `{"bot": "<level>"}`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum SeatSpec {
    /// `"me"` or `"open"` (anything else is `bad_room`).
    Word(String),
    /// A bot of the named level.
    Bot {
        /// The level, a key of `[bots]` in config.toml.
        bot: String,
    },
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

/// What `join_room` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JoinAs {
    /// A seat (an open one).
    Player,
    /// Watching.
    Spectator,
}

/// A client message, without its `id`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMsg {
    /// Must come first.
    Hello {
        /// Display name.
        #[serde(default)]
        name: Option<String>,
        /// A token from an earlier `welcome`.
        #[serde(default)]
        token: Option<String>,
    },
    /// Rooms on this server, one page at a time (ordered by room id).
    ListRooms {
        /// Most rooms in the reply: at most, and by default, `limits.room_list_page`.
        #[serde(default)]
        limit: Option<usize>,
        /// Only rooms whose id comes after this one: the `next` of the previous page.
        #[serde(default)]
        after: Option<String>,
    },
    /// Rooms on this server now (`room_list`), then `lobby_update` whenever some change.
    WatchLobby {},
    /// Stops the `lobby_update`s.
    UnwatchLobby {},
    /// Opens a room.
    CreateRoom {
        /// `"caro"` or `"tictactoe"`.
        game: String,
        /// Board width (Caro only; default 15).
        #[serde(default)]
        width: Option<i64>,
        /// Board height (Caro only; default = width).
        #[serde(default)]
        height: Option<i64>,
        /// Caro rule variant (default freestyle).
        #[serde(default)]
        rule: Option<String>,
        /// Who plays X.
        x: SeatSpec,
        /// Who plays O.
        o: SeatSpec,
        /// The time control, as JSON (checked by `room::check_params`, so that a bad one gets
        /// `bad_time_control` with what is wrong); absent or `null`: none.
        #[serde(default)]
        time_control: Option<Value>,
        /// A casual game: a bot grants takebacks (default false).
        #[serde(default)]
        casual: bool,
    },
    /// Enters a room.
    JoinRoom {
        /// Which.
        room_id: String,
        /// Seat or watch; default: an open seat if any.
        #[serde(default, rename = "as")]
        as_: Option<JoinAs>,
    },
    /// Leaves a room (resigns a game in progress).
    LeaveRoom {
        /// Which.
        room_id: String,
    },
    /// Plays a stone.
    Move {
        /// Where.
        room_id: String,
        /// Column from the left, from 0.
        x: i64,
        /// Row from the top, from 0.
        y: i64,
    },
    /// Gives up.
    Resign {
        /// Where.
        room_id: String,
    },
    /// Liveness check.
    Ping {},
    /// Replays events after `since_seq`.
    Sync {
        /// Where.
        room_id: String,
        /// The last event the client has.
        since_seq: u64,
    },
    /// Looks for an opponent: paired with the first other seeker of the same game, board, rule
    /// and casualness (or, after `bot_after_ms`, with the bot `bot`).
    Seek {
        /// `"caro"` or `"tictactoe"`.
        game: String,
        /// Board width (Caro; default 15).
        #[serde(default)]
        width: Option<i64>,
        /// Board height (Caro; default = width).
        #[serde(default)]
        height: Option<i64>,
        /// Caro rule (default freestyle).
        #[serde(default)]
        rule: Option<String>,
        /// A casual game.
        #[serde(default)]
        casual: bool,
        /// A bot level to play if nobody comes.
        #[serde(default)]
        bot: Option<String>,
        /// How long to wait for a person before `bot` (default 15000).
        #[serde(default)]
        bot_after_ms: Option<u64>,
        /// The time control, as in `create_room` (absent: none); seeks match only with the
        /// same one.
        #[serde(default)]
        time_control: Option<Value>,
    },
    /// Stops seeking.
    CancelSeek {},
    /// Plays the seeker of an open seek (from the lobby's list).
    AcceptSeek {
        /// Which.
        seek_id: String,
    },
    /// Offers the opponent a draw, or asks to take back one's last move.
    Offer {
        /// Where.
        room_id: String,
        /// What.
        kind: OfferKind,
    },
    /// Accepts or declines the opponent's pending offer of `kind`.
    Respond {
        /// Where.
        room_id: String,
        /// Which offer.
        kind: OfferKind,
        /// Yes or no.
        accept: bool,
    },
    /// Says something in a room: a seated player in the players' channel, anyone else in the
    /// spectators' (see [`ChatChannel`]).
    Chat {
        /// Where.
        room_id: String,
        /// What (cleaned and bounded by the connection: `[chat]` in the config).
        text: String,
    },
}

/// Parses one text frame: `(id, message)`. On failure the id (if any could be read) comes back
/// with a description for the `bad_message` error.
pub fn parse(text: &str) -> Result<(Option<Value>, ClientMsg), (Option<Value>, String)> {
    // `"id": null` is an id (echoed as `"re": null`), not a missing one.
    fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
        Value::deserialize(d).map(Some)
    }
    // The hot path, for the messages a game is made of (`move`, `ping`): one pass into a flat
    // struct. serde's internally tagged enums buffer every field first; that was most of the
    // cost of a move in the rooms profile (docs/performance.md).
    #[derive(Deserialize)]
    struct Hot<'a> {
        #[serde(rename = "type", borrow)]
        ty: &'a str,
        #[serde(default, deserialize_with = "present")]
        id: Option<Value>,
        #[serde(default)]
        room_id: Option<String>,
        #[serde(default)]
        x: Option<i64>,
        #[serde(default)]
        y: Option<i64>,
    }
    if let Ok(h) = serde_json::from_str::<Hot>(text) {
        match (h.ty, h.room_id, h.x, h.y) {
            ("move", Some(room_id), Some(x), Some(y)) => {
                return Ok((h.id, ClientMsg::Move { room_id, x, y }))
            }
            ("ping", _, _, _) => return Ok((h.id, ClientMsg::Ping {})),
            _ => {}
        }
    }
    // The fast path, taken by every other well-formed message: the message and its id read
    // straight from the text, without building a `Value` tree (a map of owned keys and
    // strings) first.
    #[derive(Deserialize)]
    struct Id {
        #[serde(default, deserialize_with = "present")]
        id: Option<Value>,
    }
    if let (Ok(msg), Ok(Id { id })) = (
        serde_json::from_str::<ClientMsg>(text),
        serde_json::from_str::<Id>(text),
    ) {
        return Ok((id, msg));
    }
    // Anything else takes the slow path, which says precisely what is wrong.
    let mut value: Value = serde_json::from_str(text).map_err(|e| (None, format!("{e}")))?;
    let Some(obj) = value.as_object_mut() else {
        return Err((None, "expected a JSON object".into()));
    };
    let id = obj.remove("id");
    if !obj.contains_key("type") {
        return Err((id, "missing \"type\"".into()));
    }
    match serde_json::from_value::<ClientMsg>(value) {
        Ok(msg) => Ok((id, msg)),
        Err(e) => Err((id, e.to_string())),
    }
}

/// Stable error codes clients can match on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Not JSON, not an object, unknown type, missing or mistyped field.
    BadMessage,
    /// Something other than `hello` came first.
    NotHello,
    /// A second `hello`.
    AlreadyHello,
    /// The name is longer than the limit.
    NameTooLong,
    /// The name has a bidirectional control or nothing visible (see `names`).
    BadName,
    /// No room with that id.
    NoSuchRoom,
    /// Only a seated player may do this.
    NotAPlayer,
    /// The connection is not in that room.
    NotInRoom,
    /// It is the other seat's turn.
    NotYourTurn,
    /// The game waits for its second player.
    NotStarted,
    /// The cell holds a stone.
    Occupied,
    /// The cell is not on the board.
    OutOfBounds,
    /// The game has ended.
    GameOver,
    /// No open seat.
    SeatTaken,
    /// The room has as many spectators as allowed.
    RoomFull,
    /// Invalid `create_room` parameters.
    BadRoom,
    /// An invalid `time_control` in `create_room`.
    BadTimeControl,
    /// The server has as many rooms as allowed.
    TooManyRooms,
    /// The player has as many unfinished rooms (of that kind) as one player may have.
    TooManyRoomsForPlayer,
    /// Too many messages; slow down.
    RateLimited,
    /// The server is stopping.
    ShuttingDown,
    /// A chat line is empty, or holds a control or bidirectional control character.
    BadChat,
    /// A chat line is longer than `chat.max_chars`.
    ChatTooLong,
    /// Too many chat lines; this one was dropped (`chat.per_minute`, `chat.burst`).
    ChatTooFast,
    /// An offer of that kind is already pending.
    OfferPending,
    /// No pending offer of that kind from the opponent.
    NoOffer,
    /// No move of yours to take back, or a bot that grants none (a game not casual).
    NoTakeback,
    /// A rematch is offered once the game is over.
    GameNotOver,
    /// Invalid `seek` parameters.
    BadSeek,
    /// No open seek with that id (taken, cancelled, or your own).
    NoSuchSeek,
}

impl ErrorCode {
    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadMessage => "bad_message",
            ErrorCode::NotHello => "not_hello",
            ErrorCode::AlreadyHello => "already_hello",
            ErrorCode::NameTooLong => "name_too_long",
            ErrorCode::BadName => "bad_name",
            ErrorCode::NoSuchRoom => "no_such_room",
            ErrorCode::NotAPlayer => "not_a_player",
            ErrorCode::NotInRoom => "not_in_room",
            ErrorCode::NotYourTurn => "not_your_turn",
            ErrorCode::NotStarted => "not_started",
            ErrorCode::Occupied => "occupied",
            ErrorCode::OutOfBounds => "out_of_bounds",
            ErrorCode::GameOver => "game_over",
            ErrorCode::SeatTaken => "seat_taken",
            ErrorCode::RoomFull => "room_full",
            ErrorCode::BadRoom => "bad_room",
            ErrorCode::BadTimeControl => "bad_time_control",
            ErrorCode::TooManyRooms => "too_many_rooms",
            ErrorCode::TooManyRoomsForPlayer => "too_many_rooms_for_player",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::ShuttingDown => "shutting_down",
            ErrorCode::BadChat => "bad_chat",
            ErrorCode::ChatTooLong => "chat_too_long",
            ErrorCode::ChatTooFast => "chat_too_fast",
            ErrorCode::OfferPending => "offer_pending",
            ErrorCode::NoOffer => "no_offer",
            ErrorCode::NoTakeback => "no_takeback",
            ErrorCode::GameNotOver => "game_not_over",
            ErrorCode::BadSeek => "bad_seek",
            ErrorCode::NoSuchSeek => "no_such_seek",
        }
    }
}

/// An error for a client: a code and a human message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code:?}: {message}")]
pub struct ProtoError {
    /// The stable code.
    pub code: ErrorCode,
    /// For humans.
    pub message: String,
}

impl ProtoError {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ProtoError {
        ProtoError {
            code,
            message: message.into(),
        }
    }
}

/// A bot level as `welcome` and `/api/bots` show it.
#[derive(Clone, Debug, Serialize)]
pub struct BotInfo {
    /// The level name, used in `{"bot": name}`.
    pub name: String,
    /// For humans.
    pub description: String,
    /// `"caro"` / `"tictactoe"`.
    pub games: Vec<&'static str>,
    /// Outside engines only: the rule variants it plays (built-in levels play every rule).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules: Option<Vec<&'static str>>,
    /// Outside engines only: the smallest board side it plays.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_board: Option<u8>,
    /// Outside engines only: the largest board side it plays.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_board: Option<u8>,
    /// Outside engines only: whether it plays square boards only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub square_only: Option<bool>,
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

/// An open seek, as lobby watchers see it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeekInfo {
    /// Id, for `accept_seek`.
    pub seek_id: String,
    /// The seeker's name.
    pub name: Arc<str>,
    /// `"caro"` / `"tictactoe"`.
    pub game: &'static str,
    /// Columns.
    pub width: u8,
    /// Rows.
    pub height: u8,
    /// Caro rule, null for tic-tac-toe.
    pub rule: Option<&'static str>,
    /// A casual game (absent when not).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub casual: bool,
    /// The time control (absent: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_control: Option<TimeControl>,
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

/// Who sits in a seat.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlayerInfo {
    /// Display name (the level name for bots).
    pub name: String,
    /// `"human"` or `"bot"`.
    pub kind: &'static str,
    /// The bot level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bot: Option<String>,
    /// Whether a human is connected (bots always are).
    pub connected: bool,
    /// An away player in a game in progress: milliseconds (as of the send) before it loses by
    /// abandonment if it does not come back. Only in `room_update` and `room_joined`, never in
    /// summaries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abandon_ms: Option<u64>,
}

/// Both seats; `null` is an open seat.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Players {
    /// X.
    pub x: Option<PlayerInfo>,
    /// O.
    pub o: Option<PlayerInfo>,
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

/// A room in `room_list` and `/api/rooms`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RoomSummary {
    /// Id.
    pub room_id: String,
    /// `"caro"` / `"tictactoe"`.
    pub game: &'static str,
    /// Columns.
    pub width: u8,
    /// Rows.
    pub height: u8,
    /// Caro rule, null for tic-tac-toe.
    pub rule: Option<&'static str>,
    /// Where it stands.
    pub status: RoomStatus,
    /// Seats.
    pub players: Players,
    /// How many watch.
    pub spectators: usize,
    /// Moves played.
    pub moves: usize,
    /// The time control; absent for none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_control: Option<TimeControl>,
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

/// The full state of a room, in `room_joined`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RoomState {
    /// Id.
    pub room_id: String,
    /// Game.
    pub game: &'static str,
    /// Columns.
    pub width: u8,
    /// Rows.
    pub height: u8,
    /// Caro rule or null.
    pub rule: Option<&'static str>,
    /// How many in a row win.
    pub win_length: u8,
    /// Where it stands.
    pub status: RoomStatus,
    /// Seats.
    pub players: Players,
    /// How many watch.
    pub spectators: usize,
    /// Cells in play order (X first).
    pub moves: Vec<Cell>,
    /// Seat to move, null unless playing.
    pub turn: Option<Seat>,
    /// Number of the last event included.
    pub seq: u64,
    /// When finished: the result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Outcome>,
    /// When finished: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    /// When won by a line: its cells.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<Vec<Cell>>,
    /// When forfeited: how.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
    /// When forfeited: what happened, for humans.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The time control; absent for none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_control: Option<TimeControl>,
    /// Both clocks as of this message; absent for a game without a clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockState>,
    /// A casual game (absent when not).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub casual: bool,
    /// Pending offers (absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub offers: Vec<PendingOffer>,
}

/// Your place in a room.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct You {
    /// `"player"` or `"spectator"`.
    pub role: &'static str,
    /// Your seat, for players.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seat: Option<Seat>,
}

/// A server message, without its `re`.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMsg {
    /// Reply to `hello`.
    Welcome {
        /// Public id of the player.
        player_id: String,
        /// Name in use.
        name: String,
        /// Secret: resumes this identity.
        token: String,
        /// [`PROTOCOL_VERSION`].
        protocol: u32,
        /// The token was recognised.
        resumed: bool,
        /// Bot levels.
        bots: Vec<BotInfo>,
    },
    /// Reply to `list_rooms` and `watch_lobby`.
    RoomList {
        /// Summaries.
        rooms: Vec<RoomSummary>,
        /// More rooms follow: the `after` of the next page. Absent on the last page.
        #[serde(skip_serializing_if = "Option::is_none")]
        next: Option<String>,
    },
    /// To lobby watchers: the rooms that opened or changed, and the ids of those that closed,
    /// since the last update.
    LobbyUpdate {
        /// New or changed summaries.
        rooms: Vec<RoomSummary>,
        /// Closed rooms.
        removed: Vec<String>,
    },
    /// Reply to `unwatch_lobby`.
    LobbyUnwatched {},
    /// You are in a room; its full state.
    RoomJoined {
        /// State.
        room: Box<RoomState>,
        /// Your role.
        you: You,
        /// The chat lines you may read, oldest first (at most `chat.history` per channel);
        /// absent when there are none.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        chat: Vec<ChatLine>,
    },
    /// Reply to `leave_room`.
    Left {
        /// Which.
        room_id: String,
    },
    /// A stone was played.
    Move {
        /// Where (the room's own id, shared: a move is the message sent most often).
        room_id: Arc<str>,
        /// Event number.
        seq: u64,
        /// Who played.
        seat: Seat,
        /// Column.
        x: u8,
        /// Row.
        y: u8,
        /// Next to move, null when over.
        turn: Option<Seat>,
        /// Both clocks after the move (the increment credited); absent without a clock.
        #[serde(skip_serializing_if = "Option::is_none")]
        clock: Option<ClockState>,
    },
    /// The game ended.
    GameOver {
        /// Where.
        room_id: String,
        /// Event number.
        seq: u64,
        /// Winner or draw.
        result: Outcome,
        /// Why.
        reason: Reason,
        /// The winning row.
        #[serde(skip_serializing_if = "Option::is_none")]
        line: Option<Vec<Cell>>,
        /// For a forfeit: how.
        #[serde(skip_serializing_if = "Option::is_none")]
        fault: Option<Fault>,
        /// For a forfeit: what happened, for humans.
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
        /// Both clocks, stopped; absent without a clock.
        #[serde(skip_serializing_if = "Option::is_none")]
        clock: Option<ClockState>,
    },
    /// Seats, connections or the crowd changed.
    RoomUpdate {
        /// Where.
        room_id: String,
        /// Seats.
        players: Players,
        /// How many watch.
        spectators: usize,
        /// Both clocks as of this message (the one that starts the game starts X's); absent
        /// without a clock.
        #[serde(skip_serializing_if = "Option::is_none")]
        clock: Option<ClockState>,
    },
    /// A bot's search progress.
    BotThinking {
        /// Where.
        room_id: String,
        /// Whose bot.
        seat: Seat,
        /// Depth reached.
        depth: u8,
        /// Score for the bot (engine units).
        score: i32,
        /// Nodes searched.
        nodes: u64,
        /// Nodes per second.
        nps: u64,
        /// Principal variation.
        pv: Vec<Cell>,
    },
    /// End of a `sync` replay.
    Synced {
        /// Where.
        room_id: String,
        /// Last event number.
        seq: u64,
        /// Both clocks now (the replayed events' clocks are as of their own sends); absent
        /// without a clock.
        #[serde(skip_serializing_if = "Option::is_none")]
        clock: Option<ClockState>,
    },
    /// A player offers a draw or asks for a takeback.
    Offer {
        /// Where.
        room_id: String,
        /// What.
        kind: OfferKind,
        /// Who.
        by: Seat,
    },
    /// An offer was accepted, declined or lapsed.
    OfferEnded {
        /// Where.
        room_id: String,
        /// What.
        kind: OfferKind,
        /// Who had offered.
        by: Seat,
        /// How it ended.
        outcome: OfferEnd,
    },
    /// Moves were taken back (an accepted takeback): a game event, with `seq`.
    Takeback {
        /// Where.
        room_id: String,
        /// Event number.
        seq: u64,
        /// Who asked.
        by: Seat,
        /// The cells emptied, the last move first.
        undone: Vec<Cell>,
        /// Next to move.
        turn: Seat,
        /// Both clocks after the takeback (the side to move's running); absent without a clock.
        #[serde(skip_serializing_if = "Option::is_none")]
        clock: Option<ClockState>,
    },
    /// Reply to `seek`: waiting for an opponent.
    Seeking {
        /// The seek's id.
        seek_id: String,
    },
    /// Reply to `cancel_seek`.
    SeekCancelled {},
    /// A seek was paired: a room is open with this seat held for you; join it (`join_room`).
    Paired {
        /// The room.
        room_id: String,
        /// Your seat.
        seat: Seat,
    },
    /// To lobby watchers: the open seeks, whenever they change.
    Seeks {
        /// Oldest first.
        seeks: Vec<SeekInfo>,
    },
    /// A rematch was agreed: its room is open, with a seat held for each player (colours
    /// swapped). Clients join it (`join_room`); spectators may follow.
    Rematch {
        /// The finished game's room.
        room_id: String,
        /// The new room.
        new_room_id: String,
    },
    /// A chat line, to those who may read its channel.
    Chat {
        /// Where.
        room_id: Arc<str>,
        /// The line.
        #[serde(flatten)]
        line: ChatLine,
    },
    /// The room is gone (cleaned up or server stopping).
    RoomClosed {
        /// Which.
        room_id: String,
    },
    /// Reply to `ping`.
    Pong {},
    /// Something was refused.
    Error {
        /// Stable code.
        code: ErrorCode,
        /// For humans.
        message: String,
    },
}

#[derive(Serialize)]
struct WithRe<'a> {
    #[serde(flatten)]
    msg: &'a ServerMsg,
    #[serde(skip_serializing_if = "Option::is_none")]
    re: Option<&'a Value>,
}

/// Serializes a message once, with `re` when it answers a message that had an `id`.
pub fn encode(msg: &ServerMsg, re: Option<&Value>) -> Utf8Bytes {
    // Serializing these types cannot fail: no maps with non-string keys, no failing impls.
    // Without `re` (every broadcast) the message is written directly: `WithRe`'s flatten goes
    // through serde's map serializer, which costs twice as much. Both write the same bytes
    // (tested by `a_spliced_re_is_what_encode_writes`).
    let text = match re {
        None => serde_json::to_string(msg),
        Some(_) => serde_json::to_string(&WithRe { msg, re }),
    };
    let text = text.unwrap_or_else(|e| {
        tracing::error!("cannot serialize {msg:?}: {e}");
        r#"{"type":"error","code":"bad_message","message":"internal"}"#.into()
    });
    Utf8Bytes::from(text)
}

/// `bytes` (an [`encode`]d message without `re`) as [`encode`] would have written it with
/// `re`: the same object with `"re"` as its last key. A broadcast acknowledged to its sender is
/// serialized once; the sender's copy is this splice, not a second serialization.
pub fn with_re(bytes: &Utf8Bytes, re: &Value) -> Utf8Bytes {
    let text = bytes.as_str();
    let Some(body) = text.strip_suffix('}') else {
        return bytes.clone();
    };
    let sep = if body.ends_with('{') { "" } else { "," };
    // Written in place (`Value`'s Display is its compact JSON), without a string of its own.
    let mut out = String::with_capacity(text.len() + 32);
    out.push_str(body);
    out.push_str(sep);
    out.push_str("\"re\":");
    let _ = write!(out, "{re}");
    out.push('}');
    Utf8Bytes::from(out)
}

/// An encoded `error`.
pub fn encode_error(err: &ProtoError, re: Option<&Value>) -> Utf8Bytes {
    encode(
        &ServerMsg::Error {
            code: err.code,
            message: err.message.clone(),
        },
        re,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_with_and_without_id() {
        let (id, m) = parse(r#"{"type":"move","room_id":"r","x":1,"y":-2,"id":7}"#).unwrap();
        assert_eq!(id, Some(json!(7)));
        assert_eq!(
            m,
            ClientMsg::Move {
                room_id: "r".into(),
                x: 1,
                y: -2
            }
        );
        let (_, m) =
            parse(r#"{"type":"create_room","game":"caro","x":"me","o":{"bot":"casual"}}"#).unwrap();
        assert!(matches!(
            m,
            ClientMsg::CreateRoom {
                o: SeatSpec::Bot { .. },
                ..
            }
        ));
        let (id, _) = parse(r#"{"type":"nope","id":"a"}"#).unwrap_err();
        assert_eq!(id, Some(json!("a")));
        assert!(parse("[1]").is_err());
        assert!(parse("{").is_err());
    }

    #[test]
    fn the_fast_and_slow_parse_agree() {
        let cases = [
            r#"{"type":"move","room_id":"r","x":1,"y":2,"id":"a","extra":[1,{"id":5}]}"#,
            r#"{"id":{"k":[1,2]},"type":"ping"}"#,
            r#"{"type":"hello","name":"n","token":null}"#,
            r#"{"type":"move","room_id":"r","x":1,"y":2,"id":1,"id":2}"#,
            r#"{"type":"join_room","room_id":"r","as":"watcher","id":3}"#,
            r#"{"type":"move","x":1,"id":4}"#,
            r#"{"type":"ping","id":null}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"ping","room_id":5}"#,
            r#"{"type":"mo\u0076e","room_id":"r","x":1,"y":2}"#,
            r#"{"type":"move","room_id":"r","x":1.5,"y":2}"#,
            r#"{"type":"move","room_id":"r","x":"1","y":2}"#,
            r#"{"type":"move","room_id":"r","x":1}"#,
            r#"{"type":"move","room_id":"r","x":1,"y":2,"x":3}"#,
            r#"{"type":"move","room_id":null,"x":1,"y":2}"#,
            r#"{"type":"resign","room_id":"r","x":1,"y":2,"id":[]}"#,
            r#"{"x":1,"y":2,"room_id":"r","type":"move","seq":9,"turn":null}"#,
        ];
        for text in cases {
            // The slow path alone, as parse was before the fast path.
            let slow = (|| {
                let mut value: Value =
                    serde_json::from_str(text).map_err(|e| (None, format!("{e}")))?;
                let obj = value.as_object_mut().unwrap();
                let id = obj.remove("id");
                match serde_json::from_value::<ClientMsg>(value) {
                    Ok(msg) => Ok((id, msg)),
                    Err(e) => Err((id, e.to_string())),
                }
            })();
            assert_eq!(parse(text), slow, "{text}");
        }
    }

    #[test]
    fn a_spliced_re_is_what_encode_writes() {
        let msgs = [
            ServerMsg::Pong {},
            ServerMsg::Move {
                room_id: "abc".into(),
                seq: 3,
                seat: Seat::X,
                x: 1,
                y: 2,
                turn: None,
                clock: None,
            },
            ServerMsg::Move {
                room_id: "abc".into(),
                seq: 4,
                seat: Seat::O,
                x: 1,
                y: 2,
                turn: Some(Seat::X),
                clock: Some(ClockState {
                    x: 1000,
                    o: 2000,
                    running: Some(Seat::X),
                }),
            },
            ServerMsg::GameOver {
                room_id: "abc".into(),
                seq: 4,
                result: Outcome::Draw,
                reason: Reason::BoardFull,
                line: None,
                fault: None,
                detail: None,
                clock: None,
            },
            ServerMsg::GameOver {
                room_id: "abc".into(),
                seq: 9,
                result: Outcome::X,
                reason: Reason::Line,
                line: Some(vec![[1, 1], [2, 2]]),
                fault: None,
                detail: None,
                clock: None,
            },
            ServerMsg::GameOver {
                room_id: "abc".into(),
                seq: 7,
                result: Outcome::O,
                reason: Reason::Forfeit,
                line: None,
                fault: Some(Fault::Timeout),
                detail: Some("no move within 1500 ms \"quoted\"".into()),
                clock: Some(ClockState {
                    x: 0,
                    o: 5,
                    running: None,
                }),
            },
            ServerMsg::RoomUpdate {
                room_id: "abc".into(),
                players: Players {
                    x: Some(PlayerInfo {
                        name: "a\"b".into(),
                        kind: "human",
                        bot: None,
                        connected: false,
                        abandon_ms: Some(5000),
                    }),
                    o: None,
                },
                spectators: 2,
                clock: None,
            },
            ServerMsg::BotThinking {
                room_id: "abc".into(),
                seat: Seat::O,
                depth: 3,
                score: -20,
                nodes: 100,
                nps: 1000,
                pv: vec![[0, 1]],
            },
            ServerMsg::Error {
                code: ErrorCode::NotYourTurn,
                message: "it is not your turn".into(),
            },
        ];
        for m in &msgs {
            for re in [
                json!(7),
                json!("x\"y"),
                json!({"a": [1, null]}),
                json!(null),
            ] {
                assert_eq!(
                    with_re(&encode(m, None), &re),
                    encode(m, Some(&re)),
                    "{m:?}"
                );
            }
        }
    }

    #[test]
    fn encodes_with_re() {
        let s = encode(&ServerMsg::Pong {}, Some(&json!(3)));
        assert_eq!(s.as_str(), r#"{"type":"pong","re":3}"#);
    }
}
