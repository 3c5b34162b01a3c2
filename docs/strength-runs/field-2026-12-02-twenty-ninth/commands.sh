# The twenty-ninth session (2026-12-02): a move tactical by its cell values alone
# (`--search by_value=1`) against Rapfi beside main's engine, on twelve more seeds (87-98) after
# the twenty-eighth session's six (81-86). BIN holds pbrain-caro and caro-match built in release
# from main's 98db8ba (`bench` 83,130; 77,413 with by_value=1): both engines are the same binary,
# `base` with the defaults (main's engine, the same tree as d3911e2's) and `byvalue` given
# `--search by_value=1`. O holds Rapfi built as docs/strength.md ("Against the field") says. One
# run, 64 games a match, 200 ms a move, v3 book, two matches at a time, the whole at nice -n -10
# on an otherwise idle machine (87 minutes).
nice -n -10 python3 scripts/field-ab --caro-match $BIN/caro-match --opponent $O/pbrain-rapfi \
    --opponent-name rapfi --out ab --runs 1 --seeds 87,88,89,90,91,92,93,94,95,96,97,98 \
    "base=$BIN/pbrain-caro" "byvalue=$BIN/pbrain-caro --search by_value=1"
# ab/ keeps each match's summary.json and games (gzipped); rapfi-report.md is the report
# (`--report`, here and over seeds 81-98 with the twenty-eighth session's ab/ merged in), and
#   caro-match score --engine base ab/base/r1-s*      (and byvalue) for the pooled Elo.
