//! Protocol v2 (v1 plus time controls; every v1 message is still accepted): the serde types of
//! every message, one JSON object per WebSocket text frame, tagged by `"type"`.
//! `docs/protocol.md` is the contract; this module is its code: `client` (what clients send,
//! and `parse`), `server` (what the server sends, and `encode`), `error` (codes) and `types`
//! (the vocabulary both use).
//!
//! Client messages are parsed in two steps (see [`parse`]): the optional `id` is taken first, so
//! that even a message whose body is wrong gets an error that echoes it as `re`.
//! Server messages are serialized once ([`encode`]) and the same bytes go to every recipient.

mod client;
mod error;
mod server;
mod types;

pub use client::*;
pub use error::*;
pub use server::*;
pub use types::*;

/// The protocol version announced in `welcome`: 2 since time controls (`create_room`'s
/// `time_control`, `clock` on `move`, `room_joined` and `game_over`, `abandon_ms` on an away
/// player). Every v1 client message is still valid, and means what it meant.
pub const PROTOCOL_VERSION: u32 = 2;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use serde_json::Value;

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
                ratings: None,
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
                ratings: None,
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
                ratings: None,
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
                        rating: None,
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
