#!/bin/sh
# Rapfi's evaluation as the target of a Texel fit (2026-11-28, thirteenth session). Run from the repository root;
# R: this directory; pbrain-rapfi: Rapfi (classical), built outside this repository (docs/strength.md).
# 1. Label the positions of 1,024 of our games against Rapfi (the field runs of 2026-11-28 and the twelfth session's
#    knob matches, whose records are in docs/strength-runs/) with Rapfi's evaluation at 100 ms, two lanes
#    (label.py's usage line); stopped after 449 games for time: positions.txt.gz (12,288 positions, mate scores
#    skipped) and first-mates.txt (per game: index, our colour, winner, length, book, the first ply Rapfi reported a
#    mate at, that mate). The labelled games are the first of each lane's seeded shuffle.
#   python3 $R/label.py pos0.txt 100 0 2 GAMES... ; python3 $R/label.py pos1.txt 100 1 2 GAMES... ; cat pos0.txt pos1.txt > pos.txt
# 2. The fit: the class terms of each side (`side`), from the built weights, targets sigmoid(K0 * Rapfi's eval):
cargo run --release -p caro-engine --example texel -- pos.txt weights-side.txt 300 0 side built
# 3. The screen: weights-side.txt copied over crates/engine/src/search/weights.txt, pbrain-caro built, then against
#    Rapfi as the knobs of docs/strength-runs/rapfi-knobs-2026-11-28/ (64 games, 200 ms, v3 book, seeds 1 and 2):
#   caro-match play --engine1 pbrain-caro --engine2 pbrain-rapfi --name1 pbrain-caro --name2 rapfi --rule freestyle \
#     --turn-ms 200 --games 64 --openings data/openings/freestyle15-v3.txt --seed S --out distill-sS -q
