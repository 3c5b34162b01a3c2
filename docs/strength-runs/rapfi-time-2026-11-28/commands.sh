#!/bin/sh
# Time against Rapfi (2026-11-28, fourteenth session): main's engine (the pbrain-caro of ebe0b24, the
# engine of 54df00c) given more time than Rapfi, and the whole-turn patch, 64 games a seed, 200 ms a
# move for Rapfi, v3 book, two matches side by side on an otherwise idle 2-core machine.
#
# Time odds: a wrapper tells our engine a longer turn than the manager gives both engines (the
# tolerance lets it answer in that time without forfeiting):
#   odds2/pbrain-caro:   #!/bin/sh
#                        sed -u 's/^INFO timeout_turn 200/INFO timeout_turn 400/' | $B/pbrain-caro
#   odds15/pbrain-caro:  the same with 300
# Whole turn: whole-turn.patch on 54df00c (tA-seed1/2 were played by an equivalent one-line build
# of the same rule: `self.optimum.is_some() &&` in front of the iteration-start test of
# search::deepening; tB-seed1/2 by that build with the margin of search::time::margin at
# max(turn / 20, 15 ms) instead of max(turn / 10, 30 ms)). These were played with caro-match's
# default tolerance (100 ms) instead of 400.
# W: a wrapper's or build's directory; RAPFI: the pbrain wrapper of docs/strength.md.
set -e
for s in 1 2 3 4; do
  nice -n -10 caro-match play --engine1 $W/pbrain-caro --engine2 $RAPFI --name1 pbrain-caro --name2 rapfi \
    --rule freestyle --turn-ms 200 --tolerance-ms 400 --games 64 \
    --openings data/openings/freestyle15-v3.txt --seed $s --out $OUT-seed$s -q
done

# The whole-turn patch in self-play (sprt-whole-selfplay.games.jsonl; stopped after 579 games):
#   caro-match play --engine1 $WHOLE/pbrain-caro --engine2 $MAIN/pbrain-caro --name1 whole --name2 main \
#     --rule freestyle --size 15 --turn-ms 200 --games 2000 --openings data/openings/freestyle15-v3.txt \
#     --concurrency 2 --sprt 0,20,0.05,0.05 --seed 141 --out sprt-whole -q
