//! Lazy SMP (chessprogramming.org/Lazy_SMP): the orchestration of a search with more than one
//! thread. [`Searcher::search_threads`] starts the helper threads for one search, runs the main
//! thread's search (the single-threaded one, [`deepening`](super::deepening)) beside them, joins
//! them and chooses which thread's answer is played; [`Run::iterate_helper`] is a helper's own
//! iterative deepening. What the threads share besides the transposition table is [`Shared`].
//! The design and its measurements are in docs/engine.md, "Threads (Lazy SMP)".
//!
//! Nothing here is entered by a single-threaded search, which must stay exactly the search it
//! was before threads (`pbrain-caro bench`'s node count). A helper never reports progress,
//! never reads the clock, and never runs the threat-space search.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;

use super::negamax::{Run, Searcher, MAX_PLY};
use super::{Limits, Score, SearchInfo, SearchResult};
use crate::Board;

/// What the threads of one multi-threaded search share besides the table (Lazy SMP).
pub(super) struct Shared {
    /// Raised when the search is over (the main thread has its answer, or a helper finished
    /// the last iteration): every thread stops at its next poll.
    pub(super) done: AtomicBool,
    /// Nodes of all threads, each adding its own at every poll (for the node limit and the
    /// reports; exact once the threads are joined).
    pub(super) nodes: AtomicU64,
    /// The iteration the main thread is in: a helper searches deeper than that.
    pub(super) main_depth: AtomicU8,
    /// The deepest iteration a helper completed, with its result.
    helper_best: Mutex<Option<HelperResult>>,
}

/// Raises `Shared::done` when dropped.
struct DoneOnDrop<'a>(&'a AtomicBool);

impl Drop for DoneOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A helper thread's completed iteration.
struct HelperResult {
    depth: u8,
    best: u16,
    score: Score,
    pv: Vec<u16>,
}

impl Searcher {
    /// Lazy SMP (chessprogramming.org/Lazy_SMP): the helper threads search the same root with
    /// their own statistics, deeper than the main thread's iteration, and share only the
    /// transposition table, whose entries make the main thread's iterations cheaper. The main
    /// thread runs the search as a single thread would (threat searches first, the clock, the
    /// reports); the result is its own, unless a helper completed a deeper iteration, whose
    /// answer is then played (docs/engine.md, "Threads (Lazy SMP)").
    pub(super) fn search_threads(
        &mut self,
        board: &Board,
        limits: &Limits,
        stop: &AtomicBool,
        info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        self.prepare(board);
        let shared = Shared {
            done: AtomicBool::new(false),
            nodes: AtomicU64::new(0),
            main_depth: AtomicU8::new(0),
            helper_best: Mutex::new(None),
        };
        let Searcher {
            tt,
            main,
            helpers,
            dfpn,
            tables,
            params,
            ..
        } = self;
        let tables = (&*tables, &*params);
        let tt = &*tt;
        let shared = &shared;
        std::thread::scope(|scope| {
            let handles: Vec<_> = helpers
                .iter_mut()
                .enumerate()
                .map(|(i, stack)| {
                    scope.spawn(move || {
                        let mut run = Run::new(
                            stack,
                            tt,
                            None,
                            Some(shared),
                            i + 1,
                            board,
                            tables,
                            limits,
                            stop,
                        );
                        run.iterate_helper(limits);
                        run.nodes
                    })
                })
                .collect();
            // Raised however the main thread leaves (a panic too), so the scope's join of the
            // helpers never waits for searches nobody will use.
            let over = DoneOnDrop(&shared.done);
            let mut run = Run::new(
                main,
                tt,
                Some(dfpn),
                Some(shared),
                0,
                board,
                tables,
                limits,
                stop,
            );
            let mut best = run.iterate(limits, info);
            drop(over);
            let mut nodes = run.nodes;
            for h in handles {
                nodes += h
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            }
            let helper = shared
                .helper_best
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            // A win the main thread proved (a five, a VCF, a threat-space proof or a mate
            // its search found) stands; otherwise the deepest completed iteration is played.
            if let Some(h) = helper.filter(|h| h.depth > best.depth && !best.score.is_win()) {
                best = run.result(h.best, h.score, h.depth, &h.pv);
                best.nodes = nodes;
                run.report(&best, info);
            }
            best.nodes = nodes;
            best.elapsed = run.elapsed();
            best
        })
    }
}

impl Run<'_> {
    /// A Lazy SMP helper's search (chessprogramming.org/Lazy_SMP): iterative deepening of the
    /// same root, with no threat-space search (the main thread's), no clock (the main thread
    /// stops it through `Shared::done`) and no reports. Each iteration is deeper than the one
    /// the main thread is in, by one ply for odd helpers and two for even ones, so that the
    /// threads do not search the same tree in step and the helpers' entries are there when
    /// the main thread's iteration reaches them. Every completed iteration that is the deepest
    /// so far is offered as the answer (`Shared::helper_best`); completing the last one (or
    /// proving a result) ends the whole search.
    pub(super) fn iterate_helper(&mut self, limits: &Limits) {
        let shared = self.shared.expect("a helper runs with threads");
        if self.small {
            // A small board is solved by one full-depth search: the main thread's.
            return;
        }
        let root = self.root_moves();
        if root.is_empty() || (root.len() == 1 && root[0].1 == i32::MAX) {
            return;
        }
        let mut max_depth = limits.max_depth.clamp(1, (MAX_PLY - 8) as u8);
        if root.len() == 1 && !self.small {
            max_depth = max_depth.min(2);
        }
        let empties = self.pos.size() - self.pos.stones();
        let offset = 1 + (self.thread + 1) % 2;
        let mut prev = Score::ZERO;
        let mut depth = 0u8;
        loop {
            let main = shared.main_depth.load(Ordering::Relaxed);
            depth = (depth + 1)
                .max(main.saturating_add(offset as u8))
                .min(max_depth);
            let score = self.aspiration(depth, prev);
            if self.aborted {
                return;
            }
            prev = score;
            let len = self.s.pv_len[0];
            if len > 0 {
                let mut best = shared.helper_best.lock().unwrap_or_else(|e| e.into_inner());
                if best.as_ref().map_or(true, |b| b.depth < depth) {
                    *best = Some(HelperResult {
                        depth,
                        best: self.s.pv[0][0],
                        score,
                        pv: self.s.pv[0][..len].to_vec(),
                    });
                }
            }
            let proven = score.mate_plies().is_some_and(|n| n < depth as i32);
            if depth >= max_depth || depth as usize >= empties || proven {
                if len > 0 {
                    shared.done.store(true, Ordering::Relaxed);
                }
                return;
            }
        }
    }
}
