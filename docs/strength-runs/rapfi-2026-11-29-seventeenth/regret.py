#!/usr/bin/env python3
"""Paired move quality by Rapfi's judgement: for positions where two builds' moves differ, Rapfi
(node-limited, a fresh process per child, so each eval is deterministic and independent of order)
evaluates the position after each move; the difference of those values (mover's view) is the
second build's gain on that position. Positions where the moves agree contribute 0.
usage: RAPFI=... regret.py CACHE NODES A.txt B.txt   (files: 'moves | move | ...' lines)"""
import json, math, os, re, select, subprocess, sys, statistics as st
cache_f, nodes, fa, fb = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def load(f): return {l.split('|')[0].strip(): l.split('|')[1].strip() for l in open(f)}
A, B = load(fa), load(fb)
cache = json.load(open(cache_f)) if os.path.exists(cache_f) else {}
def xy(s): return ord(s[0]) - 97, int(s[1:]) - 1
EV = re.compile(r'(?<![\w])Eval ([-+]?M?\d+)')
def rapfi_eval(moves):
    p = subprocess.Popen([os.environ['RAPFI']], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    def send(s): p.stdin.write(s + '\n'); p.stdin.flush()
    send('START 15')
    while p.stdout.readline().strip() != 'OK': pass
    for s in ('INFO timeout_turn 100000', 'INFO timeout_match 100000000', 'INFO rule 0', f'INFO max_node {nodes}'):
        send(s)
    send('BOARD'); k = len(moves)
    for i, s in enumerate(moves):
        x, y = xy(s); send(f'{x},{y},{1 if (i % 2) == (k % 2) else 2}')
    send('DONE'); last = None
    while True:
        l = p.stdout.readline()
        if not l: break
        m = EV.search(l)
        if m: last = m.group(1)
        if re.fullmatch(r'\d+,\d+', l.strip()): break
    send('END'); p.wait(timeout=10)
    return last
def value(e):  # Rapfi's eval string (side to move's view) -> a number clamped at +-2000
    if e is None: return 0
    if 'M' in e: return -2000 if e.startswith('-') else 2000
    return max(-2000, min(2000, int(e)))
diffs = []; n = 0
for pos in A:
    if pos not in B: continue
    n += 1
    if A[pos] == B[pos]: diffs.append(0.0); continue
    vals = []
    for mv in (A[pos], B[pos]):
        key = pos + ' | ' + mv
        if key not in cache:
            cache[key] = rapfi_eval(pos.split() + [mv])
            json.dump(cache, open(cache_f, 'w'))
        vals.append(-value(cache[key]))  # the mover's view
    sig = lambda v: 1 / (1 + math.exp(-v / 250))
    diffs.append((vals[1] - vals[0], sig(vals[1]) - sig(vals[0])))
ev = [d[0] if isinstance(d, tuple) else 0.0 for d in diffs]
pr = [d[1] if isinstance(d, tuple) else 0.0 for d in diffs]
nd = sum(isinstance(d, tuple) for d in diffs)
for name, xs in (('eval', ev), ('win prob x100', [100 * x for x in pr])):
    m, s = st.fmean(xs), st.stdev(xs)
    print(f'{fb} vs {fa}: {n} positions, {nd} differ; {name}: mean {m:+.2f} se {s / math.sqrt(n):.2f} z {m / (s / math.sqrt(n)):+.2f}')
