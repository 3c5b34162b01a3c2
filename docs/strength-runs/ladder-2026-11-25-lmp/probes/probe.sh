#!/bin/sh
# probe NAME 'FLAGS1' NAME1 'FLAGS2' NAME2 TURN_MS [GAMES]: one caro-match play on the ladder's terms.
B=/work/ladder/bin
name=$1; f1=$2; n1=$3; f2=$4; n2=$5; turn=$6; games=${7:-80}
nice -n 2 $B/caro-match play --engine1 "$B/pbrain-caro $f1" --engine2 "$B/pbrain-caro $f2" --name1 "$n1" --name2 "$n2" \
  --rule caro --size 15 --turn-ms "$turn" --tolerance-ms 250 --games "$games" --concurrency 1 --seed 1 \
  --out /work/ladder/probes/$name --quiet --openings /work/main/data/openings/caro15.txt
