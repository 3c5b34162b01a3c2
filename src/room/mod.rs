//! Rooms: one task per room owns its [`Board`](caro_engine::Board), its seats, its members and
//! its event log; everyone else holds a cloneable [`RoomHandle`] and sends [`RoomCmd`]s. Replies
//! and errors go straight into the asking client's queue (in order with the room's broadcasts);
//! a oneshot tells the connection the outcome where it must keep books (joined rooms, seats).
//!
//! A room never blocks on a client: every send is a `try_send` into a bounded queue, and a client
//! whose queue is full is dropped.
//!
//! A room knows only its [`RoomContext`] (its settings, the store, the bot pool, metrics, the
//! shutdown and the [`Registry`] it reports to), never the server, the lobby or connections: this
//! module must never import `lobby`, `connection` or `crate::Server`. The lobby opens rooms
//! ([`spawn`], [`restore`]) and is the registry they report their end to.
//!
//! ## Where a room lives: `RoomHandle` and its `Route`
//!
//! A [`RoomHandle`] is the room's id and a private `Route` enum saying how commands reach it:
//! `Local` (the task's command queue and stop signal) or, in a cluster, `Remote` (the
//! [`crate::cluster::Link`], which forwards `RoomCmd`s to the room's node and brings replies
//! back); callers (connections, the lobby, tests) do not care which. An enum rather than a trait object because the transports are a
//! closed set this crate owns, and `send` is on the path of every move: a match on a variant
//! costs nothing, where `dyn` would need a boxed future per command. `Who`'s `ClientHandle`
//! crosses as the connection's id; the owner answers through a stand-in handle that forwards.
//!
//! The actor is split by job (see `actor`): `seats` (seats, members, reconnects), `chat` (the
//! two channels and what each member may read), `offers` (draw offers, takebacks), `outbox` (seq,
//! history, "durable before acknowledged", fan-out), `timers` (deadlines), `clocks` (game
//! clocks and the idle limit) and `view` (summaries and publishing); play and bots are in
//! `actor` itself.

mod actor;
mod chat;
mod clocks;
mod offers;
mod outbox;
mod seats;
mod timers;
mod view;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use caro_engine::{GameKind, Rule, Rules};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::bot::BotPool;
use crate::client::ClientHandle;
use crate::latest::Latest;
use crate::metrics::Metrics;
use crate::protocol::{
    ErrorCode, JoinAs, OfferKind, ProtoError, RoomSummary, Seat, SeatSpec, TimeControl,
};
use crate::signal::Signal;
use crate::store::Store;

/// The settings a room plays by (copied from the config once, at start).
#[derive(Clone, Debug)]
pub struct RoomSettings {
    /// How long the side to move may be away before it loses.
    pub grace: Duration,
    /// How long a player may be away in total before it loses.
    pub absent_cap: Duration,
    /// Least time between two `room_update`s caused by spectators coming and going.
    pub crowd_update: Duration,
    /// How long a finished game's room stays open.
    pub finished_ttl: Duration,
    /// How long a room with no game in progress stays open with nobody in it.
    pub empty_ttl: Duration,
    /// How long a game between two bots plays on with nobody in its room before it is aborted.
    pub unwatched_bot_game: Duration,
    /// Events kept for `sync`.
    pub history_events: usize,
    /// Chat lines kept per channel for those who join later.
    pub chat_history: usize,
    /// A client's queue length (a `sync` replay must fit in half of it).
    pub send_queue: usize,
    /// Spectators per room.
    pub max_spectators: usize,
    /// Smallest Caro board side.
    pub min_board: u8,
    /// Largest Caro board side.
    pub max_board: u8,
    /// Idle limit per move in a game without a clock.
    pub idle_move: Duration,
    /// Shortest base or per-move time a `time_control` may ask for, ms.
    pub min_clock_ms: u64,
    /// Longest base or per-move time, ms.
    pub max_clock_ms: u64,
    /// Largest Fischer increment, ms.
    pub max_increment_ms: u64,
}

/// Where a room reports its life: the lobby, for a local room.
pub trait Registry: Send + Sync {
    /// Opens a room whose seats are held for their players ([`SeatKind::Reserved`]) or bots (a
    /// rematch, a pairing), counted as created by player `by` from address `ip` (the
    /// connection that asked for it), with `ctx`; registered before it starts.
    fn open_held(
        &self,
        ctx: &Arc<RoomContext>,
        by: &Arc<str>,
        ip: Option<IpAddr>,
        params: RoomParams,
    ) -> Result<RoomHandle, ProtoError>;
    /// The game of room `id` has ended (called at most once, by the room task, before anyone
    /// hears `game_over`: a creator who opens its next room on that message must find its
    /// per-player count already lowered).
    fn game_finished(&self, id: &str);
    /// The room `id` has closed (called once, by the room task as it ends).
    fn room_closed(&self, id: &str);
}

