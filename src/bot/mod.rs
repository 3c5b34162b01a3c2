//! The bot adapter: the only bridge between the engine (plain blocking code) and the async server.
//!
//! A search is a `spawn_blocking` task, so it never stalls the reactor, with the level's depth
//! and time budget and a stop flag the engine polls every ~1024 nodes. The `search.max_concurrent`
//! search slots bound the searches running at once: a room whose bot waits for a slot simply
//! waits (the wait is cancellable), the server stays responsive. Slots go to players in turn
//! (`slots`: the waiting player holding the fewest slots first, and one player never more than
//! `search.slots_per_player`), so one player's many bot games cannot keep another's bot waiting
//! behind all of them. The slot is taken before the
//! task is spawned and held by the task until the search has returned, so a search stopped late
//! still counts against the bound. Progress is reported as [`BotEvent::Thinking`] (throttled, dropped
//! when the room is busy) and the answer as [`BotEvent::Done`], always a move unless the game is
//! over (the best move of the last finished depth, or a legal fallback when stopped early; a
//! search that panicked answers `None` and the room falls back). Dropping the [`SearchHandle`]
//! cancels the search.
//!
//! **The search threads** (`threads`). The tasks run on a blocking pool of their own: a tokio
//! runtime built only for its blocking pool (`SearchThreads`), at most `search.max_concurrent` threads,
//! each made `search.nice` steps nicer when it starts, so players' messages get the CPU first
//! (docs/performance.md). It is not the server's shared blocking pool because a thread that
//! has been niced cannot be given its priority back unless the process may raise priorities
//! (`CAP_SYS_NICE` or `RLIMIT_NICE`, which an ordinary service lacks), and the shared pool's
//! threads go on to serve store reads (`/api/games`), which must not run niced. Search threads
//! never run anything else, so they stay niced for good, and an idle one exits after
//! [`SEARCH_THREAD_KEEP_ALIVE`].
//!
//! **The engines.** Each search thread keeps one [`Engine`] (a 16 MiB transposition table, the
//! threat-space table, about 20 MiB) from search to search, and from game to game: its tables are
//! aged at every search rather than allocated and cleared (the engine's table keys entries by
//! rule and board size, so any game may follow any other). Memory is therefore bounded by
//! the number of search slots, not of bot games (docs/bots.md, "Search slots"), and is given
//! back when a thread exits.
//!
//! Levels played by an outside Gomocup engine go through [`crate::outside`] instead of a search
//! thread, under the same slots: a move of an outside engine is a search like any
//! other. It takes a process slot of its level first, then a search slot, so a level whose
//! processes are all busy never sits on a permit a built-in bot could use. Its answer arrives as
//! [`BotEvent::Done`] (always a legal move) or [`BotEvent::Forfeit`]; it reports no progress.
//!
//! **Threads when cores are idle** (`idle_threads`, `search.idle_threads`, default 1: off): a
//! post-game analysis's search and a bot-vs-bot game's move may search with several threads
//! when every other slot is free; a game with a human always searches with one.
//!
//! This module never touches rooms, clients or the protocol beyond sending events back.
//!
//! [`Engine`]: caro_engine::search::Engine

mod clock;
mod idle_threads;
mod slots;
mod threads;

pub use clock::{budget, TimeLeft};
pub use slots::Owner;
pub use threads::SEARCH_THREAD_KEEP_ALIVE;

use indexmap::IndexMap;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use caro_engine::search::SearchInfo;
use caro_engine::{Board, Move};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::{BotConfig, BotEngine, SearchConfig};
use crate::metrics::Metrics;
use crate::outside::{EnginePool, GameClock};
use crate::protocol::Fault;
use idle_threads::search_threads;
use slots::{Slot, Slots};
use threads::{analyse, think, SearchThreads};

/// The owner post-game analyses hold their slot under (never a player id: those are hex).
const ANALYSIS_OWNER: &str = "(analysis)";
/// How often a waiting analysis looks for a free slot.
const ANALYSIS_POLL: Duration = Duration::from_millis(50);

