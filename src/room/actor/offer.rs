//! Draw offers and takebacks, played out: `offers` decides what is pending and what lapses;
//! this file announces, lets a bot answer at once, and applies what was agreed (a draw through
//! `conclude`, a takeback by undoing moves, recorded like a move so it is durable before anyone
//! hears of it).

use std::sync::Arc;

use serde_json::Value;

use super::play::not_a_player;
use super::{err, Room, Who};
use crate::protocol::{
    cells, encode, ErrorCode, OfferEnd, OfferKind, Outcome, PendingOffer, ProtoError, Reason, Seat,
    ServerMsg,
};
use crate::room::offers::{takeback_plies, Made};
use crate::room::seats::Occupant;
use crate::room::{RoomParams, SeatKind};
use crate::store::StoreEvent;

impl Room {
    /// Whether `seat` is held by a bot.
    fn is_bot(&self, seat: Seat) -> bool {
        matches!(self.seats.occupant(seat), Occupant::Bot { .. })
    }

    /// Stones `seat` has on the board.
    fn stones_of(&self, seat: Seat) -> usize {
        let n = self.board.moves().len();
        match seat {
            Seat::X => n.div_ceil(2),
            Seat::O => n / 2,
        }
    }

    pub(in crate::room) fn offer(
        &mut self,
        who: &Who,
        kind: OfferKind,
        re: Option<&Value>,
    ) -> Result<(), ProtoError> {
        let seat = self.offer_seat(who, kind)?;
        let opponent = seat.other();
        if kind == OfferKind::Takeback {
            if takeback_plies(seat, self.to_move(), self.stones_of(seat)).is_none() {
                return Err(err(ErrorCode::NoTakeback, "you have no move to take back"));
            }
            if self.is_bot(opponent) && !self.casual {
                return Err(err(
                    ErrorCode::NoTakeback,
                    "a bot grants takebacks in casual games only",
                ));
            }
        }
        let ack = re.map(|re| (&*who.player_id, re));
        match self.offers.make(kind, seat, self.board.moves().len())? {
            Made::Agreed(offer) => self.close_offer(offer, true, ack)?,
            Made::Pending => {
                let msg = ServerMsg::Offer {
                    room_id: self.id.to_string(),
                    kind,
                    by: seat,
                };
                self.broadcast_acked(encode(&msg, None), ack);
                if self.is_bot(opponent) {
                    // A bot answers at once: it grants a takeback (casual games only, checked
                    // above) and a rematch, and accepts a draw when its last search did not
                    // think it ahead.
                    let accept = match kind {
                        OfferKind::Takeback | OfferKind::Rematch => true,
                        OfferKind::Draw => self.bot_score.is_some_and(|s| s <= 0),
                    };
                    if let Ok(offer) = self.offers.answer(kind, opponent) {
                        self.close_offer(offer, accept, None)?;
                    }
                }
            }
        }
        Ok(())
    }

    pub(in crate::room) fn respond(
        &mut self,
        who: &Who,
        kind: OfferKind,
        accept: bool,
        re: Option<&Value>,
    ) -> Result<(), ProtoError> {
        let seat = self.offer_seat(who, kind)?;
        let offer = self.offers.answer(kind, seat)?;
        self.close_offer(offer, accept, re.map(|re| (&*who.player_id, re)))
    }

    /// `who`'s seat, if it may make or answer an offer of `kind`: a draw or a takeback during
    /// the game, a rematch once it is over.
    fn offer_seat(&self, who: &Who, kind: OfferKind) -> Result<Seat, ProtoError> {
        if kind != OfferKind::Rematch {
            return self.check_turn(who);
        }
        let seat = self.player_seat(who)?;
        if self.finished.is_none() {
            return Err(err(
                ErrorCode::GameNotOver,
                "a rematch is offered once the game is over",
            ));
        }
        Ok(seat)
    }

