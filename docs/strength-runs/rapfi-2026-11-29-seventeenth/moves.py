#!/usr/bin/env python3
"""Per move of our engine in a caro-match directory's match.log: the first and last search report.
usage: moves.py MATCH_DIR ENGINE_NAME > moves.tsv
Columns: game, our move number in the game, first report's depth, time (ms) and score, last report's depth and time.
The first report comes after the root's VCF and threat-space search (depth 1 with a '+M' score: a win they proved)."""
import re, sys
d, me = sys.argv[1], sys.argv[2]
first = last = None; n = {}
print('game\tmove\tfirst_depth\tfirst_ms\tfirst_score\tlast_depth\tlast_ms')
for line in open(d + '/match.log'):
    m = re.match(r'\[game (\d+)\] (\S+) > (.*)', line)
    if not m or m.group(2) != me:
        continue
    g, msg = int(m.group(1)), m.group(3)
    if msg.startswith('MESSAGE depth'):
        f = msg.split()
        rep = (int(f[2]), int(re.search(r' time (\d+)', msg).group(1)), f[4])
        first = first or rep; last = rep
    elif re.fullmatch(r'\d+,\d+', msg):
        n[g] = n.get(g, 0) + 1
        if first:
            print(f'{g}\t{n[g]}\t{first[0]}\t{first[1]}\t{first[2]}\t{last[0]}\t{last[1]}')
        first = last = None
