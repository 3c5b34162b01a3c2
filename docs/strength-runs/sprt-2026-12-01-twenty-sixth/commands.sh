# The twenty-sixth session's run (2026-12-01), from the repository at 7fc321a: the search's
# numbers tuned again by self-play, with the learnt ordering, then the result played against
# the defaults (made the default at f841946). BASE holds caro-match and pbrain-caro built in release from 7fc321a.
S=docs/strength-runs/sprt-2026-12-01-twenty-sixth

# SPSA over the sixteen search numbers (space `search`) from SearchParams::default() of
# 7fc321a: 1,600 pairs at 40 ms a move, two threads, seed 261, r_end 0.005, the four books.
# 2,426 s on a machine at about half the speed of earlier sessions; spsa.log holds the
# progress lines, spsa-search.txt the file it wrote (its `# search:` line the rounded result).
cargo run --release -p caro-engine --example spsa -- spsa-search.txt 1600 40 2 261 0.005 search \
    2> spsa.log

# The tuned numbers (the run's last values, whole numbers rounded) against the defaults of
# 7fc321a, the same binary, self-play SPRT at 200 ms a move on the v3 book.
SPSA="--search lmr_k=0.69109 --search lmr_base=0.855065 --search lmp_base=1 --search lmp_quarters=2
      --search nmp_depth=3 --search nmp_base=2 --search nmp_div=4 --search rfp_depth=4
      --search rfp_margin=189 --search tactical=307 --search defence=14 --search killer0=246
      --search killer1=187 --search aspiration=143 --search vct_sixteenths=4 --search policy=15"
$BASE/caro-match play --engine1 "$BASE/pbrain-caro $(echo $SPSA)" --engine2 $BASE/pbrain-caro \
    --name1 spsa2 --name2 main --rule freestyle --size 15 --turn-ms 200 --games 2000 \
    --openings data/openings/freestyle15-v3.txt --concurrency 2 --sprt 0,20,0.05,0.05 \
    --seed 261 --out sprt -q
# Stopped by hand after 1,024 games (511 complete pairs) for the session's clock,
# undecided (LLR 0.79); sprt/summary.json is `caro-match score --json` of its games.

# Run on with a new seed, the same engines:
$BASE/caro-match play --engine1 "$BASE/pbrain-caro $(echo $SPSA)" --engine2 $BASE/pbrain-caro \
    --name1 spsa2 --name2 main --rule freestyle --size 15 --turn-ms 200 --games 2000 \
    --openings data/openings/freestyle15-v3.txt --concurrency 2 --sprt 0,20,0.05,0.05 \
    --seed 262 --out sprt2 -q
# Stopped by hand after 289 games. The two runs pooled crossed the H1 bound (LLR 2.968) at
# game 1,252: the first run's 1,024 games and the first 228 of the second, in file order:
#   caro-match score sprt/games.jsonl.gz <(zcat sprt2/games.jsonl.gz | head -228) --sprt 0,20,0.05,0.05

# Score the records again with:
$BASE/caro-match score $S/sprt/games.jsonl.gz $S/sprt2/games.jsonl.gz --sprt 0,20,0.05,0.05
