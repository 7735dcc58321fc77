#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Static checks for kmod/ that the kernel build alone does not make:
#  1. Documentation/netlink/probectl.yaml agrees with kmod/uapi/probectl.h
#     (commands, attributes, kinds, flags, constants, record members);
#  2. the generated netlink code (tools/nlgen.py) is what the spec gives, and
#     no LINUX_VERSION_CODE outside kmod/compat.h;
#  3. the module builds with W=1, sparse-clean (C=2), for every kernel in tests/vm/kernels.list
#     whose headers are in .cache/kernels (skipped otherwise, with a note);
#  4. checkpatch.pl --strict, when $CHECKPATCH points at it.
# Usage: tools/lint-kmod.sh   (from anywhere; exit status 1 on any failure)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
fail=0

echo "lint-kmod: spec vs uapi header"
/usr/bin/python3 - <<'EOF' || fail=1
import re, sys, yaml
h = open('kmod/uapi/probectl.h').read()
spec = yaml.safe_load(open('Documentation/netlink/probectl.yaml'))
bad = []

def cname(*parts):
    return '_'.join(p.upper().replace('-', '_') for p in parts if p)

def enum_names(name):
    body = re.search(r'enum ' + name + r'\s*\{(.*?)\};', h, re.S).group(1)
    body = re.sub(r'/\*.*?\*/', '', body, flags=re.S)
    return [e.split('=')[0].strip() for e in body.split(',')
            if e.strip() and not e.strip().startswith('__')]

defs = {d['name']: d for d in spec.get('definitions', [])}
attrs = ['PROBECTL_A_UNSPEC'] + [cname('probectl-a', a['name'])
         for a in spec['attribute-sets'][0]['attributes']]
if enum_names('probectl_attr') != attrs:
    bad.append('attributes: header %s, spec %s' % (enum_names('probectl_attr'), attrs))
cmds = ['PROBECTL_CMD_UNSPEC'] + [cname('probectl-cmd', o['name'])
        for o in spec['operations']['list']]
if enum_names('probectl_cmd') != cmds:
    bad.append('commands: header %s, spec %s' % (enum_names('probectl_cmd'), cmds))
kinds = [cname('probectl-kind', e) for e in defs['probe-kind']['entries']]
if enum_names('probectl_probe_kind') != kinds:
    bad.append('kinds: header %s, spec %s' % (enum_names('probectl_probe_kind'), kinds))
for i, e in enumerate(defs['probe-flags']['entries']):
    n = cname('probectl-probe-f', e['name'])
    if not re.search(n + r'\s*=\s*1U\s*<<\s*' + str(i) + r'\b', h):
        bad.append('flag %s is not 1U << %d in the header' % (n, i))
for d in spec['definitions']:
    if d['type'] == 'const':
        n = cname('probectl', d['name'])
        if not re.search(r'#define\s+' + n + r'\s+' + str(d['value']) + r'\b', h):
            bad.append('constant %s != %s in the header' % (n, d['value']))
for key, want in (('c-family-name', '"%s"' % spec['name']),
                  ('c-version-name', str(spec['version']))):
    n = spec[key].upper().replace('-', '_')
    if not re.search(r'#define\s+' + n + r'\s+' + re.escape(want), h):
        bad.append('%s is not %s in the header' % (n, want))
body = re.search(r'struct probectl_record\s*\{(.*?)\};', h, re.S).group(1)
body = re.sub(r'/\*.*?\*/', '', body, flags=re.S)
fields = [re.sub(r'\[.*', '', f.split()[-1]) for f in body.split(';') if f.strip()]
members = [m['name'].replace('-', '_') for m in defs['record']['members']]
if fields != members:
    bad.append('record members: header %s, spec %s' % (fields, members))
for b in bad:
    print('  MISMATCH:', b)
sys.exit(1 if bad else 0)
EOF

echo "lint-kmod: generated netlink code up to date"
"$top/tools/nlgen.py" --check || fail=1

echo "lint-kmod: version checks only in compat.h"
if grep -n 'LINUX_VERSION_CODE\|KERNEL_VERSION\|KAPI_GE' kmod/*.c kmod/*.h | grep -v '^kmod/compat.h:'; then
	fail=1
fi

kernels=$(awk '!/^[[:space:]]*(#|$)/ {print $1}' tests/vm/kernels.list 2>/dev/null || true)
for k in $kernels; do
	kdir=$top/.cache/kernels/$k/build
	if [ ! -d "$kdir" ]; then
		echo "lint-kmod: W=1 build for $k skipped: no headers at $kdir (make deps)"
		continue
	fi
	echo "lint-kmod: W=1 build with sparse (C=2) for $k"
	d=$(mktemp -d)
	cp kmod/*.c kmod/*.h kmod/Kbuild "$d/"
	mkdir "$d/uapi" && cp kmod/uapi/*.h "$d/uapi/"
	log=$d/build.log
	if ! "$top/tools/kmake" "$k" "$d" -s W=1 C=2 modules >"$log" 2>&1; then
		cat "$log"; fail=1
	elif grep -v 'Skipping BTF generation' "$log" | grep -q .; then
		grep -v 'Skipping BTF generation' "$log"; fail=1
	fi
	rm -rf "$d"
done

if [ -n "${CHECKPATCH:-}" ]; then
	echo "lint-kmod: checkpatch --strict"
	# Ignored, each for a reason checkpatch cannot see:
	#  LINE_SPACING: it wants a blank line between a function and its
	#   NOKPROBE_SYMBOL(), which in-tree code keeps adjacent like EXPORT_SYMBOL;
	#  MACRO_ARG_REUSE: probectl_missing() evaluates a plain variable twice.
	#  compat.h is the one place for version tests and declarator macros
	#  (KAPI_PRE_DOIT(fn, ops, ...) cannot parenthesise parameter names).
	cp_run() { "$CHECKPATCH" --strict --no-tree --terse --show-types --quiet "$@"; }
	cp_run --ignore LINE_SPACING,MACRO_ARG_REUSE \
		-f $(ls kmod/*.c kmod/*.h | grep -v '^kmod/compat.h$') || fail=1
	cp_run --ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON,MACRO_ARG_UNUSED,MACRO_ARG_PRECEDENCE \
		-f kmod/compat.h || fail=1
else
	echo "lint-kmod: checkpatch skipped (set CHECKPATCH=/path/to/checkpatch.pl)"
fi

[ $fail -eq 0 ] && echo "lint-kmod: ok"
exit $fail