/// Sets a search's stop flag when dropped (an analysis whose task is cancelled mid-search).
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A search's progress, as `bot_thinking` shows it.
#[derive(Clone, Debug)]
pub struct Thinking {
    /// Depth reached.
    pub depth: u8,
    /// Score for the side to move.
    pub score: i32,
    /// Nodes.
    pub nodes: u64,
    /// Nodes per second.
    pub nps: u64,
    /// Principal variation.
    pub pv: Vec<Move>,
}

/// What a search sends back to its room. `gen` identifies the search, so a room ignores events
/// of a search it has already given up on.
#[derive(Debug)]
pub enum BotEvent {
    /// Progress.
    Thinking {
        /// Search id.
        gen: u64,
        /// Progress.
        info: Thinking,
    },
    /// The chosen move (`None`: the engine found nothing, the room falls back).
    Done {
        /// Search id.
        gen: u64,
        /// The move.
        best: Option<Move>,
    },
    /// An outside engine broke the rules of play: its seat loses the game.
    Forfeit {
        /// Search id.
        gen: u64,
        /// What went wrong.
        fault: Fault,
        /// For the players.
        detail: String,
    },
}

/// A running search. Dropping it stops the search.
#[derive(Debug)]
pub struct SearchHandle {
    stop: Arc<AtomicBool>,
    cancel: CancellationToken,
}

impl SearchHandle {
    /// Stops the search; its result, if any, is never delivered.
    pub fn cancel(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.cancel.cancel();
    }
}

impl Drop for SearchHandle {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// What a bot seat keeps between moves: its level and a random seed, or for an outside engine
/// its level's process pool and the seat's game clock. The engines (with their transposition
/// tables, megabytes) belong to the search threads, one each, so memory is bounded by
/// `search.max_concurrent` (and each outside level's `max_processes`), not by the number of bot
/// seats.
#[derive(Clone, Debug)]
pub struct BotSeat {
    engine: SeatEngine,
}

#[derive(Clone, Debug)]
enum SeatEngine {
    Builtin {
        level: caro_engine::bot::Level,
        seed: u64,
    },
    Outside {
        pool: Arc<EnginePool>,
        clock: Arc<GameClock>,
    },
}

/// Bot levels and the search scheduler.
pub struct BotPool {
    levels: IndexMap<String, BotConfig>,
    outside: BTreeMap<String, Arc<EnginePool>>,
    shutdown: CancellationToken,
    /// The `search.max_concurrent` search slots, served to owners in turn.
    slots: Arc<Slots>,
    /// Taken first by searches of games without a human seat: fewer than `permits`, so a game
    /// with a player always finds a search slot however many bot-vs-bot games run.
    bot_vs_bot: Arc<Semaphore>,
    metrics: Arc<Metrics>,
    tracker: TaskTracker,
    thinking_interval: Duration,
    min_move: Duration,
    threads: SearchThreads,
    /// `search.max_concurrent`.
    max_concurrent: usize,
    /// `search.idle_threads`.
    idle_threads: usize,
}

impl BotPool {
    /// A pool for the configured levels.
    pub fn new(
        levels: IndexMap<String, BotConfig>,
        search: SearchConfig,
        metrics: Arc<Metrics>,
        tracker: TaskTracker,
        shutdown: CancellationToken,
    ) -> BotPool {
        let outside = levels
            .iter()
            .filter_map(|(name, b)| match &b.engine {
                BotEngine::Outside(cfg) => Some((
                    name.clone(),
                    Arc::new(EnginePool::new(
                        name,
                        cfg.clone(),
                        metrics.clone(),
                        tracker.clone(),
                        shutdown.clone(),
                    )),
                )),
                BotEngine::Builtin(_) => None,
            })
            .collect();
        BotPool {
            levels,
            outside,
            shutdown,
            slots: Slots::new(search.max_concurrent, search.slots_per_player),
            bot_vs_bot: Arc::new(Semaphore::new(search.bot_vs_bot_slots)),
            metrics,
            tracker,
            thinking_interval: search.thinking_interval,
            min_move: search.min_move,
            threads: SearchThreads::new(search.max_concurrent, search.nice),
            max_concurrent: search.max_concurrent,
            idle_threads: search.idle_threads,
        }
    }

