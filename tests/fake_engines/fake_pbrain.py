#!/usr/bin/env python3
"""fake_pbrain.py: a TEST FIXTURE, not an engine.

A scripted Gomocup (Piskvork protocol 2) brain for the server's outside-engine tests
(tests/outside_bots.rs). It plays the empty cell nearest the centre (ties: the first in reading
order) and misbehaves on demand when asked for its Nth move of a game (N = its stones on the
board + 1, so the count is right however the position reaches it):

    fake_pbrain.py MODE [--at N] [--record FILE]

    good             plays legally
    chatty           before each move: blank, MESSAGE, DEBUG and UNKNOWN lines (some look like
                     moves); after each move a late MESSAGE line
    illegal          move N is on a taken cell
    garbage          move N is answered with words
    error            move N is answered "ERROR ..."
    crash            exits with status 3 when asked for move N
    crash-once FILE  like crash, but only if FILE does not exist yet (it is created first), so
                     a restarted process plays well
    hang             never answers move N (sleeps)
    slow MS          sleeps MS milliseconds before answering move N
    refuse           answers every START with ERROR
    one-game         answers the first START with OK, every later one with ERROR (an engine
                     that expects RESTART between games)
    exit             exits at once, before reading anything (a broken command)

--at N (default 1) picks the move, --at 0 every move. --record FILE appends "PID start",
"PID < LINE" for every line received, "PID think" and "PID done" (one short write each), so
tests can read the protocol transcript, count processes and see whether two moves ever
overlapped. Standard library only.
"""

import os
import sys
import time


def main():
    args = sys.argv[1:]
    at, record = 1, None
    if "--at" in args:
        i = args.index("--at")
        at = int(args[i + 1])
        del args[i : i + 2]
    if "--record" in args:
        i = args.index("--record")
        record = args[i + 1]
        del args[i : i + 2]
    mode = args[0] if args else "good"
    arg = args[1] if len(args) > 1 else None

    def note(event):
        if record:
            with open(record, "a") as f:
                f.write(f"{os.getpid()} {event}\n")

    def say(line):
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    if mode == "exit":
        sys.exit(1)
    note("start")

    w = h = 15
    stones = {}  # (x, y) -> field (1 mine, 2 the opponent's)

    def move():
        mine = sum(1 for f in stones.values() if f == 1)
        n = mine + 1
        note("think")
        if mode == "chatty":
            say("")
            say("MESSAGE 0,0 is what I would never play")
            say("DEBUG 1,1")
            say("UNKNOWN nothing")
            say("message lower case 2,2")
        if n == at or at == 0:
            if mode == "illegal":
                x, y = next(iter(stones)) if stones else (w, h)
                say(f"{x},{y}")
                note("done")
                return
            if mode == "garbage":
                say("I resign, said nobody")
                note("done")
                return
            if mode == "error":
                say("ERROR something went wrong")
                note("done")
                return
            if mode == "crash":
                sys.exit(3)
            if mode == "crash-once" and not os.path.exists(arg):
                with open(arg, "w") as f:
                    f.write("crashed\n")
                sys.exit(3)
            if mode == "hang":
                while True:
                    time.sleep(60)
            if mode == "slow":
                time.sleep(int(arg) / 1000)
        cx, cy = w // 2, h // 2
        best = min(
            ((x, y) for y in range(h) for x in range(w) if (x, y) not in stones),
            key=lambda c: ((c[0] - cx) ** 2 + (c[1] - cy) ** 2, c[1], c[0]),
        )
        stones[best] = 1
        say(f"{best[0]},{best[1]}")
        note("done")
        if mode == "chatty":
            say("MESSAGE that was my move")

    started = False
    for raw in sys.stdin:
        line = raw.strip()
        note(f"< {line}")
        cmd, _, rest = line.partition(" ")
        cmd = cmd.upper()
        if cmd in ("START", "RECTSTART"):
            if mode == "refuse" or (mode == "one-game" and started):
                say("ERROR I do not play today")
                continue
            started = True
            if cmd == "START":
                w = h = int(rest)
            else:
                w, h = (int(v) for v in rest.split(","))
            stones = {}
            say("OK")
        elif cmd in ("INFO", ""):
            pass
        elif cmd == "END":
            return
        elif cmd == "ABOUT":
            say('name="fake_pbrain", version="1"')
        elif cmd == "BEGIN":
            move()
        elif cmd == "TURN":
            x, y = (int(v) for v in rest.split(","))
            stones[(x, y)] = 2
            move()
        elif cmd == "BOARD":
            for raw in sys.stdin:
                item = raw.strip()
                note(f"< {item}")
                if item.upper() == "DONE":
                    break
                x, y, field = (int(v) for v in item.split(","))
                stones[(x, y)] = field
            move()
        else:
            say(f"UNKNOWN {cmd}")


if __name__ == "__main__":
    main()
