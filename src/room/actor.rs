//! The room task: the only owner of a game. Every change goes through [`Room::run`]'s loop, one
//! command, bot event or timer at a time, so the order clients see is the order things happened.
//!
//! The loop dispatches to modules that each own a part of the room's state and say what
//! happened: `seats` (who is in the room), `chat` (the two channels), `offers` (draws,
//! takebacks, rematches), `clocks` (game clocks), `outbox` (seq, history, durability, fan-out),
//! `timers` (deadlines) and `view` (what clients see). This file holds the loop, the dispatch and
//! sending; its children apply the modules' answers: `play` (moves, results, bots), `offer`,
//! `chat`, `members` (joins, leaves, reconnects, sync) and `time` (deadlines, flags). A new
//! feature is a module, a child here, and one arm in `handle`. Chat lines are not game events
//! (no `seq`); a takeback is (it is stored like a move). The loop also sleeps until the running
//! side's flag, and every command first checks it, so a move that arrives after the flag fell
//! loses on time rather than being played.
//!
//! Abandonment (lichess-like, see docs/protocol.md): a disconnected player keeps the seat. The
//! abandonment clock (`grace`) runs only while it is the absent player's turn; an absent player
//! also loses once away for `absent_cap` in total, whoever's turn it is, so no game stalls. When
//! both are away, the clock of the side to move runs. Open seats abandon nothing.

mod chat;
mod members;
mod offer;
mod play;
mod time;

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use caro_engine::{Board, Status};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use super::chat::Chat;
use super::clocks::Clocks;
use super::offers::Offers;
use super::outbox::{self, Ack, Outbox};
use super::seats::{Human, Occupant, Seats};
use super::timers::{sleep_until_opt, Timers};
use super::view::{self, Facts, Finished};
use super::{RoomCmd, RoomContext, RoomParams, SeatKind, Summary, Who};
use crate::bot::{BotEvent, SearchHandle};
use crate::client::ClientHandle;
use crate::client::CLOSE_ROOM_MOVED;
use crate::latest::Latest;
use crate::protocol::{
    cells, encode, encode_error, with_re, ErrorCode, Outcome, ProtoError, Reason, RoomStatus, Seat,
    ServerMsg, TimeControl,
};
use crate::ratings::Family;
use crate::store::{GameRecord, SeatRecord};

pub(super) struct Room {
    ctx: Arc<RoomContext>,
    id: Arc<str>,
    board: Board,
    seats: Seats,
    chat: Chat,
    offers: Offers,
    /// A casual game: a bot grants takebacks.
    casual: bool,
    /// The rating family of the game's rules and clock (`None`: never rated).
    family: Option<Family>,
    /// A rated game (decided when it starts: `Ratings::rated`).
    rated: bool,
    /// The last score a bot's search reported, for its side: a bot accepts a draw offer when
    /// it does not think itself ahead.
    bot_score: Option<i32>,
    outbox: Outbox,
    timers: Timers,
    /// The game clocks (and the idle limit of a game without one).
    clocks: Clocks,
    /// Where the lobby reads the room's summary.
    summary: Summary,
    started: bool,
    finished: Option<Finished>,
    /// The running bot search; dropping it cancels the search.
    search: Option<SearchHandle>,
    /// Tells a current search's events from a stale one's.
    search_gen: u64,
    bot_tx: mpsc::Sender<BotEvent>,
    bot_rx: Option<mpsc::Receiver<BotEvent>>,
    /// Who opened the room (`None` when restored: the store does not keep it); the owner of a
    /// game between bots when it waits for a search slot.
    creator: Option<Arc<str>>,
    closed: bool,
    /// Stopped because another node of the cluster runs the room now.
    moved: bool,
}

fn err(code: ErrorCode, message: impl Into<String>) -> ProtoError {
    ProtoError::new(code, message)
}

/// The occupant of a new room's seat of `kind`; `creator` takes a [`SeatKind::Me`] seat.
fn occupant(ctx: &RoomContext, kind: &SeatKind, creator: Option<&Who>) -> Occupant {
    match (kind, creator) {
        (SeatKind::Me, Some(creator)) => Occupant::Human(Human {
            player_id: creator.player_id.clone(),
            name: creator.name.clone(),
            conn: Some(creator.client.conn_id),
            away_since: None,
        }),
        (SeatKind::Reserved { player_id, name }, _) => Occupant::Human(Human {
            player_id: player_id.clone(),
            name: name.clone(),
            conn: None,
            away_since: Some(Instant::now()),
        }),
        (SeatKind::Bot(level), _) => match ctx.bots.seat(level) {
            Some(bot) => Occupant::Bot {
                level: level.clone(),
                bot,
            },
            None => Occupant::Open, // checked by check_params
        },
        (SeatKind::Open | SeatKind::Me, _) => Occupant::Open,
    }
}

