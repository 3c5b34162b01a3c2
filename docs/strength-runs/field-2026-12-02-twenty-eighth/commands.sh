# The twenty-eighth session (2026-12-02): a move tactical by its cell values alone
# (`--search by_value=1`) against Rapfi, beside main's engine. MAIN holds pbrain-caro and
# caro-match built in release from d3911e2 (the engine of main's head db5f2df); TAC holds
# pbrain-caro built in release from db5f2df with
# docs/strength-runs/sprt-2026-12-02-twenty-eighth/by-value/by-value.patch (the same code as
# main's since, where `by_value` is a search number, 0 by default); O holds Rapfi built as
# docs/strength.md ("Against the field") says. Six new seeds, 81-86, one run, 64 games a match,
# two matches at a time, the whole at nice -n -10 on an otherwise idle machine (42 minutes).
python3 scripts/field-ab --caro-match $MAIN/caro-match --opponent $O/pbrain-rapfi \
    --opponent-name rapfi --out ab --runs 1 --seeds 81,82,83,84,85,86 \
    "base=$MAIN/pbrain-caro" "byvalue=$TAC/pbrain-caro --search by_value=1"
# ab/ keeps each match's summary.json and games (gzipped); rapfi-report.md is the report:
#   python3 scripts/field-ab ... --report
