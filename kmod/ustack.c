// SPDX-License-Identifier: GPL-2.0
/*
 * User stacks by frame pointers (PROBECTL_FETCH_LOAD_USTACK): the chain of
 * saved frame pointers on the task's user stack, read without faulting
 * pages in. Code built without frame pointers ends the chain early or
 * hides frames; nothing here tries to guess past that. Snapshots
 * (PROBECTL_FETCH_STORE_USTACK_SNAPSHOT) copy the registers and the top of
 * the user stack instead, for libctl to unwind by the binaries' CFI.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/minmax.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>

#include "probectl.h"

/* What a frame pointer points at: the caller's frame pointer, then our return address. */
struct probectl_uframe {
	u64 next_bp;
	u64 ret;
};

/**
 * probectl_ustack_regs() - the user registers of the task a probe hit in.
 * @regs: a uprobe's registers, or NULL for a kernel probe
 *
 * A kernel probe has the registers saved at the task's entry into the
 * kernel, unless the task is a kernel thread (then there is no user stack).
 *
 * Context: probe handler.
 * Return: user-mode registers, or NULL.
 */
struct pt_regs *probectl_ustack_regs(struct pt_regs *regs)
{
	if (!regs) {
		if ((current->flags & PF_KTHREAD) || !current->mm)
			return NULL;
		regs = task_pt_regs(current);
	}
	return user_mode(regs) ? regs : NULL;
}
NOKPROBE_SYMBOL(probectl_ustack_regs);

/* Adds @ip unless @ips is full, which means more frames than asked for. */
static bool probectl_ustack_push(u64 *ips, unsigned int *n, unsigned int max,
				 u64 ip, bool *truncated)
{
	if (*n == max) {
		*truncated = true;
		return false;
	}
	ips[(*n)++] = ip;
	return true;
}
NOKPROBE_SYMBOL(probectl_ustack_push);

/**
 * probectl_ustack_walk() - walk the user frame-pointer chain.
 * @regs: user-mode registers (probectl_ustack_regs())
 * @func_entry: @regs are at a function's first instruction: the return
 *	address is at the stack pointer, the frame pointer is the caller's
 * @ips: receives the frames, innermost (the user instruction pointer) first
 * @max: room in @ips, at least 1
 * @truncated: set when frames were left out for lack of room
 *
 * Stops at a frame pointer that is zero, misaligned, below the stack
 * pointer or not above the previous one, at a zero return address, and
 * at a read that fails (copy_from_user_nmi() never faults pages in).
 * 32-bit tasks get their instruction pointer only.
 *
 * Context: probe handler, preemption disabled; no sleeping, no locks.
 * Return: frames written.
 */
unsigned int probectl_ustack_walk(struct pt_regs *regs, bool func_entry,
				  u64 *ips, unsigned int max, bool *truncated)
{
	unsigned long bp = regs->bp, sp = regs->sp;
	struct probectl_uframe f;
	unsigned int n = 0;
	u64 ret;

	ips[n++] = regs->ip;
	if (!user_64bit_mode(regs))
		return n;
	if (func_entry) {
		if (copy_from_user_nmi(&ret, (const void __user *)sp, sizeof(ret)) || !ret)
			return n;
		if (!probectl_ustack_push(ips, &n, max, ret, truncated))
			return n;
	}
	while (bp && IS_ALIGNED(bp, sizeof(u64)) && bp >= sp) {
		if (copy_from_user_nmi(&f, (const void __user *)bp, sizeof(f)) || !f.ret)
			break;
		if (!probectl_ustack_push(ips, &n, max, f.ret, truncated))
			break;
		if (f.next_bp <= bp)
			break;
		bp = f.next_bp;
	}
	return n;
}
NOKPROBE_SYMBOL(probectl_ustack_walk);

/**
 * probectl_ustack_snapshot() - user registers and the top of the user stack.
 * @regs: a uprobe's registers, or NULL for a kernel probe
 * @dst: receives a struct probectl_ustack_regs, then up to @max stack bytes
 * @max: stack bytes to copy at most
 * @flags: PROBECTL_FETCH_V_* of the value; fault without a 64-bit user
 *	context, truncated when all @max bytes were copied
 *
 * The stack is read page by page from the stack pointer up and the copy
 * ends at the first page that cannot be read without faulting: what lies
 * below it is still worth unwinding.
 *
 * Context: probe handler; no sleeping, no locks.
 * Return: bytes written (0 with the fault flag).
 */
u32 probectl_ustack_snapshot(struct pt_regs *regs, void *dst, u32 max, u8 *flags)
{
	struct probectl_ustack_regs *r = dst;
	unsigned long sp;
	u32 len = 0, chunk;
	void *stack = r + 1;

	regs = probectl_ustack_regs(regs);
	if (!regs || !user_64bit_mode(regs)) {
		*flags |= PROBECTL_FETCH_V_FAULT;
		return 0;
	}
	r->ax = regs->ax;
	r->dx = regs->dx;
	r->cx = regs->cx;
	r->bx = regs->bx;
	r->si = regs->si;
	r->di = regs->di;
	r->bp = regs->bp;
	r->sp = regs->sp;
	r->r8 = regs->r8;
	r->r9 = regs->r9;
	r->r10 = regs->r10;
	r->r11 = regs->r11;
	r->r12 = regs->r12;
	r->r13 = regs->r13;
	r->r14 = regs->r14;
	r->r15 = regs->r15;
	r->ip = regs->ip;
	sp = regs->sp;
	while (len < max) {
		chunk = min_t(u32, max - len, PAGE_SIZE - ((sp + len) & ~PAGE_MASK));
		if (copy_from_user_nofault(stack + len, (const void __user *)(sp + len), chunk))
			break;
		len += chunk;
	}
	if (len == max)
		*flags |= PROBECTL_FETCH_V_TRUNCATED;
	return sizeof(*r) + len;
}
NOKPROBE_SYMBOL(probectl_ustack_snapshot);
