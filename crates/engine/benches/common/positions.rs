// Fixed midgame positions shared by `pbrain-caro bench`, `benches/search.rs` and
// `examples/branching.rs` (each pulls this file in with `include!`, so the three measure the same
// positions). Taken from `tests/data/positions/midgame15.pos` in the `.pos` format described
// there: quiet positions from engine self-play after the match openings, two freestyle and two
// Vietnamese caro (rule 9), 20 to 26 stones, no forced result known. (Until the threat-space
// search solved them at once, two of the four were forced wins and two forced defences, which
// measured the threat solver rather than the search.) Changing this list changes every bench
// node count: do it in a commit of its own.

/// Depth of the fixed-depth node count (`pbrain-caro bench`, the `bench_set` benchmark).
pub const BENCH_DEPTH: u8 = 10;

/// The bench positions, one `.pos` line each.
pub const BENCH_POSITIONS: &str = "\
selfplay_freestyle-o4-s20 | 0 | black | g9 g8 g10 f11 g13 b8 e10 d11 g12 h13 | e11 d10 g11 f12 c9 e12 d9 f9 h10 i14 | - | QUIET
selfplay_freestyle-o18-s26 | 0 | black | h8 i6 i5 j8 j7 j9 e7 f8 g9 h9 e10 k6 e6 | g7 h6 i7 h7 k8 j6 j11 g8 h10 f9 g10 l5 e8 | - | QUIET
selfplay_caro-o1-s23 | 9 | white | g8 e5 f6 e8 i4 g7 e7 h8 h4 g4 e6 f5 | f7 g6 h5 j3 f8 d4 e4 j10 g5 k4 e10 | - | QUIET
selfplay_caro-o21-s23 | 9 | white | h9 j9 g11 f9 h8 e10 g6 j13 h13 i11 k10 l11 | g10 g9 h11 f10 i12 g8 h7 i9 i10 j10 k13 | - | QUIET
";

/// The bench positions as boards, with their ids.
pub fn bench_boards() -> Vec<(String, caro_engine::Board)> {
    caro_engine::positions::parse(BENCH_POSITIONS)
        .expect("the bench positions parse")
        .into_iter()
        .map(|p| {
            let board = p.board().expect("the bench positions are legal");
            (p.id, board)
        })
        .collect()
}

/// The short part of a position id (`freestyle-o4-s20` of `selfplay_freestyle-o4-s20`, `g0-s10`
/// of `match_x_vs_y_500ms-g0-s10`), enough to tell the bench positions apart in tables and
/// benchmark names.
pub fn short_id(id: &str) -> &str {
    if let Some(rest) = id.strip_prefix("selfplay_") {
        return rest;
    }
    id.rsplit_once('_')
        .and_then(|(_, tail)| tail.split_once('-'))
        .map_or(id, |(_, rest)| rest)
}
