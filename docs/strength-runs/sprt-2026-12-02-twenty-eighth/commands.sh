# The twenty-eighth session's self-play runs (2026-12-02), each a patch on db5f2df (main's
# engine, the same as d3911e2's). Each run at nice -n -10, two games at a time, on an otherwise
# idle machine unless its row in docs/engine.md ("Changes accepted by SPRT") says otherwise.
# KEEP, TURN and TAC hold caro-match and pbrain-caro built in release from the patched trees;
# MAIN holds pbrain-caro built in release from d3911e2. Each summary.json is
# `caro-match score --json` of the run's games.

# 1. The cell values' first quiet move kept first (keep/keep.patch): keep 1 against 0, the
#    same binary. Stopped by hand after 491 games (LLR 0.06).
$KEEP/caro-match play --engine1 "$KEEP/pbrain-caro --search keep=1" --engine2 $KEEP/pbrain-caro \
    --name1 keep --name2 base --rule freestyle --size 15 --turn-ms 200 --games 2000 \
    --openings data/openings/freestyle15-v3.txt --concurrency 2 --sprt 0,20,0.05,0.05 \
    --seed 281 --out keep -q

# 2. Under a per-move limit, every iteration started (turn/whole-turn.patch) against main's
#    engine. Stopped by hand after 113 games (LLR 0.23).
$TURN/caro-match play --engine1 $TURN/pbrain-caro --engine2 $MAIN/pbrain-caro \
    --name1 fullturn --name2 base --rule freestyle --size 15 --turn-ms 200 --games 2000 \
    --openings data/openings/freestyle15-v3.txt --concurrency 2 --sprt 0,20,0.05,0.05 \
    --seed 282 --out turn -q

# 3. A move tactical by its cell values alone (by-value/by-value.patch): by_value 1 against 0,
#    the same binary. Stopped by hand after 387 games (LLR -0.67).
$TAC/caro-match play --engine1 "$TAC/pbrain-caro --search by_value=1" --engine2 $TAC/pbrain-caro \
    --name1 byvalue --name2 base --rule freestyle --size 15 --turn-ms 200 --games 2000 \
    --openings data/openings/freestyle15-v3.txt --concurrency 2 --sprt 0,20,0.05,0.05 \
    --seed 283 --out by-value -q

# 4. SPSA over the sixteen search numbers with by_value 1 as the start (the patch with
#    `by_value: 1` in SearchParams::default() and its SEARCH_FIELDS entry taken out, so it is
#    not tuned: by-value/spsa-start.patch): 1,200 pairs asked at 40 ms a move, seed 284;
#    stopped by hand after 500-700 pairs (the last progress line at 500), when no number had
#    moved beyond its perturbation, to free the machine for the Rapfi screen (by-value/spsa.log).
cargo run --release -p caro-engine --example spsa -- spsa-search.txt 1200 40 2 284 0.005 search \
    2> by-value/spsa.log
