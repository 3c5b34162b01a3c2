//! The game itself: starting it, moves (a person's, checked; a bot's, from its search),
//! results, and the bot searches. Every event is handed to the store before it is recorded in
//! the outbox, so nobody hears of a move or a result that is not durable.
//!
//! A draw offer or a takeback is decided by the `offers` module beside `seats` and played out in
//! `offer`: an agreed draw comes back here (`conclude` with `Reason::Agreement`); a move lapses
//! the offers it ends (`Offers::moved`), the end of the game all of them.

use std::sync::atomic::Ordering::Relaxed;

use caro_engine::{MoveError, Status};
use serde_json::Value;

use super::{err, Room, Who};
use crate::bot::{BotEvent, TimeLeft};
use crate::protocol::{
    cells, encode, Cell, ErrorCode, Fault, OfferEnd, Outcome, ProtoError, Reason, Seat, ServerMsg,
    TimeControl,
};
use crate::ratings::Settled;
use crate::room::seats::Occupant;
use crate::room::view::{self, Finished};
use crate::store::{now_ms, ForfeitRecord, GameCreated, StoreEvent};

/// The refusal of what only a seated player may do.
pub(super) fn not_a_player() -> ProtoError {
    err(ErrorCode::NotAPlayer, "only a seated player can do this")
}

impl Room {
    /// Starts the game once both seats are filled.
    pub(super) fn maybe_start(&mut self) {
        if self.started {
            return;
        }
        let Some(seats) = self.seats.records() else {
            return; // a seat is still open
        };
        self.started = true;
        self.rated = self.ctx.ratings.rated(self.family, self.casual, &seats);
        self.ctx.metrics.games_active.fetch_add(1, Relaxed);
        self.store(StoreEvent::Created(GameCreated {
            room_id: self.id.to_string(),
            game: self.board.rules().kind().as_str(),
            width: self.board.width(),
            height: self.board.height(),
            rule: view::rule(&self.board),
            seats,
            time_control: self.clocks.time_control(),
            casual: self.casual,
            rated: self.rated,
        }));
        self.clocks.start(self.to_move());
        self.update_clock();
    }

    /// `who`'s seat, or `not_a_player`.
    pub(super) fn player_seat(&self, who: &Who) -> Result<Seat, ProtoError> {
        self.seats.seat_of(&who.player_id).ok_or_else(not_a_player)
    }

    pub(super) fn check_turn(&self, who: &Who) -> Result<Seat, ProtoError> {
        let seat = self.player_seat(who)?;
        if self.finished.is_some() {
            return Err(err(ErrorCode::GameOver, "the game is over"));
        }
        if !self.started {
            return Err(err(
                ErrorCode::NotStarted,
                "the game starts when both seats are taken",
            ));
        }
        Ok(seat)
    }

    pub(super) fn human_move(
        &mut self,
        who: &Who,
        x: i64,
        y: i64,
        re: Option<&Value>,
    ) -> Result<(), ProtoError> {
        let seat = self.check_turn(who)?;
        if seat != self.to_move() {
            return Err(err(ErrorCode::NotYourTurn, "it is not your turn"));
        }
        let mv = self.board.check(x, y).map_err(|e| match e {
            MoveError::OutOfBounds { .. } => err(
                ErrorCode::OutOfBounds,
                format!(
                    "({x}, {y}) is outside the {}x{} board",
                    self.board.width(),
                    self.board.height()
                ),
            ),
            MoveError::Occupied { .. } => err(ErrorCode::Occupied, format!("({x}, {y}) is taken")),
            MoveError::GameOver => err(ErrorCode::GameOver, "the game is over"),
        })?;
        self.play(mv, re.map(|re| (&*who.player_id, re)));
        Ok(())
    }

    pub(super) fn resign(&mut self, who: &Who, re: Option<&Value>) -> Result<(), ProtoError> {
        let seat = self.check_turn(who)?;
        self.finish_acked(
            seat.other().into(),
            Reason::Resign,
            None,
            re.map(|re| (&*who.player_id, re)),
        );
        Ok(())
    }

