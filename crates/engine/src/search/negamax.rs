//! The main search: negamax alpha-beta with principal variation search
//! (chessprogramming.org/Principal_Variation_Search), a transposition table, null-move pruning,
//! late move reductions and move-count pruning, and the state it runs with: the [`Searcher`]'s
//! tables kept from search to search, each thread's `Stack`, and `Run`, one search in
//! progress. Which moves a node tries and in what order is `ordering`'s (TT move, threat value,
//! killers, history); the leaves' value is `eval`'s; the iterations that call the search, with
//! the threat searches at the root before them, are `deepening`'s; the threads of a
//! multi-threaded search are `smp`'s (all private modules of `search`).
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

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::ordering::{pick, History};
use std::sync::Arc;

use super::params::SearchParams;
use super::position::{Position, Tables, C_FLEX4, C_FOUR_THREE, C_WIN};
use super::smp::Shared;
use super::threats;
use super::tt::{self, Bound, Table};
use super::vct::Dfpn;
use super::weights::Weights;
use super::{Limits, Score, SearchInfo, SearchResult};
use crate::{Board, Move, Status};

/// Deepest ply the search reaches (iterations plus extensions).
pub const MAX_PLY: usize = 96;
/// Above any score: the bound of a full window.
pub(super) const INF: Score = Score::new(Score::WIN.get() + 1);
/// No move (an empty slot of the move tables).
pub(super) const NO_MOVE: u16 = u16::MAX;
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
/// `Stack` per thread.
pub struct Searcher {
    pub(super) tt: Table,
    /// The main thread's ordering statistics and move lists.
    pub(super) main: Stack,
    /// The helper threads' own (Lazy SMP: `threads - 1` of them; empty with one thread).
    pub(super) helpers: Vec<Stack>,
    /// The threat-space solver and its table of proofs.
    pub(super) dfpn: Dfpn,
    /// The board size of the threat-space solver's last search: its table and move cache are
    /// keyed by stones, rule and attacker, not by size, and a board's edges change what the
    /// same stones threaten (and a move cached as a padded index means another cell on another
    /// width), so a search on another size starts them afresh.
    dfpn_board: Option<(u8, u8)>,
    /// What positions evaluate with (the built-in weights unless [`Searcher::set_weights`]).
    pub(super) tables: Arc<Tables>,
    /// The search's tunable numbers ([`SearchParams::default`] unless set).
    pub(super) params: SearchParams,
}

/// What one search thread keeps for itself: move ordering statistics (history, killers), the
/// principal variation table and the move lists of each ply. Lazy SMP's helpers each have their
/// own, so they order moves differently from the main thread as their statistics diverge.
pub(super) struct Stack {
    pub(super) history: History,
    pub(super) killers: [[u16; 2]; MAX_PLY],
    pub(super) pv: Vec<[u16; MAX_PLY]>,
    pub(super) pv_len: [usize; MAX_PLY],
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

/// One search in progress: the position and the limits.
pub(super) struct Run<'a> {
    pub(super) s: &'a mut Stack,
    tt: &'a Table,
    /// The threat-space solver: the main thread's, `None` in a helper.
    pub(super) dfpn: Option<&'a mut Dfpn>,
    /// With more than one thread, what they share; `None` in a single-threaded search, which
    /// then runs exactly as it did before threads.
    pub(super) shared: Option<&'a Shared>,
    /// 0 for the main thread, 1.. for the helpers.
    pub(super) thread: usize,
    /// This thread's nodes already added to `shared.nodes`.
    pub(super) published: u64,
    pub(super) pos: Position,
    pub(super) stop: &'a AtomicBool,
    pub(super) start: Instant,
    /// When the search stops, even mid-iteration: `time_max` if given, else `time`.
    pub(super) deadline: Option<Instant>,
    /// The optimum time to scale by the answer's stability, when a `time_max` allows more.
    pub(super) optimum: Option<Duration>,
    pub(super) node_limit: u64,
    pub(super) nodes: u64,
    /// Node count at which to look at the clock and the stop flag next (every ~1024 nodes).
    next_poll: u64,
    pub(super) aborted: bool,
    /// When the threat-space search must give the main search its turn (a fifth of the time).
    pub(super) vct_deadline: Option<Instant>,
    pub(super) small: bool,
    /// The root move that last raised alpha in the current iteration, with its score.
    pub(super) root_best: Option<(u16, Score)>,
    /// The search's tunable numbers.
    pub(super) params: SearchParams,
    /// The learnt ordering's place terms by padded-index difference from a stone
    /// ([`OrderTable::by_offset`](super::policy::OrderTable::by_offset)), centred on the middle
    /// entry.
    pub(super) near: Vec<[i32; 2]>,
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
            tables: Tables::built(),
            params: SearchParams::default(),
        }
    }

    /// A new transposition table of about `tt_mb` MiB and a threat-space table to match, the
    /// ordering statistics forgotten; the weights, search numbers and threads stay.
    pub fn resize(&mut self, tt_mb: usize) {
        self.tt = Table::new(tt_mb);
        self.dfpn = Dfpn::new(dfpn_log2(tt_mb));
        self.dfpn_board = None;
        self.main.clear();
        self.helpers.iter_mut().for_each(Stack::clear);
    }

    /// Evaluates with `weights` from now on (instead of the built-in ones).
    pub fn set_weights(&mut self, weights: &Weights) {
        self.tables = Arc::new(Tables::new(weights));
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
    pub(super) fn prepare(&mut self, board: &Board) {
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
            (&self.tables, &self.params),
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
    pub(super) fn new(
        s: &'a mut Stack,
        tt: &'a Table,
        dfpn: Option<&'a mut Dfpn>,
        shared: Option<&'a Shared>,
        thread: usize,
        board: &Board,
        (tables, params): (&Arc<Tables>, &SearchParams),
        limits: &Limits,
        stop: &'a AtomicBool,
    ) -> Run<'a> {
        let pos = Position::with_tables(board, tables.clone());
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
            vct_deadline: limits.time.map(|t| start + t * params.vct_sixteenths / 16),
            root_best: None,
            params: *params,
            near: tables.order().by_offset(board.stride()),
        }
    }
}

