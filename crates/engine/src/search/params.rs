//! The main search's tunable numbers: how much it reduces and prunes, what it calls a quiet
//! move, how it orders moves, its aspiration window and the threat-space search's share of the
//! clock. [`SearchParams::default`] holds the values the engine plays with: the SPSA run over
//! these numbers of 2026-12-01 with the learnt ordering, from those of the run of 2026-11-27,
//! which started from the constants each chosen by an SPRT before (docs/engine.md, "Tuning by
//! play: SPSA", and "Changes accepted by SPRT"); the bot levels keep the numbers of 2026-11-27
//! ([`level_params`](crate::bot::level_params)), which they were calibrated with. An engine can
//! be given others
//! ([`Engine::set_search_params`](super::Engine::set_search_params)) so that tuning by play
//! (`spsa`) can pit two sets against each other in one process.

/// See the module docs; the defaults are the second SPSA run's, whole numbers rounded
/// (`policy` was chosen by play against Rapfi at 16 before it, docs/engine.md, "A move
/// ordering learnt from Rapfi's moves", and the run moved it to 15).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchParams {
    /// Late move reductions: `ln(depth) * ln(index) * lmr_k + lmr_base` plies.
    pub lmr_k: f32,
    /// The constant part of a late move reduction.
    pub lmr_base: f32,
    /// Move-count pruning: quiet moves from index `lmp_base + lmp_quarters * depth^2 / 4` on are
    /// not searched (not at the root).
    pub lmp_base: i32,
    /// See `lmp_base`: 8 is `2 depth^2`.
    pub lmp_quarters: i32,
    /// Null-move pruning from this remaining depth on.
    pub nmp_depth: i32,
    /// The null move's reduction: `nmp_base + depth / nmp_div` plies.
    pub nmp_base: i32,
    /// See `nmp_base`.
    pub nmp_div: i32,
    /// Reverse futility pruning up to this remaining depth.
    pub rfp_depth: i32,
    /// Reverse futility pruning's margin a ply.
    pub rfp_margin: i32,
    /// Ordering score from which a move is tactical: never reduced nor pruned by move count, and
    /// not a killer.
    pub tactical: i32,
    /// The ordering counts the opponent's value of a cell times `defence / 20`.
    pub defence: i32,
    /// The ordering bonuses of the first and second killer move.
    pub killers: [i32; 2],
    /// Half-width of the first aspiration window, widened fourfold on each fail.
    pub aspiration: i32,
    /// The threat-space search's share of a timed move, in sixteenths.
    pub vct_sixteenths: u32,
    /// The learnt ordering's share of a quiet move's ordering score, in sixteenths
    /// ([`policy`](super::policy)): 0 orders quiet moves by the cell values alone, 16 by the
    /// learnt scores alone (the default from 2026-11-29; 15 since 2026-12-01, a sixteenth of
    /// the cell values blended in). The bot levels keep 0
    /// ([`level_params`](crate::bot::level_params)) unless the server's config gives them
    /// `learnt_ordering`.
    pub policy: i32,
    /// 1: a move is tactical (never reduced nor pruned by move count, not a killer) by its
    /// cell values alone, and every tactical move is ordered above every quiet one; 0: by its
    /// whole ordering score, history and killer bonuses included.
    pub by_value: i32,
    /// With the learnt ordering on: the quiet move best by the cell values alone is lifted to
    /// the front of the quiet moves (1) or not (0), so that the cutoffs the cell values found
    /// first are kept while the learnt order decides what survives the pruning. 1 by default
    /// since 2026-12-03 (three self-play runs pooled, 2,245 games: +19.5 [+6.1, +33.1] Elo);
    /// the bot levels keep 0 unless their config gives them `learnt_ordering`.
    pub keep: i32,
    /// The history and killer bonuses' weight in a move's ordering score, in sixteenths: 16 adds
    /// them whole (as before 2026-12-03; the bot levels keep it), 8 half (the default since
    /// 2026-12-03, accepted by self-play SPRT: +52.0 [+19.8, +85.2] Elo). Where a bonus lifts a
    /// quiet move's score to `tactical`, the move is tactical (never reduced nor pruned by move
    /// count) unless `by_value`, so the weight decides that too.
    pub bonuses: i32,
}

impl Default for SearchParams {
    fn default() -> SearchParams {
        SearchParams {
            lmr_k: 0.69109,
            lmr_base: 0.855065,
            lmp_base: 1,
            lmp_quarters: 2,
            nmp_depth: 3,
            nmp_base: 2,
            nmp_div: 4,
            rfp_depth: 4,
            rfp_margin: 189,
            tactical: 307,
            defence: 14,
            killers: [246, 187],
            aspiration: 143,
            vct_sixteenths: 4,
            policy: 15,
            by_value: 0,
            keep: 1,
            bonuses: 8,
        }
    }
}
