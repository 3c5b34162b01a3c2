import json,statistics
exec(open('compare.py').read().split("diff=[r for r")[0].replace("print('positions'","0 and print('positions'"))
def windows_count(moves, mv, side_is_me):
    k=len(moves); me=k%2
    own={xy(s) for i,s in enumerate(moves) if i%2==me}; opp={xy(s) for i,s in enumerate(moves) if i%2!=me}
    A,B=(own,opp) if side_is_me else (opp,own)
    x,y=xy(mv); best=0; fours=0; threes=0
    for dx,dy in ((1,0),(0,1),(1,1),(1,-1)):
        f3=f2=False
        for st in range(-4,1):
            cells=[(x+(st+t)*dx,y+(st+t)*dy) for t in range(5)]
            if any(not(0<=a<15 and 0<=b<15) for a,b in cells): continue
            if any(c in B for c in cells): continue
            n=sum(c in A for c in cells)
            if n==3: f3=True
            if n==2: f2=True
        fours+=f3; threes+=f2
    return fours,threes
diff=[r for r in rows if r[1]!=r[2]]
for name,idx in (('ours',1),('rapfi',2)):
    of=[windows_count(m,r[idx],False) for r in diff for m in [r[0]]]
    mf=[windows_count(m,r[idx],True) for r in diff for m in [r[0]]]
    print(name,'opp four-sq lines',round(statistics.mean(a for a,b in of),3),'opp 3-in-window lines',round(statistics.mean(b for a,b in of),3),
          '| own four-sq lines',round(statistics.mean(a for a,b in mf),3),'own 3-window lines',round(statistics.mean(b for a,b in mf),3))
