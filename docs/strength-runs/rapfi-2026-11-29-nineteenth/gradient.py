#!/usr/bin/env python3
"""Reads a `caro-match spsa` run's steps.jsonl and estimates, for each tuned number, the slope
of the step result along its perturbation: the mean over steps of sign * result, where sign is
+1 when the `+` engine had the number raised (the record's `signs`). Every number is perturbed
at each step with an independent random sign, so each mean is an unbiased estimate of that
number's effect (the others average out into noise), with standard error sd(sign * result) /
sqrt(steps). Prints the names (given in `Space::params` order), the mean, its z and where the
run moved the number from and to.

usage: gradient.py STEPS_JSONL NAME1,NAME2,...
"""
import json
import math
import sys

path, names = sys.argv[1], sys.argv[2].split(",")
steps = sorted((json.loads(line) for line in open(path)), key=lambda r: r["step"])
n = len(steps)
first, last = steps[0]["values"], steps[-1]["values"]
print(f"{n} steps; result sum {sum(r['result'] for r in steps):+.1f}")
print(f"{'number':16s} {'mean':>7s} {'z':>6s}   {'after step 1':>12s} {'at the end':>10s}")
for i, name in enumerate(names):
    xs = [(1 if r["signs"][i] == "+" else -1) * r["result"] for r in steps]
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    z = mean / (sd / math.sqrt(n)) if sd > 0 else 0.0
    print(f"{name:16s} {mean:+7.3f} {z:+6.2f}   {first[i]:12.2f} {last[i]:10.2f}")