    /// The configured levels, by name.
    pub fn levels(&self) -> &IndexMap<String, BotConfig> {
        &self.levels
    }

    /// A bot seat of a configured level, `None` for an unknown level.
    pub fn seat(&self, level: &str) -> Option<BotSeat> {
        let cfg = self.levels.get(level)?;
        let engine = match &cfg.engine {
            BotEngine::Builtin(level) => SeatEngine::Builtin {
                level: *level,
                seed: uuid::Uuid::new_v4().as_u128() as u64,
            },
            BotEngine::Outside(_) => SeatEngine::Outside {
                pool: self.outside.get(level)?.clone(),
                clock: Arc::default(),
            },
        };
        Some(BotSeat { engine })
    }

    /// Starts a search of `board` for the side to move; events go to `events`.
    /// `opponent_human` is told to outside engines (`INFO game_type`) and decides the
    /// bot-vs-bot rule; `owner` is whose turn the search waits for a slot in (the human of
    /// the game, or the creator of a game between bots). `clock`: the bot's time left under a
    /// game clock, from which a built-in level budgets this move ([`budget`]); outside engines
    /// keep their own `time_ms`.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        &self,
        bot: &BotSeat,
        board: Board,
        opponent_human: bool,
        owner: Owner,
        gen: u64,
        events: mpsc::Sender<BotEvent>,
        clock: Option<TimeLeft>,
    ) -> SearchHandle {
        let permits = self.permits(opponent_human, owner);
        match &bot.engine {
            SeatEngine::Builtin { level, seed } => {
                let allowed = clock.map(|c| budget(level.time, c));
                self.start_builtin(*level, *seed, board, permits, gen, events, allowed)
            }
            SeatEngine::Outside {
                pool,
                clock: seat_clock,
            } => {
                seat_clock.set_game_time(clock.map(|c| (budget(pool.turn_time(), c), c.left)));
                self.start_outside(
                    pool.clone(),
                    seat_clock.clone(),
                    board,
                    permits,
                    gen,
                    events,
                )
            }
        }
    }

    /// A move of an outside engine: a process slot of its level, a search slot, then the
    /// exchange with the process. Not cancelled with its game: the engine finishes its move
    /// (bounded by its time and the margin) so its process can be reused, and the answer is
    /// dropped. Server shutdown stops it at once.
    fn start_outside(
        &self,
        pool: Arc<EnginePool>,
        clock: Arc<GameClock>,
        board: Board,
        permits: Permits,
        gen: u64,
        events: mpsc::Sender<BotEvent>,
    ) -> SearchHandle {
        // Only games with a human seat skip the bot-vs-bot permit.
        let opponent_human = permits.bot_vs_bot.is_none();
        let cancel = CancellationToken::new();
        let handle = SearchHandle {
            stop: Arc::new(AtomicBool::new(false)),
            cancel: cancel.clone(),
        };
        let metrics = self.metrics.clone();
        let min_move = self.min_move;
        let shutdown = self.shutdown.clone();
        self.tracker.spawn(async move {
            let started = Instant::now();
            let slot = tokio::select! {
                s = pool.slot() => match s { Some(s) => s, None => return },
                _ = cancel.cancelled() => return,
            };
            let Some(permit) = permits.acquire(&cancel).await else {
                return;
            };
            metrics.search_started();
            let search_start = Instant::now();
            let result = pool.play(slot, &board, &clock, opponent_human).await;
            metrics.search_ended();
            metrics.search_done(search_start.elapsed());
            drop(permit);
            if shutdown.is_cancelled() {
                return; // a game is never forfeited because the server stops
            }
            let event = match result {
                Ok(answer) => {
                    clock.spend(answer.elapsed);
                    if !wait_min_move(started + min_move, &cancel).await {
                        return;
                    }
                    BotEvent::Done {
                        gen,
                        best: Some(answer.mv),
                    }
                }
                Err(f) => BotEvent::Forfeit {
                    gen,
                    fault: f.fault,
                    detail: f.detail,
                },
            };
            if !cancel.is_cancelled() {
                let _ = events.send(event).await;
            }
        });
        handle
    }

