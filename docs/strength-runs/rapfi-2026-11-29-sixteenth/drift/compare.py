import json,statistics,collections
sel={' '.join(o['moves'][:-1]):o for o in json.load(open('sel.json'))}
def xy(s): return ord(s[0])-97, int(s[1:])-1
rows=[]
for l in open('best0.txt'):
    a,b,c=[t.strip() for t in l.split('|')]
    o=sel.get(a)
    if not o: continue
    rows.append((a.split(),o['moves'][-1],b,o))
print('positions',len(rows),'agree',sum(r[1]==r[2] for r in rows))
def feats(moves,mv):
    k=len(moves); me=k%2
    own={xy(s) for i,s in enumerate(moves) if i%2==me}; opp={xy(s) for i,s in enumerate(moves) if i%2!=me}
    x,y=xy(mv)
    cheb=lambda p:max(abs(p[0]-x),abs(p[1]-y))
    f={}
    f['d_opp_last']=cheb(xy(moves[-1])); f['d_own_last']=cheb(xy(moves[-2]))
    # line stones within 4 along 4 dirs
    lo=lp=0; lo2=lp2=0
    for dx,dy in ((1,0),(0,1),(1,1),(1,-1)):
        for s in (1,-1):
            for t in range(1,5):
                q=(x+s*t*dx,y+s*t*dy)
                if q in own: lo+=1; lo2+= t<=2
                elif q in opp: lp+=1; lp2+= t<=2
    f['own_line4']=lo; f['opp_line4']=lp; f['own_line2']=lo2; f['opp_line2']=lp2
    f['n_own_r1']=sum(cheb(p)==1 for p in own); f['n_opp_r1']=sum(cheb(p)==1 for p in opp)
    cx=sum(p[0] for p in own|opp)/len(own|opp); cy=sum(p[1] for p in own|opp)/len(own|opp)
    f['d_centroid']=max(abs(x-cx),abs(y-cy))
    return f
diff=[r for r in rows if r[1]!=r[2]]
acc=collections.defaultdict(lambda:[[],[]])
for moves,ours,rap,o in diff:
    fo=feats(moves,ours); fr=feats(moves,rap)
    for k in fo: acc[k][0].append(fo[k]); acc[k][1].append(fr[k])
print('feature: ours mean | rapfi mean  (over',len(diff),'disagreements)')
for k,(a,b) in acc.items():
    print(f"{k:12s} {statistics.mean(a):6.2f} | {statistics.mean(b):6.2f}   ours>rapfi {sum(x>y for x,y in zip(a,b))} ours<rapfi {sum(x<y for x,y in zip(a,b))}")
