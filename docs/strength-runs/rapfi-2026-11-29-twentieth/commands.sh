# The twentieth session's runs (2026-11-29), from the repository, on an otherwise idle 2-core
# machine (nothing else ran beside the matches). $O holds the outside engines (docs/strength.md,
# "Against the field"; Rapfi at 3aedf3a with model220723, as the nineteenth session built it);
# B holds caro-match and pbrain-caro built in release at 703fa4f (the engine plays as main's
# since the eleventh session).
B=/work/bin/s20
S=docs/strength-runs/rapfi-2026-11-29-twentieth

# `dir` played on beside main's engine: ten new seeds, one run, two matches side by side.
nice -n -10 scripts/field-ab --caro-match $B/caro-match --opponent $O/pbrain-rapfi \
    --opponent-name rapfi --out ab20 --runs 1 --seeds 37,38,39,40,41,42,43,44,45,46 \
    "base=$B/pbrain-caro" \
    "dir=$B/pbrain-caro --search nmp_depth=4 --search lmp_quarters=3 --search vct_sixteenths=3"
# (kept: ab/base and ab/dir, each match's summary.json and games.jsonl.gz)

# The pooled table: the nineteenth session's cells (seeds 31-36) copied beside these; field-ab
# plays no match whose summary exists, and prints the table over all sixteen.
cp -r ab20 pool
for e in base dir; do cp -r docs/strength-runs/rapfi-2026-11-29-nineteenth/ab/$e/r1-s3[1-6] pool/$e/; done
scripts/field-ab --caro-match $B/caro-match --opponent $O/pbrain-rapfi --opponent-name rapfi \
    --out pool --runs 1 --seeds 31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46 \
    "base=$B/pbrain-caro" \
    "dir=$B/pbrain-caro --search nmp_depth=4 --search lmp_quarters=3 --search vct_sixteenths=3"

# SPSA of the cross-line terms (`plus`) against Rapfi on a 3,000-step schedule, meant to be
# resumed across sessions. B here holds the build of 975c645 (caro-match with --resume; the
# engine unchanged). Stopped (kill) after 281 steps, then resumed for two more and stopped
# again (the resume first failed on an exact comparison of the recorded numbers, which
# serde_json's default reader gets about one in ten wrong by an ulp; mended by reading
# them with its float_roundtrip feature).
$B/caro-match spsa --engine $B/pbrain-caro --opponent $O/pbrain-rapfi --opponent-name rapfi \
    --rule freestyle --size 15 --turn-ms 200 --openings data/openings/freestyle15-v3.txt \
    --space plus --steps 3000 --r-end 0.005 --seed 201 --concurrency 2 --save-every 10 \
    --out spsa-plus > spsa-plus.log
# (kept: spsa-plus/steps.jsonl.gz, weights.txt and search.txt as last saved, progress.log.gz)
# To go on with it anywhere: the records' steps into a directory, the same command plus --resume.
mkdir -p spsa-plus && zcat $S/spsa-plus/steps.jsonl.gz > spsa-plus/steps.jsonl
$B/caro-match spsa --engine $B/pbrain-caro --opponent $O/pbrain-rapfi --opponent-name rapfi \
    --rule freestyle --size 15 --turn-ms 200 --openings data/openings/freestyle15-v3.txt \
    --space plus --steps 3000 --r-end 0.005 --seed 201 --concurrency 2 --save-every 10 \
    --out spsa-plus --resume >> spsa-plus.log
# Per-term slopes (mean sign x result and its z), as the nineteenth session's gradient.py:
python3 docs/strength-runs/rapfi-2026-11-29-nineteenth/gradient.py spsa-plus/steps.jsonl \
    plus0,plus1,plus2,plus3
