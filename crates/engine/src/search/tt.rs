//! The transposition table (chessprogramming.org/Transposition_Table): a fixed power-of-two
//! array of entries indexed by the Zobrist hash, allocated once per [`Engine`](super::Engine) and
//! never in the search. Each entry keeps the full hash to reject collisions, the best move, the
//! score with its [`Bound`], the depth, and the search generation; replacement prefers deeper
//! entries of the current search and always overwrites stale ones (depth-preferred with ageing).

use super::{Score, WIN};

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

const EMPTY: Entry = Entry {
    key: 0,
    score: 0,
    mv: u16::MAX,
    depth: 0,
    flags: 0,
};

/// A fixed-size table of [`Entry`].
pub struct Table {
    entries: Vec<Entry>,
    mask: usize,
    generation: u8,
}

impl Table {
    /// A table of about `mb` MiB (rounded down to a power of two entries, at least 1024).
    pub fn new(mb: usize) -> Table {
        let want = (mb.max(1) << 20) / std::mem::size_of::<Entry>();
        let len = (want.max(1024) + 1).next_power_of_two() / 2;
        Table {
            entries: vec![EMPTY; len],
            mask: len - 1,
            generation: 0,
        }
    }

    /// Empties the table.
    pub fn clear(&mut self) {
        self.entries.iter_mut().for_each(|e| *e = EMPTY);
        self.generation = 0;
    }

    /// Starts a new search: older entries become replaceable.
    pub fn new_search(&mut self) {
        self.generation = (self.generation + 1) & 0x3F;
    }

    /// The entry for `key`, if stored.
    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let e = self.entries[key as usize & self.mask];
        (e.key == key && e.flags != 0).then_some(e)
    }

    /// Starts loading the slot of `key` into the cache, so that a [`Table::probe`] of it soon
    /// after (a child node's, once its move is played) does not wait for memory: the probe's
    /// cache miss was a tenth of the search's time.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let slot = self.entries[key as usize & self.mask..].as_ptr();
            // SAFETY: a prefetch is only a hint to the cache; it reads nothing and cannot fault.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(slot as *const i8) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// Stores a result, keeping a deeper entry of the current search for another position.
    #[inline]
    pub fn store(&mut self, key: u64, depth: u8, score: i32, bound: Bound, mv: u16) {
        let slot = &mut self.entries[key as usize & self.mask];
        let stale = slot.flags >> 2 != self.generation;
        if slot.key == key || stale || depth >= slot.depth || slot.flags == 0 {
            let mv = if mv == u16::MAX && slot.key == key {
                slot.mv
            } else {
                mv
            };
            let b = match bound {
                Bound::Exact => 1,
                Bound::Lower => 2,
                Bound::Upper => 3,
            };
            *slot = Entry {
                key,
                score,
                mv,
                depth,
                flags: b | (self.generation << 2),
            };
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
    if score > WIN - 1000 {
        score + ply as i32
    } else if score < -(WIN - 1000) {
        score - ply as i32
    } else {
        score
    }
}

/// The inverse of [`to_tt`].
#[inline]
pub fn from_tt(score: i32, ply: usize) -> Score {
    if score > WIN - 1000 {
        score - ply as i32
    } else if score < -(WIN - 1000) {
        score + ply as i32
    } else {
        score
    }
}