    /// Announces how `offer` ended, then applies it if accepted. A rematch whose room cannot
    /// be opened (the server's or its maker's room limits) lapses, and the answer is that error.
    fn close_offer(
        &mut self,
        offer: PendingOffer,
        accept: bool,
        ack: Option<(&str, &Value)>,
    ) -> Result<(), ProtoError> {
        if !accept {
            self.offer_ended(offer, OfferEnd::Declined, ack);
            return Ok(());
        }
        if offer.kind == OfferKind::Rematch {
            let new_room = match self.open_rematch(offer.by) {
                Ok(id) => id,
                Err(e) => {
                    self.offer_ended(offer, OfferEnd::Lapsed, None);
                    return Err(e);
                }
            };
            self.offer_ended(offer, OfferEnd::Accepted, ack);
            let msg = ServerMsg::Rematch {
                room_id: self.id.to_string(),
                new_room_id: new_room.to_string(),
            };
            self.broadcast(encode(&msg, None));
            return Ok(());
        }
        self.offer_ended(offer, OfferEnd::Accepted, ack);
        match offer.kind {
            OfferKind::Draw => self.finish(Outcome::Draw, Reason::Agreement, None),
            OfferKind::Takeback => self.take_back(offer.by),
            OfferKind::Rematch => {}
        }
        Ok(())
    }

    /// Opens the rematch room, counted as created by `by`'s player: the same board, rule and
    /// casualness, the colours swapped, each person's seat held for them.
    fn open_rematch(&mut self, by: Seat) -> Result<Arc<str>, ProtoError> {
        let kind = |seat: Seat| match self.seats.occupant(seat) {
            Occupant::Human(h) => SeatKind::Reserved {
                player_id: h.player_id.clone(),
                name: h.name.clone(),
            },
            Occupant::Bot { level, .. } => SeatKind::Bot(level.clone()),
            Occupant::Open => SeatKind::Open,
        };
        let Occupant::Human(maker) = self.seats.occupant(by) else {
            return Err(not_a_player());
        };
        // The maker is in the room (leaving lapses its offer): its connection's address.
        let ip = self.seats.member(&maker.player_id).and_then(|m| m.ip);
        let params = RoomParams {
            rules: *self.board.rules(),
            seats: [kind(Seat::O), kind(Seat::X)],
            casual: self.casual,
            time_control: self.clocks.time_control(),
        };
        let handle =
            self.ctx
                .registry
                .open_held(&self.ctx, &maker.player_id.clone(), ip, params)?;
        Ok(handle.id)
    }

    /// Tells the room an offer has ended.
    pub(super) fn offer_ended(
        &mut self,
        offer: PendingOffer,
        outcome: OfferEnd,
        ack: Option<(&str, &Value)>,
    ) {
        let msg = ServerMsg::OfferEnded {
            room_id: self.id.to_string(),
            kind: offer.kind,
            by: offer.by,
            outcome,
        };
        self.broadcast_acked(encode(&msg, None), ack);
    }

    /// Every pending offer lapses (the game ended, or moves were taken back).
    pub(super) fn lapse_offers(&mut self) {
        for offer in self.offers.clear() {
            self.offer_ended(offer, OfferEnd::Lapsed, None);
        }
    }

    /// Undoes `by`'s last move, and the reply to it if there is one, so that `by` is to move.
    fn take_back(&mut self, by: Seat) {
        let Some(plies) = takeback_plies(by, self.to_move(), self.stones_of(by)) else {
            return;
        };
        // A bot thinking about the position being undone stops.
        self.search = None;
        self.lapse_offers();
        let mut undone = Vec::with_capacity(plies);
        for _ in 0..plies {
            if let Some(mv) = self.board.undo() {
                undone.push(mv);
            }
        }
        debug_assert_eq!(Seat::from(self.board.to_move()), by);
        self.store(StoreEvent::Takeback {
            room_id: self.id.to_string(),
            seq: self.outbox.seq() + 1,
            plies: undone.len() as u32,
        });
        let room_id = self.id.to_string();
        let turn = self.to_move();
        let undone = cells(&undone);
        // The side to move again gets its clock back running (a side already to move keeps
        // running from its turn's start); time spent stays spent.
        self.clocks.start(turn);
        let clock = self.clocks.state();
        self.record_acked(
            |seq| ServerMsg::Takeback {
                room_id,
                seq,
                by,
                undone,
                turn,
                clock,
            },
            None,
        );
        self.update_clock();
    }
}
