# shellcheck shell=bash disable=SC2034 # the variables are for the sourcing script
# Shared by the host-side VM scripts (run, suite, demo, mkinitramfs):
# repository paths and the kernel-name check, so every script gives the same
# helpful error for a wrong --kernel.
vm_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
vm_build=${BUILD:-$vm_top/build}
vm_cache=${PROBECTL_CACHE:-$vm_top/.cache}

vm_die() {
	echo "${0##*/}: $*" >&2
	exit 2
}

# Kernel names in kernels.list then kernels-extra.list (those `make check`
# does not run), space-separated, in file order.
vm_kernel_names() {
	awk '!/^[[:space:]]*(#|$)/ {printf "%s%s", sep, $1; sep=" "}' \
		"$vm_top/tests/vm/kernels.list" "$vm_top/tests/vm/kernels-extra.list"
}

# Validates NAME against kernels.list and that `make deps` extracted it;
# sets vm_kdir (its cache folder) and vm_kver (its uname -r).
vm_select_kernel() {
	local name=$1 k
	[ -n "$name" ] || vm_die "--kernel NAME is required (one of: $(vm_kernel_names))"
	for k in $(vm_kernel_names); do
		[ "$k" = "$name" ] || continue
		vm_kdir=$vm_cache/kernels/$name
		if [ ! -e "$vm_kdir/vmlinuz" ] || [ ! -f "$vm_kdir/kver" ]; then
			vm_die "kernel $name is not fetched yet: run 'make deps' (looked in $vm_kdir)"
		fi
		vm_kver=$(cat "$vm_kdir/kver")
		return 0
	done
	vm_die "unknown kernel '$name': choose one of: $(vm_kernel_names) (see tests/vm/kernels.list, kernels-extra.list)"
}
