//! What the server sends: [`ServerMsg`] and its parts, serialized once by [`encode`] (the same
//! bytes go to every recipient), with `re` spliced in by [`with_re`] for the asker's copy.

use std::fmt::Write as _;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use super::{
    Cell, ChatLine, ClockState, ErrorCode, Fault, OfferEnd, OfferKind, Outcome, PendingOffer,
    ProtoError, Reason, RoomStatus, Seat, TimeControl,
};

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
    /// The seeker's rating in the family of these terms, rounded (absent: a guest, or terms
    /// no family rates).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rating: Option<i64>,
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
    /// An account's or a rated bot's rating in the room's family (docs/ratings.md); absent
    /// for a guest, an unrated bot, or a game no family rates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rating: Option<crate::ratings::Shown>,
}

/// Both seats; `null` is an open seat.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Players {
    /// X.
    pub x: Option<PlayerInfo>,
    /// O.
    pub o: Option<PlayerInfo>,
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
    /// A rated game (absent when not; docs/ratings.md).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rated: bool,
}

/// A room as a list shows it: one this node runs, or, in a cluster, one another node runs, as
/// that node serialized its summary (passed on as it came, never parsed into a summary).
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Listed {
    /// A room of this node.
    Here(Box<RoomSummary>),
    /// A room of another node: its summary's JSON.
    Elsewhere(Arc<serde_json::value::RawValue>),
}

impl Listed {
    /// The JSON of the summary.
    pub fn json(&self) -> String {
        match self {
            Listed::Here(s) => serde_json::to_string(s).unwrap_or_default(),
            Listed::Elsewhere(raw) => raw.get().to_string(),
        }
    }
}

impl PartialEq for Listed {
    fn eq(&self, other: &Listed) -> bool {
        match (self, other) {
            (Listed::Here(a), Listed::Here(b)) => a == b,
            _ => self.json() == other.json(),
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
    /// A rated game (absent when not; docs/ratings.md).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rated: bool,
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
        /// [`PROTOCOL_VERSION`](super::PROTOCOL_VERSION).
        protocol: u32,
        /// The token was recognised.
        resumed: bool,
        /// Bot levels.
        bots: Vec<BotInfo>,
        /// The account's username when the session is an account's; absent for a guest.
        #[serde(skip_serializing_if = "Option::is_none")]
        account: Option<String>,
    },
    /// Reply to `list_rooms` and `watch_lobby`.
    RoomList {
        /// Summaries.
        rooms: Vec<Listed>,
        /// More rooms follow: the `after` of the next page. Absent on the last page.
        #[serde(skip_serializing_if = "Option::is_none")]
        next: Option<String>,
    },
    /// To lobby watchers: the rooms that opened or changed, and the ids of those that closed,
    /// since the last update.
    LobbyUpdate {
        /// New or changed summaries.
        rooms: Vec<Listed>,
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
        /// A rated game's rating changes (docs/ratings.md); absent when unrated or aborted.
        #[serde(skip_serializing_if = "Option::is_none")]
        ratings: Option<crate::ratings::Changes>,
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
    /// Reply to `register` and `login`: the connection is now the account.
    LoggedIn {
        /// The account's player id.
        player_id: String,
        /// Its username, the name in use.
        name: String,
        /// After `login`: the new session's secret (resumes the account in `hello`). Absent
        /// after `register`, whose session keeps the token it has.
        #[serde(skip_serializing_if = "Option::is_none")]
        token: Option<String>,
    },
    /// Reply to `logout_everywhere`, just before the connection closes.
    LoggedOut {},
    /// Reply to `change_password`.
    PasswordChanged {},
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
