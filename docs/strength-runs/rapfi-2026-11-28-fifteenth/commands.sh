#!/bin/sh
# Rapfi run to run, and the whole turn again (2026-11-28, fifteenth session; docs/strength.md).
# Every run: 64 games a seed, 200 ms a move, v3 book, two matches side by side on an otherwise idle
# 2-core machine, caro-match's default tolerance (100 ms).
#   strong-seedN, strong-run2-seedN: main's engine (pbrain-caro of ebe0b24, the eleventh session's base)
#   tB-seed3/4: the fourteenth session's tB build (the whole turn, margin max(turn / 20, 15 ms))
#   final-seedN, final-run2-seedN: whole-turn-margin.patch on f420b10 plus threats::win_cells_after
#   The second runs were played side by side: final-run2 in one lane, strong-run2 in the other,
#   seed by seed.
# W: a build's directory; RAPFI: the pbrain wrapper of docs/strength.md.
set -e
for s in 1 2 3 4; do
  nice -n -10 caro-match play --engine1 $W/pbrain-caro --engine2 $RAPFI --name1 pbrain-caro --name2 rapfi \
    --rule freestyle --turn-ms 200 --games 64 \
    --openings data/openings/freestyle15-v3.txt --seed $s --out $OUT-seed$s -q
done

# The whole turn and the margin in self-play (sprt-whole-margin-selfplay.games.jsonl; stopped after
# 609 games), the build of final-* without win_cells_after against main:
#   caro-match play --engine1 $WT/pbrain-caro --engine2 $MAIN/pbrain-caro --name1 wt --name2 main \
#     --rule freestyle --size 15 --turn-ms 200 --games 2000 --openings data/openings/freestyle15-v3.txt \
#     --concurrency 2 --sprt 0,20,0.05,0.05 --seed 151 --out sprt-wt -q