/// Everything a room may use of the server, and nothing more.
pub struct RoomContext {
    /// Timings and limits.
    pub settings: RoomSettings,
    /// Game records: a move is recorded here before anyone hears of it.
    pub store: Arc<dyn Store>,
    /// Bot levels and the search scheduler.
    pub bots: Arc<BotPool>,
    /// Who is rated, and the ratings a game's end changes.
    pub ratings: Arc<crate::ratings::Ratings>,
    /// Counters.
    pub metrics: Arc<Metrics>,
    /// Cancelled when the server stops: rooms refuse joins and close quietly.
    pub shutdown: CancellationToken,
    /// Room tasks are spawned here, so the shutdown waits for them.
    pub tracker: TaskTracker,
    /// Told when a room closes.
    pub registry: Arc<dyn Registry>,
}

/// Who sends a command: the identity and the connection to answer.
#[derive(Clone)]
pub struct Who {
    /// Public player id.
    pub player_id: Arc<str>,
    /// Display name.
    pub name: Arc<str>,
    /// The connection.
    pub client: ClientHandle,
    /// The connection's address, when known: the rooms it opens (directly, by a rematch it
    /// offers, or by a seek) count against it (`limits.rooms_per_ip`).
    pub ip: Option<IpAddr>,
}

/// A seat as `create_room` asked for it, checked.
#[derive(Clone, Debug, PartialEq)]
pub enum SeatKind {
    /// The creator.
    Me,
    /// Waiting for someone to join.
    Open,
    /// A bot of this level.
    Bot(String),
    /// Held for this player (a rematch, a pairing): the seat is theirs when they join.
    Reserved {
        /// Public player id.
        player_id: Arc<str>,
        /// Display name.
        name: Arc<str>,
    },
}

/// Checked `create_room` parameters.
#[derive(Clone, Debug)]
pub struct RoomParams {
    /// Board and rule.
    pub rules: Rules,
    /// X then O.
    pub seats: [SeatKind; 2],
    /// The clock the game is played with.
    pub time_control: TimeControl,
    /// A casual game: a bot grants takebacks.
    pub casual: bool,
}

/// Who plays in a room, as the per-player caps count it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Matchup {
    /// No bot seat.
    People,
    /// One bot seat: a game against a bot.
    AgainstBot,
    /// A bot in both seats.
    BotVsBot,
}

impl RoomParams {
    /// Who plays.
    pub fn matchup(&self) -> Matchup {
        let bots = self
            .seats
            .iter()
            .filter(|s| matches!(s, SeatKind::Bot(_)))
            .count();
        match bots {
            0 => Matchup::People,
            1 => Matchup::AgainstBot,
            _ => Matchup::BotVsBot,
        }
    }
}

/// What a join achieved: the seat taken, or `None` for a spectator.
pub type Joined = Option<Seat>;

/// Commands to a room task.
pub enum RoomCmd {
    /// Enter as player or spectator. The room sends `room_joined`; the connection sends errors.
    Join {
        /// Asker.
        who: Who,
        /// Preference.
        as_: Option<JoinAs>,
        /// Message id to echo.
        re: Option<Value>,
        /// Outcome.
        reply: oneshot::Sender<Result<Joined, ProtoError>>,
    },
    /// Leave (resigns a game in progress). The connection answers `left`.
    Leave {
        /// Asker.
        who: Who,
        /// Whether the asker was in the room.
        reply: oneshot::Sender<Result<(), ProtoError>>,
    },
    /// Play a stone.
    Move {
        /// Asker.
        who: Who,
        /// Column.
        x: i64,
        /// Row.
        y: i64,
        /// Message id.
        re: Option<Value>,
    },
    /// Give up.
    Resign {
        /// Asker.
        who: Who,
        /// Message id.
        re: Option<Value>,
    },
    /// Replay events.
    Sync {
        /// Asker.
        who: Who,
        /// Last event the client has.
        since_seq: u64,
        /// Message id.
        re: Option<Value>,
    },
    /// A resumed session: restores its seat (and sends `room_joined`) if it holds one.
    Reconnect {
        /// The new connection.
        who: Who,
        /// Whether it holds a seat here.
        reply: oneshot::Sender<bool>,
    },
    /// A connection ended.
    Disconnected {
        /// Who.
        player_id: Arc<str>,
        /// Which connection (a newer one of the same player is left alone).
        conn_id: u64,
    },
    /// A chat line (already cleaned by the connection).
    Say {
        /// Asker.
        who: Who,
        /// The line.
        text: String,
        /// Message id (the speaker's own copy carries it as `re`).
        re: Option<Value>,
    },
    /// A draw offer or a takeback request.
    Offer {
        /// Asker.
        who: Who,
        /// What.
        kind: OfferKind,
        /// Message id.
        re: Option<Value>,
    },
    /// An answer to the opponent's offer.
    Respond {
        /// Asker.
        who: Who,
        /// Which offer.
        kind: OfferKind,
        /// Yes or no.
        accept: bool,
        /// Message id.
        re: Option<Value>,
    },
    // A rematch comes here as a command of its own, opening the new room through the lobby.
}

