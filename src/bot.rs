//! The bot adapter: the only bridge between the engine (plain blocking code) and the async server.
//!
//! A search runs on a thread of its own (not tokio's shared blocking pool) at a lower priority
//! (`search.nice`), so it never stalls the reactor nor takes the CPU that players' messages need,
//! with the level's depth and time budget and a stop flag the engine polls. A global semaphore
//! bounds the searches running at once: rooms whose bot waits for a permit simply wait, the
//! server stays responsive. Progress is reported as [`BotEvent::Thinking`] (throttled, dropped when the room is
//! busy) and the answer as [`BotEvent::Done`]. Dropping the [`SearchHandle`] cancels the search.
//!
//! Levels played by an outside Gomocup engine go through [`crate::outside`] instead of a search
//! thread, under the same semaphore: a move of an outside engine is a search like any
//! other. It takes a process slot of its level first, then a search permit, so a level whose
//! processes are all busy never sits on a permit a built-in bot could use. Its answer arrives as
//! [`BotEvent::Done`] (always a legal move) or [`BotEvent::Forfeit`]; it reports no progress.
//!
//! This module never touches rooms, clients or the protocol beyond sending events back.

use indexmap::IndexMap;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use caro_engine::bot::Bot;
use caro_engine::search::SearchInfo;
use caro_engine::{Board, Move};
use tokio::sync::{mpsc, oneshot, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::{BotConfig, BotEngine, SearchConfig};
use crate::metrics::Metrics;
use crate::outside::{EnginePool, GameClock};
use crate::protocol::Fault;

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
/// its level's process pool and the seat's game clock. The engine itself (with its
/// transposition table, megabytes) exists only while a search runs, so memory is bounded by
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
    permits: Arc<Semaphore>,
    /// Taken first by searches of games without a human seat: fewer than `permits`, so a game
    /// with a player always finds a search slot however many bot-vs-bot games run.
    bot_vs_bot: Arc<Semaphore>,
    metrics: Arc<Metrics>,
    tracker: TaskTracker,
    thinking_interval: Duration,
    min_move: Duration,
    nice: u8,
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
            permits: Arc::new(Semaphore::new(search.max_concurrent)),
            bot_vs_bot: Arc::new(Semaphore::new(search.bot_vs_bot_slots)),
            metrics,
            tracker,
            thinking_interval: search.thinking_interval,
            min_move: search.min_move,
            nice: search.nice,
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
    /// `opponent_human` is told to outside engines (`INFO game_type`).
    pub fn start(
        &self,
        bot: &BotSeat,
        board: Board,
        opponent_human: bool,
        gen: u64,
        events: mpsc::Sender<BotEvent>,
    ) -> SearchHandle {
        match &bot.engine {
            SeatEngine::Builtin { level, seed } => {
                self.start_builtin(*level, *seed, board, opponent_human, gen, events)
            }
            SeatEngine::Outside { pool, clock } => self.start_outside(
                pool.clone(),
                clock.clone(),
                board,
                opponent_human,
                gen,
                events,
            ),
        }
    }

    /// A move of an outside engine: a process slot of its level, a search permit, then the
    /// exchange with the process. Not cancelled with its game: the engine finishes its move
    /// (bounded by its time and the margin) so its process can be reused, and the answer is
    /// dropped. Server shutdown stops it at once.
    fn start_outside(
        &self,
        pool: Arc<EnginePool>,
        clock: Arc<GameClock>,
        board: Board,
        opponent_human: bool,
        gen: u64,
        events: mpsc::Sender<BotEvent>,
    ) -> SearchHandle {
        let cancel = CancellationToken::new();
        let handle = SearchHandle {
            stop: Arc::new(AtomicBool::new(false)),
            cancel: cancel.clone(),
        };
        let permits = self.permits(opponent_human);
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
                    tokio::select! {
                        _ = tokio::time::sleep_until(started + min_move) => {}
                        _ = cancel.cancelled() => return,
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

    /// The permits a search of this game takes.
    fn permits(&self, opponent_human: bool) -> Permits {
        Permits {
            search: self.permits.clone(),
            bot_vs_bot: (!opponent_human).then(|| self.bot_vs_bot.clone()),
        }
    }

    /// Ends the idle outside engine processes (at shutdown, once every task has finished).
    pub async fn close(&self) {
        for pool in self.outside.values() {
            pool.close().await;
        }
    }

    fn start_builtin(
        &self,
        level: caro_engine::bot::Level,
        seed: u64,
        board: Board,
        opponent_human: bool,
        gen: u64,
        events: mpsc::Sender<BotEvent>,
    ) -> SearchHandle {
        let stop = Arc::new(AtomicBool::new(false));
        let cancel = CancellationToken::new();
        let handle = SearchHandle {
            stop: stop.clone(),
            cancel: cancel.clone(),
        };
        let permits = self.permits(opponent_human);
        let metrics = self.metrics.clone();
        let interval = self.thinking_interval;
        let nice = self.nice;
        // A different seed each move, reproducible from the seat's seed.
        let seed = seed ^ (board.moves().len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let min_move = self.min_move;
        self.tracker.spawn(async move {
            let started = Instant::now();
            let Some(permit) = permits.acquire(&cancel).await else {
                return;
            };
            metrics.search_started();
            let search_start = Instant::now();
            let progress = events.clone();
            let (done, answer) = oneshot::channel();
            // A thread of its own rather than tokio's blocking pool: its priority is lowered
            // for good, which a pool thread shared with other blocking work must not be.
            let thread = std::thread::Builder::new()
                .name("bot-search".into())
                .spawn(move || {
                    lower_priority(nice);
                    let mut bot = Bot::new(level, seed);
                    let mut last: Option<std::time::Instant> = None;
                    let mut report = |info: &SearchInfo| {
                        if last.is_some_and(|t| t.elapsed() < interval) {
                            return;
                        }
                        last = Some(std::time::Instant::now());
                        let info = Thinking {
                            depth: info.depth,
                            score: info.score,
                            nodes: info.nodes,
                            nps: info.nps,
                            pv: info.pv.clone(),
                        };
                        // Progress is best effort: a busy room skips some.
                        let _ = progress.try_send(BotEvent::Thinking { gen, info });
                    };
                    let _ = done.send(bot.choose(&board, &stop, &mut report).map(|r| r.best));
                });
            let best = match thread {
                // A search that panicked drops `done`: the room falls back to a legal move.
                Ok(_) => answer.await.unwrap_or_else(|_| {
                    tracing::error!("bot search failed: the search thread panicked");
                    None
                }),
                Err(e) => {
                    tracing::error!("bot search failed: no thread: {e}");
                    None
                }
            };
            metrics.search_ended();
            metrics.search_done(search_start.elapsed());
            drop(permit);
            tokio::select! {
                _ = tokio::time::sleep_until(started + min_move) => {}
                _ = cancel.cancelled() => return,
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

/// Makes the calling thread `nice` steps nicer than it is (Linux: the nice value is per thread).
/// Searches then take only the CPU that connections and rooms leave: with every search slot
/// busy on a small machine, players' moves still go through at once (docs/performance.md).
fn lower_priority(nice: u8) {
    #[cfg(target_os = "linux")]
    if nice > 0 {
        // SAFETY: plain system calls on the calling thread's own id; no memory is shared.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            *libc::__errno_location() = 0;
            let current = libc::getpriority(libc::PRIO_PROCESS, tid);
            if *libc::__errno_location() == 0 {
                let target = (current + i32::from(nice)).min(19);
                if libc::setpriority(libc::PRIO_PROCESS, tid, target) != 0 {
                    tracing::debug!("search thread keeps its priority: setpriority failed");
                }
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}

/// The semaphores a search waits on: every search takes a search permit; a search of a game
/// between bots first takes a bot-vs-bot permit.
struct Permits {
    search: Arc<Semaphore>,
    bot_vs_bot: Option<Arc<Semaphore>>,
}

/// Held while a search runs.
struct Held {
    _search: OwnedSemaphorePermit,
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
        let search = tokio::select! {
            p = self.search.acquire_owned() => p.ok()?,
            _ = cancel.cancelled() => return None,
        };
        Some(Held {
            _search: search,
            _bot_vs_bot: bot_vs_bot,
        })
    }
}
