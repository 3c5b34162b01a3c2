//! Who is in a room: the two seats (open, a person, a bot) and the members (connections in the
//! room, seated or watching), with joining, leaving, disconnecting and coming back.
//!
//! This module changes only its own state and says what happened (a [`Joining`], a [`Leaving`],
//! a [`Departed`]); the actor decides what follows (clocks, `room_update`s, the game's start or
//! end). It never sends to a client and never touches the board or the store.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;

use tokio::time::Instant;

use super::Who;
use crate::bot::BotSeat;
use crate::client::ClientHandle;
use crate::names;
use crate::protocol::{ErrorCode, JoinAs, ProtoError, Seat};
use crate::store::SeatRecord;

/// A person holding a seat.
pub(super) struct Human {
    pub(super) player_id: Arc<str>,
    pub(super) name: Arc<str>,
    /// Connection holding the seat, `None` while away.
    pub(super) conn: Option<u64>,
    /// Since when the player is away (disconnected), for the abandonment cap.
    pub(super) away_since: Option<Instant>,
}

/// Who sits in a seat.
pub(super) enum Occupant {
    Open,
    Human(Human),
    Bot { level: String, bot: BotSeat },
}

/// A connection in the room.
pub(super) struct Member {
    pub(super) client: ClientHandle,
    /// Its connection's address, when known (a rematch it offers counts against it).
    pub(super) ip: Option<IpAddr>,
    /// Its seat, `None` for a spectator.
    pub(super) seat: Option<Seat>,
}

/// How a join went.
pub(super) enum Joining {
    /// A seat holder is back in its seat (a new connection, or asking again).
    Back(Seat),
    /// A newcomer took an open seat.
    Seated(Seat),
    /// Watching; `new` unless it was already a member.
    Watching { new: bool },
}

/// What a leave did to the seat the leaver held.
pub(super) enum Leaving {
    /// The game was in progress: leaving resigns it.
    Resigns(Seat),
    /// Before the game: the seat is open again.
    Freed,
    /// After the game: the seat keeps its record, without a connection.
    Kept,
    /// A spectator left.
    Watcher,
}

/// Who went away when a connection ended.
pub(super) enum Departed {
    /// A seated player: the seat is held for their return.
    Player,
    /// A spectator.
    Watcher,
}

/// The two seats and the members.
pub(super) struct Seats {
    /// X then O.
    occupants: [Occupant; 2],
    /// ahash, not SipHash: looked up on every move (docs/performance.md).
    members: HashMap<Arc<str>, Member, ahash::RandomState>,
}

fn err(code: ErrorCode, message: impl Into<String>) -> ProtoError {
    ProtoError::new(code, message)
}

impl Seats {
    /// Seats as given, nobody in the room yet.
    pub(super) fn new(occupants: [Occupant; 2]) -> Seats {
        Seats {
            occupants,
            members: HashMap::default(),
        }
    }

    /// Who sits in `seat`.
    pub(super) fn occupant(&self, seat: Seat) -> &Occupant {
        &self.occupants[seat.index()]
    }

    /// The member map: the outbox fans out over it.
    pub(super) fn members(&self) -> &HashMap<Arc<str>, Member, ahash::RandomState> {
        &self.members
    }

    /// A member by player id.
    pub(super) fn member(&self, player_id: &str) -> Option<&Member> {
        self.members.get(player_id)
    }

    /// Whether nobody is in the room.
    pub(super) fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The seat a person holds here, connected or not.
    pub(super) fn seat_of(&self, player_id: &str) -> Option<Seat> {
        Seat::BOTH
            .into_iter()
            .find(|s| matches!(self.occupant(*s), Occupant::Human(h) if &*h.player_id == player_id))
    }

    /// Members without a seat.
    pub(super) fn spectators(&self) -> usize {
        self.members.values().filter(|m| m.seat.is_none()).count()
    }

    /// Whether the seat's holder is a person who is away.
    pub(super) fn absent(&self, seat: Seat) -> bool {
        matches!(self.occupant(seat), Occupant::Human(h) if h.conn.is_none())
    }

    /// Since when each seat's holder is away (`None`: present, open or a bot).
    pub(super) fn away_since(&self) -> [Option<Instant>; 2] {
        Seat::BOTH.map(|s| match self.occupant(s) {
            Occupant::Human(h) => h.away_since,
            _ => None,
        })
    }

