# The thirty-second session's self-play run of `keep` (2026-12-02, 22:29-23:32). BIN holds
# caro-match and pbrain-caro built in release from 26b08a5 (main, where keep was a switch, off
# by default). nice -n -10, two games at a time, on an otherwise idle machine (the clones of
# AIWine and Piskvork, outside the repository, were fetched beside its first minutes; nothing
# was built). It stopped by itself: H1 accepted after 930 games (LLR 2.965); the 931st game's
# pair was unfinished. keep/summary.json is the run's own.
$BIN/caro-match play --engine1 "$BIN/pbrain-caro --search keep=1" --engine2 $BIN/pbrain-caro \
    --name1 keep --name2 base --rule freestyle --size 15 --turn-ms 200 --games 3000 \
    --openings data/openings/freestyle15-v3.txt --concurrency 2 --sprt 0,20,0.05,0.05 \
    --seed 286 --out keep -q

# Pooled with the twenty-eighth (seed 281, 491 games) and thirty-first (seed 285, 823 games)
# sessions' runs of the same switch, the same configuration (the decision rule the
# thirty-second session set before this run's end: keep is accepted when the pooled LLR
# reaches 2.944):
$BIN/caro-match score --engine keep \
    docs/strength-runs/sprt-2026-12-02-twenty-eighth/keep/games.jsonl.gz \
    docs/strength-runs/sprt-2026-12-02-thirty-first/keep/games.jsonl.gz \
    docs/strength-runs/sprt-2026-12-02-thirty-second/keep/games.jsonl.gz --sprt 0,20,0.05,0.05
