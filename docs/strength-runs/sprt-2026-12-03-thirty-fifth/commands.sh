# The thirty-fifth session's screens (2026-12-03): `bonuses` 4 and 12 against the default 8,
# as the thirty-fourth session's 40 ms screens (40 ms a move: a 10 ms budget after the 30 ms
# margin), v3 book, two games at a time, one after the other, nice -n -10 on an otherwise idle
# machine. BIN holds pbrain-caro and caro-match built in release from 40966f3.
for v in 4:346 12:347; do b=${v%%:*}; s=${v##*:}
  nice -n -10 $BIN/caro-match play --engine1 "$BIN/pbrain-caro --search bonuses=$b" --engine2 $BIN/pbrain-caro \
    --name1 b$b --name2 base --rule freestyle --size 15 --turn-ms 40 --games 600 \
    --openings data/openings/freestyle15-v3.txt --concurrency 2 --sprt 0,20,0.05,0.05 \
    --seed $s --out b$b -q
done
# Each match's summary.json and games are kept as bN.summary.json and bN.games.jsonl.gz.
