#!/usr/bin/env python3
"""Labels positions of our games against Rapfi with Rapfi's own evaluation (side to move), for a
Texel fit of our evaluation to a stronger engine's. One persistent Rapfi process per lane; each
position is sent as BOARD ... DONE (fields 1 = the side to move's stones, 2 = the other's), the
last `Eval N` before the move is kept; mate evaluations (`+M3`) are skipped.
usage: RAPFI=path/to/pbrain-rapfi label.py OUT.txt TURN_MS LANE NLANES games.jsonl...
(output: rule | moves | result | eval, the format of selfplay_positions; OUT.mates: the first mate per game).
A position Rapfi does not answer within 3 s restarts it and is skipped (about 2% did, unexplained)."""
import json, re, subprocess, sys, random
out, turn, lane, nlanes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
files = sys.argv[5:]
games = [json.loads(line) for f in files for line in open(f)]
random.Random(7).shuffle(games)
pos = []
for gi, g in enumerate(games[lane::nlanes]):
    moves = g['moves']; book = len(g['opening'].split())
    w = g.get('winner')
    ours = g['engine1_color']
    for k in range(book, len(moves) - 3):
        stm = 'x' if k % 2 == 0 else 'o'
        res = 0.5 if w not in ('x', 'o') else (1.0 if w == stm else 0.0)
        pos.append((moves[:k], res, gi, (ours, w, len(moves), book)))
def xy(sq): return ord(sq[0]) - 97, int(sq[1:]) - 1
import select
p = None
def send(s): p.stdin.write(s + '\n'); p.stdin.flush()
import os
buf = b''
def readline(timeout=3.0):
    global buf
    while b'\n' not in buf:
        r, _, _ = select.select([p.stdout], [], [], timeout)
        if not r: raise TimeoutError
        chunk = os.read(p.stdout.fileno(), 65536)
        if not chunk: return ''
        buf += chunk
    line, buf = buf.split(b'\n', 1)
    return line.decode() + '\n'
def start():
    global p, buf
    buf = b''
    if p: p.kill(); p.wait()
    p = subprocess.Popen([os.environ.get('RAPFI', 'pbrain-rapfi')], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    os.set_blocking(p.stdout.fileno(), True)
    send('START 15')
    while readline(10).strip() != 'OK': pass
    send(f'INFO timeout_turn {turn}'); send('INFO timeout_match 100000000'); send('INFO rule 0')
start()
stuck = 0
ev = re.compile(r'(?<![\w])Eval ([-+]?M?\d+)')
n = 0
mates = {}
firstmate = open(out + '.mates', 'w')
with open(out, 'w') as o:
    for moves, res, gi, info in pos:
        if mates.get(gi, 0) >= 2:
            continue
        k = len(moves)
        send('BOARD')
        for i, sq in enumerate(moves):
            x, y = xy(sq)
            mine = (i % 2) == (k % 2)
            send(f'{x},{y},{1 if mine else 2}')
        send('DONE')
        last = None
        try:
          while True:
            l = readline()
            if not l: sys.exit('rapfi died')
            l = l.strip()
            m = ev.search(l)
            if m: last = m.group(1)
            if re.fullmatch(r'\d+,\d+', l): break
        except TimeoutError:
            stuck += 1; print('stuck', stuck, ' '.join(moves), file=sys.stderr, flush=True); start(); continue
        if last is None or 'M' in last:
            if last and mates.get(gi, 0) == 0:
                firstmate.write(f"{gi} {info[0]} {info[1]} {info[2]} {info[3]} {k} {last}\n"); firstmate.flush()
            mates[gi] = mates.get(gi, 0) + 1
            continue
        o.write(f"0 | {' '.join(moves)} | {res} | {int(last)}\n"); n += 1
        if n % 500 == 0: o.flush(); print(lane, n, file=sys.stderr, flush=True)
send('END')
