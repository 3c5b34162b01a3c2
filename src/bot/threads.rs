//! The search threads: a blocking pool of the bot searches' own, and the engine each thread
//! keeps from search to search (see the module docs of [`crate::bot`] for why both).
//!
//! This module never decides which search runs (that is `slots`) and never sees a room.

use std::cell::Cell;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use caro_engine::bot::{self, Bot};
use caro_engine::search::{Engine, SearchInfo};
use caro_engine::{Board, Move};
use tokio::runtime::{Handle, Runtime};

/// Transposition table of a search thread's engine, in MiB (the size `Bot::new` uses).
const TT_MB: usize = 16;

/// How long an idle search thread lives, with its engine: long enough to keep the tables of a
/// game with a human who thinks a while, short enough to give the memory back to an idle server.
pub const SEARCH_THREAD_KEEP_ALIVE: Duration = Duration::from_secs(60);

thread_local! {
    /// The engine of this search thread, between its searches.
    static ENGINE: Cell<Option<Engine>> = const { Cell::new(None) };
}

/// A search thread's engine. Each search sets the numbers it searches with: a bot its level's
/// ([`Level::search`](bot::Level::search)), an analysis [`bot::level_params`].
fn new_engine() -> Engine {
    Engine::new(TT_MB)
}

/// One bot move on a search thread, with the thread's engine (created on its first search):
/// taken out for the search and put back after it. A search that panics loses the engine with
/// it, and the next search on this thread starts a fresh one. `threads`: the engine's search
/// threads for this move (Lazy SMP; 1 unless the cores are idle, see `bot`'s module docs).
pub(super) fn think(
    level: caro_engine::bot::Level,
    seed: u64,
    board: &Board,
    stop: &AtomicBool,
    report: &mut dyn FnMut(&SearchInfo),
    threads: usize,
) -> Option<Move> {
    let mut engine = ENGINE.take().unwrap_or_else(new_engine);
    engine.set_threads(threads);
    let mut bot = Bot::with_engine(level, seed, engine);
    let best = bot.choose(board, stop, report).map(|r| r.best);
    ENGINE.set(Some(bot.into_engine()));
    best
}

/// One position of a post-game analysis on a search thread, with the thread's engine (as
/// [`think`]), searched to `nodes` nodes. The engine is cleared first: what the thread searched
/// before (a bot's game, another analysis) must not change the result, so that a game's analysis
/// depends only on its moves and the node budget (with one thread: `threads` above 1, when
/// `search.idle_threads` allows it, gives up that reproducibility for speed).
pub(super) fn analyse(
    board: &Board,
    nodes: u64,
    stop: &AtomicBool,
    threads: usize,
) -> Option<caro_engine::search::SearchResult> {
    let mut engine = ENGINE.take().unwrap_or_else(new_engine);
    engine.clear();
    engine.set_threads(threads);
    // The numbers the analysis was checked with (docs/bots.md), whichever level's bot searched
    // on this thread last.
    engine.set_search_params(&bot::level_params());
    let result = engine.search(board, &analysis_limits(nodes), stop, &mut |_| {});
    ENGINE.set(Some(engine));
    result
}

/// An analysis search's limits: `nodes` nodes, no clock.
fn analysis_limits(nodes: u64) -> caro_engine::search::Limits {
    caro_engine::search::Limits {
        max_depth: 64,
        time: None,
        time_max: None,
        nodes: Some(nodes),
    }
}

/// The search threads: a tokio runtime used only for its blocking pool (see the module docs for
/// why not the server's). It has no worker thread and no driver; `spawn_blocking` on its handle
/// works from any runtime, and the caller awaits the result as any `JoinHandle`.
pub(super) struct SearchThreads {
    /// `None` once shut down (in `Drop`).
    runtime: Option<Runtime>,
}

impl SearchThreads {
    pub(super) fn new(max_concurrent: usize, nice: u8) -> SearchThreads {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .thread_name("bot-search")
            // The search permits already bound the searches; the pool never needs more.
            .max_blocking_threads(max_concurrent.max(1))
            .thread_keep_alive(SEARCH_THREAD_KEEP_ALIVE)
            .on_thread_start(move || lower_priority(nice))
            .build()
            .expect("a runtime without I/O or timer drivers has nothing that can fail to start");
        SearchThreads {
            runtime: Some(runtime),
        }
    }

    pub(super) fn handle(&self) -> Handle {
        self.runtime
            .as_ref()
            .expect("only Drop takes the runtime")
            .handle()
            .clone()
    }
}

