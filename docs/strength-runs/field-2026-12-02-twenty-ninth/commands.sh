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

# Then AIWine and Pela with main's engine (the same BIN; never played with the twenty-sixth
# session's search numbers before), the commands and openings of the twenty-fifth session's
# run (strength-runs/field-2026-12-01-twenty-fifth/), seven matches two at a time, each at
# nice -n -10 on an otherwise idle machine (14 minutes). O holds AIWine and Pela built as
# docs/strength.md ("Against the field") says.
run() { name=$1; shift
  nice -n -10 $BIN/caro-match play --engine1 $BIN/pbrain-caro --name1 pbrain-caro --turn-ms 200 \
      --games 64 --out $name -q "$@"; }
run aiwine --engine2 $O/AIWine/bin/pbrain-wine --name2 aiwine --rule freestyle \
    --openings data/openings/freestyle15-v3.txt
for s in 1 2 3 4; do
  run pela$([ $s = 1 ] || echo -seed$s) --engine2 $O/pbrain-pela --name2 pela --rule freestyle \
      --openings data/openings/freestyle15-v3.txt --seed $s
done
run pela-caro --engine2 $O/pbrain-pela --name2 pela --rule caro --openings data/openings/caro15.txt
run pela-gomocup --engine2 $O/pbrain-pela --name2 pela --rule caro_gomocup \
    --openings data/openings/caro15.txt
# Each match's summary.json and games (gzipped) are kept as NAME.summary.json and
# NAME.games.jsonl.gz; the four Pela freestyle runs pooled:
#   caro-match score --engine pbrain-caro pela.games.jsonl.gz pela-seed2.games.jsonl.gz \
#       pela-seed3.games.jsonl.gz pela-seed4.games.jsonl.gz
