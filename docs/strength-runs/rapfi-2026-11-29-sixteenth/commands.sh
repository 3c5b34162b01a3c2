#!/bin/sh
# Screens against Rapfi (2026-11-29, sixteenth session; docs/strength.md, "Screens against Rapfi, and where our
# moves lose"). O: the outside engines (docs/strength.md, "Against the field"); B: the builds, each a pbrain-caro of
# main at ea4d0ae (m16) or of main with one change: defending.patch (dfn; dfr is the same with DEF_LMR = false),
# lmr_k 1.0 in SearchParams::default (lmr100), vct_sixteenths 1 (vct1), beta.patch with BETA16 = 19, 22 or 26 (beta19, beta22, beta26).
# Records: screen1/ and screen2/, one directory per build and (run, seed) cell: summary.json, games.jsonl.gz.
#
# Screen 1 (seeds 1-2), played before scripts/field-ab by the same schedule (the builds in turn on each seed, two lanes):
#   caro-match play --engine1 $B/NAME/pbrain-caro --engine2 $O/pbrain-rapfi --name1 pbrain-caro --name2 rapfi \
#     --rule freestyle --turn-ms 200 --games 64 --openings data/openings/freestyle15-v3.txt --seed S --out NAME-sS -q
# Screen 2 (seeds 1-4), and beta26 added to it afterwards (its cells paired with m16's of the same run):
scripts/field-ab --opponent $O/pbrain-rapfi --opponent-name rapfi --out ab16 --runs 1 --seeds 1,2,3,4 \
    m16=$B/m16/pbrain-caro beta19=$B/beta19/pbrain-caro beta22=$B/beta22/pbrain-caro
scripts/field-ab --opponent $O/pbrain-rapfi --opponent-name rapfi --out ab16 --runs 1 --seeds 1,2,3,4 \
    m16=$B/m16/pbrain-caro beta26=$B/beta26/pbrain-caro
# Screen 3: vct_sixteenths 1 in SearchParams::default (vct1) beside main's engine, seeds 1-4:
scripts/field-ab --opponent $O/pbrain-rapfi --opponent-name rapfi --out ab16c --runs 1 --seeds 1,2,3,4 \
    m16=$B/m16/pbrain-caro vct1=$B/vct1/pbrain-caro
# The reports (the tables of docs/strength.md):
scripts/field-ab --report --runs 1 --seeds 1,2 --opponent - --opponent-name rapfi --out screen1 \
    m16=- dfn=- dfr=- lmr100=-