    /// The seats as the store records them when the game starts; `None` while a seat is open
    /// (a game starts only with both taken).
    pub(super) fn records(&self) -> Option<[SeatRecord; 2]> {
        let record = |o: &Occupant| match o {
            Occupant::Open => None,
            Occupant::Human(h) => Some(SeatRecord::Human {
                player_id: h.player_id.to_string(),
                name: h.name.to_string(),
            }),
            Occupant::Bot { level, .. } => Some(SeatRecord::Bot {
                level: level.clone(),
            }),
        };
        Some([record(&self.occupants[0])?, record(&self.occupants[1])?])
    }

    /// Adds a member (the creator, in its seat or watching).
    pub(super) fn add_member(&mut self, who: &Who, seat: Option<Seat>) {
        self.members.insert(
            who.player_id.clone(),
            Member {
                client: who.client.clone(),
                ip: who.ip,
                seat,
            },
        );
    }

    /// `who` asks to join (`as_`); a newcomer may take an open seat only if `may_sit` (no
    /// result yet). Spectators beyond `max_spectators` are refused.
    pub(super) fn join(
        &mut self,
        who: &Who,
        as_: Option<JoinAs>,
        may_sit: bool,
        max_spectators: usize,
    ) -> Result<Joining, ProtoError> {
        // A seat holder (back on a new connection, or asking again) gets the seat back.
        if let Some(seat) = self.seat_of(&who.player_id) {
            if as_ != Some(JoinAs::Spectator) || self.members.contains_key(&who.player_id) {
                self.seat_back(who, seat);
                return Ok(Joining::Back(seat));
            }
        }
        let open = Seat::BOTH
            .into_iter()
            .find(|s| matches!(self.occupant(*s), Occupant::Open));
        let want_seat = as_ != Some(JoinAs::Spectator) && may_sit;
        if let (true, Some(seat)) = (want_seat, open) {
            self.occupants[seat.index()] = Occupant::Human(Human {
                player_id: who.player_id.clone(),
                name: self.shown_name(seat, &who.name),
                conn: Some(who.client.conn_id),
                away_since: None,
            });
            self.add_member(who, Some(seat));
            return Ok(Joining::Seated(seat));
        }
        if as_ == Some(JoinAs::Player) {
            return Err(err(ErrorCode::SeatTaken, "no open seat in this room"));
        }
        let already = self.members.contains_key(&who.player_id);
        if !already && self.spectators() >= max_spectators {
            return Err(err(
                ErrorCode::RoomFull,
                "this room has as many spectators as it allows",
            ));
        }
        self.add_member(who, None);
        Ok(Joining::Watching { new: !already })
    }

    /// A resumed session: back in its seat if it holds one here.
    pub(super) fn reconnect(&mut self, who: &Who) -> Option<Seat> {
        let seat = self.seat_of(&who.player_id)?;
        self.seat_back(who, seat);
        Some(seat)
    }

    /// The name `name` shows as in `seat`: itself, or with a number if the other seat's person
    /// already shows it (see [`names::distinct`]), so two players here never look alike.
    fn shown_name(&self, seat: Seat, name: &Arc<str>) -> Arc<str> {
        let other = match self.occupant(seat.other()) {
            Occupant::Human(h) => Some(&*h.name),
            _ => None,
        };
        names::distinct(name, other.into_iter()).map_or_else(|| name.clone(), Arc::from)
    }

    /// Seats a returning player on its new connection (under its current name, which a rename
    /// may have changed).
    fn seat_back(&mut self, who: &Who, seat: Seat) {
        let name = self.shown_name(seat, &who.name);
        if let Occupant::Human(h) = &mut self.occupants[seat.index()] {
            h.conn = Some(who.client.conn_id);
            h.away_since = None;
            h.name = name;
        }
        self.add_member(who, Some(seat));
    }

    /// `player_id` leaves; `playing` and `started` say where the game is.
    pub(super) fn leave(
        &mut self,
        player_id: &str,
        playing: bool,
        started: bool,
    ) -> Result<Leaving, ProtoError> {
        let seat = self.seat_of(player_id);
        if !self.members.contains_key(player_id) && seat.is_none() {
            return Err(err(ErrorCode::NotInRoom, "you are not in this room"));
        }
        self.members.remove(player_id);
        let Some(seat) = seat else {
            return Ok(Leaving::Watcher);
        };
        if !playing && !started {
            self.occupants[seat.index()] = Occupant::Open;
            return Ok(Leaving::Freed);
        }
        if let Occupant::Human(h) = &mut self.occupants[seat.index()] {
            h.conn = None;
        }
        Ok(if playing {
            Leaving::Resigns(seat)
        } else {
            Leaving::Kept
        })
    }