/// A cloneable way to reach a room, wherever it runs (see the module docs).
#[derive(Clone)]
pub struct RoomHandle {
    /// Room id.
    pub id: Arc<str>,
    route: Route,
}

/// How commands reach a room.
#[derive(Clone)]
enum Route {
    /// A task of this process.
    Local {
        /// Its command queue.
        tx: mpsc::Sender<RoomCmd>,
        /// The shutdown's request to stop (a bounded command queue could be full).
        stop: Arc<Stop>,
    },
    /// A room another node of a cluster runs: commands go through the link to its owner
    /// (`crate::cluster`), which sends the replies and events back the same way.
    Remote {
        /// The way to the other nodes.
        link: Arc<crate::cluster::Link>,
    },
}

impl std::fmt::Debug for RoomHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoomHandle")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// A room's stop request and why; its task waits in slot 0.
pub(crate) type Stop = Signal<StopWhy, 1>;

/// Why a room stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StopWhy {
    /// The server shuts down: the room closes quietly, its game stays unfinished for a restart.
    Shutdown,
    /// Another node of a cluster runs the room now: its members are closed with 1012, to
    /// reconnect to it.
    Moved,
    /// A finished room makes way for a new one at `limits.max_rooms`: its members get
    /// `room_closed`, as when `rooms.finished_ttl_ms` runs out.
    Reclaimed,
}

fn gone() -> ProtoError {
    ProtoError::new(ErrorCode::NoSuchRoom, "the room has closed")
}

impl RoomHandle {
    /// A handle for a local room `id`, the command queue its task drains and its stop signal.
    fn local(id: Arc<str>) -> (RoomHandle, mpsc::Receiver<RoomCmd>, Arc<Stop>) {
        let (tx, rx) = mpsc::channel(256);
        let stop = Arc::new(Stop::default());
        let route = Route::Local {
            tx,
            stop: stop.clone(),
        };
        (RoomHandle { id, route }, rx, stop)
    }

    /// A handle for room `id`, which another node runs.
    pub fn remote(id: Arc<str>, link: Arc<crate::cluster::Link>) -> RoomHandle {
        RoomHandle {
            id,
            route: Route::Remote { link },
        }
    }

    /// Whether this node runs the room.
    pub fn is_local(&self) -> bool {
        matches!(self.route, Route::Local { .. })
    }

    /// Asks the room to stop (server shutdown). A remote room's node stops its own.
    pub fn stop(&self) {
        self.stop_for(StopWhy::Shutdown);
    }

    /// Stops a room of this node that another node of the cluster has taken: it commits nothing
    /// more (its fence is gone anyway) and its members reconnect (1012) to the new owner.
    pub fn moved(&self) {
        self.stop_for(StopWhy::Moved);
    }

    /// Closes a finished room of this node to make way for a new one (`limits.max_rooms`); its
    /// members get `room_closed`.
    pub fn reclaim(&self) {
        self.stop_for(StopWhy::Reclaimed);
    }

    fn stop_for(&self, why: StopWhy) {
        match &self.route {
            Route::Local { stop, .. } => {
                stop.raise(why);
            }
            Route::Remote { .. } => {}
        }
    }

    /// Sends a command; fails when the room has closed.
    /// The queue usually has room: then the command goes in without the asynchronous
    /// acquire's machinery (a future and its waiter), and only a full queue waits.
    pub async fn send(&self, cmd: RoomCmd) -> Result<(), ProtoError> {
        match &self.route {
            Route::Local { tx, .. } => match tx.try_send(cmd) {
                Ok(()) => Ok(()),
                Err(mpsc::error::TrySendError::Full(cmd)) => tx.send(cmd).await.map_err(|_| gone()),
                Err(mpsc::error::TrySendError::Closed(_)) => Err(gone()),
            },
            Route::Remote { link } => link.forward(&self.id, cmd),
        }
    }

