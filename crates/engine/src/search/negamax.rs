//! The main search: iterative deepening (chessprogramming.org/Iterative_Deepening) with
//! aspiration windows, negamax alpha-beta with principal variation search
//! (chessprogramming.org/Principal_Variation_Search), a transposition table, null-move pruning,
//! late move reductions and move-count pruning. Which moves a node tries and in what order is
//! `ordering`'s (TT move, threat value, killers, history); the leaves'
//! value is `eval`'s (both private modules of `search`).
//!
//! Gomoku-specific pruning keeps the tree narrow, as every strong gomoku engine does:
//! - a side that can make five does so (the node is scored as a win at once);
//! - a side facing a five may only play the moves that stop it ([`threats::defences`]), and the
//!   node is extended by one ply, so forcing lines are read to the end;
//! - a side facing an open three (a cell where the opponent would make an open four or a double
//!   four) may only block it or make a four of its own;
//! - candidate moves are empty cells within two cells of a stone.
//!
//! (The last three are applied by move generation, in `ordering`.)
//!
//! Before the main search a VCF solver ([`threats::Vcf`]) looks for a forced win by fours, then
//! the threat-space search ([`vct`](super::vct)) for one by fours and threes.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::ordering::{pick, History};
use super::position::{Position, C_FLEX4, C_FOUR_THREE, C_WIN};
use super::threats::{self, Vcf};
use super::time::Stability;
use super::tt::{self, Bound, Table};
use super::vct::Dfpn;
use super::{Limits, Score, SearchInfo, SearchResult};
use crate::{Board, Move, Status};

/// Deepest ply the search reaches (iterations plus extensions).
pub const MAX_PLY: usize = 96;
/// Above any score: the bound of a full window.
const INF: Score = Score::new(Score::WIN.get() + 1);
/// No move (an empty slot of the move tables).
pub(super) const NO_MOVE: u16 = u16::MAX;
/// Node budget of the threat-space search at the root when the search has neither a node nor a
/// time limit (a fixed-depth search).
const VCT_NODES: u64 = 60_000;
/// A `max_depth` from which a search counts as limited by its clock alone.
const UNBOUNDED_DEPTH: u8 = 32;
/// Share of a time budget the threat-space search may use.
const VCT_TIME_NUM: u32 = 1;
const VCT_TIME_DEN: u32 = 2;
/// Late move reductions: `ln(depth) * ln(index) * LMR_K + LMR_BASE` plies.
const LMR_K: f32 = 0.6;
/// The constant part of a late move reduction (formerly 0.4: see docs/engine.md, "Changes
/// accepted by SPRT").
const LMR_BASE: f32 = 0.8;
/// Half-width of the first aspiration window, widened fourfold on each fail. Scores move by a
/// few hundred from one iteration to the next: ±60 failed on most iterations.
const ASPIRATION: i32 = 150;
/// Move-count pruning: at any node but the root, quiet moves from index `LMP_BASE + depth^2 / 2`
/// on.
const LMP_BASE: usize = 3;
/// Null-move pruning from this remaining depth on.
const NMP_DEPTH: i32 = 3;
/// Ordering score above which a move is "tactical" and never reduced.
const TACTICAL: i32 = 300;

/// Entries (log 2) of the threat-space table for a main table of `tt_mb` MiB: a quarter of its
/// memory again, at 24 bytes an entry.
fn dfpn_log2(tt_mb: usize) -> u32 {
    let entries = (tt_mb.max(1) << 20) / 4 / 24;
    entries.max(1 << 12).ilog2().min(22)
}

/// The transposition table's salt for `board`'s kind of game (see [`tt`]'s module docs): the
/// rule variant, the win length and the board size.
fn game_salt(board: &Board) -> u64 {
    let r = board.rules();
    let kind = r.rule() as u64
        | u64::from(r.win_length()) << 8
        | u64::from(r.width()) << 16
        | u64::from(r.height()) << 24;
    kind.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The search's reusable tables (the [`Engine`](super::Engine)'s state): the transposition
