//! Chat, played out: the `chat` module decides who reads which channel; this file builds the
//! line, stores a player's line with the game (held like a move until it is durable) and sends
//! it to those who may read it.

use serde_json::Value;

use super::{err, Room, Who};
use crate::protocol::{encode, with_re, ChatChannel, ChatLine, ErrorCode, ProtoError, ServerMsg};
use crate::room::chat::Chat;
use crate::room::seats::Occupant;

impl Room {
    // --- Chat: `chat` decides who reads what, the room sends and stores. ---

    /// A member's line, to those who may read its channel; a player's line in a game is stored
    /// with it first (the speaker's copy, with `re`, waits for the write like a move's ack).
    pub(super) fn say(
        &mut self,
        who: &Who,
        text: String,
        re: Option<&Value>,
    ) -> Result<(), ProtoError> {
        let Some(member) = self.seats.member(&who.player_id) else {
            return Err(err(ErrorCode::NotInRoom, "join the room to chat in it"));
        };
        let seat = member.seat;
        let channel = Chat::channel_of(seat);
        // A player's name as its seat shows it (with the room's suffix, if any).
        let from = match seat.map(|s| self.seats.occupant(s)) {
            Some(Occupant::Human(h)) => h.name.clone(),
            _ => who.name.clone(),
        };
        let line = ChatLine {
            channel,
            from,
            seat,
            text: text.into(),
            at: crate::store::now_ms(),
        };
        self.chat.push(line.clone());
        if let (ChatChannel::Players, Some(seat)) = (channel, seat) {
            if self.started {
                self.store(crate::store::StoreEvent::Chat {
                    room_id: self.id.to_string(),
                    seat,
                    name: line.from.to_string(),
                    text: line.text.to_string(),
                    at: line.at,
                });
            }
        }
        let bytes = encode(
            &ServerMsg::Chat {
                room_id: self.id.clone(),
                line,
            },
            None,
        );
        if channel == ChatChannel::Players {
            // Everyone reads it: held until this turn's store write, like a move.
            self.broadcast_acked(bytes, re.map(|re| (&*who.player_id, re)));
            return Ok(());
        }
        let game_over = self.finished.is_some();
        let mut dropped = Vec::new();
        for (pid, m) in self.seats.members() {
            if !Chat::reads(channel, m.seat, game_over) {
                continue;
            }
            let copy = match re {
                Some(re) if **pid == *who.player_id => with_re(&bytes, re),
                _ => bytes.clone(),
            };
            if !m.client.send(copy) {
                dropped.push((pid.clone(), m.client.conn_id));
            }
        }
        for (pid, conn) in dropped {
            self.disconnected(&pid, conn);
        }
        Ok(())
    }
}
