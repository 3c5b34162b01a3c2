//! Draw offers and takebacks, played out: `offers` decides what is pending and what lapses;
//! this file announces, lets a bot answer at once, and applies what was agreed (a draw through
//! `conclude`, a takeback by undoing moves, recorded like a move so it is durable before anyone
//! hears of it).

use serde_json::Value;

use super::{err, Room, Who};
use crate::protocol::{
    cells, encode, ErrorCode, OfferEnd, OfferKind, Outcome, PendingOffer, ProtoError, Reason, Seat,
    ServerMsg,
};
use crate::room::offers::{takeback_plies, Made};
use crate::room::seats::Occupant;
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
        let seat = self.check_turn(who)?;
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
            Made::Agreed(offer) => self.close_offer(offer, true, ack),
            Made::Pending => {
                let msg = ServerMsg::Offer {
                    room_id: self.id.to_string(),
                    kind,
                    by: seat,
                };
                self.broadcast_acked(encode(&msg, None), ack);
                if self.is_bot(opponent) {
                    // A bot answers at once: it grants a takeback (casual games only, checked
                    // above) and accepts a draw when its last search did not think it ahead.
                    let accept = match kind {
                        OfferKind::Takeback => true,
                        OfferKind::Draw => self.bot_score.is_some_and(|s| s <= 0),
                    };
                    if let Ok(offer) = self.offers.answer(kind, opponent) {
                        self.close_offer(offer, accept, None);
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
        let seat = self.check_turn(who)?;
        let offer = self.offers.answer(kind, seat)?;
        self.close_offer(offer, accept, re.map(|re| (&*who.player_id, re)));
        Ok(())
    }

    /// Announces how `offer` ended, then applies it if accepted.
    fn close_offer(&mut self, offer: PendingOffer, accept: bool, ack: Option<(&str, &Value)>) {
        let outcome = if accept {
            OfferEnd::Accepted
        } else {
            OfferEnd::Declined
        };
        self.offer_ended(offer, outcome, ack);
        if !accept {
            return;
        }
        match offer.kind {
            OfferKind::Draw => self.finish(Outcome::Draw, Reason::Agreement, None),
            OfferKind::Takeback => self.take_back(offer.by),
        }
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
        self.record_acked(
            |seq| ServerMsg::Takeback {
                room_id,
                seq,
                by,
                undone,
                turn,
            },
            None,
        );
        self.update_clock();
    }
}
