#!/bin/sh
# The thirtieth session's screen of `keep` against Rapfi (2026-12-02). base: release
# pbrain-caro of 78f02b5 (main's engine); keep: the same source with the keep switch (the patch
# committed as 832288e), run through a two-line wrapper:
#   exec /work/s30/keep/pbrain-caro --search keep=1 "$@"
# Rapfi rebuilt as docs/strength.md says (rapfi 3aedf3a, rapfi-networks 918b757).
cargo build --release -p caro-pbrain -p caro-match
nice -n -10 python3 scripts/field-ab --caro-match /work/s30/base/caro-match \
    --opponent /work/outside/pbrain-rapfi --opponent-name rapfi --out /work/s30/ab --runs 1 \
    --seeds 99,100,101,102,103,104,105,106,107,108,109,110,111,112,113 \
    "base=/work/s30/base/pbrain-caro" "keep=/work/s30/keep/run"
# the same arguments with --report: rapfi-report.md
