#!/bin/sh
# The thirty-first session's cells of `keep` against Rapfi (2026-12-02), on from the thirtieth's
# seeds 99-113. BIN: release caro-match and pbrain-caro of 26b08a5 (main; keep is a switch, off
# by default); keep runs through a two-line wrapper:
#   exec $BIN/pbrain-caro --search keep=1 "$@"
# Rapfi as docs/strength.md says (rapfi 3aedf3a, rapfi-networks 918b757). Ten seeds were
# queued; the run was stopped after the eighth pair (seeds 122-123 not played, nothing of them
# kept).
nice -n -10 python3 scripts/field-ab --caro-match $BIN/caro-match \
    --opponent /work/outside/pbrain-rapfi --opponent-name rapfi --out ab --runs 1 \
    --seeds 114,115,116,117,118,119,120,121,122,123 \
    "base=$BIN/pbrain-caro" "keep=$BIN/keep"
# the same arguments with --report (seeds 114-121): rapfi-report.md
# rapfi-report-seeds-99-121.md: --report over a directory holding both sessions' cells
# (../field-2026-12-02-thirtieth/ab and ab here), --seeds 99,...,121
