//! The few protocol frames the generator writes, and a cheap reader for the frames it receives.
//!
//! Frames are written with `format!` in a fixed key order (`type` first), so the baseline can
//! tell control messages from relayed ones by their prefix without parsing JSON, and so the
//! generator spends its share of the two cores on measuring, not on building `Value`s.
//!
//! A client `move` carries the fields of the server's `move` broadcast (`seq`, `seat`, `turn`):
//! the server ignores unknown fields, and the baseline relays the frame as it is, so a spectator
//! of either reads the same shape and the relayed frame is as large as the server's broadcast.

use serde::Deserialize;

/// `hello`.
pub fn hello(name: &str) -> String {
    format!(r#"{{"type":"hello","name":"{name}"}}"#)
}

/// `create_room` for a Caro game of `size`x`size`: X is the creator, O is open.
pub fn create_room(size: u8, id: u64) -> String {
    format!(
        r#"{{"type":"create_room","game":"caro","width":{size},"height":{size},"x":"me","o":"open","id":{id}}}"#
    )
}

/// `create_room` against a bot of `level` (the creator plays X).
pub fn create_bot_room(size: u8, level: &str, id: u64) -> String {
    format!(
        r#"{{"type":"create_room","game":"caro","width":{size},"height":{size},"x":"me","o":{{"bot":"{level}"}},"id":{id}}}"#
    )
}

/// `list_rooms` (the first page).
pub fn list_rooms(id: u64) -> String {
    format!(r#"{{"type":"list_rooms","id":{id}}}"#)
}

/// `ping` (the protocol's, answered with `pong`).
pub fn ping(id: u64) -> String {
    format!(r#"{{"type":"ping","id":{id}}}"#)
}

/// `join_room` as `"player"` or `"spectator"`.
pub fn join_room(room_id: &str, as_: &str, id: u64) -> String {
    format!(r#"{{"type":"join_room","room_id":"{room_id}","as":"{as_}","id":{id}}}"#)
}

/// `leave_room`.
pub fn leave_room(room_id: &str) -> String {
    format!(r#"{{"type":"leave_room","room_id":"{room_id}"}}"#)
}

/// `move` number `seq` of the game: the server reads `room_id`, `x`, `y` and `id`; `seq`,
/// `seat` and `turn` are there for the baseline's relay (see the module docs).
pub fn move_(room_id: &str, seq: u64, x: u8, y: u8) -> String {
    let (seat, turn) = if seq % 2 == 1 { ("x", "o") } else { ("o", "x") };
    format!(
        r#"{{"type":"move","room_id":"{room_id}","seq":{seq},"seat":"{seat}","x":{x},"y":{y},"turn":"{turn}","id":{seq}}}"#
    )
}

/// What the generator reads of a server frame.
#[derive(Debug, Deserialize)]
pub struct Incoming<'a> {
    /// The message type.
    #[serde(rename = "type", borrow)]
    pub ty: &'a str,
    /// The room of a `move` or `game_over`.
    #[serde(default, borrow)]
    pub room_id: Option<&'a str>,
    /// Event number (`move`, `game_over`).
    #[serde(default)]
    pub seq: Option<u64>,
    /// Column of a `move`.
    #[serde(default)]
    pub x: Option<u8>,
    /// Row of a `move`.
    #[serde(default)]
    pub y: Option<u8>,
    /// The seat to move next, on `move` (`null`, read as `None`, once the game is over).
    #[serde(default, borrow)]
    pub turn: Option<&'a str>,
    /// The room, on `room_joined`.
    #[serde(default)]
    pub room: Option<RoomRef>,
    /// The error code, on `error`.
    #[serde(default, borrow)]
    pub code: Option<&'a str>,
}

/// The part of `room_joined.room` the generator needs.
#[derive(Debug, Deserialize)]
pub struct RoomRef {
    /// The room id.
    pub room_id: String,
}

/// Parses a text frame; `None` if it is not a JSON object with a string `type`.
pub fn read(text: &str) -> Option<Incoming<'_>> {
    serde_json::from_str(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_move_reads_like_the_servers_broadcast() {
        let m = move_("abc", 3, 4, 5);
        let r = read(&m).unwrap();
        assert_eq!((r.ty, r.seq, r.x, r.y), ("move", Some(3), Some(4), Some(5)));
        let server = r#"{"type":"move","room_id":"abc","seq":3,"seat":"x","x":4,"y":5,"turn":"o"}"#;
        assert_eq!(m.len(), server.len() + r#","id":3"#.len());
    }

    #[test]
    fn room_joined_gives_the_room_id() {
        let r = read(r#"{"type":"room_joined","re":1,"room":{"room_id":"r1","moves":[[1,2]]},"you":{"role":"player"}}"#).unwrap();
        assert_eq!(r.room.unwrap().room_id, "r1");
    }
}