    /// The command queue of a room of this process (`None` for another node's room).
    pub(crate) fn local_queue(&self) -> Option<&mpsc::Sender<RoomCmd>> {
        match &self.route {
            Route::Local { tx, .. } => Some(tx),
            Route::Remote { .. } => None,
        }
    }

    /// Join and wait for the outcome.
    pub async fn join(
        &self,
        who: Who,
        as_: Option<JoinAs>,
        re: Option<Value>,
    ) -> Result<Joined, ProtoError> {
        let (reply, rx) = oneshot::channel();
        self.send(RoomCmd::Join {
            who,
            as_,
            re,
            reply,
        })
        .await?;
        rx.await.map_err(|_| gone())?
    }

    /// Leave and wait for the outcome.
    pub async fn leave(&self, who: Who) -> Result<(), ProtoError> {
        let (reply, rx) = oneshot::channel();
        self.send(RoomCmd::Leave { who, reply }).await?;
        rx.await.map_err(|_| gone())?
    }

    /// Restore a seat after a resume.
    pub async fn reconnect(&self, who: Who) -> bool {
        let (reply, rx) = oneshot::channel();
        if self.send(RoomCmd::Reconnect { who, reply }).await.is_err() {
            return false;
        }
        rx.await.unwrap_or(false)
    }
}

/// Checks `create_room`'s `time_control` against the config's bounds (`limits.min_clock_ms`,
/// `max_clock_ms`, `max_increment_ms`). Absent or `null` is none, as v1 clients send it.
pub fn check_time_control(
    settings: &RoomSettings,
    raw: Option<&Value>,
) -> Result<TimeControl, ProtoError> {
    let bad = |m: String| ProtoError::new(ErrorCode::BadTimeControl, format!("time_control: {m}"));
    let tc = match raw {
        None | Some(Value::Null) => return Ok(TimeControl::None),
        Some(v) => TimeControl::deserialize(v).map_err(|e| bad(e.to_string()))?,
    };
    let (min, max) = (settings.min_clock_ms, settings.max_clock_ms);
    let within = |key: &str, v: u64| {
        if (min..=max).contains(&v) {
            Ok(())
        } else {
            Err(bad(format!("{key} must be in {min}..={max}, got {v}")))
        }
    };
    match tc {
        TimeControl::None => {}
        TimeControl::Fischer {
            base_ms,
            increment_ms,
        } => {
            within("base_ms", base_ms)?;
            let most = settings.max_increment_ms;
            if increment_ms > most {
                return Err(bad(format!(
                    "increment_ms must be at most {most}, got {increment_ms}"
                )));
            }
        }
        TimeControl::PerMove { move_ms } => within("move_ms", move_ms)?,
    }
    Ok(tc)
}

/// Checks `create_room` parameters against the config (board bounds, rule, bot levels, time
/// control).
#[allow(clippy::too_many_arguments)]
pub fn check_params(
    ctx: &RoomContext,
    game: &str,
    width: Option<i64>,
    height: Option<i64>,
    rule: Option<&str>,
    x: &SeatSpec,
    o: &SeatSpec,
    time_control: Option<&Value>,
) -> Result<RoomParams, ProtoError> {
    let bad = |m: String| ProtoError::new(ErrorCode::BadRoom, m);
    let kind: GameKind = game
        .parse()
        .map_err(|e: caro_engine::RulesError| bad(e.to_string()))?;
    let cfg = &ctx.settings;
    let rules = match kind {
        GameKind::TicTacToe => {
            if width.is_some_and(|w| w != 3) || height.is_some_and(|h| h != 3) {
                return Err(bad("tic-tac-toe is played on 3x3".into()));
            }
            if rule.is_some_and(|r| r != "freestyle") {
                return Err(bad("tic-tac-toe has no rule variants".into()));
            }
            Rules::tictactoe()
        }
        GameKind::Caro => {
            let w = width.unwrap_or(15);
            let h = height.unwrap_or(w);
            let (min, max) = (cfg.min_board as i64, cfg.max_board as i64);
            if !(min..=max).contains(&w) || !(min..=max).contains(&h) {
                return Err(bad(format!(
                    "board {w}x{h} is outside {min}x{min}..={max}x{max}"
                )));
            }
            let rule: Rule = rule
                .unwrap_or("freestyle")
                .parse()
                .map_err(|e: caro_engine::RulesError| bad(e.to_string()))?;
            Rules::caro(w as u8, h as u8, rule).map_err(|e| bad(e.to_string()))?
        }
    };
    let seat = |s: &SeatSpec, name: &str| -> Result<SeatKind, ProtoError> {
        match s {
            SeatSpec::Word(w) if w == "me" => Ok(SeatKind::Me),
            SeatSpec::Word(w) if w == "open" => Ok(SeatKind::Open),
            SeatSpec::Word(w) => Err(bad(format!(
                "{name}: expected \"me\", \"open\" or {{\"bot\": level}}, got {w:?}"
            ))),
            SeatSpec::Bot { bot } => match ctx.bots.levels().get(bot) {
                None => Err(bad(format!("{name}: unknown bot level {bot:?}"))),
                Some(b) => match b.plays(&rules) {
                    Ok(()) => Ok(SeatKind::Bot(bot.clone())),
                    Err(why) => Err(bad(format!("{name}: bot {bot:?} {why}"))),
                },
            },
        }
    };
    let seats = [seat(x, "x")?, seat(o, "o")?];
    if seats.iter().all(|s| *s == SeatKind::Me) {
        return Err(bad("you can take only one seat".into()));
    }
    let time_control = check_time_control(cfg, time_control)?;
    Ok(RoomParams {
        rules,
        seats,
        time_control,
        casual: false,
    })
}

