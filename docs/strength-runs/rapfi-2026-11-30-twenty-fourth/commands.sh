# The twenty-fourth session's screens against Rapfi (2026-11-30), from the repository. $O holds the
# outside engines (docs/strength.md, "Against the field"). S23 holds caro-match and pbrain-caro
# built in release from main at f66026e (`policy` 16 by default: main's engine); R holds
# pbrain-caro built from the same tree with the refitted table (policy-refit.txt copied over
# crates/engine/src/search/policy.txt).
S=docs/strength-runs/rapfi-2026-11-30-twenty-fourth

# The refit: the learnt ordering fitted again on every recorded game against Rapfi at f66026e
# (13,755 games; the shipped table: 10,416 at 9a819c5). Writes target/policy/policy.txt and fit.log.
scripts/policy.sh

# Three builds on five new seeds, one run, two matches side by side (at nice -10). The refit was
# dropped after seed 68 (scripts/field-ab stopped and restarted without it), and the screen after
# seed 69, for the session's clock.
scripts/field-ab --caro-match $S23/caro-match --opponent $O/pbrain-rapfi --opponent-name rapfi \
    --out ab --runs 1 --seeds 65,66,67,68,69,70,71,72 "base=$S23/pbrain-caro" \
    "refit=$R/pbrain-caro" \
    "lean=$S23/pbrain-caro --search nmp_depth=4 --search lmp_quarters=3 --search vct_sixteenths=3"
scripts/field-ab ... --out ab --runs 1 --seeds 65,...,69 --report "base=..." "lean=..." > report.md
scripts/field-ab ... --out ab --runs 1 --seeds 65,...,68 --report "base=..." "refit=..." >> report.md

# Self-play under caro, the learnt ordering (policy 16, the default) against policy 0, the same
# binary, run on from the twenty-third session's undecided one with a new seed; stopped for the
# clock after 309 games (the run was killed, so it wrote no summary.json).
$S23/caro-match play --engine1 "$S23/pbrain-caro" --engine2 "$S23/pbrain-caro --search policy=0" \
    --name1 p16 --name2 p0 --rule caro --size 15 --turn-ms 200 --games 2000 \
    --openings data/openings/caro15.txt --concurrency 2 --sprt 0,20,0.05,0.05 \
    --seed 241 --out sprt-caro -q

# null-place.patch (not on main): the learnt place terms read the last two stones by the side to
# move below a null move (Position::last_stones). `pbrain-caro bench` reads the same 105,287
# nodes at depth 10; `bench 12` 349,104 against 315,395. Not measured in play.
# (kept: ab/*/r1-s*/summary.json and games.jsonl.gz, report.md, refit-fit.log, policy-refit.txt,
# sprt-caro/games.jsonl.gz)