/// The member map's own key for `player_id` (fan-out tells members apart by pointer).
fn member_key(seats: &Seats, player_id: &str) -> Option<Arc<str>> {
    seats
        .members()
        .get_key_value(player_id)
        .map(|(k, _)| k.clone())
}

impl Room {
    /// A room with no members and no game started, counted in the metrics.
    fn blank(
        ctx: Arc<RoomContext>,
        id: Arc<str>,
        rules: caro_engine::Rules,
        occupants: [Occupant; 2],
        time_control: TimeControl,
    ) -> (Room, Summary) {
        let (bot_tx, bot_rx) = mpsc::channel(64);
        let bots_only = occupants.iter().all(|o| matches!(o, Occupant::Bot { .. }));
        let family = Family::of(&rules, &time_control);
        let board = Board::new(rules);
        let seats = Seats::new(occupants);
        let clocks = Clocks::new(time_control, ctx.settings.idle_move);
        let first = Facts {
            id: &id,
            board: &board,
            seats: &seats,
            status: RoomStatus::Waiting,
            seq: 0,
            finished: None,
            clocks: &clocks,
            abandon: [None, None],
            rating: family.map(|f| (&*ctx.ratings, f)),
            // Set by the first publish, once the room knows whether it is casual.
            rated: false,
        }
        .summary();
        let summary = Arc::new(Latest::new(first));
        let room = Room {
            outbox: Outbox::new(ctx.settings.history_events),
            chat: Chat::new(ctx.settings.chat_history),
            offers: Offers::default(),
            casual: false,
            family,
            rated: false,
            bot_score: None,
            timers: Timers::new(bots_only),
            clocks,
            board,
            seats,
            ctx,
            id,
            summary: summary.clone(),
            started: false,
            finished: None,
            search: None,
            search_gen: 0,
            bot_tx,
            bot_rx: Some(bot_rx),
            creator: None,
            closed: false,
            moved: false,
        };
        room.ctx.metrics.rooms.fetch_add(1, Relaxed);
        room.ctx.metrics.rooms_total.fetch_add(1, Relaxed);
        (room, summary)
    }

    /// A room for a game restored from the store after a restart: same id, the moves replayed,
    /// `seq` continuing from the last stored event. Human seats are held as if their players
    /// had just disconnected (the normal grace and cap run from now); a bot resumes its turn
    /// when the room task starts. A seat whose bot level no longer exists ends the game as
    /// abandoned by that seat.
    pub(super) fn restore(
        ctx: Arc<RoomContext>,
        record: &GameRecord,
        rules: caro_engine::Rules,
    ) -> (Room, Summary) {
        let now = Instant::now();
        let mut missing_bot = None;
        let players = [&record.summary.players.x, &record.summary.players.o];
        let occupants = [0, 1].map(|i| match players[i] {
            SeatRecord::Human { player_id, name } => Occupant::Human(Human {
                player_id: player_id.as_str().into(),
                name: name.as_str().into(),
                conn: None,
                away_since: Some(now),
            }),
            SeatRecord::Bot { level } => match ctx.bots.seat(level) {
                Some(bot) => Occupant::Bot {
                    level: level.clone(),
                    bot,
                },
                None => {
                    missing_bot = Some(Seat::BOTH[i]);
                    Occupant::Open
                }
            },
        });
        let id: Arc<str> = record.summary.id.as_str().into();
        let tc = record.summary.time_control.unwrap_or(TimeControl::None);
        let (mut room, summary) = Room::blank(ctx, id, rules, occupants, tc);
        // Each side's time as of the last stored move: the server's downtime is charged to
        // nobody (docs/protocol.md, "Server restarts").
        room.clocks
            .restored(record.moves.last().and_then(|m| m.clock));
        for m in &record.moves {
            if let Err(e) = room.board.try_play(caro_engine::Move::new(m.x, m.y)) {
                tracing::error!(room = %room.id, "stored move {},{} refused: {e}", m.x, m.y);
                break;
            }
        }
        room.outbox.restored(record.seq);
        room.casual = record.summary.casual;
        room.rated = record.summary.rated && room.family.is_some();
        for line in &record.chat {
            room.chat.push(line.clone());
        }
        room.started = true;
        room.ctx.metrics.games_active.fetch_add(1, Relaxed);
        room.timers.maybe_empty(true);
        if let Some(seat) = missing_bot {
            tracing::warn!(room = %room.id, "bot level of seat {seat:?} is gone; game abandoned");
            room.finish(seat.other().into(), Reason::Abandoned, None);
        } else {
            match room.board.status() {
                Status::Ongoing => {
                    room.clocks.start(room.to_move());
                    room.update_clock();
                }
                // The result was lost with the crash: record it now.
                Status::Won(p) => {
                    let line = room.board.winning_line().map(cells);
                    room.finish(Seat::from(p).into(), Reason::Line, line);
                }
                Status::Draw => room.finish(Outcome::Draw, Reason::BoardFull, None),
            }
        }
        room.publish();
        (room, summary)
    }

