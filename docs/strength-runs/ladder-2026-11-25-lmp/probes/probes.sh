#!/bin/sh
P=/work/ladder/probe.sh
CAS='--depth 4 --time-ms 400 --blunder 0.12 --seed 1'
for v in "b25:--depth 2 --time-ms 200 --blunder 0.25" "b20:--depth 2 --time-ms 200 --blunder 0.2" "d3:--depth 3 --time-ms 200 --blunder 0.35"; do
  n=${v%%:*}; f="${v#*:} --seed 1"
  $P $n-vs-novice "$f" $n '--depth 1' novice 230
  $P casual-vs-$n "$CAS" casual "$f" $n 444
done
echo done > /work/ladder/probes.done
