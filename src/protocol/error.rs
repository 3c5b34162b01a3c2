//! Errors for clients: a stable [`ErrorCode`] and a message for humans ([`ProtoError`]).

use serde::{Deserialize, Serialize};

/// Stable error codes clients can match on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// `login` or `change_password`: a wrong username or a wrong password (the same answer).
    BadLogin,
    /// Too many login attempts from this address or against this account.
    TooManyLogins,
    /// `register`: the username is taken (case-insensitively).
    UsernameTaken,
    /// A password shorter than 8 or longer than 128 characters.
    BadPassword,
    /// `register` from a session that is already an account.
    AlreadyRegistered,
    /// `logout_everywhere` / `change_password` from a guest.
    NotLoggedIn,
    /// `login` from a connection in a room: leave it first.
    InRoom,
    /// The node that runs the room did not answer in time (a cluster: it may have just
    /// failed, and another node takes the room within the lease time): retry.
    RoomUnavailable,
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
            ErrorCode::BadLogin => "bad_login",
            ErrorCode::TooManyLogins => "too_many_logins",
            ErrorCode::UsernameTaken => "username_taken",
            ErrorCode::BadPassword => "bad_password",
            ErrorCode::AlreadyRegistered => "already_registered",
            ErrorCode::NotLoggedIn => "not_logged_in",
            ErrorCode::InRoom => "in_room",
            ErrorCode::RoomUnavailable => "room_unavailable",
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
