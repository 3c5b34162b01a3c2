//! The room task: the only owner of a game. Every change goes through [`Room::run`]'s loop, one
//! command or timer at a time, so the order clients see is the order things happened.
//!
//! Abandonment (lichess-like, see docs/protocol.md): a disconnected player keeps the seat. The
//! abandonment clock (`grace`) runs only while it is the absent player's turn; an absent player
//! also loses once away for `absent_cap` in total, whoever's turn it is, so no game stalls. When
//! both are away, the clock of the side to move runs. Open seats abandon nothing.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use caro_engine::{Board, MoveError, Status};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use super::{Joined, RoomCmd, RoomContext, RoomParams, SeatKind, Summary, Who};
use crate::bot::{BotEvent, BotSeat, SearchHandle};
use crate::client::ClientHandle;
use crate::latest::Latest;
use crate::protocol::{
    cells, encode, encode_error, with_re, Cell, ErrorCode, Fault, JoinAs, Outcome, PlayerInfo,
    Players, ProtoError, Reason, RoomState, RoomStatus, RoomSummary, Seat, ServerMsg, You,
};
use crate::store::{Commit, GameCreated, GameRecord, SeatRecord, StoreEvent};

struct Human {
    player_id: Arc<str>,
    name: Arc<str>,
    /// Connection holding the seat, `None` while away.
    conn: Option<u64>,
    away_since: Option<Instant>,
}

enum Occupant {
    Open,
    Human(Human),
    Bot { level: String, bot: BotSeat },
}

struct Member {
    client: ClientHandle,
    seat: Option<Seat>,
}

/// The member whose message caused an event, and its copy of the event carrying `re`.
type Ack = Option<(Arc<str>, Utf8Bytes)>;

struct Finished {
    result: Outcome,
    reason: Reason,
    line: Option<Vec<Cell>>,
    /// A forfeit's code and text.
    forfeit: Option<(Fault, String)>,
}

pub(super) struct Room {
    ctx: Arc<RoomContext>,
    id: Arc<str>,
    board: Board,
    seats: [Occupant; 2],
    /// ahash, not SipHash: looked up on every move (docs/performance.md).
    members: HashMap<Arc<str>, Member, ahash::RandomState>,
    seq: u64,
    history: VecDeque<(u64, Utf8Bytes)>,
    started: bool,
    finished: Option<Finished>,
    finished_at: Option<Instant>,
    search: Option<SearchHandle>,
    search_gen: u64,
    bot_tx: mpsc::Sender<BotEvent>,
    bot_rx: Option<mpsc::Receiver<BotEvent>>,
    /// The side to move is away: when its abandonment clock started.
    turn_clock: Option<(Seat, Instant)>,
    crowd_pending: bool,
    last_update: Instant,
    empty_since: Option<Instant>,
    summary: Summary,
    closed: bool,
    /// Store commits of this turn of the loop: messages in `held` go out once they resolve.
    pending: Vec<Commit>,
    /// Broadcasts waiting for `pending` (durable before acknowledged): the shared bytes, and
    /// the acknowledged member with its copy carrying `re`.
    held: Vec<(Utf8Bytes, Ack)>,
    /// Answers to `leave` waiting for `pending`: leaving a game in progress resigns it, and
    /// `left` must not go out before the result is on disk.
    held_leaves: Vec<(LeaveReply, Result<(), ProtoError>)>,
}

type LeaveReply = oneshot::Sender<Result<(), ProtoError>>;

fn err(code: ErrorCode, message: impl Into<String>) -> ProtoError {
    ProtoError::new(code, message)
}

