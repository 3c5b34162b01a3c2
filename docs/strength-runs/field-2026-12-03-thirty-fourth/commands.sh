# The thirty-fourth session's Rapfi screen (2026-12-03): main's engine with the history and
# killer bonuses at half weight (`bonuses` 8, the default since 6af9726) beside the same binary
# with them whole (`--search bonuses=16`, main's engine before), on new seeds. BIN holds
# pbrain-caro and caro-match built in release from 6af9726; Rapfi (classical) is built as
# docs/strength.md says, its wrapper at $RAPFI. 200 ms a move, v3 book, 64 games a match, two
# matches side by side at nice -n -10 on an otherwise idle machine.
R=docs/strength-runs/field-2026-12-03-thirty-fourth
nice -n -10 python3 scripts/field-ab --caro-match $BIN/caro-match \
    --opponent $RAPFI --opponent-name rapfi --out $R/ab --runs 1 \
    --seeds 146,147,148,149,150,151,152,153,154,155,156,157 \
    "whole=$BIN/pbrain-caro --search bonuses=16" "half=$BIN/pbrain-caro"
# Stopped by hand for the session's clock once both engines had played seeds 146-151; the
# unfinished seed-152 match of `whole` was discarded. (The records are stored gzipped.)

# The report (rapfi-report.md):
python3 scripts/field-ab --out $R/ab --opponent $RAPFI --opponent-name rapfi --runs 1 \
    --seeds 146,147,148,149,150,151 --report \
    "whole=$BIN/pbrain-caro --search bonuses=16" "half=$BIN/pbrain-caro"

# Then AIWine and Pela with the same binary: the thirty-third session's commands and openings
# (strength-runs/field-2026-12-03-thirty-third/commands.sh, its first part), with BIN as above,
# two queues (aiwine, pela-seed2, pela-seed4, pela-gomocup and pela, pela-seed3, pela-caro)
# side by side at nice -n -10 on an otherwise idle machine (13 minutes). Each match's
# summary.json and games are kept as NAME.summary.json and NAME.games.jsonl.gz.
