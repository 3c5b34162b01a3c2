# The thirty-third session (2026-12-03): the field with `keep` on by default. BIN holds
# pbrain-caro and caro-match built in release from main with `SearchParams::keep` 1 (the
# commit that makes it the default; `bench` 82,112, the same search as 26b08a5 with
# `--search keep=1`). O holds Rapfi, AIWine and Pela built as docs/strength.md ("Against the
# field") says; AIWine and Pela were built at the start of this session.

# AIWine and Pela first: the commands and openings of the twenty-ninth session's run
# (strength-runs/field-2026-12-02-twenty-ninth/), seven matches two at a time (two queues:
# aiwine, pela-seed2, pela-seed4, pela-gomocup and pela, pela-seed3, pela-caro), each at
# nice -n -10 on an otherwise idle machine (14 minutes; a 0.16 s `bench` ran beside the first
# minute).
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

# Then Rapfi, main's engine alone (no second build beside it: `keep` is already accepted), new
# seeds 122-145, one run, two matches side by side, the whole at nice -n -10 on an otherwise
# idle machine (03:04-04:05 and on; about 10 minutes a pair). Nothing else ran beside it.
nice -n -10 python3 scripts/field-ab --caro-match $BIN/caro-match \
    --opponent $O/pbrain-rapfi --opponent-name rapfi --out ab --runs 1 \
    --seeds 122,123,124,125,126,127,128,129,130,131,132,133,134,135,136,137,138,139,140,141,142,143,144,145 \
    "main=$BIN/pbrain-caro"
# the same arguments with --report: rapfi-report.md; the pooled Elo:
#   caro-match score --engine main ab/main/r1-s*/games.jsonl.gz