impl Drop for SearchThreads {
    fn drop(&mut self) {
        // Dropping a runtime waits for its threads, which a runtime's own tasks may not do: the
        // pool may be dropped inside the server's runtime. Searches still running (none after a
        // clean shutdown) end on their own.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use caro_engine::bot::{Level, Style};
    use caro_engine::Rules;

    /// The calling thread's nice value.
    #[cfg(target_os = "linux")]
    fn nice() -> i32 {
        // SAFETY: a plain system call about the calling thread.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::getpriority(libc::PRIO_PROCESS, tid)
        }
    }

    /// Search threads are niced for good, so they must be a pool of their own: the server's
    /// `spawn_blocking` work (store reads) runs at the server's priority, before and after a
    /// search.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn niced_search_threads_are_not_the_servers_blocking_pool() {
        let base = tokio::task::spawn_blocking(nice).await.unwrap();
        let threads = SearchThreads::new(1, 3);
        let searching = threads.handle().spawn_blocking(nice).await.unwrap();
        assert_eq!(searching, (base + 3).min(19));
        let after = tokio::task::spawn_blocking(nice).await.unwrap();
        assert_eq!(after, base);
    }

    /// Whether this thread holds an engine between searches.
    fn has_engine() -> bool {
        let engine = ENGINE.take();
        let has = engine.is_some();
        ENGINE.set(engine);
        has
    }

    /// A search thread keeps its engine from one search to the next, of any game.
    #[tokio::test]
    async fn a_search_thread_keeps_its_engine() {
        // One thread, so both searches run on it.
        let threads = SearchThreads::new(1, 0);
        let level = Level {
            style: Style::Full,
            max_depth: 3,
            time: Duration::from_secs(5),
            blunder: 0.0,
            search: bot::level_params(),
        };
        let game = |rules: Rules| {
            let mut b = Board::new(rules);
            b.play(Move::new(2, 2));
            b
        };
        let mut had = Vec::new();
        for board in [
            game(Rules::caro_default()),
            game(Rules::caro(9, 9, caro_engine::Rule::Caro).unwrap()),
        ] {
            let (before, best, after) = threads
                .handle()
                .spawn_blocking(move || {
                    let before = has_engine();
                    let best = think(level, 1, &board, &AtomicBool::new(false), &mut |_| {}, 1);
                    (
                        before,
                        best.map(|m| board.clone().try_play(m).is_ok()),
                        has_engine(),
                    )
                })
                .await
                .unwrap();
            assert_eq!(best, Some(true), "a legal move");
            assert!(after, "the engine is put back after the search");
            had.push(before);
        }
        assert_eq!(
            had,
            [false, true],
            "created by the first search, reused by the second"
        );
    }

    /// A level's search numbers go with its moves only: after a bot that orders quiet moves by
    /// the learnt table searched on a thread, the bot's engine has its level's numbers, and an
    /// analysis there searches with the levels' numbers ([`bot::level_params`]): the same
    /// nodes, move and score as an engine of its own with them.
    #[tokio::test]
    async fn each_search_sets_its_own_numbers() {
        let threads = SearchThreads::new(1, 0);
        let mut board = Board::new(Rules::caro_default());
        for (x, y) in [(7, 7), (8, 8), (7, 8), (6, 6), (9, 7)] {
            board.play(Move::new(x, y));
        }
        const NODES: u64 = 20_000;
        let expected = {
            let mut engine = Engine::new(TT_MB);
            engine.set_search_params(&bot::level_params());
            let r = engine
                .search(
                    &board,
                    &analysis_limits(NODES),
                    &AtomicBool::new(false),
                    &mut |_| {},
                )
                .expect("a move");
            (r.nodes, r.best, r.score)
        };
        let learnt = Level {
            style: Style::Full,
            max_depth: 4,
            time: Duration::from_secs(5),
            blunder: 0.0,
            search: caro_engine::search::params::SearchParams::default(),
        };
        assert_ne!(learnt.search, bot::level_params(), "another ordering");
        let (params, analysed) = threads
            .handle()
            .spawn_blocking(move || {
                think(learnt, 1, &board, &AtomicBool::new(false), &mut |_| {}, 1);
                let engine = ENGINE.take().expect("kept");
                let params = *engine.search_params();
                ENGINE.set(Some(engine));
                let r = analyse(&board, NODES, &AtomicBool::new(false), 1).expect("a move");
                (params, (r.nodes, r.best, r.score))
            })
            .await
            .unwrap();
        assert_eq!(
            params, learnt.search,
            "the bot searched with its level's numbers"
        );
        assert_eq!(analysed, expected);
    }
}