    /// What a search of this game takes before it runs.
    fn permits(&self, opponent_human: bool, owner: Owner) -> Permits {
        Permits {
            slots: self.slots.clone(),
            owner,
            bot_vs_bot: (!opponent_human).then(|| self.bot_vs_bot.clone()),
        }
    }

    /// One position of a post-game analysis (`crate::analysis`), at the lowest priority: it
    /// waits until a search slot is free, which means no live search waits for one (polling,
    /// never queueing: docs/analysis.md), then searches `nodes` nodes on a search thread and
    /// gives the slot back. `None` if `cancel` fires first or the search failed.
    pub async fn analyse_position(
        &self,
        board: Board,
        nodes: u64,
        cancel: &CancellationToken,
    ) -> Option<caro_engine::search::SearchResult> {
        let owner: Owner = ANALYSIS_OWNER.into();
        let slot = loop {
            if let Some(slot) = self.slots.try_idle(&owner) {
                break slot;
            }
            tokio::select! {
                _ = tokio::time::sleep(ANALYSIS_POLL) => {}
                _ = cancel.cancelled() => return None,
            }
        };
        let threads = search_threads(&self.slots, self.max_concurrent, self.idle_threads);
        let stop = Arc::new(AtomicBool::new(false));
        let search = self.threads.handle().spawn_blocking({
            let stop = stop.clone();
            move || {
                let _slot = slot;
                analyse(&board, nodes, &stop, threads)
            }
        });
        let _stop_on_drop = StopOnDrop(stop);
        tokio::select! {
            r = search => r.ok().flatten(),
            // Shutdown: the search sees its stop flag (set as this returns) within ~1024 nodes.
            _ = cancel.cancelled() => None,
        }
    }

    /// Ends the idle outside engine processes (at shutdown, once every task has finished).
    pub async fn close(&self) {
        for pool in self.outside.values() {
            pool.close().await;
        }
    }

