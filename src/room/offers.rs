//! Draw offers and takeback requests: what is pending, and when an offer lapses. This module
//! decides; the room announces, asks a bot, and plays out what was agreed (a draw through
//! `conclude`, a takeback through `take_back`), so no second path leads to the store.
//!
//! The rules (docs/protocol.md, "Offers"):
//! - One pending offer of each kind per room. Offering what the opponent already offers is
//!   accepting it.
//! - A draw offer lapses when its maker moves after a move has been made since the offer: an
//!   offer made on one's own turn survives the move that follows it, and the opponent has one
//!   turn to answer; moving does not decline it.
//! - A takeback request lapses with any move (the position it was about is gone).
//! - Every pending offer lapses when the game ends.
//! - A rematch is offered once the game is over; it lapses when a player leaves the room.

use crate::protocol::{ErrorCode, OfferKind, PendingOffer, ProtoError, Seat};

/// An offer and the number of moves on the board when it was made.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pending {
    offer: PendingOffer,
    plies: usize,
}

/// The pending offers of a room.
#[derive(Default)]
pub(super) struct Offers {
    pending: Vec<Pending>,
}

/// What an `offer` command comes to.
#[derive(Debug, PartialEq)]
pub(super) enum Made {
    /// A new pending offer: announce it.
    Pending,
    /// The opponent was offering the same: it is accepted.
    Agreed(PendingOffer),
}

impl Offers {
    /// The pending offers, oldest first.
    pub(super) fn pending(&self) -> Vec<PendingOffer> {
        self.pending.iter().map(|p| p.offer).collect()
    }

    /// `by` offers `kind` with `plies` moves on the board.
    pub(super) fn make(
        &mut self,
        kind: OfferKind,
        by: Seat,
        plies: usize,
    ) -> Result<Made, ProtoError> {
        if let Some(i) = self.pending.iter().position(|p| p.offer.kind == kind) {
            if self.pending[i].offer.by == by {
                return Err(ProtoError::new(
                    ErrorCode::OfferPending,
                    "you have already made this offer",
                ));
            }
            return Ok(Made::Agreed(self.pending.remove(i).offer));
        }
        self.pending.push(Pending {
            offer: PendingOffer { kind, by },
            plies,
        });
        Ok(Made::Pending)
    }

    /// `responder` answers the opponent's offer of `kind`: the offer, now closed.
    pub(super) fn answer(
        &mut self,
        kind: OfferKind,
        responder: Seat,
    ) -> Result<PendingOffer, ProtoError> {
        let i = self
            .pending
            .iter()
            .position(|p| p.offer.kind == kind && p.offer.by != responder)
            .ok_or_else(|| {
                ProtoError::new(
                    ErrorCode::NoOffer,
                    "your opponent has no pending offer of this kind",
                )
            })?;
        Ok(self.pending.remove(i).offer)
    }

    /// `mover` is about to move with `plies` moves on the board: the offers that lapse.
    pub(super) fn moved(&mut self, mover: Seat, plies: usize) -> Vec<PendingOffer> {
        let mut lapsed = Vec::new();
        self.pending.retain(|p| {
            let lapses = match p.offer.kind {
                OfferKind::Takeback => true,
                OfferKind::Draw => p.offer.by == mover && plies > p.plies,
                OfferKind::Rematch => false,
            };
            if lapses {
                lapsed.push(p.offer);
            }
            !lapses
        });
        lapsed
    }

    /// The game ended (or moves were taken back): every pending offer lapses.
    pub(super) fn clear(&mut self) -> Vec<PendingOffer> {
        self.pending.drain(..).map(|p| p.offer).collect()
    }
}

/// How many plies a takeback by `asker` undoes with `to_move` to play and `asker_moves` stones
/// of the asker's on the board: its last move, and the opponent's reply if there is one. `None`
/// when the asker has no move to take back.
pub(super) fn takeback_plies(asker: Seat, to_move: Seat, asker_moves: usize) -> Option<usize> {
    if asker_moves == 0 {
        return None;
    }
    Some(if to_move == asker { 2 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRAW_X: PendingOffer = PendingOffer {
        kind: OfferKind::Draw,
        by: Seat::X,
    };

    #[test]
    fn a_draw_offer_survives_its_makers_next_move_and_lapses_at_the_one_after() {
        let mut o = Offers::default();
        assert_eq!(o.make(OfferKind::Draw, Seat::X, 4), Ok(Made::Pending));
        assert_eq!(o.moved(Seat::X, 4), []);
        assert_eq!(
            o.moved(Seat::O, 5),
            [],
            "the opponent's move does not decline it"
        );
        assert_eq!(o.moved(Seat::X, 6), [DRAW_X]);
        assert_eq!(o.pending(), []);
    }

    #[test]
    fn offering_what_the_opponent_offers_accepts_it_and_twice_is_refused() {
        let mut o = Offers::default();
        o.make(OfferKind::Draw, Seat::X, 0).unwrap();
        assert_eq!(
            o.make(OfferKind::Draw, Seat::X, 0).unwrap_err().code,
            ErrorCode::OfferPending
        );
        assert_eq!(
            o.make(OfferKind::Draw, Seat::O, 0),
            Ok(Made::Agreed(DRAW_X))
        );
        assert_eq!(o.pending(), []);
    }

    #[test]
    fn only_the_opponent_answers_and_a_takeback_lapses_with_any_move() {
        let mut o = Offers::default();
        o.make(OfferKind::Takeback, Seat::O, 3).unwrap();
        assert_eq!(
            o.answer(OfferKind::Takeback, Seat::O).unwrap_err().code,
            ErrorCode::NoOffer
        );
        assert_eq!(o.moved(Seat::X, 3).len(), 1);
        assert_eq!(
            o.answer(OfferKind::Takeback, Seat::X).unwrap_err().code,
            ErrorCode::NoOffer
        );
    }

    #[test]
    fn a_takeback_undoes_the_askers_move_and_the_reply_to_it() {
        assert_eq!(takeback_plies(Seat::X, Seat::O, 1), Some(1));
        assert_eq!(takeback_plies(Seat::X, Seat::X, 1), Some(2));
        assert_eq!(takeback_plies(Seat::O, Seat::O, 0), None);
    }
}