    pub(super) fn new(
        ctx: Arc<RoomContext>,
        id: Arc<str>,
        params: RoomParams,
        creator: Who,
    ) -> (Room, Summary) {
        let mut creator_seat = None;
        let occupants = [0, 1].map(|i| {
            if params.seats[i] == SeatKind::Me {
                creator_seat = Some(Seat::BOTH[i]);
            }
            occupant(&ctx, &params.seats[i], Some(&creator))
        });
        let (mut room, summary) =
            Room::blank(ctx, id, params.rules, occupants, params.time_control);
        room.casual = params.casual;
        room.creator = Some(creator.player_id.clone());
        room.seats.add_member(&creator, creator_seat);
        room.maybe_start();
        room.publish();
        (room, summary)
    }

    /// A room with seats held for its players (as if they had just disconnected: they come
    /// back by joining), or bots (a rematch, a pairing); the game starts at once.
    pub(super) fn held(ctx: Arc<RoomContext>, id: Arc<str>, params: RoomParams) -> (Room, Summary) {
        let occupants = [0, 1].map(|i| occupant(&ctx, &params.seats[i], None));
        let (mut room, summary) =
            Room::blank(ctx, id, params.rules, occupants, params.time_control);
        room.casual = params.casual;
        room.maybe_start();
        room.publish();
        (room, summary)
    }

    /// Sends the creator its `room_joined`. Called once the room is registered: a creator who
    /// passes the id on at once must find the room there (see `room::spawn`).
    pub(super) fn greet(&self, client: &ClientHandle, seat: Option<Seat>, re: Option<&Value>) {
        self.send_joined(client, seat, re);
    }

    pub(super) async fn run(mut self, mut rx: mpsc::Receiver<RoomCmd>, stop: Arc<super::Stop>) {
        let mut bot_rx = self.bot_rx.take().expect("run once");
        // One stop future for the room's life, not one per command (see connection/mod.rs), on a
        // lock-free signal rather than the shutdown token (see `signal`).
        let stopped = stop.raised(0);
        tokio::pin!(stopped);
        // A restored room may have recorded a result already (a lost bot level, a win the crash
        // left unrecorded): it is on disk before anyone can join and see it.
        self.settle().await;
        self.maybe_start_bot();
        while !self.closed {
            let mut deadline = self.timers.next_deadline(
                &self.ctx.settings,
                self.playing(),
                self.seats.away_since(),
            );
            if let Some(flag) = self.clocks.deadline().filter(|_| self.playing()) {
                deadline = Some(deadline.map_or(flag, |d| d.min(flag)));
            }
            tokio::select! {
                biased;
                why = &mut stopped => {
                    self.moved = *why == super::StopWhy::Moved;
                    break;
                }
                cmd = rx.recv() => match cmd {
                    Some(cmd) => self.handle(cmd),
                    None => break,
                },
                Some(ev) = bot_rx.recv() => self.on_bot(ev),
                _ = sleep_until_opt(deadline) => self.on_timer(),
            }
            self.settle().await;
            self.maybe_start_bot();
            self.publish();
        }
        self.close();
    }

    // --- State helpers. ---

    fn status(&self) -> RoomStatus {
        if self.finished.is_some() {
            RoomStatus::Finished
        } else if self.started {
            RoomStatus::Playing
        } else {
            RoomStatus::Waiting
        }
    }