impl Run<'_> {
    /// Adds this thread's new nodes to the shared count; all threads' nodes so far.
    pub(super) fn publish(&mut self) -> u64 {
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

    pub(super) fn negamax(
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

        // Internal iterative reduction (chessprogramming.org/Internal_Iterative_Reductions): a
        // node of depth 4 or more that the table knows no move for is searched a ply shallower;
        // its ordering is a guess, and the next iteration finds its entry (docs/engine.md,
        // "Changes accepted by SPRT").
        if tt_move == NO_MOVE && depth >= 4 && ply > 0 {
            depth -= 1;
        }

        // The static evaluation may cut this node (reverse futility, null move) only where it
        // can see the threats that matter: not facing a four, the opponent without a threat
        // that wins in two moves (an open-four or four-three square), which a shallow search
        // could miss, and beta not a mate score. Evaluated once for both.
        let static_eval = (!pv_node
            && !forced
            && self.pos.count(opp, C_FLEX4) + self.pos.count(opp, C_FOUR_THREE) == 0
            && !beta.is_mate())
        .then(|| self.evaluate());

        // Reverse futility pruning (chessprogramming.org/Reverse_Futility_Pruning): near the
        // leaves, a static evaluation so far above beta that a few plies are unlikely to bring
        // it down fails high at once (docs/engine.md, "Changes accepted by SPRT").
        if let Some(e) = static_eval {
            let p = &self.params;
            if depth <= p.rfp_depth && e.get() - p.rfp_margin * depth >= beta.get() {
                return e;
            }
        }

        // Null-move pruning (chessprogramming.org/Null_Move_Pruning): if passing still holds
        // beta in a reduced search, a real move will too. Gomoku has no zugzwang; a pass is
        // tried under the conditions above, and once per line.
        if static_eval.is_some_and(|e| e >= beta)
            && depth >= self.params.nmp_depth
            && self.pos.passes() == 0
        {
            let r = self.params.nmp_base + depth / self.params.nmp_div;
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
            let tactical = self.params.tactical + self.tactical_lift();
            if ply > 0
                && !forced
                && i as i32 >= self.params.lmp_base + self.params.lmp_quarters * depth * depth / 4
                && mscore < tactical
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
                if depth >= 2 && i >= 2 && !forced && mscore < tactical {
                    // The usual logarithmic formula: reduce more the deeper and the later.
                    let (k, base) = (self.params.lmr_k, self.params.lmr_base);
                    let l = ((depth as f32).ln() * (i as f32).ln() * k + base) as i32;
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
                        if mscore < tactical {
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