/// table, shared by every search thread, the threat-space solver (the main thread's), and one
/// [`Stack`] per thread.
pub struct Searcher {
    tt: Table,
    /// The main thread's ordering statistics and move lists.
    main: Stack,
    /// The helper threads' own (Lazy SMP: `threads - 1` of them; empty with one thread).
    helpers: Vec<Stack>,
    /// The threat-space solver and its table of proofs.
    dfpn: Dfpn,
    /// The board size of the threat-space solver's last search: its table and move cache are
    /// keyed by stones, rule and attacker, not by size, and a board's edges change what the
    /// same stones threaten (and a move cached as a padded index means another cell on another
    /// width), so a search on another size starts them afresh.
    dfpn_board: Option<(u8, u8)>,
}

/// What one search thread keeps for itself: move ordering statistics (history, killers), the
/// principal variation table and the move lists of each ply. Lazy SMP's helpers each have their
/// own, so they order moves differently from the main thread as their statistics diverge.
pub(super) struct Stack {
    pub(super) history: History,
    pub(super) killers: [[u16; 2]; MAX_PLY],
    pv: Vec<[u16; MAX_PLY]>,
    pv_len: [usize; MAX_PLY],
    moves: Vec<Vec<(u16, i32)>>,
    /// History updates (side, cell, old value, new value) made while some node searches its
    /// transposition-table move before generating its other moves (see [`Run::tt_move_first`]):
    /// if that move does not cut, the node rolls them back to order its other moves as it would
    /// have before, then replays them.
    pub(super) journal: Vec<(u8, u16, i32, i32)>,
    /// Nodes waiting on their transposition-table move: the journal is kept while any is.
    pub(super) journal_users: usize,
}

impl Stack {
    fn new() -> Stack {
        Stack {
            history: History {
                counts: [Vec::new(), Vec::new()],
                bonus: [Vec::new(), Vec::new()],
            },
            killers: [[NO_MOVE; 2]; MAX_PLY],
            pv: vec![[NO_MOVE; MAX_PLY]; MAX_PLY],
            pv_len: [0; MAX_PLY],
            moves: (0..MAX_PLY).map(|_| Vec::with_capacity(256)).collect(),
            journal: Vec::new(),
            journal_users: 0,
        }
    }

    fn clear(&mut self) {
        self.history.clear();
        self.killers = [[NO_MOVE; 2]; MAX_PLY];
    }

    /// Readies the statistics for a search of a board of `len` padded cells.
    fn prepare(&mut self, len: usize) {
        self.history.prepare(len);
        self.killers = [[NO_MOVE; 2]; MAX_PLY];
    }
}

/// What the threads of one multi-threaded search share besides the table (Lazy SMP).
struct Shared {
    /// Raised when the search is over (the main thread has its answer, or a helper finished
    /// the last iteration): every thread stops at its next poll.
    done: AtomicBool,
    /// Nodes of all threads, each adding its own at every poll (for the node limit and the
    /// reports; exact once the threads are joined).
    nodes: AtomicU64,
    /// The iteration the main thread is in: a helper searches deeper than that.
    main_depth: AtomicU8,
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

/// One search in progress: the position and the limits.
pub(super) struct Run<'a> {
    pub(super) s: &'a mut Stack,
    tt: &'a Table,
    /// The threat-space solver: the main thread's, `None` in a helper.
    dfpn: Option<&'a mut Dfpn>,
    /// With more than one thread, what they share; `None` in a single-threaded search, which
    /// then runs exactly as it did before threads.
    shared: Option<&'a Shared>,
    /// 0 for the main thread, 1.. for the helpers.
    thread: usize,
    /// This thread's nodes already added to `shared.nodes`.
    published: u64,
    pub(super) pos: Position,
    stop: &'a AtomicBool,
    start: Instant,
    /// When the search stops, even mid-iteration: `time_max` if given, else `time`.
    deadline: Option<Instant>,
    /// The optimum time to scale by the answer's stability, when a `time_max` allows more.
    optimum: Option<Duration>,
    node_limit: u64,
    nodes: u64,
    /// Node count at which to look at the clock and the stop flag next (every ~1024 nodes).
    next_poll: u64,
    aborted: bool,
    /// When the threat-space search must give the main search its turn (a fifth of the time).
    vct_deadline: Option<Instant>,
    pub(super) small: bool,
    /// The root move that last raised alpha in the current iteration, with its score.
    root_best: Option<(u16, Score)>,
}

/// The most search threads an engine runs (more are clamped to it).
pub const MAX_THREADS: usize = 64;

