#!/bin/sh
# The ladder with the strong open three (2026-11-28, twelfth session). B: a directory with pbrain-caro and
# caro-match of ebe0b24 built in release (the tree was "dirty" by a docs edit only); OUT: the output directory.
# Seed 1: scripts/ladder --resume, with the six neighbour matches copied from ../ladder-2026-11-28-strong-neighbours/seed1/
# (the same commands, eleventh session) before it ran; it played the seven matches against classic below:
#   nice -n 2 scripts/ladder --games 40 --concurrency 2 --seed 1 --bin $B --out $OUT/seed1 --resume
set -e
$B/caro-match play --engine1 "$B/pbrain-caro --depth 1" --engine2 "$B/pbrain-caro --style classic --depth 4" --name1 novice --name2 classic --rule caro --size 15 --turn-ms 3333 --tolerance-ms 250 --games 40 --concurrency 2 --seed 1 --out $OUT/seed1/novice-vs-classic --quiet --openings data/openings/caro15.txt
$B/caro-match play --engine1 "$B/pbrain-caro --depth 2 --time-ms 200 --blunder 0.25 --seed 1" --engine2 "$B/pbrain-caro --style classic --depth 4" --name1 beginner --name2 classic --rule caro --size 15 --turn-ms 3333 --tolerance-ms 250 --games 40 --concurrency 2 --seed 1 --out $OUT/seed1/beginner-vs-classic --quiet --openings data/openings/caro15.txt
$B/caro-match play --engine1 "$B/pbrain-caro --depth 5 --time-ms 400 --blunder 0.12 --seed 1" --engine2 "$B/pbrain-caro --style classic --depth 4" --name1 casual --name2 classic --rule caro --size 15 --turn-ms 3333 --tolerance-ms 250 --games 40 --concurrency 2 --seed 1 --out $OUT/seed1/casual-vs-classic --quiet --openings data/openings/caro15.txt
$B/caro-match play --engine1 "$B/pbrain-caro --depth 8 --time-ms 1000 --blunder 0.05 --seed 1" --engine2 "$B/pbrain-caro --style classic --depth 4" --name1 club --name2 classic --rule caro --size 15 --turn-ms 3333 --tolerance-ms 250 --games 40 --concurrency 2 --seed 1 --out $OUT/seed1/club-vs-classic --quiet --openings data/openings/caro15.txt
$B/caro-match play --engine1 "$B/pbrain-caro --depth 9 --time-ms 1000 --blunder 0 --seed 1" --engine2 "$B/pbrain-caro --style classic --depth 4" --name1 strong --name2 classic --rule caro --size 15 --turn-ms 3333 --tolerance-ms 250 --games 40 --concurrency 2 --seed 1 --out $OUT/seed1/strong-vs-classic --quiet --openings data/openings/caro15.txt
$B/caro-match play --engine1 "$B/pbrain-caro --depth 12 --time-ms 1000 --blunder 0 --seed 1" --engine2 "$B/pbrain-caro --style classic --depth 4" --name1 expert --name2 classic --rule caro --size 15 --turn-ms 3333 --tolerance-ms 250 --games 40 --concurrency 2 --seed 1 --out $OUT/seed1/expert-vs-classic --quiet --openings data/openings/caro15.txt
$B/caro-match play --engine1 "$B/pbrain-caro --depth 64 --time-ms 2000 --blunder 0 --seed 1" --engine2 "$B/pbrain-caro --style classic --depth 4" --name1 master --name2 classic --rule caro --size 15 --turn-ms 3333 --tolerance-ms 250 --games 40 --concurrency 2 --seed 1 --out $OUT/seed1/master-vs-classic --quiet --openings data/openings/caro15.txt
# After the fit: master against expert with seed 3 (nice -n 2).
$B/caro-match play --engine1 "$B/pbrain-caro --depth 64 --time-ms 2000 --blunder 0 --seed 3" --engine2 "$B/pbrain-caro --depth 12 --time-ms 1000 --blunder 0 --seed 3" --name1 master --name2 expert --rule caro --size 15 --turn-ms 2222 --tolerance-ms 250 --games 40 --concurrency 2 --seed 3 --out $OUT/extra-seed3/master-vs-expert --quiet --openings data/openings/caro15.txt
# The fits (N=../ladder-2026-11-28-strong-neighbours): 920 games, then 960 with the extra match.
$B/caro-match rate --anchor classic seed1/*-vs-* $N/seed1/* $N/seed3/* $N/seed4/*
$B/caro-match rate --anchor classic seed1/*-vs-* $N/seed1/* $N/seed3/* $N/seed4/* extra-seed3/*
# The trial of expert at depth 13 against strong, seeds 1, 3 and 4 (trials/e13-vs-strong-seedS; nice -n 2):
for s in 1 3 4; do
  $B/caro-match play --engine1 "$B/pbrain-caro --depth 13 --time-ms 1000 --blunder 0 --seed $s" --engine2 "$B/pbrain-caro --depth 9 --time-ms 1000 --blunder 0 --seed $s" --name1 expert --name2 strong --rule caro --size 15 --turn-ms 1111 --tolerance-ms 250 --games 40 --concurrency 2 --seed $s --out $OUT/trials/e13-vs-strong-seed$s --quiet --openings data/openings/caro15.txt
done
