#!/bin/sh
# The public headers compiled as C++17 fail, and their first error is result.hpp's one line
# saying that C++20 is needed (not a screenful about std::span): for the umbrella header,
# for probe_kinds.hpp (which includes no other probectl header but result.hpp), and for
# every header in one translation unit in name order, as check-install compiles them.
# usage: cxx17_headers_test.sh CXX SOURCE_INCLUDE_DIR BUILD_INCLUDE_DIR
set -eu
cxx=$1 inc=$2 binc=$3
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
echo '#include <probectl/probectl.hpp>' >"$t/umbrella.cpp"
echo '#include <probectl/probe_kinds.hpp>' >"$t/probe_kinds.cpp"
for h in "$inc"/probectl/*.hpp; do echo "#include <probectl/${h##*/}>"; done >"$t/all.cpp"
for tu in umbrella probe_kinds all; do
	if "$cxx" -std=c++17 -fsyntax-only -I"$inc" -I"$binc" "$t/$tu.cpp" >"$t/$tu.out" 2>&1; then
		echo "$tu.cpp compiled as C++17"
		exit 1
	fi
	first=$(grep -m1 ': error: ' "$t/$tu.out" || true)
	case $first in
	*"#error \"probectl's headers need C++20: compile with -std=c++20"*) ;;
	*)
		echo "$tu.cpp as C++17: first error is not the C++20 one:"
		head -n 20 "$t/$tu.out"
		exit 1
		;;
	esac
done
echo "C++17: the first error is the C++20 one (umbrella, probe_kinds.hpp, all headers)"
