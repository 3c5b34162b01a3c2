#!/bin/sh
# Four knobs of the search measured against Rapfi directly (2026-11-28, twelfth session): each a build of
# ebe0b24 with one change, 64 games with --seed 1 and 64 with --seed 2 (the openings of main's engine's
# runs in ../field-2026-11-28-strong/rapfi*.games.jsonl), 200 ms a move, v3 book, two matches side by side.
#   v3vct2:   crates/engine/src/search/params.rs, vct_sixteenths 5 -> 2 (the root's threat-space share)
#   v5lmp:    lmp_base 1 -> 3, lmp_quarters 4 -> 8 (move-count pruning from 3 + 2 depth^2, as before the SPSA run)
#   v4def:    defence 13 -> 20 (the opponent's value of a cell counts whole in the ordering)
#   v1verify: verify.patch (bd792f5's check of the answer ported, with verify_sixteenths 3 and vct_sixteenths 3)
# B: the directory of a variant's pbrain-caro; RAPFI: the pbrain wrapper of docs/strength.md.
set -e
for s in 1 2; do
  nice -n -10 caro-match play --engine1 $B/pbrain-caro --engine2 $RAPFI --name1 pbrain-caro --name2 rapfi --rule freestyle --turn-ms 200 --games 64 --openings data/openings/freestyle15-v3.txt --seed $s --out $OUT-seed$s -q
done
