//! The transposition table (chessprogramming.org/Transposition_Table): a fixed power-of-two
//! array of entries indexed by the Zobrist hash, allocated once per [`Engine`](super::Engine) and
//! never in the search. Each entry keeps the full hash to reject collisions, the best move, the
//! score with its [`Bound`], the depth, and the search generation; replacement prefers deeper
//! entries of the current search and always overwrites stale ones (depth-preferred with ageing).
//!
//! A table outlives its searches: an engine keeps it from move to move, and the server's search
//! slots keep theirs from game to game. Two things make that safe and useful:
//!
//! - **Ageing** (chessprogramming.org/Transposition_Table, "Replacement Strategies" and the
//!   aging it describes): [`Table::new_search`] starts a new generation, and an entry of an
//!   earlier one loses its replacement priority (any store may overwrite it, however deep it
//!   is), while it can still be probed and used until then. So the previous move's results help
//!   the next one, and a table full of an old game's deep entries does not crowd out the
//!   current search's shallower ones. The generation has six bits: an entry 64 searches old
//!   looks current again, which only makes it harder to replace (Stockfish lives with five).
//! - **A salt per game kind** ([`Table::set_salt`]): the Zobrist hash depends only on the
//!   stones, so the same stones under another rule or on another board size would hit each
//!   other's entries (whose scores and padded move indices mean something else there). The salt
//!   is mixed into the stored key, not the index, so the slots a search uses, and its node
//!   counts, are the same with or without it.
//!
//! **Shared between threads** (Lazy SMP, docs/engine.md "Threads"): every search thread probes
//! and stores into the same table with no lock. An entry is two 64-bit words, written and read
//! with relaxed atomic operations (plain moves on x86-64, so one thread pays nothing for it):
//! the packed data, and the stored key XOR-ed with that data (R. Hyatt and T. Mann, "A lock-less
//! transposition table implementation for parallel search chess engines", ICGA Journal 25(1),
//! 2002; chessprogramming.org/Shared_Hash_Table). A probe that reads one word of one store and
//! the other of another sees a key that matches nothing, so a torn entry is a miss, never a
//! wrong score or move for the position probed. The search checks the move against the board
//! all the same ([`Entry::mv`] of an occupied cell is ignored: `negamax`'s verify-on-read).

use std::sync::atomic::{AtomicU64, Ordering};

use super::Score;

/// What a stored score says about the true value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The score is exact (a PV node).
    Exact,
    /// The true value is at least the score (a fail-high).
    Lower,
    /// The true value is at most the score (a fail-low).
    Upper,
}

/// One stored search result.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The full hash, to reject index collisions.
    pub key: u64,
    /// Score, with wins relative to this node (see [`to_tt`]).
    pub score: i32,
    /// Best move as a padded-array index, `u16::MAX` for none.
    pub mv: u16,
    /// Remaining depth the score was searched to.
    pub depth: u8,
    /// Bound in the low two bits, generation above.
    pub flags: u8,
}

/// One slot: the data packed into a word ([`pack`]) and the stored key XOR-ed with it. All
/// zeros is the empty entry (the move is stored inverted, so zero bits are "no move").
#[derive(Default)]
struct Slot {
    check: AtomicU64,
    data: AtomicU64,
}

/// An entry's data as one word: score, inverted move, depth, flags.
#[inline]
fn pack(e: &Entry) -> u64 {
    e.score as u32 as u64
        | u64::from(!e.mv) << 32
        | u64::from(e.depth) << 48
        | u64::from(e.flags) << 56
}

/// The inverse of [`pack`], with the stored key.
#[inline]
fn unpack(key: u64, data: u64) -> Entry {
    Entry {
        key,
        score: data as u32 as i32,
        mv: !((data >> 32) as u16),
        depth: (data >> 48) as u8,
        flags: (data >> 56) as u8,
    }
}

impl Slot {
    /// The slot's entry as it reads now (a torn read gives a key that matches nothing).
    #[inline]
    fn load(&self) -> Entry {
        let data = self.data.load(Ordering::Relaxed);
        let check = self.check.load(Ordering::Relaxed);
        unpack(check ^ data, data)
    }

    #[inline]
    fn save(&self, e: &Entry) {
        let data = pack(e);
        self.check.store(e.key ^ data, Ordering::Relaxed);
        self.data.store(data, Ordering::Relaxed);
    }
}

