# The nineteenth session's runs (2026-11-29), from the repository, on an otherwise idle 2-core
# machine. $O holds the outside engines (docs/strength.md, "Against the field"); B holds
# caro-match and pbrain-caro built in release at 33fe1f2 (the engine plays as 11b2044 and
# ea4d0ae, main's engine since the eleventh session: the commits after them change no move).
B=/work/bin/tune
S=docs/strength-runs/rapfi-2026-11-29-nineteenth

# Equal time both ways: main's engine (11b2044's build) against Rapfi with both engines at 100 ms
# and at 400 ms a move, seeds 23 and 24 (the eighteenth session played them at 200 ms:
# docs/strength-runs/rapfi-2026-11-29-eighteenth/ab/base/r1-s23, r1-s24), two matches side by side.
scripts/field-ab --caro-match $B/caro-match --opponent $O/pbrain-rapfi --opponent-name rapfi \
    --out t100 --runs 1 --seeds 23,24 --turn-ms 100 base=$B/pbrain-caro
scripts/field-ab --caro-match $B/caro-match --opponent $O/pbrain-rapfi --opponent-name rapfi \
    --out t400 --runs 1 --seeds 23,24 --turn-ms 400 base=$B/pbrain-caro
# (kept: equal-time/t100 and t400, each match's summary.json and games.jsonl.gz)

# SPSA of the search's fifteen numbers against Rapfi (caro-match spsa, docs/match.md): 300
# steps of four games at 200 ms a move, two lanes, 64 minutes.
$B/caro-match spsa --engine $B/pbrain-caro --opponent $O/pbrain-rapfi --opponent-name rapfi \
    --rule freestyle --size 15 --turn-ms 200 --openings data/openings/freestyle15-v3.txt \
    --space search --steps 300 --r-end 0.02 --seed 191 --concurrency 2 --save-every 10 \
    --out spsa-search > spsa-search.log
# (kept: spsa-search/steps.jsonl.gz, search.txt, progress.log.gz; not the 96 MB protocol log)
python3 $S/gradient.py spsa-search/steps.jsonl lmr_k,lmr_base,lmp_base,lmp_quarters,nmp_depth,nmp_base,nmp_div,rfp_depth,rfp_margin,tactical,defence,killer0,killer1,aspiration,vct_sixteenths

# The screen of the three numbers whose slopes read |z| about 2, moved their way, beside main's
# engine: six new seeds, one run, two matches side by side.
scripts/field-ab --caro-match $B/caro-match --opponent $O/pbrain-rapfi --opponent-name rapfi \
    --out ab19 --runs 1 --seeds 31,32,33,34,35,36 "base=$B/pbrain-caro" \
    "dir=$B/pbrain-caro --search nmp_depth=4 --search lmp_quarters=3 --search vct_sixteenths=3"
# (kept: ab/base and ab/dir, each match's summary.json and games.jsonl.gz; ab/report.md, its table)
