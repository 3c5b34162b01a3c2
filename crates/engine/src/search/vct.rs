//! Threat-space search (L. V. Allis, *Searching for Solutions in Games and Artificial
//! Intelligence*, 1994, ch. 6; chessprogramming.org/Threat-Space_Search) run as a depth-first
//! proof-number search, df-pn (A. Nagai, *Df-pn Algorithm for Searching AND/OR Trees and Its
//! Applications*, PhD thesis, Tokyo 2002; chessprogramming.org/Proof-Number_Search), with the
//! 1 + ε threshold trick of J. Pawlewicz and Ł. Lew (*Improving Depth-First PN-Search: 1 + ε
//! Trick*, Computers and Games 2006).
//!
//! The attacker may only play threats: fours, moves that make an open three, and quiet moves
//! that make a double-four square (in every case a cell where he would next make an open four or
//! two fours, or a five). The defender must answer: every defence that stops a five, or, against
//! such a square, every move that leaves none, plus every four of his own (a counter-threat the
//! attacker must block before going on; a three of his own is too slow against an open four).
//! A proof is therefore a real forced win, as long as those defender lists are complete; when a
//! list is too long to hold, the node counts as refuted rather than risk a false proof. When the
//! defender has a four the attacker must block it, with any blocking move: whether a threat of
//! his survives the block is the next node's question.
//!
//! Proof numbers steer the search to the branch that is cheapest to settle. Plain df-pn dives
//! into long sequences of fours and threes that lead nowhere, so the search is deepened on the
//! number of attacker moves (1, 2, 3, ...), as the older depth-first threat search was: short
//! wins are found first, proofs hold at every depth, refutations only up to the depth they were
//! searched with. Each attacker node gets a five-node VCF on its first visit, which settles many
//! of them with no expansion. The table (keyed by position, attacker, rule) carries proofs and
//! refutations over from move to move within a game.
//!
//! Measured on the 161 MATE positions of `freestyle15.pos`, the solver alone (no main search)
//! at 100k nodes a position: 126 proven with the deepening, 96 by plain df-pn. (The whole engine
//! before this solver, with its depth-first threat search and the main search, proved 116 at
//! 120k nodes.)
//!
//! Nothing here allocates after construction.

use super::pattern::B3;
use super::position::{Position, C_FLEX4, C_FOUR, C_THREE};
use super::threats::{self, CellList, Vcf};

/// The VCF tried at an attacker node on its first visit: node budget and fours deep.
const VCF_NODES: u64 = 5;
const VCF_DEPTH: u32 = 12;
/// Entries of the move cache (a power of two; 136 bytes each).
const MOVE_CACHE: usize = 1 << 13;
/// Proof and disproof numbers at or above this are infinite.
const INF: u32 = 1 << 28;
/// The ε of the 1 + ε trick, as a fraction: a child's threshold is 1 + 1/4 of the second best.
const EPS_NUM: u32 = 5;
const EPS_DEN: u32 = 4;

#[derive(Clone, Copy, Default)]
struct Entry {
    key: u64,
    pn: u32,
    dn: u32,
    /// For a proven node, plies to the five (an upper bound along the proof found).
    dist: u16,
    /// Attacker moves the numbers were searched with; a refutation holds for no more than that
    /// (a proof holds whatever the depth).
    depth: u16,
}

/// The depth of a refutation that no depth can overturn.
const ANY_DEPTH: u16 = u16::MAX;

/// What expanding a node gave.
enum Expansion {
    /// Settled without children: proof and disproof numbers, distance, and the depth up to
    /// which the result holds.
    Terminal(u32, u32, u32, u32),
    /// The moves to search.
    Moves,
}

/// A df-pn threat-space solver with its table, reused from search to search.
pub struct Dfpn {
    table: Vec<Entry>,
    mask: usize,
    /// Nodes visited in the last [`Dfpn::solve`].
    pub nodes: u64,
    limit: u64,
    aborted: bool,
    /// The first move when the root itself was settled by a VCF.
    root_move: Option<usize>,
    /// Mixed into every key: the rule and win length of the current search.
    salt: u64,
    /// The attacker of the current search.
    att: usize,
    /// Node count at which to ask `stop` next.
    next_poll: u64,
    /// The moves of recently expanded nodes, by key: df-pn enters a node many times, and
    /// generating its threats and defences costs more than the rest of a visit.
    cache: Vec<(u64, CellList)>,
}

