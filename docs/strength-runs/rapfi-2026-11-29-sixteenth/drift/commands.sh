#!/bin/sh
# Where our moves lose against Rapfi (2026-11-29, sixteenth session; docs/strength.md, "Screens against Rapfi,
# and where our moves lose"). Run from this directory; RAPFI / pbrain-caro are the engines' paths.
# 1. Each of our moves scored by Rapfi's own evaluation (100 ms) before and after it, from the labelled positions of
#    ../rapfi-distill-2026-11-28 matched to the game records (325 of its 449 games matched): drops.json.
python3 drops.py
# (sel.json.gz, big.json.gz: the selections below, gzipped; compare.py and sq.py read sel.json)
# 2. 700 of those positions (our move 4-14 after the book, Rapfi's eval above -400), Rapfi's move at 300 ms:
RAPFI=pbrain-rapfi python3 bestmove.py pos-in.txt rapfi-moves-300ms.txt 300 0 1
#    our engine's move at 200 and 400 ms and its agreement with Rapfi's (the build that plays, and one variant):
./agree.sh m16-200 path/to/pbrain-caro 200; ./agree.sh m16-400 path/to/pbrain-caro 400
#    where the two disagree, what the moves are next to (compare.py: stones on their lines; sq.py: 5-cell windows):
python3 compare.py; python3 sq.py
# 3. The 114 moves of ours that lost more than 300 (Rapfi's eval before above -600, our first 20 moves after the book):
#    Rapfi at 1 s, our engine at 200 ms (twice), 400 ms and 2 s:
RAPFI=pbrain-rapfi python3 bestmove.py big-in.txt big-rapfi1000.txt 1000 0 1
for t in 200 400 2000; do RAPFI=path/to/pbrain-caro python3 bestmove.py big-in.txt big-ours$t.txt $t 0 1; done
RAPFI=path/to/pbrain-caro python3 bestmove.py big-in.txt big-ours200b.txt 200 0 1
