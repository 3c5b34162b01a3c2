#!/bin/sh
# Twenty-first session (2026-11-29). Run from the repository root. B: a directory holding the
# release builds of pbrain-caro and caro-match (main's engine: `90c5f29`; caro-match with
# --resume); O/pbrain-rapfi: Rapfi (classical) behind its two-line wrapper, built outside this
# repository (docs/strength.md, "Against the field").

# 1. Both players' classes at one cell: the patch applied to 90c5f29, then an SPSA of its eight
#    terms by self-play from zero (2,000 pairs, 20 ms a move, two threads, seed 51, r_end 0.01;
#    1,377 s on an otherwise idle machine). Its log and final weights: spsa-joint1.log, joint1.txt.
git apply docs/strength-runs/rapfi-2026-11-29-twenty-first/joint.patch
cargo run --release -p caro-engine --example spsa -- joint1.txt 2000 20 2 51 0.01 joint
git checkout crates/

# 2. The twentieth session's SPSA of the cross-line terms against Rapfi, resumed from its 283
#    recorded steps (the same command as begun, plus --resume).
mkdir -p spsa-plus
zcat docs/strength-runs/rapfi-2026-11-29-twentieth/spsa-plus/steps.jsonl.gz > spsa-plus/steps.jsonl
$B/caro-match spsa --engine $B/pbrain-caro --opponent $O/pbrain-rapfi --opponent-name rapfi \
    --rule freestyle --size 15 --turn-ms 200 --openings data/openings/freestyle15-v3.txt \
    --space plus --steps 3000 --r-end 0.005 --seed 201 --concurrency 2 --save-every 10 \
    --out spsa-plus --resume > spsa-plus.log
# Stopped (kill) for the session's clock; kept: spsa-plus/steps.jsonl.gz (every step so far,
# the twentieth session's included), weights.txt and search.txt as last saved, progress.log.gz.
# To go on anywhere: the records' steps into a directory, the same command with --resume.
mkdir -p spsa-plus && zcat docs/strength-runs/rapfi-2026-11-29-twenty-first/spsa-plus/steps.jsonl.gz > spsa-plus/steps.jsonl
# Per-term slopes (mean sign x result and its z):
python3 docs/strength-runs/rapfi-2026-11-29-nineteenth/gradient.py spsa-plus/steps.jsonl \
    plus0,plus1,plus2,plus3