    fn play(&mut self, mv: caro_engine::Move, ack: Option<(&str, &Value)>) {
        let seat = self.to_move();
        for offer in self.offers.moved(seat, self.board.moves().len()) {
            self.offer_ended(offer, OfferEnd::Lapsed, None);
        }
        let status = match self.board.try_play(mv) {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(room = %self.id, "checked move refused: {e}");
                return;
            }
        };
        self.ctx.metrics.moves_total.fetch_add(1, Relaxed);
        // The mover's time is charged and credited; the opponent's turn starts now.
        self.clocks.moved(seat);
        let turn = (status == Status::Ongoing).then(|| seat.other());
        if let Some(next) = turn {
            self.clocks.start(next);
        }
        let clock = self.clocks.state();
        // Recorded first, so the broadcast below is held until the move is durable.
        self.store(StoreEvent::Move {
            room_id: self.id.to_string(),
            seq: self.outbox.seq() + 1,
            seat,
            cell: [mv.x, mv.y],
            clock: self.clocks.left_ms(),
        });
        let room_id = self.id.clone();
        self.record_acked(
            |seq| ServerMsg::Move {
                room_id,
                seq,
                seat,
                x: mv.x,
                y: mv.y,
                turn,
                clock,
            },
            ack,
        );
        match status {
            Status::Ongoing => {
                // The away player's countdown now runs on its turn: everyone sees the new one.
                if self.update_clock() {
                    self.room_update();
                }
            }
            Status::Won(p) => {
                let line = self.board.winning_line().map(cells);
                self.finish(Seat::from(p).into(), Reason::Line, line);
            }
            Status::Draw => self.finish(Outcome::Draw, Reason::BoardFull, None),
        }
    }

    pub(super) fn finish(&mut self, result: Outcome, reason: Reason, line: Option<Vec<Cell>>) {
        self.finish_acked(result, reason, line, None);
    }

    fn finish_acked(
        &mut self,
        result: Outcome,
        reason: Reason,
        line: Option<Vec<Cell>>,
        ack: Option<(&str, &Value)>,
    ) {
        self.conclude(
            Finished {
                result,
                reason,
                line,
                forfeit: None,
            },
            ack,
        );
    }

    /// `seat`'s outside engine broke the rules of play: it loses, and everyone is told how.
    fn forfeit(&mut self, seat: Seat, fault: Fault, detail: String) {
        tracing::warn!(room = %self.id, ?seat, fault = fault.as_str(), "bot forfeits: {detail}");
        self.conclude(
            Finished {
                result: seat.other().into(),
                reason: Reason::Forfeit,
                line: None,
                forfeit: Some((fault, detail)),
            },
            None,
        );
    }

    fn conclude(&mut self, finished: Finished, ack: Option<(&str, &Value)>) {
        if self.finished.is_some() {
            return;
        }
        let (result, reason) = (finished.result, finished.reason);
        let (line, forfeit) = (finished.line.clone(), finished.forfeit.clone());
        self.search = None; // cancels a running search
        self.lapse_offers();
        self.timers.finished();
        self.clocks.stop();
        let clock = self.clocks.state();
        self.finished = Some(finished);
        if self.started {
            self.ctx.metrics.games_active.fetch_sub(1, Relaxed);
        }
        self.ctx.metrics.games_finished_total.fetch_add(1, Relaxed);
        // Before game_over goes out (it waits for the store in `settle`).
        self.ctx.registry.game_finished(&self.id);
        let settled = self.settle_ratings(result, reason);
        let (rows, changes) = match settled {
            Some(s) => (s.rows, Some(s.changes)),
            None => (Vec::new(), None),
        };
        // Recorded first, like a move: a result announced is a result kept, so a resigned game
        // never comes back as unfinished after a crash.
        self.store(StoreEvent::Result {
            room_id: self.id.to_string(),
            seq: self.outbox.seq() + 1,
            result,
            reason,
            forfeit: forfeit.as_ref().map(|(fault, detail)| ForfeitRecord {
                fault: fault.as_str().into(),
                detail: detail.clone(),
            }),
            ratings: rows,
        });
        let room_id = self.id.to_string();
        self.record_acked(
            |seq| ServerMsg::GameOver {
                room_id,
                seq,
                result,
                reason,
                line,
                fault: forfeit.as_ref().map(|f| f.0),
                detail: forfeit.map(|f| f.1),
                clock,
                ratings: changes,
            },
            ack,
        );
    }

    /// A rated game's new ratings (`None`: unrated, or aborted: fewer than two moves by a
    /// side, or ended by `Reason::Aborted`), the book updated. Called once, at the end.
    fn settle_ratings(&self, result: Outcome, reason: Reason) -> Option<Settled> {
        if !self.rated || reason == Reason::Aborted {
            return None;
        }
        let seats = self.seats.records()?;
        let n = self.board.moves().len();
        // X moves first: X has played the odd one out.
        let moves = [n.div_ceil(2), n / 2];
        self.ctx
            .ratings
            .settle(self.family?, &seats, moves, result, now_ms())
    }

    // --- Bots. ---

    /// Starts a search when it is a bot's turn and none runs.
    pub(super) fn maybe_start_bot(&mut self) {
        if !self.playing() || self.search.is_some() {
            return;
        }
        let seat = self.to_move();
        // Whose turn the search waits in for a slot (docs/bots.md, "Search slots"): the human
        // of the game, else the creator of a game between bots, else (a game between bots
        // restored after a restart) the room itself.
        let human = match self.seats.occupant(seat.other()) {
            Occupant::Human(h) => Some(h.player_id.clone()),
            _ => None,
        };
        let opponent_human = human.is_some();
        let owner = human
            .or_else(|| self.creator.clone())
            .unwrap_or_else(|| self.id.clone());
        // A bot under a clock budgets its search from the time it has left (docs/bots.md).
        let clock = match self.clocks.time_control() {
            TimeControl::None => None,
            tc => Some(TimeLeft {
                left: self.clocks.left(seat),
                increment: self.clocks.increment(),
                per_move: matches!(tc, TimeControl::PerMove { .. }),
            }),
        };
        if let Occupant::Bot { bot, .. } = self.seats.occupant(seat) {
            self.search_gen += 1;
            self.search = Some(self.ctx.bots.start(
                bot,
                self.board.clone(),
                opponent_human,
                owner,
                self.search_gen,
                self.bot_tx.clone(),
                clock,
            ));
        }
    }

    pub(super) fn on_bot(&mut self, ev: BotEvent) {
        match ev {
            BotEvent::Thinking { gen, info } if gen == self.search_gen && self.search.is_some() => {
                self.bot_score = Some(info.score);
                let msg = ServerMsg::BotThinking {
                    room_id: self.id.to_string(),
                    seat: self.to_move(),
                    depth: info.depth,
                    score: info.score,
                    nodes: info.nodes,
                    nps: info.nps,
                    pv: cells(&info.pv),
                };
                self.broadcast(encode(&msg, None));
            }
            BotEvent::Done { gen, best } if gen == self.search_gen && self.search.is_some() => {
                self.search = None;
                if !self.playing() {
                    return;
                }
                let legal = best.filter(|m| self.board.check(m.x as i64, m.y as i64).is_ok());
                // An engine that returns nothing usable must not stall the game.
                let Some(mv) = legal.or_else(|| self.board.legal_moves().next()) else {
                    return;
                };
                if legal.is_none() {
                    tracing::warn!(room = %self.id, "bot gave no legal move; playing {mv}");
                }
                self.play(mv, None);
            }
            BotEvent::Forfeit { gen, fault, detail }
                if gen == self.search_gen && self.search.is_some() =>
            {
                self.search = None;
                if self.playing() {
                    let seat = self.to_move();
                    self.forfeit(seat, fault, detail);
                }
            }
            _ => {}
        }
    }
}
