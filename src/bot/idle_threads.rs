//! Threads when cores are idle (`search.idle_threads`, default 1: off). A post-game analysis's
//! search and a bot-vs-bot game's move may search with several threads (the engine's Lazy SMP,
//! docs/engine.md "Threads (Lazy SMP)"), but only when, with its slot taken, every other slot is
//! free and nobody waits for one ([`search_threads`]); otherwise, and always for a game with a
//! human, one thread. The extra threads are started by the engine from the search thread, so
//! they run at its nice value (Linux threads inherit it), and are joined before the search
//! returns. They are not slots: a live search that arrives meanwhile takes a slot as usual and
//! shares the cores with them for the rest of that one search (one position of an analysis, one
//! bot move). An analysis searched with threads is no longer reproducible run to run (the
//! threads race), which is why this is off by default.
//!
//! This module only counts threads: it never takes a slot or starts a thread.

use super::slots::Slots;

/// The threads of a search that may use idle cores (an analysis, a bot-vs-bot move), once it
/// holds its slot: `idle_threads` (at most the machine's cores) when every other one of the
/// `total` slots is free, which also means that no search waits (a slot is never free while one
/// does); else 1.
pub(super) fn search_threads(slots: &Slots, total: usize, idle_threads: usize) -> usize {
    if idle_threads <= 1 || slots.free() + 1 < total {
        return 1;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    idle_threads.min(cores).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bot::Owner;

    /// Idle cores are lent only while no other search holds a slot or waits for one, and never
    /// when `search.idle_threads` is 1.
    #[test]
    fn a_search_gets_threads_only_when_the_other_slots_are_free() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let slots = Slots::new(3, 2);
        let owner: Owner = "a".into();
        let _ours = slots.try_idle(&owner).expect("a free slot");
        assert_eq!(search_threads(&slots, 3, 4), 4.min(cores));
        assert_eq!(search_threads(&slots, 3, 1), 1, "off");
        let other = slots.try_idle(&"b".into()).expect("a free slot");
        assert_eq!(search_threads(&slots, 3, 4), 1, "another search runs");
        drop(other);
        assert_eq!(search_threads(&slots, 3, 4), 4.min(cores));
        let single = Slots::new(1, 1);
        let _only = single.try_idle(&owner).expect("a free slot");
        assert_eq!(search_threads(&single, 1, 2), 2.min(cores));
    }
}
