#!/bin/sh
# master with the engine's own numbers (pbrain-caro's default: the learnt ordering, keep, the
# bonuses at half weight; a level with learnt_ordering = true) against expert as it is
# (--level-numbers), as the thirteenth and twenty-fourth sessions' master-vs-expert matches.
# B: a directory with pbrain-caro and caro-match of 40966f3 built in release (main's engine).
# OUT: this directory. Two games at a time, nice -n 2, on an otherwise idle 2-core machine.

# run from the repository
for s in 1 3; do
  nice -n 2 $B/caro-match play --engine1 "$B/pbrain-caro --depth 64 --time-ms 2000 --blunder 0 --seed $s" --engine2 "$B/pbrain-caro --depth 13 --time-ms 1000 --blunder 0.01 --seed $s --level-numbers" --name1 master35 --name2 expert --rule caro --size 15 --turn-ms 2222 --tolerance-ms 250 --games 40 --concurrency 2 --seed $s --out $OUT/master35-vs-expert-seed$s --quiet --openings data/openings/caro15.txt
done
# The fit (1,080 games), run from docs/strength-runs/: the thirteenth session's 1,000 (the commands of
# ladder-2026-11-28-e13b/commands.sh) and these two matches, master35 a player of its own.
L=ladder-2026-11-28-strong; N=ladder-2026-11-28-strong-neighbours; T=ladder-2026-11-28-e13b; D=ladder-2026-12-03-master35
$B/caro-match rate --anchor classic $L/seed1/novice-vs-classic $L/seed1/beginner-vs-classic \
  $L/seed1/casual-vs-classic $L/seed1/club-vs-classic $L/seed1/strong-vs-classic $L/seed1/master-vs-classic \
  $T/expert-vs-classic-seed1 \
  $(for s in 1 3 4; do for m in beginner-vs-novice casual-vs-beginner club-vs-casual strong-vs-club; do echo $N/seed$s/$m; done; done) \
  $T/e13b01-vs-strong-seed* $T/master-vs-e13b01-seed* $D/master35-vs-expert-seed1 $D/master35-vs-expert-seed3 > $D/ratings.txt
