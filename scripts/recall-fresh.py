#!/usr/bin/env python3
"""Recall on the blind fresh sets (tests/real/fresh-2/A and B, or another set's directory): each set's expert.tsv was written
before permaudit ran on its configurations (see each NOTES.md). Every case under cases/ is staged
(proj/ made a git repository, HOME = its home/), `permaudit check --format json` runs, and a row
counts as scripts/recall.py counts it: REPORTED when a warning or error is at its file and line
(or names that line among its related places or in its message), NOTED when only an info does,
MISSED otherwise.

    python3 scripts/recall-fresh.py [BIN] [SET]   # BIN: target/release/permaudit; SET: tests/real/fresh-2
    ROWS=1 python3 scripts/recall-fresh.py ...    # also print each warning/error row not reported
"""
import csv,json,os,re,collections,shutil,subprocess,sys,tempfile
ROOT=os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
BIN=os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/permaudit")); root=tempfile.mkdtemp()
def places(f,dst):
    out=set()
    def add(s):
        if s and s.get('path') and s.get('line') is not None: out.add((os.path.relpath(s['path'],dst),int(s['line'])))
    add(f.get('source'))
    for r in f.get('related') or []: add(r.get('source'))
    for m in re.finditer(re.escape(dst)+r"/([^\s():,`'\"]+):(\d+)(?::\d+)?", f.get('message') or ''): out.add((m.group(1),int(m.group(2))))
    return out
tot=collections.Counter(); serious=collections.Counter(); shapes=collections.defaultdict(collections.Counter); levels=collections.Counter()
for X in sorted(d for d in os.listdir(os.path.join(ROOT, sys.argv[2] if len(sys.argv) > 2 else 'tests/real/fresh-2')) if len(d) == 1 and d.isupper()):
    base=os.path.join(ROOT, sys.argv[2] if len(sys.argv) > 2 else 'tests/real/fresh-2', X)
    rows=list(csv.DictReader(open(f'{base}/expert.tsv'),delimiter='\t',quoting=csv.QUOTE_NONE))
    cache={}
    for case in sorted(os.listdir(f'{base}/cases')):
        dst=f'{root}/{X}/{case}'; shutil.copytree(f'{base}/cases/{case}',dst)
        os.makedirs(f'{dst}/proj',exist_ok=True); os.makedirs(f'{dst}/home',exist_ok=True)
        subprocess.run(['git','init','-q',f'{dst}/proj'])
        env={k:v for k,v in os.environ.items() if not k.startswith(('XDG_','OPENCODE'))}; env['HOME']=f'{dst}/home'
        p=subprocess.run([BIN,'check','--format','json','--absolute-paths'],cwd=f'{dst}/proj',env=env,capture_output=True,text=True)
        try:
            j=json.loads(p.stdout)
            # A config OpenCode refuses is one error at its place (exit 2, no findings).
            fs=j['findings'] if 'findings' in j else [{'level':'error','kind':'config-error','source':j['error'].get('source'),'message':j['error'].get('message','')}]
        except Exception: fs=[]
        cache[case]=(dst,fs)
        for f in fs: levels[(X,f['level'])]+=1
    for r in rows:
        dst,fs=cache[r['case']]
        key=(r['file'],int(r['line']))
        hits=[f['level'] for f in fs if key in places(f,dst)]
        st='REPORTED' if any(l in ('warning','error') for l in hits) else 'NOTED' if hits else 'MISSED'
        tot[(X,st)]+=1; shapes[r['shape']][st]+=1
        if r.get('severity') in ('warning','error'):
            serious[(X,st)]+=1
            if os.environ.get('ROWS') and st!='REPORTED': print(X,st,r['case'],r['file'],r['line'],r['shape'],r['problem'][:220],sep='\t')
print('all rows:', dict(tot)); print('rows an expert rates warning or error:', dict(serious)); print('findings by level:', dict(levels))
for s,c in sorted(shapes.items(),key=lambda x:-sum(x[1].values())): print(f"{s:30} {sum(c.values()):3} R{c['REPORTED']:3} N{c['NOTED']:3} M{c['MISSED']:3}")
shutil.rmtree(root, ignore_errors=True)
