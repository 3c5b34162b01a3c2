#!/usr/bin/env bash
# Texel tuning of the evaluation, from nothing to crates/engine/src/search/weights.txt
# (docs/engine.md, "Texel tuning"): self-play data, then the fit. Reproducible: fixed seeds and
# node budgets, so the same arguments give the same file on any machine at any load.
#
#   scripts/texel.sh [games-per-opening] [nodes] [seed] [threads] [lambda] [free]
#
# Defaults: 8 games per opening (the 40 freestyle and 40 caro openings: 640 games), 4000 nodes
# a move, seed 1, 2 threads (the threads change the time, not the data), lambda 0 (the targets
# are the search's scores; 1: the game outcomes alone), free `eval` (the evaluation's class
# terms; `all`: the cell values, `class`: the cells' class values). Everything goes to
# target/texel/ (not tracked): positions.txt and weights.txt. To play with the weights, copy
# them over crates/engine/src/search/weights.txt and rebuild; keep them only if an SPRT
# accepts them. The games are played by the engine as built, so its weights shape the data:
# the shipped weights came from the hand-tuned engine: `scripts/texel.sh 8 4000 1 2 0 eval`
# at commit c6ff3a8 (or 089baf3) writes their numbers again.
set -euo pipefail
cd "$(dirname "$0")/.."
games=${1:-8}
nodes=${2:-4000}
seed=${3:-1}
threads=${4:-2}
lambda=${5:-0}
free=${6:-eval}
mkdir -p target/texel
cargo build --release -p caro-engine --example selfplay_positions --example texel
time target/release/examples/selfplay_positions target/texel/positions.txt \
    "$games" "$nodes" "$threads" "$seed" 2>target/texel/selfplay.log
time target/release/examples/texel target/texel/positions.txt target/texel/weights.txt \
    300 "$lambda" "$free"