/// A fixed-size table of [`Entry`], shareable between search threads (`&Table` is enough to
/// probe and store; see the module docs).
pub struct Table {
    slots: Box<[Slot]>,
    mask: usize,
    generation: u8,
    /// Mixed into stored keys: the game kind of the current search (see the module docs).
    salt: u64,
}

/// `len` empty slots, every one written once. Zeroed memory would do (all zeros is the empty
/// entry), but the allocator hands a large zeroed block over as pages that are mapped only
/// when first touched, and those faults then fell in the first searches that used them: a
/// fresh engine's search to depth 10 took 12% longer (`pbrain-caro bench`, which searches each
/// position with a new engine). The stores are atomic so that the compiler cannot turn the loop
/// back into a zeroed allocation.
fn empty_slots(len: usize) -> Box<[Slot]> {
    let slots: Box<[Slot]> = (0..len).map(|_| Slot::default()).collect();
    for slot in slots.iter() {
        slot.check.store(0, Ordering::Relaxed);
    }
    slots
}

impl Table {
    /// A table of about `mb` MiB (rounded down to a power of two entries, at least 1024).
    pub fn new(mb: usize) -> Table {
        let want = (mb.max(1) << 20) / std::mem::size_of::<Slot>();
        let len = (want.max(1024) + 1).next_power_of_two() / 2;
        Table {
            slots: empty_slots(len),
            mask: len - 1,
            generation: 0,
            salt: 0,
        }
    }

    /// Empties the table.
    pub fn clear(&mut self) {
        for slot in self.slots.iter_mut() {
            *slot = Slot::default();
        }
        self.generation = 0;
    }

    /// Starts a new search: older entries become replaceable.
    pub fn new_search(&mut self) {
        self.generation = (self.generation + 1) & 0x3F;
    }

    /// Sets the salt of the game kind searched next (a rule variant, win length and board
    /// size): entries stored under another salt are never found.
    pub fn set_salt(&mut self, salt: u64) {
        self.salt = salt;
    }

    /// The entry for `key`, if stored.
    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let e = self.slots[key as usize & self.mask].load();
        (e.key == key ^ self.salt && e.flags != 0).then_some(e)
    }

    /// Starts loading the slot of `key` into the cache, so that a [`Table::probe`] of it soon
    /// after (a child node's, once its move is played) does not wait for memory: the probe's
    /// cache miss was a tenth of the search's time.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let slot: *const Slot = &self.slots[key as usize & self.mask];
            // SAFETY: a prefetch is only a hint to the cache; it reads nothing and cannot fault.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(slot as *const i8) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// Stores a result, keeping a deeper entry of the current search for another position.
    /// Another thread may store into the same slot at the same time: one of the two stores
    /// wins, or the slot ends torn and reads as empty (see the module docs).
    #[inline]
    pub fn store(&self, key: u64, depth: u8, score: i32, bound: Bound, mv: u16) {
        let slot = &self.slots[key as usize & self.mask];
        let old = slot.load();
        let key = key ^ self.salt;
        let stale = old.flags >> 2 != self.generation;
        if old.key == key || stale || depth >= old.depth || old.flags == 0 {
            let mv = if mv == u16::MAX && old.key == key {
                old.mv
            } else {
                mv
            };
            let b = match bound {
                Bound::Exact => 1,
                Bound::Lower => 2,
                Bound::Upper => 3,
            };
            slot.save(&Entry {
                key,
                score,
                mv,
                depth,
                flags: b | (self.generation << 2),
            });
        }
    }
}

impl Entry {
    /// The stored bound.
    #[inline]
    pub fn bound(&self) -> Bound {
        match self.flags & 3 {
            1 => Bound::Exact,
            2 => Bound::Lower,
            _ => Bound::Upper,
        }
    }
}

/// A score as stored: wins measured from this node rather than from the root, so the same entry
/// is right at any ply (chessprogramming.org/Mate_Scores).
#[inline]
pub fn to_tt(score: Score, ply: usize) -> i32 {
    if score.is_win() {
        (score + ply as i32).get()
    } else if score.is_loss() {
        (score - ply as i32).get()
    } else {
        score.get()
    }
}

