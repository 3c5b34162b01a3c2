//! Members coming and going: `seats` decides (a seat taken, held, given back, freed), the room
//! follows up (snapshots, room updates, the abandonment clock, lapsed offers); and `sync`.

use serde_json::Value;

use super::{err, Room, Who};
use crate::protocol::{encode, ErrorCode, JoinAs, ProtoError, Reason, Seat, ServerMsg};
use crate::room::outbox::Replay;
use crate::room::seats::{Departed, Joining, Leaving, Member};
use crate::room::Joined;

impl Room {
    // --- Members: `seats` decides, the room follows up. ---

    pub(super) fn join(
        &mut self,
        who: &Who,
        as_: Option<JoinAs>,
        re: Option<&Value>,
    ) -> Result<Joined, ProtoError> {
        if self.ctx.shutdown.is_cancelled() {
            return Err(err(ErrorCode::ShuttingDown, "the server is shutting down"));
        }
        let may_sit = self.finished.is_none();
        let max = self.ctx.settings.max_spectators;
        match self.seats.join(who, as_, may_sit, max)? {
            Joining::Back(seat) => {
                self.seated_again(who, seat, re);
                Ok(Some(seat))
            }
            Joining::Seated(seat) => {
                self.timers.occupied();
                self.maybe_start();
                self.send_joined(&who.client, Some(seat), re);
                self.room_update();
                Ok(Some(seat))
            }
            Joining::Watching { new } => {
                self.timers.occupied();
                self.send_joined(&who.client, None, re);
                if new {
                    self.crowd_changed();
                }
                Ok(None)
            }
        }
    }

    /// A returning player has its seat back: the snapshot to it, then the news to the room.
    pub(super) fn seated_again(&mut self, who: &Who, seat: Seat, re: Option<&Value>) {
        self.timers.occupied();
        self.update_clock();
        self.send_joined(&who.client, Some(seat), re);
        self.room_update();
    }

    pub(super) fn reconnect(&mut self, who: &Who) -> bool {
        match self.seats.reconnect(who) {
            Some(seat) => {
                self.seated_again(who, seat, None);
                true
            }
            None => false,
        }
    }

    pub(super) fn leave(&mut self, who: &Who) -> Result<(), ProtoError> {
        let (playing, started) = (self.playing(), self.started);
        match self.seats.leave(&who.player_id, playing, started)? {
            Leaving::Resigns(seat) => {
                self.finish(seat.other().into(), Reason::Resign, None);
                self.room_update();
            }
            Leaving::Freed | Leaving::Kept => {
                // A player who leaves a finished game leaves its rematch offer with it.
                self.lapse_offers();
                self.room_update();
            }
            Leaving::Watcher => self.crowd_changed(),
        }
        self.timers.maybe_empty(self.seats.is_empty());
        Ok(())
    }

    pub(super) fn disconnected(&mut self, player_id: &str, conn_id: u64) {
        match self.seats.disconnected(player_id, conn_id) {
            None => return,
            Some(Departed::Player) => {
                self.update_clock();
                self.room_update();
            }
            Some(Departed::Watcher) => self.crowd_changed(),
        }
        self.timers.maybe_empty(self.seats.is_empty());
    }

    pub(super) fn sync(&mut self, who: &Who, since_seq: u64, re: Option<&Value>) {
        let Some(Member { client, seat, .. }) = self.seats.member(&who.player_id) else {
            Self::reply_err(
                &who.client,
                err(ErrorCode::NotInRoom, "join the room first"),
                re,
            );
            return;
        };
        let limit = (self.ctx.settings.send_queue / 2) as u64;
        match self.outbox.replay(since_seq, limit) {
            // We cannot replay from there: send the whole state instead.
            Replay::Snapshot => self.send_joined(client, *seat, re),
            Replay::Events(events) => {
                for bytes in events {
                    if !client.send(bytes.clone()) {
                        return;
                    }
                }
                client.send(encode(
                    &ServerMsg::Synced {
                        room_id: self.id.to_string(),
                        seq: self.outbox.seq(),
                        clock: self.clocks.state(),
                    },
                    re,
                ));
            }
        }
    }
}