impl Room {
    /// A room with no members and no game started, counted in the metrics.
    fn blank(
        ctx: Arc<RoomContext>,
        id: Arc<str>,
        rules: caro_engine::Rules,
        seats: [Occupant; 2],
    ) -> (Room, Arc<Latest<RoomSummary>>) {
        let (bot_tx, bot_rx) = mpsc::channel(64);
        let placeholder = RoomSummary {
            room_id: id.to_string(),
            game: "",
            width: 0,
            height: 0,
            rule: None,
            status: RoomStatus::Waiting,
            players: Players::default(),
            spectators: 0,
            moves: 0,
        };
        let summary = Arc::new(Latest::new(placeholder));
        let summary_rx = summary.clone();
        let room = Room {
            board: Board::new(rules),
            ctx,
            id,
            seats,
            members: HashMap::default(),
            seq: 0,
            history: VecDeque::new(),
            started: false,
            finished: None,
            finished_at: None,
            search: None,
            search_gen: 0,
            bot_tx,
            bot_rx: Some(bot_rx),
            turn_clock: None,
            crowd_pending: false,
            last_update: Instant::now(),
            empty_since: None,
            summary,
            closed: false,
            pending: Vec::new(),
            held_leaves: Vec::new(),
            held: Vec::new(),
        };
        room.ctx.metrics.rooms.fetch_add(1, Relaxed);
        room.ctx.metrics.rooms_total.fetch_add(1, Relaxed);
        (room, summary_rx)
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
    ) -> (Room, Arc<Latest<RoomSummary>>) {
        let now = Instant::now();
        let mut missing_bot = None;
        let players = [&record.summary.players.x, &record.summary.players.o];
        let seats = [0, 1].map(|i| match players[i] {
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
        let (mut room, summary_rx) = Room::blank(ctx, id, rules, seats);
        for m in &record.moves {
            if let Err(e) = room.board.try_play(caro_engine::Move::new(m.x, m.y)) {
                tracing::error!(room = %room.id, "stored move {},{} refused: {e}", m.x, m.y);
                break;
            }
            room.seq = room.seq.max(m.seq);
        }
        room.started = true;
        room.ctx.metrics.games_active.fetch_add(1, Relaxed);
        room.empty_since = Some(now);
        if let Some(seat) = missing_bot {
            tracing::warn!(room = %room.id, "bot level of seat {seat:?} is gone; game abandoned");
            room.finish(seat.other().into(), Reason::Abandoned, None);
        } else {
            match room.board.status() {
                Status::Ongoing => room.update_clock(),
                // The result was lost with the crash: record it now.
                Status::Won(p) => {
                    let line = room.board.winning_line().map(cells);
                    room.finish(Seat::from(p).into(), Reason::Line, line);
                }
                Status::Draw => room.finish(Outcome::Draw, Reason::BoardFull, None),
            }
        }
        room.publish();
        (room, summary_rx)
    }

    pub(super) fn new(
        ctx: Arc<RoomContext>,
        id: Arc<str>,
        params: RoomParams,
        creator: Who,
    ) -> (Room, Arc<Latest<RoomSummary>>) {
        let mut seats = [Occupant::Open, Occupant::Open];
        let mut creator_seat = None;
        for (i, kind) in params.seats.iter().enumerate() {
            seats[i] = match kind {
                SeatKind::Open => Occupant::Open,
                SeatKind::Me => {
                    creator_seat = Some(Seat::BOTH[i]);
                    Occupant::Human(Human {
                        player_id: creator.player_id.clone(),
                        name: creator.name.clone(),
                        conn: Some(creator.client.conn_id),
                        away_since: None,
                    })
                }
                SeatKind::Bot(level) => match ctx.bots.seat(level) {
                    Some(bot) => Occupant::Bot {
                        level: level.clone(),
                        bot,
                    },
                    None => Occupant::Open, // checked by check_params
                },
            };
        }
        let (mut room, summary_rx) = Room::blank(ctx, id, params.rules, seats);
        room.members.insert(
            creator.player_id.clone(),
            Member {
                client: creator.client.clone(),
                seat: creator_seat,
            },
        );
        room.maybe_start();
        room.publish();
        (room, summary_rx)
    }

    /// Sends the creator its `room_joined`. Called once the room is in the lobby: a creator who
    /// passes the id on at once must find the room there (see `room::create`).
    pub(super) fn greet(&self, client: &ClientHandle, seat: Option<Seat>, re: Option<&Value>) {
        self.send_joined(client, seat, re);
    }

    pub(super) async fn run(mut self, mut rx: mpsc::Receiver<RoomCmd>, stop: Arc<super::Stop>) {
        let mut bot_rx = self.bot_rx.take().expect("run once");
        // One stop future for the room's life, not one per command (see connection.rs), on a
        // lock-free signal rather than the shutdown token (see `signal`).
        let stopped = stop.raised(0);
        tokio::pin!(stopped);
        // A restored room may have recorded a result already (a lost bot level, a win the crash
        // left unrecorded): it is on disk before anyone can join and see it.
        self.settle().await;
        self.maybe_start_bot();
        while !self.closed {
            let deadline = self.next_deadline();
            tokio::select! {
                biased;
                _ = &mut stopped => break,
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

    fn turn(&self) -> Option<Seat> {
        self.playing().then(|| self.to_move())
    }

    fn seat_of(&self, player_id: &str) -> Option<Seat> {
        Seat::BOTH.into_iter().find(
            |s| matches!(&self.seats[s.index()], Occupant::Human(h) if &*h.player_id == player_id),
        )
    }

    fn players(&self) -> Players {
        let info = |o: &Occupant| match o {
            Occupant::Open => None,
            Occupant::Human(h) => Some(PlayerInfo {
                name: h.name.to_string(),
                kind: "human",
                bot: None,
                connected: h.conn.is_some(),
            }),
            Occupant::Bot { level, .. } => Some(PlayerInfo {
                name: level.clone(),
                kind: "bot",
                bot: Some(level.clone()),
                connected: true,
            }),
        };
        Players {
            x: info(&self.seats[0]),
            o: info(&self.seats[1]),
        }
    }

    fn spectators(&self) -> usize {
        self.members.values().filter(|m| m.seat.is_none()).count()
    }

    fn rule(&self) -> Option<&'static str> {
        match self.board.rules().kind() {
            caro_engine::GameKind::Caro => Some(self.board.rules().rule().as_str()),
            caro_engine::GameKind::TicTacToe => None,
        }
    }

    fn summary(&self) -> RoomSummary {
        RoomSummary {
            room_id: self.id.to_string(),
            game: self.board.rules().kind().as_str(),
            width: self.board.width(),
            height: self.board.height(),
            rule: self.rule(),
            status: self.status(),
            players: self.players(),
            spectators: self.spectators(),
            moves: self.board.moves().len(),
        }
    }

    fn state(&self) -> RoomState {
        RoomState {
            room_id: self.id.to_string(),
            game: self.board.rules().kind().as_str(),
            width: self.board.width(),
            height: self.board.height(),
            rule: self.rule(),
            win_length: self.board.rules().win_length(),
            status: self.status(),
            players: self.players(),
            spectators: self.spectators(),
            moves: cells(self.board.moves()),
            turn: self.turn(),
            seq: self.seq,
            result: self.finished.as_ref().map(|f| f.result),
            reason: self.finished.as_ref().map(|f| f.reason),
            line: self.finished.as_ref().and_then(|f| f.line.clone()),
            fault: self
                .finished
                .as_ref()
                .and_then(|f| Some(f.forfeit.as_ref()?.0)),
            detail: self
                .finished
                .as_ref()
                .and_then(|f| Some(f.forfeit.as_ref()?.1.clone())),
        }
    }

    /// Publishes the summary for the lobby. Runs after every command, so the usual case (a move:
    /// only the move count changed) updates the count in place instead of rebuilding the
    /// summary with its strings.
    fn publish(&self) {
        let moves = self.board.moves().len();
        self.summary.update(|old| {
            let only_moves = !old.game.is_empty() // the placeholder of `blank`
                && old.status == self.status()
                && old.spectators == self.spectators()
                && seat_matches(&self.seats[0], &old.players.x)
                && seat_matches(&self.seats[1], &old.players.o);
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

    // --- Sending. ---

    fn send_joined(&self, client: &ClientHandle, seat: Option<Seat>, re: Option<&Value>) {
        let you = You {
            role: if seat.is_some() {
                "player"
            } else {
                "spectator"
            },
            seat,
        };
        client.send(encode(
            &ServerMsg::RoomJoined {
                room: self.state(),
                you,
            },
            re,
        ));
    }

    fn reply_err(client: &ClientHandle, e: ProtoError, re: Option<&Value>) {
        client.send(encode_error(&e, re));
    }

    /// Sends the same bytes to every member; members whose queue is full are dropped.
    fn broadcast(&mut self, bytes: Utf8Bytes) {
        if !self.pending.is_empty() {
            // Keeps order behind a held move or result (a room_update after a resign).
            self.held.push((bytes, None));
            return;
        }
        self.fan_out(&bytes, None);
    }

    /// Appends an event of the game record (it gets the next `seq`) and broadcasts it. The
    /// member `ack` (whose message caused the event) gets its copy with `re`, everyone else the
    /// same shared bytes.
    fn record_acked(&mut self, make: impl FnOnce(u64) -> ServerMsg, ack: Option<(&str, &Value)>) {
        self.seq += 1;
        let msg = make(self.seq);
        let bytes = encode(&msg, None);
        self.history.push_back((self.seq, bytes.clone()));
        while self.history.len() > self.ctx.settings.history_events {
            self.history.pop_front();
        }
        // The mover's copy is the shared bytes with `re` spliced in (one serialization), and
        // its key the member map's own Arc (no allocation).
        let ack = ack.map(|(acked, re)| {
            let key = match self.members.get_key_value(acked) {
                Some((k, _)) => k.clone(),
                None => Arc::<str>::from(acked),
            };
            (key, with_re(&bytes, re))
        });
        if !self.pending.is_empty() {
            // A store write of this turn is not durable yet: nobody hears of it before it is.
            self.held.push((bytes, ack));
            return;
        }
        self.send_acked(bytes, ack);
    }

    /// Sends `bytes` to every member, `ack`'s member getting its own copy.
    fn send_acked(&mut self, bytes: Utf8Bytes, ack: Ack) {
        let Some((acked, with_re)) = ack else {
            self.broadcast(bytes);
            return;
        };
        self.fan_out(&bytes, Some((&acked, with_re)));
    }

    /// Sends `bytes` to every member, `ack`'s member getting its own copy, the seated players
    /// first: the player who moves next must not wait behind a crowd of spectators (fanout
    /// scenario, docs/performance.md). Members whose queue is full are dropped.
    /// Members are told apart by their key's pointer, not its text: `ack`'s key is the member
    /// map's own `Arc` (see `record_acked`), and this loop runs once per spectator.
    fn fan_out(&mut self, bytes: &Utf8Bytes, mut ack: Option<(&Arc<str>, Utf8Bytes)>) {
        // The acknowledged member's copy is handed over, not cloned: it goes to one queue.
        let mut copy = |pid: &Arc<str>| match ack.take() {
            Some((acked, with_re)) if Arc::ptr_eq(pid, acked) => with_re,
            other => {
                ack = other;
                bytes.clone()
            }
        };
        let mut dropped = Vec::new();
        let mut seated: [Option<&Arc<str>>; 2] = [None, None];
        for (i, occupant) in self.seats.iter().enumerate() {
            if let Occupant::Human(h) = occupant {
                if let Some((pid, m)) = self.members.get_key_value(&h.player_id) {
                    if m.seat.is_some() {
                        seated[i] = Some(pid);
                        if !m.client.send(copy(pid)) {
                            dropped.push((pid.clone(), m.client.conn_id));
                        }
                    }
                }
            }
        }
        for (pid, m) in &self.members {
            if seated.iter().flatten().any(|s| Arc::ptr_eq(s, pid)) {
                continue;
            }
            if !m.client.send(copy(pid)) {
                dropped.push((pid.clone(), m.client.conn_id));
            }
        }
        for (pid, conn) in dropped {
            self.disconnected(&pid, conn);
        }
    }

    /// Hands an event to the store; its commit joins this turn's `pending`.
    fn store(&mut self, event: StoreEvent) {
        let commit = self.ctx.store.record(event);
        if commit.is_pending() {
            self.pending.push(commit);
        }
    }

    /// Waits for this turn's store commits, then sends what they held back. If the store
    /// failed, the game can no longer keep its durability promise: the room closes without
    /// announcing the unrecorded events (players see `room_closed`).
    async fn settle(&mut self) {
        let mut failed = None;
        for commit in std::mem::take(&mut self.pending) {
            if let Err(e) = commit.wait().await {
                failed = Some(e);
            }
        }
        if let Some(e) = failed {
            tracing::error!(room = %self.id, "store write failed, closing the room: {e}");
            self.held.clear();
            // Dropped: the leaver is told the room is gone, not that it resigned durably.
            self.held_leaves.clear();
            self.closed = true;
            return;
        }
        for (bytes, ack) in std::mem::take(&mut self.held) {
            self.send_acked(bytes, ack);
        }
        for (reply, result) in std::mem::take(&mut self.held_leaves) {
            let _ = reply.send(result);
        }
    }

    fn room_update(&mut self) {
        self.crowd_pending = false;
        self.last_update = Instant::now();
        let msg = ServerMsg::RoomUpdate {
            room_id: self.id.to_string(),
            players: self.players(),
            spectators: self.spectators(),
        };
        self.broadcast(encode(&msg, None));
    }

    fn crowd_changed(&mut self) {
        if self.last_update.elapsed() >= self.ctx.settings.crowd_update {
            self.room_update();
        } else {
            self.crowd_pending = true;
        }
    }

    // --- Commands. ---

    fn handle(&mut self, cmd: RoomCmd) {
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
                if self.pending.is_empty() {
                    let _ = reply.send(result);
                } else {
                    self.held_leaves.push((reply, result));
                }
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
        }
    }

    fn join(
        &mut self,
        who: &Who,
        as_: Option<JoinAs>,
        re: Option<&Value>,
    ) -> Result<Joined, ProtoError> {
        if self.ctx.shutdown.is_cancelled() {
            return Err(err(ErrorCode::ShuttingDown, "the server is shutting down"));
        }
        // A seat holder (back on a new connection, or asking again) gets the seat back.
        if let Some(seat) = self.seat_of(&who.player_id) {
            if as_ != Some(JoinAs::Spectator) || self.members.contains_key(&who.player_id) {
                self.take_seat_back(who, seat, re);
                return Ok(Some(seat));
            }
        }
        let open = Seat::BOTH
            .into_iter()
            .find(|s| matches!(self.seats[s.index()], Occupant::Open));
        let want_seat = as_ != Some(JoinAs::Spectator) && self.finished.is_none();
        if let (true, Some(seat)) = (want_seat, open) {
            self.seats[seat.index()] = Occupant::Human(Human {
                player_id: who.player_id.clone(),
                name: who.name.clone(),
                conn: Some(who.client.conn_id),
                away_since: None,
            });
            self.members.insert(
                who.player_id.clone(),
                Member {
                    client: who.client.clone(),
                    seat: Some(seat),
                },
            );
            self.empty_since = None;
            self.maybe_start();
            self.send_joined(&who.client, Some(seat), re);
            self.room_update();
            return Ok(Some(seat));
        }
        if as_ == Some(JoinAs::Player) {
            return Err(err(ErrorCode::SeatTaken, "no open seat in this room"));
        }
        let already = self.members.contains_key(&who.player_id);
        if !already && self.spectators() >= self.ctx.settings.max_spectators {
            return Err(err(
                ErrorCode::RoomFull,
                "this room has as many spectators as it allows",
            ));
        }
        self.members.insert(
            who.player_id.clone(),
            Member {
                client: who.client.clone(),
                seat: None,
            },
        );
        self.empty_since = None;
        self.send_joined(&who.client, None, re);
        if !already {
            self.crowd_changed();
        }
        Ok(None)
    }

    /// Seats a returning player (new connection) and sends the snapshot, then tells the room.
    fn take_seat_back(&mut self, who: &Who, seat: Seat, re: Option<&Value>) {
        if let Occupant::Human(h) = &mut self.seats[seat.index()] {
            h.conn = Some(who.client.conn_id);
            h.away_since = None;
            h.name = who.name.clone();
        }
        self.members.insert(
            who.player_id.clone(),
            Member {
                client: who.client.clone(),
                seat: Some(seat),
            },
        );
        self.empty_since = None;
        self.update_clock();
        self.send_joined(&who.client, Some(seat), re);
        self.room_update();
    }

    fn reconnect(&mut self, who: &Who) -> bool {
        match self.seat_of(&who.player_id) {
            Some(seat) => {
                self.take_seat_back(who, seat, None);
                true
            }
            None => false,
        }
    }

    fn leave(&mut self, who: &Who) -> Result<(), ProtoError> {
        let seat = self.seat_of(&who.player_id);
        if !self.members.contains_key(&who.player_id) && seat.is_none() {
            return Err(err(ErrorCode::NotInRoom, "you are not in this room"));
        }
        self.members.remove(&who.player_id);
        match seat {
            Some(seat) if self.playing() => {
                if let Occupant::Human(h) = &mut self.seats[seat.index()] {
                    h.conn = None;
                }
                self.finish(seat.other().into(), Reason::Resign, None);
                self.room_update();
            }
            Some(seat) if !self.started => {
                self.seats[seat.index()] = Occupant::Open;
                self.room_update();
            }
            Some(seat) => {
                if let Occupant::Human(h) = &mut self.seats[seat.index()] {
                    h.conn = None;
                }
                self.room_update();
            }
            None => self.crowd_changed(),
        }
        self.note_empty();
        Ok(())
    }

    fn check_turn(&self, who: &Who) -> Result<Seat, ProtoError> {
        let seat = self
            .seat_of(&who.player_id)
            .ok_or_else(|| err(ErrorCode::NotAPlayer, "only a seated player can do this"))?;
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

    fn human_move(
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

    fn resign(&mut self, who: &Who, re: Option<&Value>) -> Result<(), ProtoError> {
        let seat = self.check_turn(who)?;
        self.finish_acked(
            seat.other().into(),
            Reason::Resign,
            None,
            re.map(|re| (&*who.player_id, re)),
        );
        Ok(())
    }

    fn sync(&mut self, who: &Who, since_seq: u64, re: Option<&Value>) {
        let Some(member) = self.members.get(&who.player_id) else {
            Self::reply_err(
                &who.client,
                err(ErrorCode::NotInRoom, "join the room first"),
                re,
            );
            return;
        };
        let client = member.client.clone();
        let first_kept = self.history.front().map_or(self.seq + 1, |(s, _)| *s);
        // A replay must fit the client's queue with room to spare, or the sync itself would get
        // the client closed as too slow: a long gap is cheaper as a snapshot anyway.
        let too_long =
            self.seq.saturating_sub(since_seq) > (self.ctx.settings.send_queue / 2) as u64;
        if since_seq > self.seq || since_seq + 1 < first_kept || too_long {
            // We cannot replay from there: send the whole state instead.
            self.send_joined(&client, member.seat, re);
            return;
        }
        for (s, bytes) in &self.history {
            if *s > since_seq && !client.send(bytes.clone()) {
                return;
            }
        }
        client.send(encode(
            &ServerMsg::Synced {
                room_id: self.id.to_string(),
                seq: self.seq,
            },
            re,
        ));
    }

    fn disconnected(&mut self, player_id: &str, conn_id: u64) {
        let Some(m) = self.members.get(player_id) else {
            return;
        };
        if m.client.conn_id != conn_id {
            return; // a newer connection of the same player took over
        }
        let seat = m.seat;
        self.members.remove(player_id);
        match seat {
            Some(seat) => {
                if let Occupant::Human(h) = &mut self.seats[seat.index()] {
                    h.conn = None;
                    h.away_since = Some(Instant::now());
                }
                self.update_clock();
                self.room_update();
            }
            None => self.crowd_changed(),
        }
        self.note_empty();
    }

    fn note_empty(&mut self) {
        if self.members.is_empty() && self.empty_since.is_none() {
            self.empty_since = Some(Instant::now());
        }
    }

    // --- The game. ---

    /// Starts the game once both seats are filled.
    fn maybe_start(&mut self) {
        if self.started || self.seats.iter().any(|s| matches!(s, Occupant::Open)) {
            return;
        }
        self.started = true;
        self.ctx.metrics.games_active.fetch_add(1, Relaxed);
        let describe = |o: &Occupant| match o {
            Occupant::Human(h) => SeatRecord::Human {
                player_id: h.player_id.to_string(),
                name: h.name.to_string(),
            },
            Occupant::Bot { level, .. } => SeatRecord::Bot {
                level: level.clone(),
            },
            Occupant::Open => SeatRecord::Bot {
                level: String::new(), // unreachable: the game starts with both seats taken
            },
        };
        let seats = [describe(&self.seats[0]), describe(&self.seats[1])];
        self.store(StoreEvent::Created(GameCreated {
            room_id: self.id.to_string(),
            game: self.board.rules().kind().as_str(),
            width: self.board.width(),
            height: self.board.height(),
            rule: self.rule(),
            seats,
        }));
        self.update_clock();
    }

    fn play(&mut self, mv: caro_engine::Move, ack: Option<(&str, &Value)>) {
        let seat = self.to_move();
        let status = match self.board.try_play(mv) {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(room = %self.id, "checked move refused: {e}");
                return;
            }
        };
        self.ctx.metrics.moves_total.fetch_add(1, Relaxed);
        // Recorded first, so the broadcast below is held until the move is durable.
        self.store(StoreEvent::Move {
            room_id: self.id.to_string(),
            seq: self.seq + 1,
            seat,
            cell: [mv.x, mv.y],
        });
        let room_id = self.id.clone();
        let turn = (status == Status::Ongoing).then(|| seat.other());
        self.record_acked(
            |seq| ServerMsg::Move {
                room_id,
                seq,
                seat,
                x: mv.x,
                y: mv.y,
                turn,
            },
            ack,
        );
        match status {
            Status::Ongoing => self.update_clock(),
            Status::Won(p) => {
                let line = self.board.winning_line().map(cells);
                self.finish(Seat::from(p).into(), Reason::Line, line);
            }
            Status::Draw => self.finish(Outcome::Draw, Reason::BoardFull, None),
        }
    }

    fn finish(&mut self, result: Outcome, reason: Reason, line: Option<Vec<Cell>>) {
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
        self.turn_clock = None;
        self.finished = Some(finished);
        self.finished_at = Some(Instant::now());
        if self.started {
            self.ctx.metrics.games_active.fetch_sub(1, Relaxed);
        }
        self.ctx.metrics.games_finished_total.fetch_add(1, Relaxed);
        // Recorded first, like a move: a result announced is a result kept, so a resigned game
        // never comes back as unfinished after a crash.
        self.store(StoreEvent::Result {
            room_id: self.id.to_string(),
            seq: self.seq + 1,
            result,
            reason,
            forfeit: forfeit
                .as_ref()
                .map(|(fault, detail)| crate::store::ForfeitRecord {
                    fault: fault.as_str().into(),
                    detail: detail.clone(),
                }),
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
            },
            ack,
        );
    }

    /// Starts or stops the abandonment clock of the side to move.
    fn update_clock(&mut self) {
        let absent = self.playing()
            && matches!(&self.seats[self.to_move().index()], Occupant::Human(h) if h.conn.is_none());
        if !absent {
            self.turn_clock = None;
        } else if self.turn_clock.map(|(s, _)| s) != Some(self.to_move()) {
            self.turn_clock = Some((self.to_move(), Instant::now()));
        }
    }

    fn maybe_start_bot(&mut self) {
        if !self.playing() || self.search.is_some() {
            return;
        }
        let seat = self.to_move();
        let opponent_human = matches!(self.seats[seat.other().index()], Occupant::Human(_));
        if let Occupant::Bot { bot, .. } = &self.seats[seat.index()] {
            self.search_gen += 1;
            self.search = Some(self.ctx.bots.start(
                bot,
                self.board.clone(),
                opponent_human,
                self.search_gen,
                self.bot_tx.clone(),
            ));
        }
    }

    fn on_bot(&mut self, ev: BotEvent) {
        match ev {
            BotEvent::Thinking { gen, info } if gen == self.search_gen && self.search.is_some() => {
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

    // --- Time. ---

    fn next_deadline(&self) -> Option<Instant> {
        let cfg = &self.ctx.settings;
        let mut d = Deadlines(None);
        if let Some((_, t)) = self.turn_clock {
            d.add(t + cfg.grace);
        }
        if self.playing() {
            for s in &self.seats {
                if let Occupant::Human(Human {
                    away_since: Some(t),
                    ..
                }) = s
                {
                    d.add(*t + cfg.absent_cap);
                }
            }
        }
        if self.crowd_pending {
            d.add(self.last_update + cfg.crowd_update);
        }
        if let Some(t) = self.finished_at {
            d.add(t + cfg.finished_ttl);
        }
        if let Some(t) = self.empty_since {
            if !self.playing() {
                d.add(t + cfg.empty_ttl);
            }
        }
        d.0
    }

    fn on_timer(&mut self) {
        let now = Instant::now();
        let ctx = self.ctx.clone();
        let cfg = &ctx.settings;
        if let Some((seat, t)) = self.turn_clock {
            if now >= t + cfg.grace {
                self.finish(seat.other().into(), Reason::Abandoned, None);
            }
        }
        if self.playing() {
            for seat in Seat::BOTH {
                if let Occupant::Human(Human {
                    away_since: Some(t),
                    ..
                }) = &self.seats[seat.index()]
                {
                    if now >= *t + cfg.absent_cap {
                        self.finish(seat.other().into(), Reason::Abandoned, None);
                        break;
                    }
                }
            }
        }
        if self.crowd_pending && now >= self.last_update + cfg.crowd_update {
            self.room_update();
        }
        if self
            .finished_at
            .is_some_and(|t| now >= t + cfg.finished_ttl)
        {
            self.closed = true;
        }
        if let Some(t) = self.empty_since {
            if !self.members.is_empty() {
                self.empty_since = None;
            } else if !self.playing() && now >= t + cfg.empty_ttl {
                // A game in progress never closes for emptiness: abandonment ends a game with
                // a human seat, and bots play theirs to the end (a bounded number of moves), so
                // every game that started is finished and replayable.
                self.closed = true;
            }
        }
    }

    fn close(&mut self) {
        self.search = None;
        if !self.ctx.shutdown.is_cancelled() {
            let bytes = encode(
                &ServerMsg::RoomClosed {
                    room_id: self.id.to_string(),
                },
                None,
            );
            for m in self.members.values() {
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

/// The earliest of some instants (no allocation: `next_deadline` runs after every command).
struct Deadlines(Option<Instant>);

impl Deadlines {
    fn add(&mut self, t: Instant) {
        self.0 = Some(self.0.map_or(t, |d| d.min(t)));
    }
}

/// Whether the published `info` of a seat still describes `occupant` (as `Room::players`
/// would write it), compared without building it.
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

async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
