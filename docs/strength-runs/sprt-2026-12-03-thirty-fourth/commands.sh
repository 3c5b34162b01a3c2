# The thirty-fourth session's runs (2026-12-03), from the repository at 73e8fa7 with
# experiments.patch applied (new search numbers, each 0 or 16 by default so that the default
# search is main's, `bench` 82,112): `lmp_quiet` (move-count pruning counts the quiet moves
# only), `keep` 2 (the two quiet moves best by the cell values lifted, not one), `hist` (the
# history and killer bonuses' weight in sixteenths; on main since as `bonuses`) and `full`
# (under a per-move limit alone never stop between iterations early; built, not played: the
# twenty-eighth session's "whole-turn" row measured the same idea). EXP holds pbrain-caro of
# that tree built in release (`pbrain-exp` below) and caro-match of 6dff62e.
R=docs/strength-runs/sprt-2026-12-03-thirty-fourth

# 1. SPSA over the search's numbers with `keep` on (the default since 6dff62e), the twenty-sixth
# session's command with a new seed; stopped by hand after 750 of 1,600 pairs (1,167 s): no
# number had moved beyond its perturbation (spsa/spsa.log, spsa/spsa-search-keep.txt).
cargo run --release -p caro-engine --example spsa -- spsa-search-keep.txt 1600 40 2 341 0.005 search \
    2> spsa.log

# 2. Short screens at 40 ms a move (a 10 ms budget: the 30 ms margin), each switch against
# the same binary's default, v3 book, two games at a time, one after another (stc/):
seed=341
for cand in lmp_quiet=1 keep=2 hist=8 hist=0; do
  seed=$((seed+1)); name=${cand/=/}
  $EXP/caro-match play --engine1 "$EXP/pbrain-exp --search $cand" --engine2 $EXP/pbrain-exp \
    --name1 $name --name2 base --rule freestyle --size 15 --turn-ms 40 --games 600 \
    --openings data/openings/freestyle15-v3.txt --concurrency 2 --sprt 0,20,0.05,0.05 \
    --seed $seed --out stc/$name -q
done
# hist=0 was stopped by hand after 358 games to give the machine to the run below.

# 3. The screen's winner at 200 ms a move, the self-play SPRT of docs/engine.md (sprt/):
$EXP/caro-match play --engine1 "$EXP/pbrain-exp --search hist=8" --engine2 $EXP/pbrain-exp \
    --name1 hist8 --name2 base --rule freestyle --size 15 --turn-ms 200 --games 3000 \
    --openings data/openings/freestyle15-v3.txt --concurrency 2 --sprt 0,20,0.05,0.05 \
    --seed 287 --out sprt -q
# H1 after 349 games. Main's `--search bonuses=8` is the same search: `pbrain-caro bench`
# reads 84,966 nodes with either (54,665 + 10,814 + 6,211 + 13,276).

# Score the records again with:
$EXP/caro-match score $R/sprt/games.jsonl.gz --sprt 0,20,0.05,0.05
for n in lmp_quiet1 keep2 hist8 hist0; do $EXP/caro-match score $R/stc/$n.games.jsonl.gz --sprt 0,20,0.05,0.05; done