/// The inverse of [`to_tt`].
#[inline]
pub fn from_tt(score: i32, ply: usize) -> Score {
    let score = Score::new(score);
    if score.is_win() {
        score - ply as i32
    } else if score.is_loss() {
        score + ply as i32
    } else {
        score
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two keys that share a slot of a 1 MiB table.
    const A: u64 = 0x1234_5678_0000_0042;
    const B: u64 = 0x9876_5432_0000_0042;

    #[test]
    fn a_deeper_entry_of_the_current_search_is_kept() {
        let mut t = Table::new(1);
        t.new_search();
        t.store(A, 9, 10, Bound::Exact, 1);
        t.store(B, 3, 20, Bound::Exact, 2);
        assert_eq!(t.probe(A).map(|e| e.depth), Some(9));
        assert!(t.probe(B).is_none());
    }

    /// Ageing: an entry of an earlier search is still found, but loses its priority to any
    /// entry of the current one, however shallow.
    #[test]
    fn stale_entries_are_found_and_replaced() {
        let mut t = Table::new(1);
        t.new_search();
        t.store(A, 9, 10, Bound::Lower, 1);
        t.new_search();
        let e = t.probe(A).expect("an old entry is still useful");
        assert_eq!(
            (e.depth, e.score, e.bound(), e.mv),
            (9, 10, Bound::Lower, 1)
        );
        t.store(B, 1, 20, Bound::Upper, 2);
        assert!(t.probe(A).is_none());
        assert_eq!(t.probe(B).map(|e| e.depth), Some(1));
    }

    /// The same stones under another rule or board size are another position.
    #[test]
    fn entries_of_another_salt_are_not_found() {
        let mut t = Table::new(1);
        t.set_salt(7);
        t.store(A, 5, 10, Bound::Exact, 1);
        assert!(t.probe(A).is_some());
        t.set_salt(8);
        assert!(t.probe(A).is_none());
        t.set_salt(7);
        assert!(t.probe(A).is_some());
    }

    /// All-zero memory is the empty entry: no move, no bound (never found by a probe).
    #[test]
    fn zeroed_slots_are_empty() {
        let e = Slot::default().load();
        assert_eq!((e.key, e.mv, e.flags), (0, u16::MAX, 0));
        assert!(Table::new(1).probe(0).is_none());
    }

    #[test]
    fn an_entry_round_trips_through_its_words() {
        let t = Table::new(1);
        t.store(A, 200, -999_987, Bound::Lower, 4321);
        let e = t.probe(A).unwrap();
        assert_eq!(
            (e.key, e.depth, e.score, e.bound(), e.mv),
            (A, 200, -999_987, Bound::Lower, 4321)
        );
        t.store(A, 201, 5, Bound::Upper, u16::MAX);
        let e = t.probe(A).unwrap();
        assert_eq!(
            (e.depth, e.score, e.mv),
            (201, 5, 4321),
            "no move keeps the old one"
        );
    }

    /// Lazy SMP's threads store into and probe one table without a lock. Here four threads
    /// hammer a small table (every key shares its slots with thousands of others) with entries
    /// whose fields are all functions of the key, while probing: every entry a probe returns
    /// must be one that was stored for that key, never a mix of two stores (the XOR check
    /// turns a torn slot into a miss). Bounded: a fixed number of operations per thread.
    #[test]
    fn concurrent_stores_never_give_a_torn_entry() {
        // A key and the data that belongs with it.
        fn key(i: u64) -> u64 {
            i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 7)
        }
        fn fields(k: u64) -> (u8, i32, u16) {
            (
                (k >> 13) as u8 | 1,
                (k >> 20) as i32 % 100_000,
                (k >> 40) as u16 % 400,
            )
        }
        let t = Table::new(1);
        let found = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|scope| {
            for thread in 0..4u64 {
                let (t, found) = (&t, &found);
                scope.spawn(move || {
                    let mut seen = 0;
                    for n in 0..400_000u64 {
                        // Keys from a small pool, so that threads collide on the same keys and
                        // slots all the time.
                        let k = key((n * 7 + thread * 13) % 300_000);
                        let (depth, score, mv) = fields(k);
                        t.store(k, depth, score, Bound::Exact, mv);
                        let probe = key((n * 11 + thread) % 300_000);
                        if let Some(e) = t.probe(probe) {
                            assert_eq!(e.key, probe);
                            assert_eq!((e.depth, e.score, e.mv), fields(probe), "torn entry");
                            seen += 1;
                        }
                    }
                    found.fetch_add(seen, Ordering::Relaxed);
                });
            }
        });
        // The test means something only if probes did find entries.
        assert!(found.load(Ordering::Relaxed) > 1000);
    }
}
