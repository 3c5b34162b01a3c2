//! Iterative deepening (chessprogramming.org/Iterative_Deepening), the driver of a search on
//! its main thread: an immediate win needs no search; then the root VCF ([`threats::Vcf`]) looks
//! for a forced win by fours and the threat-space search ([`vct`](super::vct)) for one by fours
//! and threes, each within a share of the budget; then the main search
//! ([`negamax`](super::negamax)) runs one depth after another inside aspiration windows, until
//! the depth, the node budget or the clock (scaled by the answer's stability, [`Stability`]) ends
//! it. Each completed iteration is reported, and the result is always a move: the deepest
//! completed iteration's, or a root move that beat it in the iteration cut short.
//!
//! A multi-threaded search runs this same driver on its main thread; the helpers deepen by a
//! loop of their own ([`smp`](super::smp)).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::negamax::{Run, INF, MAX_PLY};
use super::threats::{self, Vcf};
use super::time::Stability;
use super::{Limits, Score, SearchInfo, SearchResult};
use crate::Move;

/// Node budget of the threat-space search at the root when the search has neither a node nor a
/// time limit (a fixed-depth search).
const VCT_NODES: u64 = 60_000;
/// A `max_depth` from which a search counts as limited by its clock alone.
const UNBOUNDED_DEPTH: u8 = 32;

impl Run<'_> {
    pub(super) fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Nodes searched so far: this thread's, and with threads the others' as last published.
    fn total_nodes(&self) -> u64 {
        match self.shared {
            None => self.nodes,
            Some(sh) => sh.nodes.load(Ordering::Relaxed) + (self.nodes - self.published),
        }
    }

    pub(super) fn result(&self, best: u16, score: Score, depth: u8, pv: &[u16]) -> SearchResult {
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

    pub(super) fn report(&self, r: &SearchResult, info: &mut dyn FnMut(&SearchInfo)) {
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

    pub(super) fn iterate(
        &mut self,
        limits: &Limits,
        info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
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
    pub(super) fn aspiration(&mut self, depth: u8, prev: Score) -> Score {
        self.root_best = None;
        // Half-width of the first aspiration window, widened fourfold on each fail. Scores move
        // by a few hundred from one iteration to the next: ±60 failed on most iterations.
        let mut window = self.params.aspiration;
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
}
