// SPDX-License-Identifier: GPL-2.0
/*
 * Argument fetching for probe handlers. Runs in handler context: no locks,
 * no sleeping; user-visible memory is never touched, kernel memory only
 * through the nofault accessor.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "probectl.h"

/**
 * probectl_fetch_args() - the six argument registers of a probed call.
 * @p: the probe (its PROBECTL_PROBE_F_SYSCALL flag selects the source)
 * @regs: registers at function entry
 * @args: receives PROBECTL_NARGS values
 *
 * Plain probes read the function's own argument registers, which is only
 * meaningful at function entry. For a __x64_sys_* wrapper the only real
 * argument is a pointer to the user's saved pt_regs: the syscall arguments
 * are di, si, dx, r10, r8, r9 there. That pointer is read with
 * copy_from_kernel_nofault() so a wrong SYSCALL flag yields zeros, not a
 * fault in NMI context.
 *
 * Context: probe handler (any context).
 */
void probectl_fetch_args(const struct probectl_probe *p, struct pt_regs *regs,
			 u64 args[PROBECTL_NARGS])
{
	unsigned int i;

#ifdef CONFIG_X86_64
	if (p->flags & PROBECTL_PROBE_F_SYSCALL) {
		const struct pt_regs *uregs;
		struct pt_regs u;

		uregs = (const struct pt_regs *)regs_get_kernel_argument(regs, 0);
		if (copy_from_kernel_nofault(&u, uregs, sizeof(u))) {
			memset(args, 0, PROBECTL_NARGS * sizeof(u64));
			return;
		}
		args[0] = u.di;
		args[1] = u.si;
		args[2] = u.dx;
		args[3] = u.r10;
		args[4] = u.r8;
		args[5] = u.r9;
		return;
	}
#endif
	for (i = 0; i < PROBECTL_NARGS; i++)
		args[i] = regs_get_kernel_argument(regs, i);
}
NOKPROBE_SYMBOL(probectl_fetch_args);
