#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# tools/kmake on a kernel cache copied from another clone (its paths name the old place):
# the headers' include line, the chroot path and the build link are pointed back into the
# cache kmake is given. `make` and `unshare` are stand-ins that print what they were run on.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
c=$t/cache old=/nonexistent/old-clone/.cache
# a Debian headers tree: the arch part includes the -common part by absolute path
h=$c/kernels/k1/root/usr/src
mkdir -p "$h/linux-headers-1.0-cloud-amd64" "$h/linux-headers-1.0-common"
echo "include $old/kernels/k1/root/usr/src/linux-headers-1.0-common/Makefile" \
	>"$h/linux-headers-1.0-cloud-amd64/Makefile"
ln -s root/usr/src/linux-headers-1.0-cloud-amd64 "$c/kernels/k1/build"
# a kernel built in the unstable root, linked by absolute path as older caches were
mkdir -p "$c/roots/sid/usr/src/linux-headers-2.0-cloud-amd64" "$c/kernels/k2"
echo "$old/roots/sid" >"$c/kernels/k2/chroot"
echo 2.0-cloud-amd64 >"$c/kernels/k2/kver"
ln -s "$old/roots/sid/usr/src/linux-headers-2.0-cloud-amd64" "$c/kernels/k2/build"
mkdir -p "$t/bin" "$t/mod"
# shellcheck disable=SC2016 # expanded by the stand-ins
printf '#!/bin/sh\necho "make $*"; head -n1 "$2/Makefile"\n' >"$t/bin/make"
# shellcheck disable=SC2016
printf '#!/bin/sh\necho "unshare $8 $9"\n' >"$t/bin/unshare"
chmod +x "$t/bin/make" "$t/bin/unshare"
out=$(PATH=$t/bin:$PATH PROBECTL_CACHE=$c "$top/tools/kmake" k1 "$t/mod" modules)
echo "$out" | grep -qx "include $h/linux-headers-1.0-common/Makefile" ||
	{ echo "k1: the include line still names the old cache: $out"; exit 1; }
if [ "$(id -u)" = 0 ]; then
	out=$(PATH=$t/bin:$PATH PROBECTL_CACHE=$c "$top/tools/kmake" k2 "$t/mod" modules)
	[ "$out" = "unshare $c/roots/sid $t/mod" ] || { echo "k2: chroot not this cache's: $out"; exit 1; }
	[ -d "$c/kernels/k2/build" ] || { echo "k2: the build link still dangles"; exit 1; }
fi
echo "kmake relocation: ok"
