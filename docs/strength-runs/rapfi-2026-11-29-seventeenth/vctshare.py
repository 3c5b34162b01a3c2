#!/usr/bin/env python3
"""What the root's threat-space search takes and finds, from moves.tsv files (moves.py).
usage: vctshare.py LABEL FILE... (one label for the files pooled)"""
import csv, gzip, statistics as st, sys
rows = []
for f in sys.argv[2:]:
    with (gzip.open(f, 'rt') if f.endswith('.gz') else open(f)) as fh:
        rows += list(csv.DictReader(fh, delimiter='\t'))
pre = [int(r['first_ms']) for r in rows if r['first_depth'] == '1']
wins = [int(r['first_ms']) for r in rows if r['first_depth'] == '1' and r['first_score'].startswith('+M')]
deep = [int(r['last_depth']) for r in rows]
print(f"{sys.argv[1]}: {len(rows)} searched moves; before the main search: mean {st.fmean(pre):.1f} ms, median {st.median(pre)}, "
      f"40 ms or more in {100 * sum(p >= 40 for p in pre) / len(pre):.1f}%; proven wins at the root {len(wins)} "
      f"({sum(w > 10 for w in wins)} after more than 10 ms); last depth median {st.median(deep)}")
