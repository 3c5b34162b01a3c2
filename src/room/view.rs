//! What the outside sees of a room: the summary the lobby lists (published through a
//! [`Latest`](crate::latest::Latest) after every turn of the room's loop), the full state a
//! `room_joined` carries, and the seats as `players`.
//!
//! Pure functions of a borrowed [`Facts`]: this module changes no room state (other than the
//! published summary) and sends nothing itself. A draw offer or a chat log that clients should
//! see in `room_joined` adds a field to `Facts` and to the state here, as the clocks did.

use caro_engine::{Board, GameKind};
use serde_json::Value;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use super::clocks::Clocks;
use super::seats::{Occupant, Seats};
use super::Summary;
use crate::protocol::{
    cells, encode, Cell, ChatLine, Fault, Outcome, PendingOffer, PlayerInfo, Players, Reason,
    RoomState, RoomStatus, RoomSummary, Seat, ServerMsg, TimeControl, You,
};
use crate::ratings::{Family, Ratings};

/// How a game ended, as `room_joined` shows it.
pub(super) struct Finished {
    pub(super) result: Outcome,
    pub(super) reason: Reason,
    pub(super) line: Option<Vec<Cell>>,
    /// A forfeit's code and text.
    pub(super) forfeit: Option<(Fault, String)>,
}

/// A room as the view needs it, borrowed from the actor.
/// What `room_joined` shows beyond the [`Facts`]: the room's own modules' state.
pub(super) struct Extras {
    /// The chat lines the member may read.
    pub(super) chat: Vec<ChatLine>,
    /// A casual game.
    pub(super) casual: bool,
    /// Pending offers.
    pub(super) offers: Vec<PendingOffer>,
}

pub(super) struct Facts<'a> {
    pub(super) id: &'a str,
    pub(super) board: &'a Board,
    pub(super) seats: &'a Seats,
    pub(super) status: RoomStatus,
    pub(super) seq: u64,
    pub(super) finished: Option<&'a Finished>,
    pub(super) clocks: &'a Clocks,
    /// Each away player's time before it loses by abandonment, ms (`room_joined` shows it).
    pub(super) abandon: [Option<u64>; 2],
    /// The ratings and the game's family, when it has one.
    pub(super) rating: Option<(&'a Ratings, Family)>,
    /// Rated (or, before it starts, rated if the open seat is taken by an account).
    pub(super) rated: bool,
}

/// Both seats as clients see them, with each away player's abandonment countdown (`abandon`,
/// ms; `[None, None]` for the lobby's summaries, which must not change every millisecond).
/// `rating`: the ratings and the room's family, when its game has one (each account's and
/// rated bot's rating is shown then).
pub(super) fn players(
    seats: &Seats,
    abandon: [Option<u64>; 2],
    rating: Option<(&Ratings, Family)>,
) -> Players {
    let info = |o: &Occupant, abandon_ms: Option<u64>| match o {
        Occupant::Open => None,
        Occupant::Human(h) => Some(PlayerInfo {
            name: h.name.to_string(),
            kind: "human",
            bot: None,
            connected: h.conn.is_some(),
            abandon_ms,
            rating: rating.and_then(|(r, f)| r.shown_player(&h.player_id, f)),
        }),
        Occupant::Bot { level, .. } => Some(PlayerInfo {
            name: level.clone(),
            kind: "bot",
            bot: Some(level.clone()),
            connected: true,
            abandon_ms: None,
            rating: rating.and_then(|(r, _)| r.shown_bot(level)),
        }),
    };
    Players {
        x: info(seats.occupant(Seat::X), abandon[0]),
        o: info(seats.occupant(Seat::O), abandon[1]),
    }
}

/// The rule variant's name, for games that have variants.
pub(super) fn rule(board: &Board) -> Option<&'static str> {
    match board.rules().kind() {
        GameKind::Caro => Some(board.rules().rule().as_str()),
        GameKind::TicTacToe => None,
    }
}

