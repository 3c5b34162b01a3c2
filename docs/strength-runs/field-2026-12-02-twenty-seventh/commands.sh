# The twenty-seventh session (2026-12-02): the search's numbers of f841946 (main's defaults since
# the twenty-sixth session) against Rapfi, beside the engine before them. BASE holds pbrain-caro
# built in release from 7fc321a (the old numbers), NEW pbrain-caro and caro-match built in
# release from d3911e2 (main's head, the same engine as f841946); O holds Rapfi built as
# docs/strength.md ("Against the field") says. Six new seeds, 75-80, one run, 64 games a match,
# two matches at a time, the whole at nice -n -10 on an otherwise idle machine (a nice 19 build
# of a variant ran beside it for two of its 44 minutes).
python3 scripts/field-ab --caro-match $NEW/caro-match --opponent $O/pbrain-rapfi \
    --opponent-name rapfi --out ab --runs 1 --seeds 75,76,77,78,79,80 \
    "base=$BASE/pbrain-caro" "new=$NEW/pbrain-caro"
# ab/ keeps each match's summary.json and games (gzipped); rapfi-report.md is the report:
#   python3 scripts/field-ab ... --report