impl Searcher {
    /// A searcher with a transposition table of about `tt_mb` MiB, searching with one thread.
    pub fn new(tt_mb: usize) -> Searcher {
        Searcher {
            tt: Table::new(tt_mb),
            main: Stack::new(),
            helpers: Vec::new(),
            dfpn: Dfpn::new(dfpn_log2(tt_mb)),
            dfpn_board: None,
        }
    }

    /// Forgets the transposition table and the ordering statistics.
    pub fn clear(&mut self) {
        self.tt.clear();
        self.main.clear();
        self.helpers.iter_mut().for_each(Stack::clear);
        self.dfpn.clear();
    }

    /// Searches with `threads` threads from now on (clamped to 1..=[`MAX_THREADS`]).
    pub fn set_threads(&mut self, threads: usize) {
        let helpers = threads.clamp(1, MAX_THREADS) - 1;
        self.helpers.truncate(helpers);
        while self.helpers.len() < helpers {
            self.helpers.push(Stack::new());
        }
    }

    /// The number of search threads.
    pub fn threads(&self) -> usize {
        self.helpers.len() + 1
    }

    /// Readies the tables for a search of `board`: a new table generation and salt, the
    /// statistics of every thread aged, the threat-space table cleared on another board size.
    fn prepare(&mut self, board: &Board) {
        let len = board.cells().len();
        self.main.prepare(len);
        for h in &mut self.helpers {
            h.prepare(len);
        }
        self.tt.new_search();
        self.tt.set_salt(game_salt(board));
        let size = (board.rules().width(), board.rules().height());
        if self.dfpn_board.is_some_and(|b| b != size) {
            self.dfpn.clear();
        }
        self.dfpn_board = Some(size);
    }

    fn run<'a>(&'a mut self, board: &Board, limits: &Limits, stop: &'a AtomicBool) -> Run<'a> {
        self.prepare(board);
        Run::new(
            &mut self.main,
            &self.tt,
            Some(&mut self.dfpn),
            None,
            0,
            board,
            limits,
            stop,
        )
    }

    /// See [`Engine::search`](super::Engine::search).
    pub fn search(
        &mut self,
        board: &Board,
        limits: &Limits,
        stop: &AtomicBool,
        info: &mut dyn FnMut(&SearchInfo),
    ) -> Option<SearchResult> {
        if board.status() != Status::Ongoing {
            return None;
        }
        if self.helpers.is_empty() {
            let mut run = self.run(board, limits, stop);
            return Some(run.iterate(limits, info));
        }
        Some(self.search_threads(board, limits, stop, info))
    }

    /// Lazy SMP (chessprogramming.org/Lazy_SMP): the helper threads search the same root with
    /// their own statistics, deeper than the main thread's iteration, and share only the
    /// transposition table, whose entries make the main thread's iterations cheaper. The main
    /// thread runs the search as a single thread would (threat searches first, the clock, the
    /// reports); the result is its own, unless a helper completed a deeper iteration, whose
    /// answer is then played (docs/engine.md, "Threads (Lazy SMP)").
    fn search_threads(
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
            ..
        } = self;
        let tt = &*tt;
        let shared = &shared;
        std::thread::scope(|scope| {
            let handles: Vec<_> = helpers
                .iter_mut()
                .enumerate()
                .map(|(i, stack)| {
                    scope.spawn(move || {
                        let mut run =
                            Run::new(stack, tt, None, Some(shared), i + 1, board, limits, stop);
                        run.iterate_helper(limits);
                        run.nodes
                    })
                })
                .collect();
            // Raised however the main thread leaves (a panic too), so the scope's join of the
            // helpers never waits for searches nobody will use.
            let over = DoneOnDrop(&shared.done);
            let mut run = Run::new(main, tt, Some(dfpn), Some(shared), 0, board, limits, stop);
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

    /// See [`Engine::sane_candidates`](super::Engine::sane_candidates).
    pub fn sane_candidates(&mut self, board: &Board, n: usize) -> Vec<Move> {
        if board.status() != Status::Ongoing {
            return Vec::new();
        }
        let stop = AtomicBool::new(false);
        let mut run = self.run(board, &Limits::depth(1), &stop);
        let ordered = run.root_moves();
        let opp = 1 - run.pos.side();
        let mut out = Vec::new();
        for &(m, _) in &ordered {
            run.pos.play(m as usize);
            let loses = !threats::win_cells(&run.pos, opp).is_empty();
            run.pos.undo();
            if !loses {
                out.push(run.pos.move_at(m as usize));
                if out.len() == n {
                    break;
                }
            }
        }
        if out.is_empty() {
            out.extend(ordered.first().map(|&(m, _)| run.pos.move_at(m as usize)));
        }
        out
    }
}

impl<'a> Run<'a> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        s: &'a mut Stack,
        tt: &'a Table,
        dfpn: Option<&'a mut Dfpn>,
        shared: Option<&'a Shared>,
        thread: usize,
        board: &Board,
        limits: &Limits,
        stop: &'a AtomicBool,
    ) -> Run<'a> {
        let pos = Position::new(board);
        let start = Instant::now();
        Run {
            small: pos.size() <= 25,
            s,
            tt,
            dfpn,
            shared,
            thread,
            published: 0,
            pos,
            stop,
            start,
            deadline: limits
                .time
                .map(|t| start + limits.time_max.map_or(t, |m| m.max(t))),
            optimum: limits.time.filter(|_| limits.time_max.is_some()),
            node_limit: limits.nodes.unwrap_or(u64::MAX),
            nodes: 0,
            next_poll: 1024,
            aborted: false,
            vct_deadline: limits.time.map(|t| start + t * VCT_TIME_NUM / VCT_TIME_DEN),
            root_best: None,
        }
    }
}