/// A room's published summary, as the registry reads it.
pub type Summary = Arc<Latest<RoomSummary>>;

/// Starts a room with `creator` in it. `register` is called with its handle and summary before
/// the creator hears of it: a creator that shares the id the moment room_joined arrives must not
/// send a friend to a room that is not in the lobby yet (the rooms load test did exactly that and
/// got no_such_room). The room sends `room_joined` itself. Returns the handle and the creator's
/// seat.
pub fn spawn(
    ctx: &Arc<RoomContext>,
    id: Arc<str>,
    creator: Who,
    params: RoomParams,
    re: Option<Value>,
    register: impl FnOnce(RoomHandle, Summary),
) -> (RoomHandle, Joined) {
    let (handle, rx, stop) = RoomHandle::local(id.clone());
    let seat = params
        .seats
        .iter()
        .position(|s| *s == SeatKind::Me)
        .map(|i| Seat::BOTH[i]);
    let client = creator.client.clone();
    let (actor, summary) = actor::Room::new(ctx.clone(), id.clone(), params, creator);
    register(handle.clone(), summary);
    // The shutdown stops the rooms it finds registered; one registered after that pass sees the
    // token cancelled here.
    if ctx.shutdown.is_cancelled() {
        handle.stop();
    }
    actor.greet(&client, seat, re.as_ref());
    ctx.tracker.spawn(actor.run(rx, stop));
    tracing::info!(room = %id, "room created");
    (handle, seat)
}

/// Opens a room with held seats (a rematch, a pairing: no creator in it; its players join it
/// themselves, to seats held for them), registered through `register` before it starts.
pub fn spawn_held(
    ctx: &Arc<RoomContext>,
    id: Arc<str>,
    params: RoomParams,
    register: impl FnOnce(RoomHandle, Summary),
) -> RoomHandle {
    let (handle, rx, stop) = RoomHandle::local(id.clone());
    let (actor, summary) = actor::Room::held(ctx.clone(), id.clone(), params);
    register(handle.clone(), summary);
    if ctx.shutdown.is_cancelled() {
        handle.stop();
    }
    ctx.tracker.spawn(actor.run(rx, stop));
    tracing::info!(room = %id, "room with held seats created");
    handle
}

/// Re-creates the room of an unfinished stored game after a restart (same id, moves replayed,
/// seats held; see `actor::Room::restore`), registered through `register` before it starts.
/// Fails only if the stored rules are ones this server cannot play.
pub fn restore(
    ctx: &Arc<RoomContext>,
    record: &crate::store::GameRecord,
    register: impl FnOnce(RoomHandle, Summary),
) -> Result<Arc<str>, caro_engine::RulesError> {
    let g = &record.summary;
    let rules = match g.game.parse::<GameKind>()? {
        GameKind::TicTacToe => Rules::tictactoe(),
        GameKind::Caro => Rules::caro(
            g.width,
            g.height,
            g.rule.as_deref().unwrap_or("freestyle").parse()?,
        )?,
    };
    let (actor, summary) = actor::Room::restore(ctx.clone(), record, rules);
    let (handle, rx, stop) = RoomHandle::local(g.id.as_str().into());
    let id = handle.id.clone();
    register(handle, summary);
    ctx.tracker.spawn(actor.run(rx, stop));
    tracing::info!(room = %id, moves = record.moves.len(), "room restored");
    Ok(id)
}
