# Medians of ibench.sh or cache.sh output: python3 summary.py LOG
import sys, statistics as st, collections
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 3 and f[0] in ("both", "before", "after"):
        d[(f[0], f[1])].append(float(f[2]))
strace = st.median(d[("both", "strace")])
print(f"rounds {len(d[('both','strace')])}; median (s) and x strace's median {strace:.3f}")
for k in [("both","program"),("both","strace"),("before","syscall"),("after","syscall"),("before","kprobe"),("after","kprobe"),("before","kallsyms"),("after","kallsyms"),("before","version"),("after","version")]:
    v = d[k]
    if not v:
        continue
    print(f"{k[0]:7} {k[1]:8} {st.median(v):.3f}  x{st.median(v)/strace:.2f}  (q1 {sorted(v)[len(v)//4]:.3f} q3 {sorted(v)[3*len(v)//4]:.3f})")