    fn playing(&self) -> bool {
        self.status() == RoomStatus::Playing
    }

    fn to_move(&self) -> Seat {
        self.board.to_move().into()
    }

    fn facts(&self) -> Facts<'_> {
        Facts {
            id: &self.id,
            board: &self.board,
            seats: &self.seats,
            status: self.status(),
            seq: self.outbox.seq(),
            finished: self.finished.as_ref(),
            clocks: &self.clocks,
            abandon: self.abandon_ms(),
            rating: self.family.map(|f| (&*self.ctx.ratings, f)),
            rated: self.rated_now(),
        }
    }

    /// Whether the game is rated: as decided when it started, or before that, whether it
    /// would be if its open seats were taken by accounts.
    fn rated_now(&self) -> bool {
        if self.started {
            return self.rated;
        }
        let ratings = &self.ctx.ratings;
        let occupants = [Seat::X, Seat::O].map(|s| self.seats.occupant(s));
        let bots = occupants
            .iter()
            .filter(|o| matches!(o, Occupant::Bot { .. }))
            .count();
        !self.casual
            && self.family.is_some()
            && bots < 2
            && occupants.iter().all(|o| match o {
                Occupant::Open => true,
                Occupant::Human(h) => ratings.ratable_player(&h.player_id),
                Occupant::Bot { level, .. } => ratings.bot(level).is_some(),
            })
    }

    /// For each away player of a game in progress, the milliseconds (from now) before it loses
    /// by abandonment: `grace` on its turn, capped by `absent_cap` in total.
    fn abandon_ms(&self) -> [Option<u64>; 2] {
        if !self.playing() {
            return [None, None];
        }
        let now = Instant::now();
        let away = self.seats.away_since();
        Seat::BOTH.map(|s| {
            let at = self
                .timers
                .abandon_deadline(&self.ctx.settings, s, away[s.index()])?;
            Some(at.saturating_duration_since(now).as_millis() as u64)
        })
    }

    /// Publishes the summary for the lobby (after every turn of the loop).
    fn publish(&self) {
        self.facts().publish(&self.summary);
    }

    // --- Sending. ---

    fn send_joined(&self, client: &ClientHandle, seat: Option<Seat>, re: Option<&Value>) {
        let extras = view::Extras {
            chat: self.chat.visible(seat, self.finished.is_some()),
            casual: self.casual,
            offers: self.offers.pending(),
        };
        client.send(self.facts().joined(&self.summary, seat, extras, re));
    }

    fn reply_err(client: &ClientHandle, e: ProtoError, re: Option<&Value>) {
        client.send(encode_error(&e, re));
    }

    /// Sends the same bytes to every member (after this turn's store writes, if any).
    fn broadcast(&mut self, bytes: Utf8Bytes) {
        if let Some((bytes, ack)) = self.outbox.hold(bytes, None) {
            self.deliver(bytes, ack);
        }
    }

    /// Sends the same bytes to every member, `ack`'s member getting its copy with `re` (after
    /// this turn's store writes, if any).
    fn broadcast_acked(&mut self, bytes: Utf8Bytes, ack: Option<(&str, &Value)>) {
        let ack = ack.and_then(|(pid, re)| {
            let key = member_key(&self.seats, pid)?;
            Some((key, with_re(&bytes, re)))
        });
        if let Some((bytes, ack)) = self.outbox.hold(bytes, ack) {
            self.deliver(bytes, ack);
        }
    }

    /// Appends an event of the game record (it gets the next `seq`) and broadcasts it, the
    /// member `ack` getting its copy with `re`.
    fn record_acked(&mut self, make: impl FnOnce(u64) -> ServerMsg, ack: Option<(&str, &Value)>) {
        if let Some((bytes, ack)) = self.outbox.record(&self.seats, make, ack) {
            self.deliver(bytes, ack);
        }
    }

    /// Fans `bytes` out now; members whose queue is full are dropped as disconnected.
    fn deliver(&mut self, bytes: Utf8Bytes, ack: Ack) {
        let dropped = match ack {
            Some((pid, with_re)) => outbox::fan_out(&self.seats, &bytes, Some((&pid, with_re))),
            None => outbox::fan_out(&self.seats, &bytes, None),
        };
        for (pid, conn) in dropped {
            self.disconnected(&pid, conn);
        }
    }

    /// Hands an event to the store; this turn's messages wait for it.
    fn store(&mut self, event: crate::store::StoreEvent) {
        self.outbox.store(&*self.ctx.store, event);
    }

    /// Waits for this turn's store commits, then sends what they held back. If the store
    /// failed, the game can no longer keep its durability promise: the room closes without
    /// announcing the unrecorded events (players see `room_closed`).
    async fn settle(&mut self) {
        match self.outbox.settle().await {
            Err(e) => {
                tracing::error!(room = %self.id, "store write failed, closing the room: {e}");
                self.closed = true;
            }
            Ok(released) => {
                for (bytes, ack) in released.held {
                    self.deliver(bytes, ack);
                }
                for (reply, result) in released.leaves {
                    let _ = reply.send(result);
                }
            }
        }
    }

    fn room_update(&mut self) {
        self.timers.updated();
        let msg = ServerMsg::RoomUpdate {
            room_id: self.id.to_string(),
            players: view::players(
                &self.seats,
                self.abandon_ms(),
                self.family.map(|f| (&*self.ctx.ratings, f)),
            ),
            spectators: self.seats.spectators(),
            clock: self.clocks.state(),
        };
        self.broadcast(encode(&msg, None));
    }

    fn crowd_changed(&mut self) {
        if self.timers.crowd_changed(&self.ctx.settings) {
            self.room_update();
        }
    }

    // --- Commands: the dispatch. ---

    /// One command. Offers (draw, takeback, rematch) and chat plug in here: one arm each,
    /// handing the command to their module and applying what it answers.
    fn handle(&mut self, cmd: RoomCmd) {
        // A flag that fell while this command waited is the first thing that happened.
        self.flag_if_due(Instant::now());
        match cmd {
            RoomCmd::Join {
                who,
                as_,
                re,
                reply,
            } => {
                // Success is answered here (room_joined must precede later events); errors
                // by the connection.
                let _ = reply.send(self.join(&who, as_, re.as_ref()));
            }
            RoomCmd::Leave { who, reply } => {
                let result = self.leave(&who);
                self.outbox.hold_leave(reply, result);
            }
            RoomCmd::Move { who, x, y, re } => {
                if let Err(e) = self.human_move(&who, x, y, re.as_ref()) {
                    Self::reply_err(&who.client, e, re.as_ref());
                }
            }
            RoomCmd::Resign { who, re } => {
                if let Err(e) = self.resign(&who, re.as_ref()) {
                    Self::reply_err(&who.client, e, re.as_ref());
                }
            }
            RoomCmd::Sync { who, since_seq, re } => self.sync(&who, since_seq, re.as_ref()),
            RoomCmd::Reconnect { who, reply } => {
                let _ = reply.send(self.reconnect(&who));
            }
            RoomCmd::Disconnected { player_id, conn_id } => {
                self.disconnected(&player_id, conn_id);
            }
            RoomCmd::Offer { who, kind, re } => {
                if let Err(e) = self.offer(&who, kind, re.as_ref()) {
                    Self::reply_err(&who.client, e, re.as_ref());
                }
            }
            RoomCmd::Respond {
                who,
                kind,
                accept,
                re,
            } => {
                if let Err(e) = self.respond(&who, kind, accept, re.as_ref()) {
                    Self::reply_err(&who.client, e, re.as_ref());
                }
            }
            RoomCmd::Say { who, text, re } => {
                if let Err(e) = self.say(&who, text, re.as_ref()) {
                    Self::reply_err(&who.client, e, re.as_ref());
                }
            }
        }
    }

    fn close(&mut self) {
        self.search = None;
        if self.moved {
            for m in self.seats.members().values() {
                m.client.close(
                    CLOSE_ROOM_MOVED,
                    "the room moved to another node; reconnect",
                );
            }
        } else if !self.ctx.shutdown.is_cancelled() {
            let bytes = encode(
                &ServerMsg::RoomClosed {
                    room_id: self.id.to_string(),
                },
                None,
            );
            for m in self.seats.members().values() {
                m.client.send(bytes.clone());
            }
        }
        if self.started && self.finished.is_none() {
            self.ctx.metrics.games_active.fetch_sub(1, Relaxed);
        }
        self.ctx.metrics.rooms.fetch_sub(1, Relaxed);
        self.ctx.registry.room_closed(&self.id);
        tracing::info!(room = %self.id, "room closed");
    }
}
