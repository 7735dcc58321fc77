#!/bin/sh
# Installs every build and test dependency (Debian 12; debootstrap makes the
# unstable build root of kernels that need it). Idempotent: only
# missing packages are installed, so a second run does no apt work.
# NAMEs: the test kernels to fetch (default: all of tests/vm/kernels.list).
set -eu
PKGS="build-essential gcc-12 make cmake pkg-config git
	libnl-3-dev libnl-genl-3-dev libboost-program-options-dev
	libgtest-dev libgmock-dev libfmt-dev nlohmann-json3-dev
	qemu-system-x86 busybox-static cpio gzip pahole kmod debootstrap
	bc flex bison libelf-dev libssl-dev xz-utils clang-format python3 python3-yaml sparse
	libdw-dev libcapstone-dev libtracefs-dev libtraceevent-dev zlib1g-dev systemtap-sdt-dev binutils libc6-dbg clang lld libbpf-dev
	strace ltrace gnuplot-nox scdoc bash-completion dkms protobuf-compiler babeltrace2
	debhelper dh-dkms lintian libxml2-utils"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
	echo "deps: installing$missing"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
exec "$(dirname "$0")/../tests/vm/fetch-kernels" "$@"
