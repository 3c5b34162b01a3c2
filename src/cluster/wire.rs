//! What nodes say to each other through Redis: the channel and key names, and the frames.
//!
//! A frame is one pub/sub message: a header line, `\n`, then a body. Text, so that a
//! `redis-cli SUBSCRIBE` shows what flows.
//!
//! On a node's inbox (`{namespace}:node:{id}`):
//! - `D 12,13,40` + a server message: deliver these bytes to the node's connections 12, 13 and
//!   40. The owner of a room serializes each event once, and sends it once per node, whatever
//!   the number of that node's members.
//! - `K 12 1013` + a reason: close connection 12 with that code.
//! - `C node-b 7` + a [`Cmd`] as JSON: a command from connection `cmd.conn` of node-b for a room
//!   this node runs; request 7 wants a [`Reply`] (0: none).
//! - `R 7` + a [`Reply`] as JSON: the answer to request 7.
//!
//! On the lobby channel (`{namespace}:lobby`):
//! - `U node-a` + [`LobbyChange`] as JSON: rooms node-a runs that opened or changed, and those
//!   that closed.
//! - `O node-a` + a room id: node-a now runs the room (it took it over).
//! - `L node-a` + a player id: the account logged out everywhere.
//! - `T node-a` + a token hash: the session resumed on node-a.
//! - `G node-a` + rating rows as JSON: a rated game's new ratings.
//! - `Z node-a 1` + a `seeks` message: the open seeks of the pairing node (1: some, 0: none).

use std::net::IpAddr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::pairing::SeekRequest;
use crate::protocol::{ErrorCode, JoinAs, OfferKind, ProtoError, Seat};
use crate::room::Matchup;

/// The names of a cluster's channels and keys, all under its namespace (`cluster.namespace`,
/// so that several clusters, or parallel tests, can share one Redis).
#[derive(Clone, Debug)]
pub struct Names {
    ns: String,
}

impl Names {
    /// The names under namespace `ns`.
    pub fn new(ns: &str) -> Names {
        Names { ns: ns.to_string() }
    }
    /// The lobby channel.
    pub fn lobby(&self) -> String {
        format!("{}:lobby", self.ns)
    }
    /// The hash of every open room's summary (`{node, summary}` by room id), read at start.
    pub fn lobby_rooms(&self) -> String {
        format!("{}:lobby:rooms", self.ns)
    }
    /// A node's inbox channel.
    pub fn inbox(&self, node: &str) -> String {
        format!("{}:node:{node}", self.ns)
    }
    /// A room's lease key: its value is the owner's node id.
    pub fn owner_key(&self, room: &str) -> String {
        format!("{}:room:{room}:owner", self.ns)
    }
    /// The hash of the unfinished rooms a player created (room id to its matchup).
    pub fn claims(&self, player: &str) -> String {
        format!("{}:player:{player}:rooms", self.ns)
    }
    /// The pairing node's lease: its value is the node that pairs seekers.
    pub fn pairing(&self) -> String {
        format!("{}:pairing", self.ns)
    }
    /// A node's heartbeat key, renewed with its leases.
    pub fn alive_key(&self, node: &str) -> String {
        format!("{}:node:{node}:alive", self.ns)
    }
}

/// A frame: the header line and `body`.
pub fn frame(header: std::fmt::Arguments<'_>, body: &[u8]) -> Vec<u8> {
    let mut v = header.to_string().into_bytes();
    v.reserve(body.len() + 1);
    v.push(b'\n');
    v.extend_from_slice(body);
    v
}

/// A frame's kind letter, the rest of its header split on spaces, and its body.
pub fn parse(payload: &[u8]) -> Option<(char, Vec<&str>, &[u8])> {
    let nl = payload.iter().position(|&b| b == b'\n')?;
    let header = std::str::from_utf8(&payload[..nl]).ok()?;
    let mut words = header.split(' ');
    let kind = words.next()?.chars().next()?;
    Some((kind, words.collect(), &payload[nl + 1..]))
}

/// A room command from a connection of another node.
#[derive(Debug, Serialize, Deserialize)]
pub struct Cmd {
    /// The room.
    pub room: String,
    /// The connection on the sending node.
    pub conn: u64,
    /// Its player.
    pub player_id: String,
    /// Its name.
    pub name: String,
    /// Its address, on a join or a reconnect (a rematch its player offers counts against it)
    /// and on a seek (the room it is paired into does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<IpAddr>,
    /// What it asks.
    #[serde(flatten)]
    pub op: Op,
}

