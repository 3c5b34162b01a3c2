# The twenty-third session's runs (2026-11-29), from the repository. $O holds the outside
# engines (docs/strength.md, "Against the field"). S22 holds caro-match and pbrain-caro built in
# release from the twenty-second session's tree (its search is main's at bc94f40; `policy` 0 by
# default then); S23 holds them built from this session's tree (`policy` 16 by default).
S=docs/strength-runs/rapfi-2026-11-29-twenty-third

# The long form: main's engine (policy 0) beside the whole learnt ordering on twelve new seeds,
# one run, two matches side by side (the matches at nice -10).
scripts/field-ab --caro-match $S22/caro-match --opponent $O/pbrain-rapfi --opponent-name rapfi \
    --out ab --runs 1 --seeds 53,54,55,56,57,58,59,60,61,62,63,64 "base=$S22/pbrain-caro" \
    "p16=$S22/pbrain-caro --search policy=16"
scripts/field-ab ... --out ab --runs 1 --seeds 53,...,64 --report "base=..." "p16=..." > $S/report.md

# The self-play SPRTs: the default (policy 16) against policy 0, the same binary.
$S23/caro-match play --engine1 "$S23/pbrain-caro" --engine2 "$S23/pbrain-caro --search policy=0" \
    --name1 p16 --name2 p0 --rule freestyle --size 15 --turn-ms 200 --games 2000 \
    --openings data/openings/freestyle15-v3.txt --concurrency 2 --sprt 0,20,0.05,0.05 \
    --seed 231 --out sprt -q
$S23/caro-match play --engine1 "$S23/pbrain-caro" --engine2 "$S23/pbrain-caro --search policy=0" \
    --name1 p16 --name2 p0 --rule caro --size 15 --turn-ms 200 --games 2000 \
    --openings data/openings/caro15.txt --concurrency 2 --sprt 0,20,0.05,0.05 \
    --seed 232 --out sprt-caro -q     # stopped after 257 games for the session's clock

# The MATE suite at three budgets (the default, then with the default set to 0 for a build).
for n in 120000 250000 500000; do
    CARO_MATE_NODES=$n cargo test -p caro-engine --test tactics freestyle_forced_wins -- --nocapture
done
# (kept: ab/*/r1-s*/summary.json and games.jsonl.gz, report.md, sprt/summary.json, and each
# SPRT's games.jsonl.gz; the stopped caro run wrote no summary.json)
