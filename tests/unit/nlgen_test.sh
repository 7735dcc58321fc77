#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# tools/nlgen.py --check: passes on the committed tree, and fails on a copy of it whose spec
# changed a check or a limit without regenerating (so the ctest that runs it can fail).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
gen=$top/tools/nlgen.py
"$gen" --check
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/Documentation/netlink" "$t/kmod/uapi" "$t/libctl/src/netlink" "$t/libctl/include/probectl"
cp "$top/kmod/nl_gen.c" "$top/kmod/nl_gen.h" "$t/kmod/"
cp "$top/kmod/uapi/probectl.h" "$t/kmod/uapi/"
cp "$top/libctl/src/netlink/attrs_gen.hpp" "$t/libctl/src/netlink/"
cp "$top/libctl/include/probectl/counters.hpp" "$t/libctl/include/probectl/"
sed 's/max: maxactive-max/max: fetch-max-args/' "$top/Documentation/netlink/probectl.yaml" \
	>"$t/Documentation/netlink/probectl.yaml"
"$gen" --check --top "$t" >"$t/out" && { echo "stale nl_gen.c not noticed"; exit 1; }
grep -q 'kmod/nl_gen.c is stale' "$t/out"
"$gen" --top "$t"
grep -q 'NLA_POLICY_MAX(NLA_U32, PROBECTL_FETCH_MAX_ARGS)' "$t/kmod/nl_gen.c"
"$gen" --check --top "$t"
# The uapi header too: a limit changed in the spec only.
sed -i 's/^    value: 4032$/    value: 4000/' "$t/Documentation/netlink/probectl.yaml"
"$gen" --check --top "$t" >"$t/out" && { echo "stale uapi header not noticed"; exit 1; }
grep -q 'kmod/uapi/probectl.h is stale' "$t/out"
"$gen" --top "$t"
grep -q '^#define PROBECTL_RECORD_MAX	4000$' "$t/kmod/uapi/probectl.h"
"$gen" --check --top "$t"
echo "nlgen: ok"