    /// The connection `conn_id` of `player_id` ended. `None` if it was not in the room (or a
    /// newer connection of the same player took over, which is left alone).
    pub(super) fn disconnected(&mut self, player_id: &str, conn_id: u64) -> Option<Departed> {
        let m = self.members.get(player_id)?;
        if m.client.conn_id != conn_id {
            return None;
        }
        let seat = m.seat;
        self.members.remove(player_id);
        let Some(seat) = seat else {
            return Some(Departed::Watcher);
        };
        if let Occupant::Human(h) = &mut self.occupants[seat.index()] {
            h.conn = None;
            h.away_since = Some(Instant::now());
        }
        Some(Departed::Player)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metrics;

    fn who(name: &str, conn_id: u64) -> Who {
        // Seats send nothing: the queue's receiving end is not needed.
        let (client, _) = ClientHandle::new(conn_id, 4, Arc::new(Metrics::default()));
        Who {
            player_id: name.into(),
            name: name.into(),
            client,
            ip: None,
        }
    }

    #[test]
    fn a_newcomer_takes_the_open_seat_and_a_third_watches() {
        let mut seats = Seats::new([Occupant::Open, Occupant::Open]);
        assert!(matches!(
            seats.join(&who("a", 1), None, true, 10),
            Ok(Joining::Seated(Seat::X))
        ));
        assert!(matches!(
            seats.join(&who("b", 2), None, true, 10),
            Ok(Joining::Seated(Seat::O))
        ));
        assert!(matches!(
            seats.join(&who("c", 3), None, true, 10),
            Ok(Joining::Watching { new: true })
        ));
        assert!(seats.records().is_some());
        let e = seats.join(&who("d", 4), Some(JoinAs::Player), true, 10);
        assert_eq!(e.err().map(|e| e.code), Some(ErrorCode::SeatTaken));
    }

    #[test]
    fn a_seat_is_held_across_a_disconnect_and_given_back() {
        let mut seats = Seats::new([Occupant::Open, Occupant::Open]);
        seats.join(&who("a", 1), None, true, 10).unwrap();
        // An older connection's end is ignored once a newer one holds the seat.
        assert!(seats.disconnected("a", 7).is_none());
        assert!(matches!(seats.disconnected("a", 1), Some(Departed::Player)));
        assert!(seats.absent(Seat::X) && seats.is_empty());
        assert_eq!(seats.reconnect(&who("a", 2)), Some(Seat::X));
        assert!(!seats.absent(Seat::X));
    }

    /// Two players named alike once looked like one person (issue 16): the second shows a
    /// number, also after coming back.
    #[test]
    fn a_second_player_with_a_taken_name_shows_a_number() {
        let mut seats = Seats::new([Occupant::Open, Occupant::Open]);
        let ann = |id: &str, conn| Who {
            name: "Ann".into(),
            ..who(id, conn)
        };
        seats.join(&ann("a", 1), None, true, 10).unwrap();
        seats.join(&ann("b", 2), None, true, 10).unwrap();
        fn shown(seats: &Seats, s: Seat) -> String {
            match seats.occupant(s) {
                Occupant::Human(h) => h.name.to_string(),
                _ => unreachable!(),
            }
        }
        assert_eq!(shown(&seats, Seat::X), "Ann");
        assert_eq!(shown(&seats, Seat::O), "Ann (2)");
        seats.disconnected("b", 2);
        assert_eq!(seats.reconnect(&ann("b", 3)), Some(Seat::O));
        assert_eq!(shown(&seats, Seat::O), "Ann (2)");
    }

    #[test]
    fn leaving_before_the_game_frees_the_seat() {
        let mut seats = Seats::new([Occupant::Open, Occupant::Open]);
        seats.join(&who("a", 1), None, true, 10).unwrap();
        assert!(seats.records().is_none());
        assert!(matches!(seats.leave("a", false, false), Ok(Leaving::Freed)));
        assert!(matches!(seats.occupant(Seat::X), Occupant::Open));
        let e = seats.leave("a", false, false);
        assert_eq!(e.err().map(|e| e.code), Some(ErrorCode::NotInRoom));
    }
}
