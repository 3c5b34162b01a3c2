#!/bin/sh
# expert at depth 13 with a blunder rate of 0.01 (2026-11-28, thirteenth session). B: a directory with
# pbrain-caro and caro-match of ebe0b24 built in release (main's engine; nothing in the engine changed since);
# OUT: this directory. Two games at a time, nice -n 2, on an otherwise idle 2-core machine.
set -e
for s in 1 3 4; do
  $B/caro-match play --engine1 "$B/pbrain-caro --depth 13 --time-ms 1000 --blunder 0.01 --seed $s" --engine2 "$B/pbrain-caro --depth 9 --time-ms 1000 --blunder 0 --seed $s" --name1 expert --name2 strong --rule caro --size 15 --turn-ms 1111 --tolerance-ms 250 --games 40 --concurrency 2 --seed $s --out $OUT/e13b01-vs-strong-seed$s --quiet --openings data/openings/caro15.txt
done
for s in 1 3 4; do
  $B/caro-match play --engine1 "$B/pbrain-caro --depth 64 --time-ms 2000 --blunder 0 --seed $s" --engine2 "$B/pbrain-caro --depth 13 --time-ms 1000 --blunder 0.01 --seed $s" --name1 master --name2 expert --rule caro --size 15 --turn-ms 2222 --tolerance-ms 250 --games 40 --concurrency 2 --seed $s --out $OUT/master-vs-e13b01-seed$s --quiet --openings data/openings/caro15.txt
done
$B/caro-match play --engine1 "$B/pbrain-caro --depth 13 --time-ms 1000 --blunder 0.01 --seed 1" --engine2 "$B/pbrain-caro --style classic --depth 4" --name1 expert --name2 classic --rule caro --size 15 --turn-ms 3333 --tolerance-ms 250 --games 40 --concurrency 2 --seed 1 --out $OUT/expert-vs-classic-seed1 --quiet --openings data/openings/caro15.txt
# The fit (1000 games), run from docs/strength-runs/: the twelfth session's matches with every expert match
# replaced by the new expert's (L: ladder-2026-11-28-strong, N: ladder-2026-11-28-strong-neighbours, T: this directory).
L=ladder-2026-11-28-strong; N=ladder-2026-11-28-strong-neighbours; T=ladder-2026-11-28-e13b
$B/caro-match rate --anchor classic $L/seed1/novice-vs-classic $L/seed1/beginner-vs-classic \
  $L/seed1/casual-vs-classic $L/seed1/club-vs-classic $L/seed1/strong-vs-classic $L/seed1/master-vs-classic \
  $T/expert-vs-classic-seed1 \
  $(for s in 1 3 4; do for m in beginner-vs-novice casual-vs-beginner club-vs-casual strong-vs-club; do echo $N/seed$s/$m; done; done) \
  $T/e13b01-vs-strong-seed* $T/master-vs-e13b01-seed*
