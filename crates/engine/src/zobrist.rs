//! Zobrist hashing (Zobrist 1970; chessprogramming.org/Zobrist_Hashing): one random 64-bit key
//! per (cell, player), XORed in when a stone is placed and out when it is removed, so the hash of
//! a position does not depend on the order its stones were played in.
//!
//! The keys are fixed at compile time from a SplitMix64 stream so that hashes are the same in
//! every process (the server, `pbrain-caro` and tests agree).

use crate::rules::MAX_SIZE;
use crate::Player;

const CELLS: usize = MAX_SIZE as usize * MAX_SIZE as usize;

/// SplitMix64 (Steele, Lea, Flood 2014), usable in a `const` context.
const fn splitmix64(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (state, z ^ (z >> 31))
}

const fn make_keys() -> [[u64; CELLS]; 2] {
    let mut keys = [[0u64; CELLS]; 2];
    let mut state = 0x00C0_FFEE_CA20_u64;
    let mut p = 0;
    while p < 2 {
        let mut i = 0;
        while i < CELLS {
            let (next, value) = splitmix64(state);
            state = next;
            keys[p][i] = value;
            i += 1;
        }
        p += 1;
    }
    keys
}

static KEYS: [[u64; CELLS]; 2] = make_keys();

/// The key of `player`'s stone on cell (`x`, `y`).
#[inline]
pub fn key(player: Player, x: u8, y: u8) -> u64 {
    KEYS[player.index()][y as usize * MAX_SIZE as usize + x as usize]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn keys_are_distinct_and_nonzero() {
        let all: HashSet<u64> = KEYS.iter().flatten().copied().collect();
        assert_eq!(all.len(), 2 * CELLS);
        assert!(!all.contains(&0));
    }
}
