#!/bin/sh
# The eighteenth session's runs (2026-11-29), as they were run. Not a script to run blind: the
# binaries are builds outside the repo (see docs/strength.md, "The strong open two").
#   m16: pbrain-caro of ea4d0ae (main's engine; main's head ec90ea3 plays the same).
#   f2s: main plus the line level F2S and the weights of twos1.txt (the patch f2s.patch here).

# 1. The SPSA run that tuned the one- and two-stone levels with the cross-line terms
#    (in the f2s worktree, from F2S = F2 = 15; 980 s on an idle 2-core machine):
cargo run --release -p caro-engine --example spsa -- twos1.txt 1500 20 2 41 0.01 twos

# 2. The screen against Rapfi (classical), seeds 23-30, 200 ms a move, v3 book, two lanes:
nice -n -10 scripts/field-ab --caro-match caro-match --opponent pbrain-rapfi \
    --opponent-name rapfi --out ab --runs 1 --seeds 23,24,25,26,27,28,29,30 \
    base=m16/pbrain-caro f2s=f2s/pbrain-caro

# 3. The self-play SPRT, f2s against m16:
nice -n -10 caro-match play --engine1 f2s/pbrain-caro --engine2 m16/pbrain-caro \
    --rule freestyle --size 15 --turn-ms 200 --games 2000 \
    --openings data/openings/freestyle15-v3.txt --concurrency 2 \
    --sprt 0,20,0.05,0.05 --seed 181 --out sprt -q
# (stopped for the session's clock; the pairs both of whose games finished, read with the
# seventeenth session's script, normal approximation:)
zcat sprt-games.jsonl.gz > /tmp/sprt.jsonl && python3 ../rapfi-2026-11-29-seventeenth/penta.py /tmp/sprt.jsonl
# The same read with caro-match's own statistics (the GSPRT; from 2026-11-29, docs/match.md):
caro-match score sprt-games.jsonl.gz --sprt 0,20,0.05,0.05
