# The twenty-second session's runs (2026-11-29), from the repository, on an otherwise idle 2-core
# machine (exceptions in docs/strength.md, "A move ordering learnt from Rapfi's moves"). $O holds
# the outside engines (docs/strength.md, "Against the field"); B holds caro-match and pbrain-caro
# built in release from this session's tree with the policy table of policy.txt (the engine
# plays as main's at `--search policy=0`, its default: the same bench nodes).
B=/work/bin/s22
S=docs/strength-runs/rapfi-2026-11-29-twenty-second

# The data and the fit (11 s): Rapfi's moves in the records as they were at 9a819c5.
git archive 9a819c5 docs/strength-runs | tar -x -C /tmp/records
scripts/policy.sh /tmp/records/docs/strength-runs     # target/policy/policy.txt = search/policy.txt
# (kept: fit.log)

# The screen: main's engine (policy 0) beside the learnt ordering whole (16) and half (8), six
# new seeds, one run, two matches side by side; then main's engine and the half on six more.
scripts/field-ab --caro-match $B/caro-match --opponent $O/pbrain-rapfi --opponent-name rapfi \
    --out ab --runs 1 --seeds 41,42,43,44,45,46 "base=$B/pbrain-caro" \
    "p16=$B/pbrain-caro --search policy=16" "p8=$B/pbrain-caro --search policy=8"
scripts/field-ab --caro-match $B/caro-match --opponent $O/pbrain-rapfi --opponent-name rapfi \
    --out ab --runs 1 --seeds 41,42,43,44,45,46,47,48,49,50,51,52 "base=$B/pbrain-caro" \
    "p8=$B/pbrain-caro --search policy=8"
# then the whole table on four of those seeds (base's cells are there already, so they are
# skipped), and after a CI run on the last two
scripts/field-ab --caro-match $B/caro-match --opponent $O/pbrain-rapfi --opponent-name rapfi \
    --out ab --runs 1 --seeds 41,42,43,44,45,46,47,48,49,50 "base=$B/pbrain-caro" \
    "p16=$B/pbrain-caro --search policy=16"
scripts/field-ab --caro-match $B/caro-match --opponent $O/pbrain-rapfi --opponent-name rapfi \
    --out ab --runs 1 --seeds 41,42,43,44,45,46,47,48,49,50,51,52 "base=$B/pbrain-caro" \
    "p16=$B/pbrain-caro --search policy=16"
# the report over all of it
scripts/field-ab ... --out ab --runs 1 --seeds 41,42,43,44,45,46,47,48,49,50,51,52 --report \
    "base=$B/pbrain-caro" "p8=$B/pbrain-caro --search policy=8" "p16=$B/pbrain-caro --search policy=16" > $S/report.md
# (kept: ab/*/r1-s*/summary.json and games.jsonl.gz, report.md, fit.log)
