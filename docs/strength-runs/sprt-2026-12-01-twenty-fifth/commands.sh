# The twenty-fifth session's self-play SPRTs (2026-12-01), from the repository. BASE holds
# caro-match and pbrain-caro built in release from main at f330036 (policy 16 by default);
# NULL the same tree with ../rapfi-2026-11-30-twenty-fourth/null-place.patch applied; CUT the
# same tree with cut/cut-node.patch applied (a new search number, cut_lmr, 0 by default, which
# searches exactly as main: bench 105,287 nodes at depth 10).
S=docs/strength-runs/sprt-2026-12-01-twenty-fifth

# The learnt place terms read by the side to move below a null move: H0 after 350 games.
$BASE/caro-match play --engine1 $NULL/pbrain-caro --engine2 $BASE/pbrain-caro \
    --rule freestyle --size 15 --turn-ms 200 --games 2000 \
    --openings data/openings/freestyle15-v3.txt --concurrency 2 --sprt 0,20,0.05,0.05 \
    --seed 251 --out null -q

# Late move reductions a ply heavier at expected cut nodes (cut_lmr=1), the same binary with
# cut_lmr=0 as the base: H0 after 765 games.
$BASE/caro-match play --engine1 "$CUT/pbrain-caro --search cut_lmr=1" --engine2 $CUT/pbrain-caro \
    --name1 cut1 --name2 cut0 --rule freestyle --size 15 --turn-ms 200 --games 2000 \
    --openings data/openings/freestyle15-v3.txt --concurrency 2 --sprt 0,20,0.05,0.05 \
    --seed 252 --out cut -q

# Either record scores again with:
$BASE/caro-match score $S/null/games.jsonl.gz --sprt 0,20,0.05,0.05
