#!/usr/bin/env python3
# Rapfi's move and eval for positions (one per line: space-separated moves, side to move = next).
# usage: RAPFI=... bestmove.py IN OUT TURN_MS LANE NLANES
import os, re, select, subprocess, sys
inp, out, turn, lane, nl = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
pos = [l.split() for l in open(inp)][lane::nl]
p = None; buf = b''
def send(s): p.stdin.write(s + '\n'); p.stdin.flush()
def readline(timeout=5.0):
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
    p = subprocess.Popen([os.environ['RAPFI']], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    send('START 15')
    while readline(10).strip() != 'OK': pass
    send(f'INFO timeout_turn {turn}'); send('INFO timeout_match 100000000'); send('INFO rule 0')
start()
ev = re.compile(r'(?<![\w])Eval ([-+]?M?\d+)')
def sq(x, y): return chr(97 + x) + str(y + 1)
def xy(s): return ord(s[0]) - 97, int(s[1:]) - 1
with open(out, 'w') as o:
    for moves in pos:
        k = len(moves)
        send('BOARD')
        for i, s in enumerate(moves):
            x, y = xy(s); send(f'{x},{y},{1 if (i % 2) == (k % 2) else 2}')
        send('DONE')
        last = None
        try:
            while True:
                l = readline().strip()
                m = ev.search(l)
                if m: last = m.group(1)
                if re.fullmatch(r'\d+,\d+', l): break
        except TimeoutError:
            start(); continue
        x, y = map(int, l.split(','))
        o.write(f"{' '.join(moves)} | {sq(x, y)} | {last}\n"); o.flush()
send('END')
