#!/bin/sh
# Prints the path of the kernel's checkpatch.pl, extracting it (with the
# files it reads) from Debian's linux-source package into the cache on
# first use. The package is large (~150 MB), so only three files are kept.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
pkg=${CHECKPATCH_PKG:-linux-source-6.12}
dir=${PROBECTL_CACHE:-$top/.cache}/checkpatch/$pkg
if [ ! -x "$dir/scripts/checkpatch.pl" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get download -q "$pkg" >&2)
	dpkg-deb --fsys-tarfile "$tmp"/*.deb | tar -x -C "$tmp" --wildcards './usr/src/*.tar.xz'
	mkdir -p "$dir"
	tar -xJf "$tmp"/usr/src/*.tar.xz -C "$dir" --strip-components=1 --wildcards \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch'
fi
echo "$dir/scripts/checkpatch.pl"
