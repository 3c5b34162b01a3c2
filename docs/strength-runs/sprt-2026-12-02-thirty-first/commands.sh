# The thirty-first session's self-play run of `keep` (2026-12-02). BIN holds caro-match and
# pbrain-caro built in release from 26b08a5 (main, where keep is a switch, off by default).
# nice -n -10, two games at a time, on an otherwise idle machine. Stopped by hand after 823
# games (LLR 0.76) to free the machine for the Rapfi cells; keep/summary.json is
# `caro-match score --json` of its games.
$BIN/caro-match play --engine1 "$BIN/pbrain-caro --search keep=1" --engine2 $BIN/pbrain-caro \
    --name1 keep --name2 base --rule freestyle --size 15 --turn-ms 200 --games 2000 \
    --openings data/openings/freestyle15-v3.txt --concurrency 2 --sprt 0,20,0.05,0.05 \
    --seed 285 --out keep -q

# Pooled with the twenty-eighth session's run of the same switch (seed 281, 491 games):
$BIN/caro-match score --engine keep \
    docs/strength-runs/sprt-2026-12-02-twenty-eighth/keep/games.jsonl.gz \
    docs/strength-runs/sprt-2026-12-02-thirty-first/keep/games.jsonl.gz --sprt 0,20,0.05,0.05
