# The thirty-fifth session's Rapfi cells (2026-12-03): main's engine (the bonuses at half weight,
# the default since 6af9726) alone on new seeds. BIN holds pbrain-caro and caro-match built in
# release from 40966f3 (the search of 6af9726: `bench` 84,966); Rapfi (classical) is built as
# docs/strength.md says, its wrapper at $RAPFI. 200 ms a move, v3 book, 64 games a match, two
# matches side by side (--lanes 2) at nice -n -10 on an otherwise idle machine.
R=docs/strength-runs/field-2026-12-03-thirty-fifth
nice -n -10 python3 scripts/field-ab --caro-match $BIN/caro-match \
    --opponent $RAPFI --opponent-name rapfi --out $R/ab --runs 1 \
    --seeds 152,153,154,155,156,157,158,159,160,161,162,163,164,165,166,167,168,169,170,171 \
    "main=$BIN/pbrain-caro"
# Stopped by hand for the session's clock once seeds 152-167 had finished; the unfinished
# seed-168 and seed-169 matches were discarded. (The records are stored gzipped.)

# The report (rapfi-report.md):
python3 scripts/field-ab --out $R/ab --opponent $RAPFI --opponent-name rapfi --runs 1 \
    --seeds 152,153,154,155,156,157,158,159,160,161,162,163,164,165,166,167 --report \
    "main=$BIN/pbrain-caro"