/// What a [`Cmd`] asks (the `RoomCmd`s, without their local handles).
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// `RoomCmd::Join`.
    Join {
        /// Preference.
        as_: Option<JoinAs>,
        /// Message id.
        re: Option<Value>,
    },
    /// `RoomCmd::Leave`.
    Leave,
    /// `RoomCmd::Move`.
    Move {
        /// Column.
        x: i64,
        /// Row.
        y: i64,
        /// Message id.
        re: Option<Value>,
    },
    /// `RoomCmd::Resign`.
    Resign {
        /// Message id.
        re: Option<Value>,
    },
    /// `RoomCmd::Sync`.
    Sync {
        /// Last event the client has.
        since_seq: u64,
        /// Message id.
        re: Option<Value>,
    },
    /// `RoomCmd::Reconnect`.
    Reconnect,
    /// `RoomCmd::Disconnected`.
    Disconnected,
    /// `RoomCmd::Say`.
    Say {
        /// The line.
        text: String,
        /// Message id.
        re: Option<Value>,
    },
    /// `RoomCmd::Offer`.
    Offer {
        /// What.
        kind: OfferKind,
        /// Message id.
        re: Option<Value>,
    },
    /// `RoomCmd::Respond`.
    Respond {
        /// Which offer.
        kind: OfferKind,
        /// Yes or no.
        accept: bool,
        /// Message id.
        re: Option<Value>,
    },
    /// A `seek`, for the pairing node (the command's `room` is empty, as for the others below).
    Seek {
        /// What it asks.
        req: SeekRequest,
        /// Message id.
        re: Option<Value>,
    },
    /// A `cancel_seek`: the pairing node answers it (`seek_cancelled`) through the same
    /// stand-in as `paired`, so a pairing made before the cancel is heard of first.
    CancelSeek {
        /// Message id.
        #[serde(default)]
        re: Option<Value>,
    },
    /// An `accept_seek`.
    AcceptSeek {
        /// Which.
        seek_id: String,
        /// Message id.
        re: Option<Value>,
    },
    /// The seeking connection closed.
    ForgetSeeks,
}

impl Op {
    /// The message id to answer an error with.
    pub fn re(&self) -> Option<&Value> {
        match self {
            Op::Join { re, .. }
            | Op::Move { re, .. }
            | Op::Resign { re }
            | Op::Sync { re, .. }
            | Op::Say { re, .. }
            | Op::Offer { re, .. }
            | Op::Respond { re, .. }
            | Op::Seek { re, .. }
            | Op::AcceptSeek { re, .. }
            | Op::CancelSeek { re } => re.as_ref(),
            Op::Leave | Op::Reconnect | Op::Disconnected | Op::ForgetSeeks => None,
        }
    }
}

/// An error as it crosses nodes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireError {
    /// The code.
    pub code: ErrorCode,
    /// The message.
    pub message: String,
}

impl From<ProtoError> for WireError {
    fn from(e: ProtoError) -> WireError {
        WireError {
            code: e.code,
            message: e.message,
        }
    }
}

impl From<WireError> for ProtoError {
    fn from(e: WireError) -> ProtoError {
        ProtoError::new(e.code, e.message)
    }
}

/// The answer to a command that wants one.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// To `join`: the seat taken (none: watching).
    Joined(Result<Option<Seat>, WireError>),
    /// To `leave`.
    Left(Result<(), WireError>),
    /// To `reconnect`: whether the seat is back.
    Reconnected(bool),
}

/// The rooms a node opened, changed or closed since its last lobby frame.
#[derive(Debug, Serialize, Deserialize)]
pub struct LobbyChange {
    /// Summaries, as the node serialized them.
    pub rooms: Vec<Arc<RawValue>>,
    /// Closed room ids.
    pub removed: Vec<String>,
}

/// The id in a summary's JSON.
pub fn room_id_of(summary: &RawValue) -> Option<String> {
    #[derive(Deserialize)]
    struct Id {
        room_id: String,
    }
    serde_json::from_str::<Id>(summary.get())
        .ok()
        .map(|i| i.room_id)
}

/// A room's entry in [`Names::lobby_rooms`].
#[derive(Debug, Serialize, Deserialize)]
pub struct LobbyEntry {
    /// Its owner.
    pub node: String,
    /// Its summary.
    pub summary: Arc<RawValue>,
}

/// A room's kind in a player's hash of rooms ([`Names::claims`]): what its caps count.
pub fn claim_kind(matchup: Matchup) -> &'static str {
    match matchup {
        Matchup::People => "people",
        Matchup::AgainstBot => "bot",
        Matchup::BotVsBot => "bots",
    }
}

/// The kind [`claim_kind`] wrote (anything else counts as a room between people).
pub fn claim_matchup(kind: &str) -> Matchup {
    match kind {
        "bot" => Matchup::AgainstBot,
        "bots" => Matchup::BotVsBot,
        _ => Matchup::People,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_read_back_what_they_write() {
        let f = frame(format_args!("D {},{}", 12, 40), br#"{"type":"x"}"#);
        assert_eq!(f, b"D 12,40\n{\"type\":\"x\"}");
        let (kind, words, body) = parse(&f).unwrap();
        assert_eq!(
            (kind, words, body),
            ('D', vec!["12,40"], &br#"{"type":"x"}"#[..])
        );
        assert!(parse(b"no newline").is_none());
        let cmd = Cmd {
            room: "r1".into(),
            conn: 3,
            player_id: "p1".into(),
            name: "ann".into(),
            ip: None,
            op: Op::Move {
                x: 7,
                y: 8,
                re: Some(Value::from(5)),
            },
        };
        assert_eq!(
            serde_json::to_string(&cmd).unwrap(),
            r#"{"room":"r1","conn":3,"player_id":"p1","name":"ann","op":"move","x":7,"y":8,"re":5}"#
        );
        let back: Cmd = serde_json::from_str(&serde_json::to_string(&cmd).unwrap()).unwrap();
        assert!(matches!(back.op, Op::Move { x: 7, y: 8, .. }));
        let r = Reply::Joined(Err(WireError {
            code: ErrorCode::RoomFull,
            message: "full".into(),
        }));
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"joined":{"Err":{"code":"room_full","message":"full"}}}"#
        );
    }
}
