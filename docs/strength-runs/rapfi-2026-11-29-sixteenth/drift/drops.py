import gzip, json, glob, collections
R='../../'
recs={}
for f in glob.glob(R+'**/*games.jsonl', recursive=True):  # the session's own records were searched too (/work/rab/*/games.jsonl on the machine used)
    for line in open(f):
        g=json.loads(line)
        if 'rapfi' not in (g['x'],g['o']): continue
        recs.setdefault(tuple(g['moves']), g)
lines=[l.strip().split(' | ') for l in gzip.open(R+'rapfi-distill-2026-11-28/positions.txt.gz','rt')]
# segment into games
games=[]; cur=[]
for rule,mv,res,ev in lines:
    m=mv.split()
    if cur and not (len(m)>len(cur[-1][0]) and m[:len(cur[-1][0])]==cur[-1][0]):
        games.append(cur); cur=[]
    cur.append((m,int(ev)))
games.append(cur)
print(len(games),'games segmented')
full=list(recs.keys())
out=[]
for gpos in games:
    last=gpos[-1][0]
    cand=[k for k in full if list(k[:len(last)])==last]
    if len(cand)!=1:
        continue
    g=recs[cand[0]]
    ours='x' if g['x']!='rapfi' else 'o'
    ev={len(m):e for m,e in gpos}   # eval for side to move at ply len(m)
    book=len(g['opening'].split())
    for k in sorted(ev):
        stm='x' if k%2==0 else 'o'
        if stm!=ours or (k+1) not in ev: continue
        # our move at ply k: value before (our view) and after (our view = -eval of opp to move)
        before=ev[k]; after=-ev[k+1]
        out.append(dict(moves=g['moves'][:k+1], k=k-book, before=before, after=after, drop=before-after, winner=g['winner'], ours=ours))
print(len(out),'our moves with both evals')
json.dump(out,open('drops.json','w'))
import statistics
ds=[o['drop'] for o in out]
print('median drop',statistics.median(ds),'mean',statistics.mean(ds))
big=[o for o in out if o['drop']>=300 and o['before']>-800]
print('drops>=300 with before>-800:',len(big))
print(collections.Counter(min(o['k']//4,8) for o in big))
