# The field re-measured with main's engine at f330036 (policy 16, the learnt ordering, on by
# default for pbrain-caro), 2026-12-01, twenty-fifth session. B holds caro-match and pbrain-caro
# built in release from f330036; O holds AIWine and Pela built as docs/strength.md ("Against
# the field") says. Seven matches, two at a time, each at nice -n -10 on an otherwise idle
# machine; the same openings as the eleventh session's run (seed 1 by default, Pela in
# freestyle also seeds 2, 3 and 4).
run() { name=$1; shift
  $B/caro-match play --engine1 $B/pbrain-caro --name1 pbrain-caro --turn-ms 200 --games 64 \
      --out $name -q "$@"; }
run aiwine --engine2 $O/AIWine/bin/pbrain-wine --name2 aiwine --rule freestyle \
    --openings data/openings/freestyle15-v3.txt
run pela --engine2 $O/pbrain-pela --name2 pela --rule freestyle \
    --openings data/openings/freestyle15-v3.txt
run pela-seed2 --engine2 $O/pbrain-pela --name2 pela --rule freestyle \
    --openings data/openings/freestyle15-v3.txt --seed 2
# played last, after the Rapfi cells below:
run pela-seed3 --engine2 $O/pbrain-pela --name2 pela --rule freestyle \
    --openings data/openings/freestyle15-v3.txt --seed 3
run pela-seed4 --engine2 $O/pbrain-pela --name2 pela --rule freestyle \
    --openings data/openings/freestyle15-v3.txt --seed 4
run pela-caro --engine2 $O/pbrain-pela --name2 pela --rule caro --openings data/openings/caro15.txt
run pela-gomocup --engine2 $O/pbrain-pela --name2 pela --rule caro_gomocup \
    --openings data/openings/caro15.txt
# Score a record again (the four Pela freestyle runs pooled):
$B/caro-match score pela.games.jsonl.gz pela-seed2.games.jsonl.gz pela-seed3.games.jsonl.gz \
    pela-seed4.games.jsonl.gz

# Rapfi, main's engine on four new seeds (scripts/field-ab, one build, two matches side by side;
# run first with --seeds 71,72, then resumed with all four, which skipped the two done):
scripts/field-ab --caro-match $B/caro-match --opponent $O/pbrain-rapfi --opponent-name rapfi \
    --out ab --runs 1 --seeds 71,72,73,74 "base=$B/pbrain-caro"
