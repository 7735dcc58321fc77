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
# make install: PREFIX for the CLI, library, headers, man pages; DESTDIR for staging.
# The module goes under /lib/modules/KVER/updates (KVER: the running kernel).
PREFIX   ?= /usr/local
DESTDIR  ?=
KVER     ?= $(shell uname -r)
export PROBECTL_CACHE := $(CACHE)

.PHONY: all user configure kmod kmod-all deps unit lint check check-vm check-debug vm demo bench clean format \
	install uninstall check-install dkms-source dkms-install check-dkms deb check-deb

all: user
	@if [ -d "$(KDIR)" ]; then $(MAKE) kmod; \
	else echo "note: no kernel headers at $(KDIR): module not built (make kmod KDIR=...)"; fi

user: configure
	cmake --build $(BUILD) -j$(JOBS)

configure:
	cmake -S $(TOP) -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROBECTL_UNITY_BUILD=ON \
		-DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null

# Module for the running kernel (or KDIR=...), built in place.
kmod:
	$(MAKE) -C $(KDIR) M=$(TOP)/kmod modules

# One module per test kernel, each in its own build folder so objects of
# different kernels never mix: build/kmod/NAME/probectl.ko. tools/kmake
# builds inside the unstable root for kernels that need it. W=1 as in lint,
# which builds in the same folders, so that check-vm reuses lint's objects.
kmod-all: deps
	@set -e; for k in $(KERNELS); do \
		d=$(BUILD)/kmod/$$k; mkdir -p $$d; \
		cp -u $(TOP)/kmod/*.c $(TOP)/kmod/*.h $(TOP)/kmod/Kbuild $$d/ 2>/dev/null || true; \
		mkdir -p $$d/uapi; cp -u $(TOP)/kmod/uapi/*.h $$d/uapi/; \
		echo "kmod: building for $$k"; \
		$(TOP)/tools/kmake $$k $$d -s -j$$(nproc) W=1 modules; \
	done

# Builds and installs the CLI and both libraries (not the tests); the module only when
# it was built (kmod/probectl.ko, built here when KDIR has headers), then
# depmod so that its genl family alias autoloads it (not into a DESTDIR: the kernel's
# own files are not there). Every file written is listed (without DESTDIR) in a manifest
# of this build kept per DESTDIR ($(BUILD)/install-manifests/HASH/), which `make uninstall`
# with the same DESTDIR removes: installs into several DESTDIRs are each undone on their own.
MANIFESTS := $(BUILD)/install-manifests
MANIFEST  := $(MANIFESTS)/$(shell printf '%s' '$(abspath $(DESTDIR))' | md5sum | cut -c1-16)
install: configure
	cmake --build $(BUILD) -j$(JOBS) --target probectl probectl_ctl probectl_shared man bench_workload
	@if [ -d "$(KDIR)" ]; then $(MAKE) --no-print-directory kmod; fi
	DESTDIR=$(DESTDIR) cmake --install $(BUILD)
	@mkdir -p $(MANIFEST) && printf '%s\n' '$(abspath $(DESTDIR))' > $(MANIFEST)/destdir
	@# A second install into the same DESTDIR adds to what the first wrote.
	@{ cat $(BUILD)/install_manifest.txt; echo; } >> $(MANIFEST)/files
	@rm -f $(BUILD)/install_manifest.txt
	@if [ -f $(TOP)/kmod/probectl.ko ]; then \
		d=$(DESTDIR)/lib/modules/$(KVER)/updates; \
		install -D -m 644 $(TOP)/kmod/probectl.ko $$d/probectl.ko && \
		echo /lib/modules/$(KVER)/updates/probectl.ko >> $(MANIFEST)/files && \
		echo /lib/modules/$(KVER)/updates/probectl.ko >> $(MANIFEST)/kmod && \
		echo "-- Installing: $$d/probectl.ko"; \
		if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi; \
	else echo "note: kmod/probectl.ko not built: module not installed"; fi
	@sort -u -o $(MANIFEST)/files $(MANIFEST)/files

uninstall:
	@set -e; if [ ! -f $(MANIFEST)/files ]; then \
		echo "uninstall: nothing installed from this build into DESTDIR='$(DESTDIR)'" >&2; \
		for d in $(MANIFESTS)/*/destdir; do [ ! -f "$$d" ] || \
			echo "uninstall: this build installed into DESTDIR='$$(cat "$$d")'" >&2; done; \
		exit 1; \
	fi; \
	while IFS= read -r f; do \
		[ -z "$$f" ] || { rm -f "$(DESTDIR)$$f" && echo "-- Removed: $(DESTDIR)$$f"; }; \
		case $$f in */probectl/*) rmdir "$(DESTDIR)$${f%/*}" 2>/dev/null || true ;; esac; \
	done < $(MANIFEST)/files; \
	if [ -s $(MANIFEST)/kmod ] && [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi; \
	rm -rf $(MANIFEST)

# DKMS: the module's source under $(DESTDIR)/usr/src/probectl-RELEASE with its dkms.conf
# (dkms-source), then registered, built and installed for KVER (dkms-install).
RELEASE := $(shell sed -n 's/^\#define PROBECTL_RELEASE "\(.*\)"$$/\1/p' $(TOP)/kmod/version.h)
DKMS_SRC = $(DESTDIR)/usr/src/probectl-$(RELEASE)
dkms-source:
	install -d $(DKMS_SRC)/uapi
	install -m 644 $(TOP)/kmod/*.c $(TOP)/kmod/*.h $(TOP)/kmod/Kbuild $(DKMS_SRC)/
	install -m 644 $(TOP)/kmod/uapi/*.h $(DKMS_SRC)/uapi/
	sed 's/#MODULE_VERSION#/$(RELEASE)/' $(TOP)/kmod/dkms.conf > $(DKMS_SRC)/dkms.conf

dkms-install: dkms-source
	dkms add -m probectl -v $(RELEASE)
	dkms install -m probectl -v $(RELEASE) -k $(KVER)

# Debian packages (debian/): probectl, libprobectl0, libprobectl-dev, probectl-dkms, built
# with dpkg-buildpackage from a copy of the tree's files (git's, committed or not) in
# $(BUILD)/deb/probectl-RELEASE; the .deb files land in $(BUILD)/deb.
deb:
	@rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb/probectl-$(RELEASE)
	@cd $(TOP) && git ls-files -z --cached --others --exclude-standard | \
		xargs -0 -I{} sh -c '[ -e "{}" ] && echo "{}"' | \
		tar -cf - -T - | tar -xf - -C $(BUILD)/deb/probectl-$(RELEASE)
	cd $(BUILD)/deb/probectl-$(RELEASE) && \
		DEB_BUILD_OPTIONS="parallel=$(JOBS) $(DEB_BUILD_OPTIONS)" dpkg-buildpackage -b -uc -us \
		>../build.log 2>&1 || { tail -n 40 ../build.log; exit 1; }
	@ls $(BUILD)/deb/*.deb

# The packages: lintian, then apt install into a minimal Debian 12 root (libprobectl-dev
# first, alone, with examples/ built against it), DKMS builds the module there for a test
# kernel (DEB_KERNEL, default 6.1), and the installed CLI and module run in that kernel's VM. Built without the -dbgsym packages, which nothing here
# checks: compressing their debug info took about a third of the packaging time.
check-deb:
	@$(MAKE) --no-print-directory deb DEB_BUILD_OPTIONS="noautodbgsym $(DEB_BUILD_OPTIONS)"
	@$(TOP)/tests/install/check-deb $(or $(DEB_KERNEL),6.1)

# A DKMS build of the module in a scratch DKMS tree against the Debian headers of test
# kernels DKMS_KERNELS (default 6.12: about a minute per kernel).
check-dkms:
	@$(TOP)/tests/install/check-dkms $(or $(DKMS_KERNELS),6.12)

# make install into a scratch DESTDIR: the file list, the exported symbols, examples/
# built against the installed tree (pkg-config and find_package), then make uninstall.
check-install: configure
	@BUILD=$(BUILD) $(TOP)/tests/install/check-install

# DEPS_KERNELS: fetch only these test kernels (default: all of kernels.list).
deps:
	@$(TOP)/tools/deps.sh $(DEPS_KERNELS)

unit: user
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# Every kernel's suite runs even when another one failed, two VMs at once on
# two cores (VM_JOBS=1 for one at a time), each kernel's tests split over two
# VMs (VM_SHARDS); each kernel's output is printed whole, in kernels.list
# order, ending with its "vm-NAME: N passed, N failed".
check-vm: user kmod-all
	@$(TOP)/tests/vm/suites $(KERNELS)

# The integration suite on the debug kernel alone (KASAN, lockdep, kmemleak,
# atomic-sleep and list checks; also part of `make check`). The first run on
# a machine builds the kernel (about 12 minutes on 2 idle cores) into
# /var/cache/probectl; later runs reuse it.
check-debug: user
	@$(MAKE) --no-print-directory kmod-all KERNELS=debug DEPS_KERNELS=debug
	@$(TOP)/tests/vm/suite --kernel debug --timeout $${VM_SUITE_TIMEOUT:-2400}

# Kernel-side static checks: generated protocol files fresh, version tests only in
# compat.h, W=1 builds, checkpatch --strict (fetched from linux-source).
lint: deps
	CHECKPATCH=$$($(TOP)/tools/fetch-checkpatch.sh) BUILD=$(BUILD) $(TOP)/tools/lint-kmod.sh

# Each step prints "check: STEP: N s" when it ends, so a slow CI run shows where the time
# went (.ci/run lists them).
timed_step = t=$$(date +%s); $(MAKE) --no-print-directory $(1); rc=$$?; \
	echo "check: $(1): $$(($$(date +%s) - t)) s"; exit $$rc

# check-deb's Debian 12 root (debootstrap: a few minutes, mostly waiting on the archive) is
# made in the background while lint and the unit build run; check-deb waits for it.
check:
	@$(call timed_step,deps)
	@mkdir -p $(BUILD) && { $(TOP)/tests/vm/debian-root bookworm >$(BUILD)/debian-root.log 2>&1 & }
	@$(call timed_step,lint)
	@$(call timed_step,unit)
	@$(call timed_step,check-install)
	@$(call timed_step,check-dkms)
	@$(call timed_step,check-deb)
	@$(call timed_step,check-vm)

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
