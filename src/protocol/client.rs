//! What clients send: [`ClientMsg`] and its parts, and [`parse`], which reads one text frame.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::OfferKind;

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

/// What `join_room` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// spectators' (see [`ChatChannel`](super::types::ChatChannel)).
    Chat {
        /// Where.
        room_id: String,
        /// What (cleaned and bounded by the connection: `[chat]` in the config).
        text: String,
    },
    /// Makes the current session an account (the session keeps its player id and token).
    Register {
        /// Goes through the name rules; unique case-insensitively.
        username: String,
        /// 8 to 128 characters.
        password: Secret,
    },
    /// Takes the identity of an account: a new session with a new token.
    Login {
        /// Case-insensitive.
        username: String,
        /// The password.
        password: Secret,
    },
    /// Unbinds every token of the account and closes every connection of it, this one included.
    LogoutEverywhere {},
    /// A new password, after the old one.
    ChangePassword {
        /// The current password.
        old: Secret,
        /// 8 to 128 characters.
        new: Secret,
    },
}

/// A password as it arrives: its `Debug` never shows it, so no log line can.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
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
