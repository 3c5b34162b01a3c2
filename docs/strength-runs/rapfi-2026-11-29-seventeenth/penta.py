import json, math, sys, collections
# Pentanomial score, Elo (normal approximation) and the SPRT's LLR (elo0 0, elo1 20) of engine1 over finished pairs.
pairs = collections.defaultdict(list)
for l in open(sys.argv[1]):
    g = json.loads(l); pairs[g['pair']].append({'win': 1, 'draw': .5, 'loss': 0}[g['engine1_score']])
ps = [sum(v) / 2 for v in pairs.values() if len(v) == 2]
n = len(ps); mu = sum(ps) / n; var = sum((p - mu) ** 2 for p in ps) / n
penta = [sum(1 for p in ps if p == k / 4) for k in range(5)]
elo = lambda s: -400 * math.log10(1 / s - 1)
sc = lambda e: 1 / (1 + 10 ** (-e / 400))
s0, s1 = sc(0), sc(20)
llr = n * (s1 - s0) * (2 * mu - s0 - s1) / (2 * var)
h = 1.96 * math.sqrt(var / n)
print(f'{n} pairs {penta}: score {100*mu:.1f}%, Elo {elo(mu):+.1f} [{elo(mu-h):+.1f}, {elo(mu+h):+.1f}], LLR {llr:.2f}')
