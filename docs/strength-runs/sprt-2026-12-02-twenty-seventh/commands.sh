# The twenty-seventh session's self-play runs (2026-12-02). Each at nice -n -10, two games at a
# time, on an otherwise idle machine.

# 1. Late move reductions by the ordering's gap (gap/gap-lmr.patch on d3911e2; GAP holds
#    caro-match and pbrain-caro built in release from the patched tree). gap_lmr 64 against 0,
#    the same binary. Stopped by hand after 560 games (LLR -1.59); gap/summary.json is
#    `caro-match score --json` of its games.
$GAP/caro-match play --engine1 "$GAP/pbrain-caro --search gap_lmr=64" --engine2 $GAP/pbrain-caro \
    --name1 gap64 --name2 main --rule freestyle --size 15 --turn-ms 200 --games 2000 \
    --openings data/openings/freestyle15-v3.txt --concurrency 2 --sprt 0,20,0.05,0.05 \
    --seed 271 --out gap -q

# 2. The search's numbers of f841946 (main's defaults) against those before them, under caro
#    (exact five), owed since the twenty-sixth session tuned them on books three quarters
#    freestyle. NEW holds caro-match and pbrain-caro built in release from d3911e2; the numbers
#    before are --level-numbers (those of 2026-11-27) with policy 16, which is what 7fc321a
#    played (bench 105,287 nodes either way). Stopped by itself at H1 after 245 games;
#    caro/summary.json is the run's own.
$NEW/caro-match play --engine1 $NEW/pbrain-caro \
    --engine2 "$NEW/pbrain-caro --level-numbers --search policy=16" \
    --name1 spsa2 --name2 before --rule caro --size 15 --turn-ms 200 --games 2000 \
    --openings data/openings/caro15.txt --concurrency 2 --sprt 0,20,0.05,0.05 \
    --seed 272 --out caro -q