impl Facts<'_> {
    fn rule(&self) -> Option<&'static str> {
        rule(self.board)
    }

    /// The time control as messages show it: absent for none.
    fn time_control(&self) -> Option<TimeControl> {
        Some(self.clocks.time_control()).filter(TimeControl::is_clocked)
    }

    /// The lobby's line for the room.
    pub(super) fn summary(&self) -> RoomSummary {
        RoomSummary {
            room_id: self.id.to_string(),
            game: self.board.rules().kind().as_str(),
            width: self.board.width(),
            height: self.board.height(),
            rule: self.rule(),
            status: self.status,
            players: players(self.seats, [None, None], self.rating),
            spectators: self.seats.spectators(),
            moves: self.board.moves().len(),
            time_control: self.time_control(),
            rated: self.rated,
        }
    }

    /// Everything a client needs to show the room.
    pub(super) fn state(&self) -> RoomState {
        let turn = (self.status == RoomStatus::Playing).then(|| self.board.to_move().into());
        let forfeit = self.finished.and_then(|f| f.forfeit.as_ref());
        RoomState {
            room_id: self.id.to_string(),
            game: self.board.rules().kind().as_str(),
            width: self.board.width(),
            height: self.board.height(),
            rule: self.rule(),
            win_length: self.board.rules().win_length(),
            status: self.status,
            players: players(self.seats, self.abandon, self.rating),
            spectators: self.seats.spectators(),
            moves: cells(self.board.moves()),
            turn,
            seq: self.seq,
            result: self.finished.map(|f| f.result),
            reason: self.finished.map(|f| f.reason),
            line: self.finished.and_then(|f| f.line.clone()),
            fault: forfeit.map(|f| f.0),
            detail: forfeit.map(|f| f.1.clone()),
            time_control: self.time_control(),
            clock: self.clocks.state(),
            casual: false,
            rated: self.rated,
            offers: Vec::new(),
        }
    }

    /// `room_joined` for a member in `seat` (`None`: a spectator), after publishing the
    /// summary: once a client has its `room_joined`, `list_rooms` and `/api/rooms` already show
    /// the room as that join left it (a joiner who lists the rooms at once saw `waiting` in 76
    /// of 100 tries when the summary waited for the end of the room's turn; issue 16).
    pub(super) fn joined(
        &self,
        summary: &Summary,
        seat: Option<Seat>,
        extras: Extras,
        re: Option<&Value>,
    ) -> Utf8Bytes {
        self.publish(summary);
        let mut room = self.state();
        room.casual = extras.casual;
        room.offers = extras.offers;
        let you = You {
            role: if seat.is_some() {
                "player"
            } else {
                "spectator"
            },
            seat,
        };
        encode(
            &ServerMsg::RoomJoined {
                room: Box::new(room),
                you,
                chat: extras.chat,
            },
            re,
        )
    }

    /// Publishes the summary for the lobby. Runs after every command, so the usual case (a
    /// move: only the move count changed) updates the count in place instead of rebuilding the
    /// summary with its strings.
    pub(super) fn publish(&self, summary: &Summary) {
        let moves = self.board.moves().len();
        summary.update(|old| {
            let only_moves = old.status == self.status
                && old.rated == self.rated
                && old.spectators == self.seats.spectators()
                && seat_matches(self.seats.occupant(Seat::X), &old.players.x)
                && seat_matches(self.seats.occupant(Seat::O), &old.players.o);
            if only_moves {
                let changed = old.moves != moves;
                old.moves = moves;
                return changed;
            }
            let s = self.summary();
            if *old != s {
                *old = s;
                true
            } else {
                false
            }
        });
    }
}

/// Whether the published `info` of a seat still describes `occupant` (as [`players`] would
/// write it), compared without building it.
fn seat_matches(occupant: &Occupant, info: &Option<PlayerInfo>) -> bool {
    match (occupant, info) {
        (Occupant::Open, None) => true,
        (Occupant::Human(h), Some(p)) => {
            p.kind == "human"
                && p.bot.is_none()
                && *p.name == *h.name
                && p.connected == h.conn.is_some()
        }
        (Occupant::Bot { level, .. }, Some(p)) => {
            p.kind == "bot" && p.name == *level && p.bot.as_ref() == Some(level) && p.connected
        }
        _ => false,
    }
}
