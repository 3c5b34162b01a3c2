#!/bin/bash
# usage: agree.sh NAME BIN TURN  -> ours-NAME.txt; prints agreement with Rapfi's moves (best0.txt)
cd "$(dirname "$0")"
RAPFI=$2 python3 bestmove.py pos-in.txt ours-$1.txt $3 0 1 > /dev/null 2>&1
python3 - $1 <<'P'
import sys
r={l.split('|')[0].strip():l.split('|')[1].strip() for l in open('best0.txt')}
o={l.split('|')[0].strip():l.split('|')[1].strip() for l in open(f'ours-{sys.argv[1]}.txt')}
common=[k for k in o if k in r]
print(sys.argv[1], 'agree', sum(o[k]==r[k] for k in common), 'of', len(common))
P
