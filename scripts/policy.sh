#!/usr/bin/env bash
# The learnt ordering of quiet moves, from the recorded games to crates/engine/src/search/policy.txt
# (docs/engine.md, "A move ordering learnt from Rapfi's moves"): Rapfi's moves listed from the
# match records, then the fit. Deterministic: the same records give the same file.
#
#   scripts/policy.sh [records-dir] [epochs]
#
# Defaults: docs/strength-runs (every recorded game against Rapfi), 6 passes. Everything goes to
# target/policy/ (not tracked): moves.txt, policy.txt and fit.log. To play with the table, copy
# it over crates/engine/src/search/policy.txt and rebuild. The shipped table was fitted on the
# records as they were at commit 9a819c5 (10,416 games); to write its numbers again:
#
#   git archive 9a819c5 docs/strength-runs | tar -x -C /tmp/records
#   scripts/policy.sh /tmp/records/docs/strength-runs
set -euo pipefail
cd "$(dirname "$0")/.."
records=${1:-docs/strength-runs}
epochs=${2:-6}
mkdir -p target/policy
cargo build --release -p caro-engine --example policy
scripts/policy-data target/policy/moves.txt "$records"
time target/release/examples/policy target/policy/moves.txt target/policy/policy.txt "$epochs" |
    tee target/policy/fit.log
