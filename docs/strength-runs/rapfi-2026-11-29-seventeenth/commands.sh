#!/bin/sh
# The root's threat-space share at 1/16, long form, and a move-quality measure judged by Rapfi (2026-11-29, seventeenth
# session; docs/strength.md, "The root's threat-space share at 1/16, long form"). O: the outside engines (docs/strength.md,
# "Against the field"); B: the builds of the sixteenth session: m16 (pbrain-caro of main at ea4d0ae) and vct1 (the same with
# vct_sixteenths 1 in SearchParams::default).
# Records: long/NAME/r1-sS/ (summary.json, games.jsonl.gz, moves.tsv.gz) for the seeds played this session; seeds 1-4 are the
# sixteenth session's third screen (../rapfi-2026-11-29-sixteenth/screen3/), played into the same directory first.
scripts/field-ab --opponent $O/pbrain-rapfi --opponent-name rapfi --out ab16c --runs 1 --seeds $(seq -s, 1 30) \
    m16=$B/m16/pbrain-caro vct1=$B/vct1/pbrain-caro
# (stopped after seed 22 for the session's clock). The report, all cells and this session's alone:
scripts/field-ab --report --runs 1 --seeds $(seq -s, 1 22) --opponent - --opponent-name rapfi --out ab16c m16=- vct1=-
scripts/field-ab --report --runs 1 --seeds $(seq -s, 5 22) --opponent - --opponent-name rapfi --out ab16c m16=- vct1=-
# Per move of our engine, from each match.log (not kept: 5 MB a match): the first and last search report.
for b in m16 vct1; do for d in ab16c/$b/r1-s*; do python3 moves.py $d $b | gzip -9 > $d/moves.tsv.gz; done; done
python3 vctshare.py m16 long/m16/*/moves.tsv.gz
python3 vctshare.py vct1 long/vct1/*/moves.tsv.gz
# Move quality by Rapfi's judgement (regret.py): main's engine at 200 ms and at 400 ms on the sixteenth session's 676
# middle-game positions (../rapfi-2026-11-29-sixteenth/drift/ours-m16-200.txt, ours-m16-400.txt), Rapfi limited to
# 300k and to 1.5M nodes, a fresh process per position evaluated:
D=../rapfi-2026-11-29-sixteenth/drift
RAPFI=$O/pbrain-rapfi python3 regret.py cache300k.json 300000 $D/ours-m16-200.txt $D/ours-m16-400.txt
RAPFI=$O/pbrain-rapfi python3 regret.py cache1500k.json 1500000 $D/ours-m16-200.txt $D/ours-m16-400.txt
# Self-play SPRT of vct1 against m16 (stopped for the session's clock; pairs read with penta.py from sprt/games.jsonl.gz,
# the pairs both of whose games finished):
caro-match play --engine1 $B/vct1/pbrain-caro --engine2 $B/m16/pbrain-caro --name1 vct1 --name2 m16 --rule freestyle \
    --size 15 --turn-ms 200 --games 2000 --openings data/openings/freestyle15-v3.txt --concurrency 2 \
    --sprt 0,20,0.05,0.05 --seed 171 --out sprt -q
zcat sprt/games.jsonl.gz > /tmp/sprt.jsonl && python3 penta.py /tmp/sprt.jsonl
# The same read with caro-match's own statistics (the GSPRT; from 2026-11-29, docs/match.md):
caro-match score sprt --sprt 0,20,0.05,0.05
