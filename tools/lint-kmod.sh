#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Static checks for kmod/ that the kernel build alone does not make:
#  1. the files tools/nlgen.py generates from Documentation/netlink/probectl.yaml
#     (the uapi header, the netlink policies and ops, libctl's attribute tables)
#     are what the spec gives;
#  2. no LINUX_VERSION_CODE outside kmod/compat.h;
#  3. the module builds with W=1, sparse-clean (C=2), for every kernel in tests/vm/kernels.list
#     whose headers are in the cache ($PROBECTL_CACHE, default .cache; skipped otherwise, with a note),
#     in $BUILD/kmod/NAME (default build/), where `make kmod-all` reuses the objects;
#  4. checkpatch.pl --strict, when $CHECKPATCH points at it.
# Usage: tools/lint-kmod.sh   (from anywhere; exit status 1 on any failure)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${BUILD:-$top/build}
fail=0

echo "lint-kmod: generated protocol files up to date"
"$top/tools/nlgen.py" --check || fail=1

echo "lint-kmod: version checks only in compat.h"
if grep -n 'LINUX_VERSION_CODE\|KERNEL_VERSION\|KAPI_GE' kmod/*.c kmod/*.h | grep -v '^kmod/compat.h:'; then
	fail=1
fi

kernels=$(awk '!/^[[:space:]]*(#|$)/ {print $1}' tests/vm/kernels.list 2>/dev/null || true)
for k in $kernels; do
	kdir=${PROBECTL_CACHE:-$top/.cache}/kernels/$k/build
	# kver without a build dir: a copied cache, which kmake points back into itself
	if [ ! -d "$kdir" ] && [ ! -f "${kdir%/build}/kver" ]; then
		echo "lint-kmod: W=1 build for $k skipped: no headers at $kdir (make deps)"
		continue
	fi
	echo "lint-kmod: W=1 build with sparse (C=2) for $k"
	# From scratch, so every file's warnings are seen, in the folder `make kmod-all` (also
	# W=1) then finds up to date.
	d=$build/kmod/$k
	rm -rf "$d" && mkdir -p "$d/uapi"
	cp kmod/*.c kmod/*.h kmod/Kbuild "$d/"
	cp kmod/uapi/*.h "$d/uapi/"
	log=$build/kmod/lint-$k.log
	if ! "$top/tools/kmake" "$k" "$d" -s -j"$(nproc)" W=1 C=2 modules >"$log" 2>&1; then
		cat "$log"; fail=1
	elif grep -v 'Skipping BTF generation' "$log" | grep -q .; then
		grep -v 'Skipping BTF generation' "$log"; fail=1
	fi
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