/// Most attacker moves in a threat sequence.
const MAX_DEPTH: u32 = 24;
/// Deepest ply of the threat-space search.
const MAX_PLY: usize = 128;

impl Dfpn {
    /// A solver whose table holds `1 << log2` entries (24 bytes each).
    pub fn new(log2: u32) -> Dfpn {
        let len = 1usize << log2;
        Dfpn {
            table: vec![Entry::default(); len],
            mask: len - 1,
            nodes: 0,
            limit: 0,
            aborted: false,
            root_move: None,
            salt: 0,
            att: 0,
            next_poll: 0,
            cache: vec![(0, CellList::new()); MOVE_CACHE],
        }
    }

    /// Forgets every proof and cached move list (between games).
    pub fn clear(&mut self) {
        self.table.iter_mut().for_each(|e| *e = Entry::default());
        self.cache.iter_mut().for_each(|e| e.0 = 0);
    }

    /// Whether the side to move wins by threats: the first move and the plies to the five
    /// (along the proof found, not necessarily the shortest win). Gives up after `limit` nodes
    /// or when `stop` (asked every 128 nodes with the node count) says so.
    pub fn solve(
        &mut self,
        pos: &mut Position,
        limit: u64,
        stop: &mut dyn FnMut(u64) -> bool,
    ) -> Option<(usize, u32)> {
        self.nodes = 0;
        self.next_poll = 128;
        self.limit = limit;
        self.aborted = false;
        self.root_move = None;
        self.salt = (pos.rule() as u64 * 8 + pos.k() as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        let att = pos.side();
        self.att = att;
        // Deepening on attacker moves finds short wins first; proofs and refutations that hold
        // at any depth carry over from one iteration to the next.
        let mut depth = 0;
        loop {
            depth += 1;
            let (pn, dn, dist) = self.mid(pos, INF - 1, INF - 1, 0, depth, stop);
            if self.aborted {
                return None;
            }
            if pn == 0 {
                if let Some(m) = self.root_move {
                    return Some((m, dist));
                }
                break;
            }
            let key = self.key(pos.hash(), att);
            let e = &self.table[key as usize & self.mask];
            if (dn == 0 && e.key == key && e.depth == ANY_DEPTH) || depth >= MAX_DEPTH {
                return None; // refuted whatever the depth
            }
        }
        // The proven child with the shortest distance.
        let mut moves = CellList::new();
        if let Expansion::Terminal(0, _, d, _) = self.expand(pos, att, 0, depth, false, &mut moves)
        {
            let w = threats::win_cells(pos, att);
            return w.as_slice().first().map(|&c| (c as usize, d));
        }
        let mut best: Option<(usize, u32)> = None;
        for &c in moves.as_slice() {
            let (pn, _, d) = self.probe(self.key(pos.hash_after(c as usize), att), depth - 1);
            if pn == 0 && !matches!(best, Some((_, bd)) if bd <= d + 1) {
                best = Some((c as usize, d + 1));
            }
        }
        best
    }

    #[inline]
    fn key(&self, hash: u64, att: usize) -> u64 {
        // The same stones ask a different question with the other attacker or rule.
        hash ^ (att as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ self.salt
    }

    /// (pn, dn, dist) of a stored node for a search `depth` attacker moves deep, (1, 1, 0) for
    /// one never seen at that depth.
    #[inline]
    fn probe(&self, key: u64, depth: u32) -> (u32, u32, u32) {
        let e = &self.table[key as usize & self.mask];
        let fits = if e.pn == 0 {
            true
        } else if e.dn == 0 {
            e.depth as u32 >= depth
        } else {
            e.depth as u32 == depth
        };
        if e.key == key && fits {
            (e.pn, e.dn, e.dist as u32)
        } else {
            (1, 1, 0)
        }
    }

    #[inline]
    fn store(&mut self, key: u64, depth: u32, pn: u32, dn: u32, dist: u32) {
        let e = &mut self.table[key as usize & self.mask];
        // A settled result is worth more than a working estimate of another position.
        let settled = |pn: u32, dn: u32| pn == 0 || dn == 0;
        if e.key == key || !settled(e.pn, e.dn) || settled(pn, dn) {
            *e = Entry {
                key,
                pn,
                dn,
                dist: dist.min(u16::MAX as u32) as u16,
                depth: depth.min(ANY_DEPTH as u32) as u16,
            };
        }
    }

    /// Settles `pos` or lists its children in `moves`.
    fn expand(
        &mut self,
        pos: &mut Position,
        att: usize,
        ply: usize,
        depth: u32,
        first_visit: bool,
        moves: &mut CellList,
    ) -> Expansion {
        let def = 1 - att;
        let proven = |dist| Expansion::Terminal(0, INF, dist, ANY_DEPTH as u32);
        let refuted = Expansion::Terminal(INF, 0, 0, ANY_DEPTH as u32);
        // Refuted for this search only: not known to hold deeper.
        let refuted_here = Expansion::Terminal(INF, 0, 0, depth);
        if ply >= MAX_PLY - 1 {
            return refuted_here;
        }
        if pos.side() == att {
            if !threats::win_cells(pos, att).is_empty() {
                return proven(1);
            }
            if first_visit {
                // A short VCF settles most attacker nodes at once, with its exact length.
                let mut vcf = Vcf::new(VCF_NODES, pos.k() as usize);
                let found = vcf.solve(pos, VCF_DEPTH);
                self.nodes += vcf.nodes;
                if let Some((m, plies)) = found {
                    if ply == 0 {
                        self.root_move = Some(m);
                    }
                    return proven(plies);
                }
            }
            if depth == 0 {
                // Out of attacker moves for this iteration: refuted at this depth only.
                return refuted_here;
            }
            let def_wins = threats::win_cells(pos, def);
            if !def_wins.is_empty() {
                // The defender's counter-four must be blocked; whether a threat of ours
                // survives is the defender's node's question.
                *moves = threats::defences(pos, def, &def_wins);
            } else if !self.cached(pos.hash(), moves) {
                for n in 0..pos.size() {
                    let c = pos.board_cells()[n] as usize;
                    if !pos.is_empty(c) {
                        continue;
                    }
                    if pos.class(c, att) >= C_THREE {
                        moves.push(c);
                    } else if (0..4).any(|d| pos.level(c, att, d) >= B3)
                        && pos.makes_class_near(c, att, att, C_FLEX4)
                    {
                        // A move that makes no three can still threaten a double four.
                        moves.push(c);
                    }
                }
                moves.sort_by_key(|c| {
                    std::cmp::Reverse((pos.class(c, att), pos.state(c).value[att]))
                });
                self.remember(pos.hash(), moves);
            }
            if moves.is_empty() {
                return refuted;
            }
        } else {
            if !threats::win_cells(pos, def).is_empty() {
                return refuted;
            }
            let att_wins = threats::win_cells(pos, att);
            if !att_wins.is_empty() {
                *moves = threats::defences(pos, att, &att_wins);
                if moves.is_full() {
                    return refuted_here; // some defences may not have fit
                }
                if moves.is_empty() {
                    return proven(2);
                }
                return Expansion::Moves;
            }
            if pos.count(att, C_FLEX4) == 0 {
                return refuted; // no threat left: the attack fizzled
            }
            if self.cached(pos.hash(), moves) {
                return if moves.is_empty() {
                    proven(4)
                } else {
                    Expansion::Moves
                };
            }
            // Squares where the attacker would make an open four (or a double four).
            let mut flex = CellList::new();
            for &c in pos.board_cells() {
                let c = c as usize;
                if pos.is_empty(c) && pos.class(c, att) == C_FLEX4 {
                    flex.push(c);
                }
            }
            for &c in pos.board_cells() {
                let c = c as usize;
                // A four of his own, or a stone that leaves no open-four square (tested without
                // playing it; it must stand where the attacker could make a four).
                let counter = threats::is_four_move(pos, c, def);
                if pos.is_empty(c)
                    && (counter
                        || pos.class(c, att) >= C_FOUR
                            && pos.removes_all(c, def, att, flex.as_slice(), C_FLEX4))
                {
                    moves.push(c);
                }
            }
            if moves.is_full() {
                // Some defences may not have fit: no proof can be trusted here.
                return refuted_here;
            }
            self.remember(pos.hash(), moves);
            if moves.is_empty() {
                return proven(4);
            }
        }
        Expansion::Moves
    }

    /// Copies the moves of the position of `hash` into `moves` if they are in the move cache.
    #[inline]
    fn cached(&self, hash: u64, moves: &mut CellList) -> bool {
        let key = self.key(hash, self.att);
        let (k, list) = &self.cache[key as usize & (MOVE_CACHE - 1)];
        if *k == key {
            *moves = list.clone();
        }
        *k == key
    }

    /// Keeps the moves of the position of `hash` in the move cache.
    #[inline]
    fn remember(&mut self, hash: u64, moves: &CellList) {
        let key = self.key(hash, self.att);
        self.cache[key as usize & (MOVE_CACHE - 1)] = (key, moves.clone());
    }

    /// The df-pn recursion: searches `pos` until its proof number reaches `th_pn` or its
    /// disproof number `th_dn`, and returns (pn, dn, dist).
    fn mid(
        &mut self,
        pos: &mut Position,
        th_pn: u32,
        th_dn: u32,
        ply: usize,
        depth: u32,
        stop: &mut dyn FnMut(u64) -> bool,
    ) -> (u32, u32, u32) {
        let att = self.att;
        self.nodes += 1;
        if self.nodes >= self.next_poll {
            // Often: an attacker node's move generation can try dozens of moves.
            self.next_poll = self.nodes + 128;
            self.aborted |= self.nodes >= self.limit || stop(self.nodes);
        }
        if self.aborted {
            return (1, 1, 0);
        }
        let key = self.key(pos.hash(), att);
        let mut moves = CellList::new();
        let first_visit = self.table[key as usize & self.mask].key != key;
        if let Expansion::Terminal(pn, dn, dist, holds) =
            self.expand(pos, att, ply, depth, first_visit, &mut moves)
        {
            self.store(key, holds, pn, dn, dist);
            return (pn, dn, dist);
        }
        let or = pos.side() == att;
        // Attacker moves left below this node.
        let child_depth = if or { depth - 1 } else { depth };
        // The children's numbers: read once, then updated from each child search's answer
        // (reading them back from the table would lose any the table did not keep).
        let mut vals = [(1u32, 1u32, 0u32); 64];
        for (n, &c) in moves.as_slice().iter().enumerate() {
            vals[n] = self.probe(self.key(pos.hash_after(c as usize), att), child_depth);
        }
        let result = loop {
            // This node's numbers from its children's: at an OR node (attacker to move) the
            // proof number is the smallest child's and the disproof number the sum; at an AND
            // node the other way round.
            let (mut best, mut best_min, mut second, mut sum) = (0, INF, INF, 0u32);
            let (mut best_other, mut dist) = (0, if or { u32::MAX } else { 0 });
            for (n, &(pn, dn, d)) in vals[..moves.len()].iter().enumerate() {
                let (min_side, sum_side) = if or { (pn, dn) } else { (dn, pn) };
                sum = (sum + sum_side).min(INF);
                if min_side < best_min {
                    second = best_min;
                    best_min = min_side;
                    best = n;
                    best_other = sum_side;
                } else if min_side < second {
                    second = min_side;
                }
                if pn == 0 {
                    dist = if or { dist.min(d + 1) } else { dist.max(d + 1) };
                }
            }
            let (pn, dn) = if or { (best_min, sum) } else { (sum, best_min) };
            if pn >= th_pn || dn >= th_dn {
                let dist = if pn == 0 { dist } else { 0 };
                self.store(key, depth, pn, dn, dist);
                break (pn, dn, dist);
            }
            // The most promising child, with thresholds that send the search back here as
            // soon as another child looks better (by the 1 + ε margin).
            let (th_min, th_sum) = if or { (th_pn, th_dn) } else { (th_dn, th_pn) };
            let child_min = th_min.min(second.saturating_mul(EPS_NUM) / EPS_DEN + 1);
            let child_sum = (th_sum - (sum - best_other)).min(INF - 1);
            let (c_pn, c_dn) = if or {
                (child_min, child_sum)
            } else {
                (child_sum, child_min)
            };
            let c = moves.as_slice()[best] as usize;
            pos.play(c);
            vals[best] = self.mid(pos, c_pn, c_dn, ply + 1, child_depth, stop);
            pos.undo();
            if self.aborted {
                break (1, 1, 0);
            }
        };
        result
    }
}
