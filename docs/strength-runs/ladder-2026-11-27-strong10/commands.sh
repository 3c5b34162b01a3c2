#!/bin/bash
# strong at depth 10: its three ladder matches (against club, expert, classic), 40 games, seed 1
B=$BIN
O=$OUT
BOOK=data/openings/caro15.txt
S10="$B/pbrain-caro --depth 10 --time-ms 1000 --blunder 0 --seed 1"
$B/caro-match play --engine1 "$S10" --engine2 "$B/pbrain-caro --depth 7 --time-ms 1000 --blunder 0.05 --seed 1" --name1 strong --name2 club --rule caro --size 15 --turn-ms 1111 --tolerance-ms 250 --games 40 --concurrency 2 --seed 1 --out $O/strong-vs-club --quiet --openings $BOOK
$B/caro-match play --engine1 "$B/pbrain-caro --depth 64 --time-ms 300 --blunder 0 --seed 1" --engine2 "$S10" --name1 expert --name2 strong --rule caro --size 15 --turn-ms 1111 --tolerance-ms 250 --games 40 --concurrency 2 --seed 1 --out $O/expert-vs-strong --quiet --openings $BOOK
$B/caro-match play --engine1 "$S10" --engine2 "$B/pbrain-caro --style classic --depth 4" --name1 strong --name2 classic --rule caro --size 15 --turn-ms 3333 --tolerance-ms 250 --games 40 --concurrency 2 --seed 1 --out $O/strong-vs-classic --quiet --openings $BOOK
