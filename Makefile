# probectl top-level build. Delegates to Kbuild (kmod/) and CMake (libctl/,
# tools/, tests/). `make` builds the module for the running kernel (when its
# headers are installed) and the user-space programs; `make check` runs
# everything CI runs.
TOP      := $(CURDIR)
BUILD    ?= $(TOP)/build
CACHE    ?= $(TOP)/.cache
KDIR     ?= /lib/modules/$(shell uname -r)/build
KERNELS  := $(shell awk '!/^[[:space:]]*(\#|$$)/ {print $$1}' tests/vm/kernels.list)
JOBS     ?= $(shell nproc)
export PROBECTL_CACHE := $(CACHE)

.PHONY: all user kmod kmod-all deps unit lint check check-vm check-debug vm demo bench clean format

all: user
	@if [ -d "$(KDIR)" ]; then $(MAKE) kmod; \
	else echo "note: no kernel headers at $(KDIR): module not built (make kmod KDIR=...)"; fi

user:
	cmake -S $(TOP) -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

# Module for the running kernel (or KDIR=...), built in place.
kmod:
	$(MAKE) -C $(KDIR) M=$(TOP)/kmod modules

# One module per test kernel, each in its own build folder so objects of
# different kernels never mix: build/kmod/NAME/probectl.ko. tools/kmake
# builds inside the unstable root for kernels that need it.
kmod-all: deps
	@set -e; for k in $(KERNELS); do \
		d=$(BUILD)/kmod/$$k; mkdir -p $$d; \
		cp -u $(TOP)/kmod/*.c $(TOP)/kmod/*.h $(TOP)/kmod/Kbuild $$d/ 2>/dev/null || true; \
		mkdir -p $$d/uapi; cp -u $(TOP)/kmod/uapi/*.h $$d/uapi/; \
		echo "kmod: building for $$k"; \
		$(TOP)/tools/kmake $$k $$d -s modules; \
	done

# DEPS_KERNELS: fetch only these test kernels (default: all of kernels.list).
deps:
	@$(TOP)/tools/deps.sh $(DEPS_KERNELS)

unit: user
	cd $(BUILD) && ctest --output-on-failure

# Every kernel's suite runs even when an earlier one failed; each ends with
# its "vm-NAME: N passed, N failed" line.
check-vm: user kmod-all
	@rc=0; for k in $(KERNELS); do $(TOP)/tests/vm/suite --kernel $$k || rc=1; done; exit $$rc

# The integration suite on the debug kernel alone (KASAN, lockdep, kmemleak,
# atomic-sleep and list checks; also part of `make check`). The first run on
# a machine builds the kernel (about 12 minutes on 2 idle cores) into
# /var/cache/probectl; later runs reuse it.
check-debug: user
	@$(MAKE) --no-print-directory kmod-all KERNELS=debug DEPS_KERNELS=debug
	@$(TOP)/tests/vm/suite --kernel debug --timeout $${VM_SUITE_TIMEOUT:-2400}

# Kernel-side static checks: spec vs uapi header, version tests only in
# compat.h, W=1 builds, checkpatch --strict (fetched from linux-source).
lint: deps
	CHECKPATCH=$$($(TOP)/tools/fetch-checkpatch.sh) $(TOP)/tools/lint-kmod.sh

check: deps
	@$(MAKE) --no-print-directory lint
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory check-vm

# An interactive shell in the VM (make vm KERNEL=6.1); console on stdio.
vm: user kmod-all
	@$(TOP)/tests/vm/run --kernel $(or $(KERNEL),6.12) --interactive

demo: deps user kmod-all
	@$(TOP)/tests/vm/demo --kernel $(or $(KERNEL),6.12)

# probectl bench in the VM on every test kernel, then natively (not part of check):
# results in $(BUILD)/bench/KERNEL/ and $(BUILD)/bench/native/. BENCH_ARGS='-n 2000' etc.
bench: deps user kmod-all
	@$(TOP)/tests/vm/bench $(BENCH_ARGS)

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp' '*.h' | grep -v '^kmod/')

clean:
	rm -rf $(BUILD)
	-$(MAKE) -C $(KDIR) M=$(TOP)/kmod clean 2>/dev/null
