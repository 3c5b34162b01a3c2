#!/bin/bash
# expert at 250 ms: its three ladder matches (against strong, master, classic), 40 games, seed $SEED
B=$BIN
SEED=${SEED:-1}
O=$OUT/seed$SEED
BOOK=data/openings/caro15.txt
E="$B/pbrain-caro --depth 64 --time-ms 250 --blunder 0 --seed $SEED"
$B/caro-match play --engine1 "$E" --engine2 "$B/pbrain-caro --depth 9 --time-ms 1000 --blunder 0 --seed $SEED" --name1 expert --name2 strong --rule caro --size 15 --turn-ms 1111 --tolerance-ms 250 --games 40 --concurrency 2 --seed $SEED --out $O/expert-vs-strong --quiet --openings $BOOK
$B/caro-match play --engine1 "$E" --engine2 "$B/pbrain-caro --style classic --depth 4" --name1 expert --name2 classic --rule caro --size 15 --turn-ms 3333 --tolerance-ms 250 --games 40 --concurrency 2 --seed $SEED --out $O/expert-vs-classic --quiet --openings $BOOK
$B/caro-match play --engine1 "$B/pbrain-caro --depth 64 --time-ms 2000 --blunder 0 --seed $SEED" --engine2 "$E" --name1 master --name2 expert --rule caro --size 15 --turn-ms 2222 --tolerance-ms 250 --games 40 --concurrency 2 --seed $SEED --out $O/master-vs-expert --quiet --openings $BOOK