impl Run<'_> {
    fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Nodes searched so far: this thread's, and with threads the others' as last published.
    fn total_nodes(&self) -> u64 {
        match self.shared {
            None => self.nodes,
            Some(sh) => sh.nodes.load(Ordering::Relaxed) + (self.nodes - self.published),
        }
    }

    /// Adds this thread's new nodes to the shared count; all threads' nodes so far.
    fn publish(&mut self) -> u64 {
        match self.shared {
            None => self.nodes,
            Some(sh) => {
                let new = self.nodes - self.published;
                self.published = self.nodes;
                sh.nodes.fetch_add(new, Ordering::Relaxed) + new
            }
        }
    }

    fn poll(&mut self) {
        let nodes = self.publish();
        if self.stop.load(Ordering::Relaxed)
            || self
                .shared
                .is_some_and(|sh| sh.done.load(Ordering::Relaxed))
            || nodes >= self.node_limit
            || self.deadline.is_some_and(|d| Instant::now() >= d)
        {
            self.aborted = true;
        }
    }

    fn result(&self, best: u16, score: Score, depth: u8, pv: &[u16]) -> SearchResult {
        let pv: Vec<Move> = pv.iter().map(|&m| self.pos.move_at(m as usize)).collect();
        SearchResult {
            best: self.pos.move_at(best as usize),
            score,
            depth,
            nodes: self.total_nodes(),
            pv,
            elapsed: self.elapsed(),
        }
    }

    fn report(&self, r: &SearchResult, info: &mut dyn FnMut(&SearchInfo)) {
        let secs = r.elapsed.as_secs_f64();
        info(&SearchInfo {
            depth: r.depth,
            score: r.score,
            nodes: r.nodes,
            nps: if secs > 0.0 {
                (r.nodes as f64 / secs) as u64
            } else {
                0
            },
            elapsed: r.elapsed,
            pv: r.pv.clone(),
        });
    }

    fn iterate(&mut self, limits: &Limits, info: &mut dyn FnMut(&SearchInfo)) -> SearchResult {
        let root = self.root_moves();
        let first = match root.first() {
            Some(m) => m.0,
            // Every move loses at once: block one of the fives anyway.
            None => self.any_move(),
        };
        // A win on the board now needs no search.
        if root.len() == 1 && root[0].1 == i32::MAX {
            let r = self.result(first, Score::win_in(1), 1, &[first]);
            self.report(&r, info);
            return r;
        }
        let mut best = self.result(first, Score::ZERO, 0, &[first]);

        // A forced win by fours is a proof: play it without the main search.
        if self.pos.size() > 25 {
            let budget = (self.node_limit / 4).min(30_000);
            // The solver cannot be told about the helpers' nodes: with threads its budget is
            // counted as spent while it runs, so the helpers keep within what remains.
            if let Some(sh) = self.shared {
                sh.nodes.fetch_add(budget, Ordering::Relaxed);
            }
            let mut vcf = Vcf::new(budget, self.pos_k());
            let found = vcf.solve(&mut self.pos, 24);
            self.nodes += vcf.nodes;
            if let Some(sh) = self.shared {
                sh.nodes.fetch_sub(budget, Ordering::Relaxed);
                self.publish();
            }
            if let Some((m, plies)) = found {
                let r = self.result(
                    m as u16,
                    Score::win_in(plies as usize),
                    plies.min(255) as u8,
                    &[m as u16],
                );
                self.report(&r, info);
                return r;
            }
        }

        // Then a win by threes and fours (threat-space search), within a share of the budget.
        if self.pos.size() > 25 {
            let share = if self.node_limit != u64::MAX {
                (self.node_limit * 3 / 4).min(VCT_NODES * 8)
            } else if self.deadline.is_some() && limits.max_depth >= UNBOUNDED_DEPTH {
                u64::MAX // the clock decides
            } else {
                // A depth-limited search (a weaker bot level, a bench) stays cheap.
                VCT_NODES
            };
            // With threads, the solver's nodes are published as it goes (so the helpers stop
            // at the budget), and the helpers' count against its budget too.
            let mut vct_published = 0;
            let Run {
                dfpn,
                pos,
                stop,
                shared,
                deadline,
                vct_deadline,
                node_limit,
                ..
            } = self;
            let dfpn = dfpn.as_deref_mut().expect("the main thread has the solver");
            let mut out = |n| {
                stop.load(Ordering::Relaxed)
                    || shared.is_some_and(|sh| {
                        let new = n - vct_published;
                        vct_published = n;
                        sh.done.load(Ordering::Relaxed)
                            || sh.nodes.fetch_add(new, Ordering::Relaxed) + new >= *node_limit
                    })
                    || [*deadline, *vct_deadline]
                        .iter()
                        .flatten()
                        .any(|&d| Instant::now() >= d)
            };
            let found = dfpn.solve(pos, share, &mut out);
            self.nodes += dfpn.nodes;
            self.published += vct_published;
            if let Some((m, plies)) = found {
                let r = self.result(m as u16, Score::win_in(plies as usize), 1, &[m as u16]);
                self.report(&r, info);
                return r;
            }
            if self.stop.load(Ordering::Relaxed)
                || self
                    .shared
                    .is_some_and(|sh| sh.done.load(Ordering::Relaxed))
                || self.deadline.is_some_and(|d| Instant::now() >= d)
                || self.publish() >= self.node_limit
            {
                self.report(&best, info);
                return best;
            }
        }

        let mut max_depth = limits.max_depth.clamp(1, (MAX_PLY - 8) as u8);
        if root.len() == 1 && !self.small {
            // A single legal answer (a forced block): no need to think long about it.
            max_depth = max_depth.min(2);
        }
        let empties = self.pos.size() - self.pos.stones();
        let mut prev = Score::ZERO;
        let mut stability = Stability::new();
        // A small board is solved outright: one full-depth search beats deepening.
        let first_depth = if self.small {
            max_depth.min(empties as u8)
        } else {
            1
        };
        for depth in first_depth..=max_depth {
            let iteration_start = Instant::now();
            if let Some(sh) = self.shared {
                sh.main_depth.store(depth, Ordering::Relaxed);
            }
            let score = self.aspiration(depth, prev);
            if self.aborted {
                // A root move that beat the previous best before the clock ran out is the
                // better choice, although its iteration is unfinished.
                if let Some((m, s)) = self
                    .root_best
                    .filter(|&(m, _)| self.pos.move_at(m as usize) != best.best)
                {
                    let pv = [m];
                    best = self.result(m, s, best.depth, &pv);
                }
                break;
            }
            let len = self.s.pv_len[0];
            let mut pv: Vec<u16> = self.s.pv[0][..len].to_vec();
            if pv.is_empty() {
                pv.push(first);
            }
            if depth > first_depth {
                stability.update(self.pos.move_at(pv[0] as usize) != best.best, prev, score);
            }
            prev = score;
            best = self.result(pv[0], score, depth, &pv);
            self.report(&best, info);
            // Stop early when nothing deeper can change the answer: the whole tree of a small
            // board has been read, or a forced result is proven within the depth.
            if depth as usize >= empties || score.mate_plies().is_some_and(|n| n < depth as i32) {
                break;
            }
            if let Some(hard) = self.deadline {
                // Under a match clock the target is the optimum scaled by the answer's
                // stability (`time`), never past the hard deadline.
                let deadline = self.optimum.map_or(hard, |t| {
                    (self.start + t.mul_f64(stability.factor())).min(hard)
                });
                // The next iteration costs one to three times this one (the effective branching
                // factor); do not start one that could not end even if it cost only as much as
                // this one. One cut short is not wasted: a root move that beat the previous best
                // is played (see above), and under a per-move limit unused time is lost anyway.
                let now = Instant::now();
                if now + (now - iteration_start) > deadline && depth >= 4 {
                    break;
                }
            }
        }
        best.nodes = self.nodes;
        best.elapsed = self.elapsed();
        best
    }

    /// One iteration of iterative deepening: the root searched to `depth` inside an aspiration
    /// window around `prev` (chessprogramming.org/Aspiration_Windows), widened on each fail.
    fn aspiration(&mut self, depth: u8, prev: Score) -> Score {
        self.root_best = None;
        let mut window = ASPIRATION;
        let (mut alpha, mut beta) = if depth >= 4 && !prev.is_mate() {
            (prev - window, prev + window)
        } else {
            (-INF, INF)
        };
        loop {
            let score = self.negamax(depth as i32, 0, alpha, beta, true);
            if self.aborted {
                return score;
            }
            if score <= alpha && alpha > -INF {
                alpha = (alpha - window).max(-INF);
                window *= 4;
            } else if score >= beta && beta < INF {
                beta = (beta + window).min(INF);
                window *= 4;
            } else {
                return score;
            }
        }
    }

    /// A Lazy SMP helper's search (chessprogramming.org/Lazy_SMP): iterative deepening of the
    /// same root, with no threat-space search (the main thread's), no clock (the main thread
    /// stops it through `Shared::done`) and no reports. Each iteration is deeper than the one
    /// the main thread is in, by one ply for odd helpers and two for even ones, so that the
    /// threads do not search the same tree in step and the helpers' entries are there when
    /// the main thread's iteration reaches them. Every completed iteration that is the deepest
    /// so far is offered as the answer (`Shared::helper_best`); completing the last one (or
    /// proving a result) ends the whole search.
    fn iterate_helper(&mut self, limits: &Limits) {
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

    /// A legal move when no candidate is left: a square of the opponent's five, else the
    /// first empty cell.
    fn any_move(&self) -> u16 {
        let opp = 1 - self.pos.side();
        let wins = threats::win_cells(&self.pos, opp);
        if let Some(&w) = wins.as_slice().first() {
            return w;
        }
        let cells = self.pos.board_cells();
        let centre = self.pos.centre();
        if self.pos.is_empty(centre) {
            return centre as u16;
        }
        cells
            .iter()
            .copied()
            .find(|&c| self.pos.is_empty(c as usize))
            .expect("an ongoing game has an empty cell")
    }

    fn pos_k(&self) -> usize {
        self.pos.k() as usize
    }

    fn negamax(
        &mut self,
        depth: i32,
        ply: usize,
        mut alpha: Score,
        mut beta: Score,
        pv_node: bool,
    ) -> Score {
        self.s.pv_len[ply] = 0;
        self.nodes += 1;
        if self.nodes >= self.next_poll {
            self.next_poll = self.nodes + 1024;
            self.poll();
        }
        if self.aborted {
            return Score::ZERO;
        }
        let me = self.pos.side();
        let opp = 1 - me;
        if self.pos.count(me, C_WIN) > 0 {
            if let Some(&w) = threats::win_cells(&self.pos, me).as_slice().first() {
                self.s.pv[ply][0] = w;
                self.s.pv_len[ply] = 1;
                return Score::win_in(ply + 1);
            }
        }
        if self.pos.is_full() {
            return Score::ZERO;
        }
        // Mate distance pruning: no line from here can beat a shorter proven one.
        alpha = alpha.max(Score::loss_in(ply));
        beta = beta.min(Score::win_in(ply + 1));
        if alpha >= beta {
            return alpha;
        }
        let forced = self.pos.count(opp, C_WIN) > 0;
        let mut depth = depth;
        if forced {
            depth += 1;
        }
        if depth <= 0 || ply >= MAX_PLY - 2 {
            // No VCF at the leaves: it cost two thirds of the main search's time for about one
            // ply of depth; the threat-space search at the root and the four extensions find
            // the forcing wins (see docs/engine.md, "Changes accepted by SPRT").
            return self.evaluate();
        }

        let key = self.pos.hash();
        let mut tt_move = NO_MOVE;
        // Verify on read: an entry's move must be an empty cell of this board. A probe never
        // returns another position's entry (the full key is compared, and a slot torn by two
        // threads' stores reads as a miss), so this only guards against the unthinkable; it
        // costs one load of a cell the ordering reads anyway.
        let entry = self.tt.probe(key).filter(|e| {
            e.mv == NO_MOVE
                || ((e.mv as usize) < self.pos.padded_len() && self.pos.is_empty(e.mv as usize))
        });
        if let Some(e) = entry {
            tt_move = e.mv;
            if ply > 0 && e.depth as i32 >= depth {
                let s = tt::from_tt(e.score, ply);
                let cut = match e.bound() {
                    Bound::Exact => true,
                    // A PV node needs its exact score: a bound does not do.
                    _ if pv_node => false,
                    Bound::Lower => s >= beta,
                    Bound::Upper => s <= alpha,
                };
                // An exact score ends a PV node too (not the root, which must name a move).
                // Gomoku has no repetitions, so a position's value does not depend on the way
                // to it, which makes such cuts safe in gomoku where chess engines avoid them;
                // they spare the PV re-searches most of the subtrees the null-window search
                // before them just read (docs/engine.md, "Changes accepted by SPRT"). The
                // principal variation then ends with the table's move.
                if cut {
                    if pv_node && e.mv != NO_MOVE {
                        self.s.pv[ply][0] = e.mv;
                        self.s.pv_len[ply] = 1;
                    }
                    return s;
                }
            }
        }

        // Null-move pruning (chessprogramming.org/Null_Move_Pruning): if passing still holds
        // beta in a reduced search, a real move will too. Gomoku has no zugzwang, but a pass
        // is only tried when the opponent has no threat that wins in two moves (an open three,
        // a four-three), which a shallow search could miss, and once per line.
        if !pv_node
            && !forced
            && depth >= NMP_DEPTH
            && self.pos.passes() == 0
            && self.pos.count(opp, C_FLEX4) + self.pos.count(opp, C_FOUR_THREE) == 0
            && !beta.is_mate()
            && self.evaluate() >= beta
        {
            let r = 2 + depth / 4;
            self.pos.pass();
            let score = -self.negamax(depth - 1 - r, ply + 1, -beta, -beta + 1, false);
            self.pos.undo_pass();
            if self.aborted {
                return Score::ZERO;
            }
            if score >= beta && !score.is_mate() {
                return score;
            }
        }

        let mut moves = std::mem::take(&mut self.s.moves[ply]);
        // The journal position while the TT move is searched before the others are generated.
        let mut waiting = None;
        // The index of the first best move, when generate found it.
        let mut first_top = None;
        if self.tt_move_first(tt_move, forced) {
            moves.clear();
            moves.push((tt_move, 1 << 28));
            waiting = Some(self.s.journal.len());
            self.s.journal_users += 1;
        } else {
            first_top = self.generate(&mut moves, ply, tt_move);
            if moves.is_empty() {
                self.s.moves[ply] = moves;
                // Facing a five with no defence: lost on the next move.
                return if forced {
                    Score::loss_in(ply + 2)
                } else {
                    Score::ZERO
                };
            }
        }

        let orig_alpha = alpha;
        let mut best = -INF;
        let mut best_move = NO_MOVE;
        let mut i = 0;
        loop {
            if i == moves.len() {
                match waiting.take() {
                    Some(mark) => {
                        self.generate_after_tt_move(&mut moves, ply, tt_move, mark);
                        if i == moves.len() {
                            break;
                        }
                    }
                    None => break,
                }
            }
            // Selection sort step: cutoffs usually come early, so sorting all is wasted work.
            // The first best (ties keep list order); branch-free, as which entry wins is
            // unpredictable.
            let top = match first_top.take() {
                Some(top) => top,
                None => {
                    let (mut top, mut best_score) = (i, moves[i].1);
                    for (j, &(_, s)) in moves.iter().enumerate().skip(i + 1) {
                        top = pick(s > best_score, j, top);
                        best_score = best_score.max(s);
                    }
                    top
                }
            };
            moves.swap(i, top);
            let (m, mscore) = moves[i];
            // Move-count pruning (chessprogramming.org/Futility_Pruning, "late move pruning"):
            // far down the ordering, quiet moves are not worth a look. PV nodes prune (and
            // reduce, below) as the others do, except at the root: where a PV node read more
            // than the null-window search before it, that search often claimed a move beat
            // alpha and the PV re-search then found it did not, a whole re-search wasted (a
            // third to nearly half of the nodes of the two hardest midgame positions;
            // docs/engine.md, "Changes accepted by SPRT").
            if ply > 0
                && !forced
                && i >= LMP_BASE + (depth * depth) as usize / 2
                && mscore < TACTICAL
            {
                break;
            }
            let new_depth = depth - 1;
            // A child at depth 0 is a leaf and never probes the table (unless a four extends
            // it): a prefetch for it only costs (page walks on a table larger than the TLB's
            // reach).
            if new_depth > 0 || threats::is_four_move(&self.pos, m as usize, me) {
                self.tt.prefetch(self.pos.hash_after(m as usize));
            }
            self.pos.play(m as usize);
            let mut score;
            if i == 0 {
                score = -self.negamax(new_depth, ply + 1, -beta, -alpha, pv_node);
            } else {
                // Late move reductions (chessprogramming.org/Late_Move_Reductions) for quiet
                // moves far down the ordering.
                let mut r = 0;
                if depth >= 2 && i >= 2 && !forced && mscore < TACTICAL {
                    // The usual logarithmic formula: reduce more the deeper and the later.
                    let l = ((depth as f32).ln() * (i as f32).ln() * LMR_K + LMR_BASE) as i32;
                    // The root's moves are reduced by a ply less.
                    r = l.clamp(1, depth - 1) - (ply == 0) as i32;
                }
                score = -self.negamax(new_depth - r, ply + 1, -alpha - 1, -alpha, false);
                if score > alpha && r > 0 {
                    score = -self.negamax(new_depth, ply + 1, -alpha - 1, -alpha, false);
                }
                if score > alpha && score < beta {
                    score = -self.negamax(new_depth, ply + 1, -beta, -alpha, true);
                }
            }
            self.pos.undo();
            if self.aborted {
                if waiting.is_some() {
                    self.release_journal();
                }
                self.s.moves[ply] = moves;
                return Score::ZERO;
            }
            if score > best {
                best = score;
                best_move = m;
                if score > alpha {
                    alpha = score;
                    if ply == 0 {
                        self.root_best = Some((m, score));
                    }
                    // Triangular PV table (chessprogramming.org/Triangular_PV-Table).
                    let child_len = self.s.pv_len[ply + 1];
                    let (head, tail) = self.s.pv.split_at_mut(ply + 1);
                    head[ply][0] = m;
                    head[ply][1..=child_len].copy_from_slice(&tail[0][..child_len]);
                    self.s.pv_len[ply] = child_len + 1;
                    if score >= beta {
                        if mscore < TACTICAL {
                            let k = &mut self.s.killers[ply];
                            if k[0] != m {
                                k[1] = k[0];
                                k[0] = m;
                            }
                        }
                        let old = self.s.history.get(me, m as usize);
                        let new = (old + depth * depth).min(1 << 20);
                        self.s.history.set(me, m as usize, new);
                        if self.s.journal_users > 0 {
                            self.s.journal.push((me as u8, m, old, new));
                        }
                        break;
                    }
                }
            }
            i += 1;
        }
        if waiting.is_some() {
            self.release_journal();
        }
        self.s.moves[ply] = moves;
        let bound = if best >= beta {
            Bound::Lower
        } else if best > orig_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt
            .store(key, depth as u8, tt::to_tt(best, ply), bound, best_move);
        best
    }
}