    /// A built-in level's move. `allowed`: under a clock, the whole move's time from now (the
    /// wait for a slot, the search and `min_move` together).
    #[allow(clippy::too_many_arguments)]
    fn start_builtin(
        &self,
        mut level: caro_engine::bot::Level,
        seed: u64,
        board: Board,
        permits: Permits,
        gen: u64,
        events: mpsc::Sender<BotEvent>,
        allowed: Option<Duration>,
    ) -> SearchHandle {
        let stop = Arc::new(AtomicBool::new(false));
        let cancel = CancellationToken::new();
        let handle = SearchHandle {
            stop: stop.clone(),
            cancel: cancel.clone(),
        };
        let metrics = self.metrics.clone();
        let interval = self.thinking_interval;
        let threads = self.threads.handle();
        // Only a game between bots may use idle cores (a game with a human keeps one thread).
        let idle = permits.bot_vs_bot.is_some().then(|| {
            (
                permits.slots.clone(),
                self.max_concurrent,
                self.idle_threads,
            )
        });
        // A different seed each move, reproducible from the seat's seed.
        let seed = seed ^ (board.moves().len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let min_move = allowed.map_or(self.min_move, |a| a.min(self.min_move));
        self.tracker.spawn(async move {
            let started = Instant::now();
            let Some(permit) = permits.acquire(&cancel).await else {
                return;
            };
            if let Some(allowed) = allowed {
                // What the wait for a slot left of this move's share of the clock.
                let rest = allowed.saturating_sub(started.elapsed());
                level.time = level.time.min(rest).max(Duration::from_millis(1));
            }
            let search_threads =
                idle.map_or(1, |(slots, total, n)| search_threads(&slots, total, n));
            let progress = events.clone();
            let search = threads.spawn_blocking(move || {
                // Held until the search returns, even if nobody waits for it any more, and
                // given back after the search has left the gauge (locals drop in reverse order).
                let _permit = permit;
                let _active = Active::new(metrics);
                let mut last: Option<std::time::Instant> = None;
                // The latest report the throttle held back: sent once the search is over, so
                // the panel ends on the depth the move came from (a shallow level finishes
                // every depth inside one interval and would otherwise only show depth 1).
                let mut held: Option<Thinking> = None;
                let mut report = |info: &SearchInfo| {
                    let info = Thinking {
                        depth: info.depth,
                        score: info.score.get(),
                        nodes: info.nodes,
                        nps: info.nps,
                        pv: info.pv.clone(),
                    };
                    if last.is_some_and(|t| t.elapsed() < interval) {
                        held = Some(info);
                        return;
                    }
                    last = Some(std::time::Instant::now());
                    held = None;
                    // Progress is best effort: a busy room skips some.
                    let _ = progress.try_send(BotEvent::Thinking { gen, info });
                };
                let best = think(level, seed, &board, &stop, &mut report, search_threads);
                (best, held)
            });
            // A search that panicked (or a pool shut down under it) answers nothing: the room
            // falls back to a legal move.
            let (best, held) = search.await.unwrap_or_else(|e| {
                tracing::error!("bot search failed: {e}");
                (None, None)
            });
            if let Some(info) = held {
                let _ = events.send(BotEvent::Thinking { gen, info }).await;
            }
            if !wait_min_move(started + min_move, &cancel).await {
                return;
            }
            if !cancel.is_cancelled() {
                let _ = events.send(BotEvent::Done { gen, best }).await;
            }
        });
        handle
    }
}

impl BotPool {
    /// The levels as `welcome` and `/api/bots` list them.
    pub fn infos(&self) -> Vec<crate::protocol::BotInfo> {
        self.levels
            .values()
            .map(|b| {
                let outside = match &b.engine {
                    BotEngine::Outside(o) => Some(o),
                    BotEngine::Builtin(_) => None,
                };
                crate::protocol::BotInfo {
                    name: b.name.clone(),
                    description: b.description.clone(),
                    games: b.games.iter().map(|g| g.as_str()).collect(),
                    rules: outside.map(|o| o.rules.iter().map(|r| r.as_str()).collect()),
                    min_board: outside.map(|o| o.min_board),
                    max_board: outside.map(|o| o.max_board),
                    square_only: outside.map(|o| !o.rectangular),
                }
            })
            .collect()
    }
}

/// A built-in search in `caro_bot_searches_active` and, when it ends (a panic included), in the
/// search time histogram.
struct Active {
    metrics: Arc<Metrics>,
    start: std::time::Instant,
}

impl Active {
    fn new(metrics: Arc<Metrics>) -> Active {
        metrics.search_started();
        Active {
            metrics,
            start: std::time::Instant::now(),
        }
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        self.metrics.search_ended();
        self.metrics.search_done(self.start.elapsed());
    }
}

/// Waits until `until` (a bot's `min_move`), unless cancelled first: `false` then. A move whose
/// search took longer does not wait at all: a timer due now still waits for the timer wheel's
/// next tick, which was a millisecond added to most bot moves.
async fn wait_min_move(until: Instant, cancel: &CancellationToken) -> bool {
    if Instant::now() >= until {
        return !cancel.is_cancelled();
    }
    tokio::select! {
        _ = tokio::time::sleep_until(until) => true,
        _ = cancel.cancelled() => false,
    }
}

/// What a search waits for: every search a search slot, in its owner's turn; a search of a
/// game between bots first a bot-vs-bot permit (a semaphore: those games are few per player,
/// `limits.bot_rooms_per_player`).
struct Permits {
    slots: Arc<Slots>,
    owner: Owner,
    bot_vs_bot: Option<Arc<Semaphore>>,
}

/// Held while a search runs.
struct Held {
    _search: Slot,
    _bot_vs_bot: Option<OwnedSemaphorePermit>,
}

impl Permits {
    /// Waits for the permits; `None` when the search is cancelled first.
    async fn acquire(self, cancel: &CancellationToken) -> Option<Held> {
        let bot_vs_bot = match self.bot_vs_bot {
            Some(sem) => Some(tokio::select! {
                p = sem.acquire_owned() => p.ok()?,
                _ = cancel.cancelled() => return None,
            }),
            None => None,
        };
        let search = self.slots.acquire(&self.owner, cancel).await?;
        Some(Held {
            _search: search,
            _bot_vs_bot: bot_vs_bot,
        })
    }
}
