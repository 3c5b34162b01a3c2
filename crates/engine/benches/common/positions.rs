// Fixed midgame positions shared by `pbrain-caro bench`, `benches/search.rs` and
// `examples/branching.rs` (each pulls this file in with `include!`, so the three measure the same
// positions). Taken from `tests/data/positions/` in the `.pos` format described there: real
// engine games on 15x15, two freestyle and two Vietnamese caro (rule 9) positions, from 10 to 52
// stones. Changing this list changes every bench node count: do it in a commit of its own.

/// Depth of the fixed-depth node count (`pbrain-caro bench`, the `bench_set` benchmark).
pub const BENCH_DEPTH: u8 = 8;

/// The bench positions, one `.pos` line each.
pub const BENCH_POSITIONS: &str = "\
match_rapfi_vs_pela_500ms-g0-s10 | 0 | black | h8 i10 i11 j10 k9 | g9 h12 i8 k11 l8 | j9 | MATE; +M13
match_rapfi_vs_aiwine_500ms-g4-s14 | 0 | black | e7 h8 i9 i11 j7 j10 k9 | f7 g7 h7 i7 i8 j9 l8 | k11 | MATE; +M15
match_pela_selfplay_caro9_100ms-g12-s25 | 9 | white | d6 e6 f7 f9 g8 g11 h8 i7 i10 j10 k10 k12 l12 | e7 f5 f6 f8 f10 g7 h7 h11 i9 j9 j11 l10 | d5/h9 | DEFEND
match_pela_selfplay_caro9_100ms-g8-s52 | 9 | black | d5 e5 e6 f5 f9 f12 g2 g7 g9 h4 h6 h8 i3 i5 i6 i11 j3 j9 j12 k7 k8 k13 l7 m4 n6 o8 | d4 d6 e4 f4 f6 f8 g3 g4 g5 g11 h7 h10 h11 i4 i7 i9 j4 j7 k4 k9 l3 l5 l6 l8 m6 n7 | b4/c4 | DEFEND
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

/// The game and ply part of a position id (`g0-s10` of `match_x_vs_y_500ms-g0-s10`), enough to
/// tell the bench positions apart in tables and benchmark names.
pub fn short_id(id: &str) -> &str {
    id.rsplit_once('_')
        .and_then(|(_, tail)| tail.split_once('-'))
        .map_or(id, |(_, rest)| rest)
}
