// SPDX-License-Identifier: GPL-2.0
/*
 * Argument fetching for probe handlers: the six argument registers of every
 * record, and the probe's fetch programs (NAME=SOURCE[:TYPE] arguments,
 * compiled by libctl, validated here at PROBE_ADD). Runs in handler
 * context: no locks, no sleeping; memory only through the non-faulting
 * accessors.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/align.h>
#include <linux/auxvec.h>
#include <linux/build_bug.h>
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/kprobes.h>
#include <linux/minmax.h>
#include <linux/mm_types.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/stringify.h>
#include <linux/uaccess.h>
#include <linux/uidgid.h>

#include "probectl.h"

/**
 * probectl_fetch_args() - the six argument registers of a probed call.
 * @p: the probe (its PROBECTL_PROBE_F_SYSCALL flag selects the source)
 * @regs: registers at function entry
 * @args: receives PROBECTL_NARGS values; left unwritten when nothing of
 *	  @p reads them (p->args_unused: no $argN and no args part)
 *
 * Plain probes read the function's own argument registers, which is only
 * meaningful at function entry. For a __x64_sys_* wrapper the only real
 * argument is a pointer to the user's saved pt_regs: the syscall arguments
 * are di, si, dx, r10, r8, r9 there. Only the span from r10 to di is read,
 * with copy_from_kernel_nofault() so a wrong SYSCALL flag yields zeros, not
 * a fault in NMI context.
 *
 * Context: probe handler (any context).
 */
void probectl_fetch_args(const struct probectl_probe *p, struct pt_regs *regs,
			 u64 args[PROBECTL_NARGS])
{
	unsigned int i;

	if (p->args_unused)
		return;
#ifdef CONFIG_X86_64
	if (p->flags & PROBECTL_PROBE_F_SYSCALL) {
		const size_t from = offsetof(struct pt_regs, r10);
		const size_t to = offsetofend(struct pt_regs, di);
		unsigned long uregs;
		struct pt_regs u;

		/* the six are within r10..di; the rest of the frame is not read */
		BUILD_BUG_ON(offsetof(struct pt_regs, r8) < from ||
			     offsetof(struct pt_regs, r9) < from ||
			     offsetof(struct pt_regs, dx) < from ||
			     offsetof(struct pt_regs, si) < from ||
			     offsetofend(struct pt_regs, r8) > to ||
			     offsetofend(struct pt_regs, r9) > to ||
			     offsetofend(struct pt_regs, dx) > to ||
			     offsetofend(struct pt_regs, si) > to);
		uregs = regs_get_kernel_argument(regs, 0);
		if (copy_from_kernel_nofault((void *)&u + from, (void *)uregs + from,
					     to - from)) {
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

/* Bytes a STORE writes at most, or 0 for an instruction that is no STORE. */
static u32 probectl_fetch_store_bytes(const struct probectl_fetch_insn *in)
{
	switch (in->op) {
	case PROBECTL_FETCH_STORE_INT:
		return in->size;
	case PROBECTL_FETCH_STORE_STRING:
		return in->operand;
	case PROBECTL_FETCH_STORE_ARRAY:
		return in->size * in->operand;
	case PROBECTL_FETCH_STORE_COMM:
		return PROBECTL_COMM_LEN;
	case PROBECTL_FETCH_STORE_USTACK_SNAPSHOT:
		return sizeof(struct probectl_ustack_regs) + in->operand;
	}
	return 0;
}

static bool probectl_fetch_size_ok(u8 size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

/* The registers of load-addr: bytes 0 and 1 of its operand. */
static unsigned int probectl_fetch_addr_base(const struct probectl_fetch_insn *in)
{
	return in->operand & 0xff;
}

static unsigned int probectl_fetch_addr_index(const struct probectl_fetch_insn *in)
{
	return (in->operand >> 8) & 0xff;
}

static const char *probectl_fetch_check_addr(const struct probectl_fetch_insn *in)
{
	const unsigned int nregs = sizeof(struct pt_regs) / sizeof(long);
	unsigned int base = probectl_fetch_addr_base(in);

	if (in->operand >> 16 || in->offset)
		return "load-addr: offset or upper bits set";
	if (base != PROBECTL_FETCH_ADDR_NO_BASE && base >= nregs)
		return "load-addr: bad base register";
	if (probectl_fetch_addr_index(in) >= nregs)
		return "load-addr: bad index register";
	return probectl_fetch_size_ok(in->size) ? NULL : "load-addr: scale not 1, 2, 4, 8";
}

/* One instruction at position @pos of an argument's program. */
static const char *probectl_fetch_check_insn(const struct probectl_fetch_insn *in,
					     unsigned int pos, bool loaded,
					     bool is_return)
{
	if (in->flags & ~(PROBECTL_FETCH_F_USER | PROBECTL_FETCH_F_ERRNO |
			  PROBECTL_FETCH_F_FUNC_ENTRY))
		return "unknown flags";
	if ((in->flags & PROBECTL_FETCH_F_FUNC_ENTRY) && in->op != PROBECTL_FETCH_LOAD_USTACK)
		return "func-entry flag outside load-ustack";
	if ((in->flags & PROBECTL_FETCH_F_ERRNO) && in->op != PROBECTL_FETCH_LOAD_RETVAL)
		return "errno flag outside $retval";
	switch (in->op) {
	case PROBECTL_FETCH_LOAD_ARG ... PROBECTL_FETCH_LOAD_IMM:
		if (pos)
			return "a load that is not first";
		if (in->op == PROBECTL_FETCH_LOAD_ARG &&
		    (in->operand < 1 || in->operand > PROBECTL_NARGS))
			return "$argN out of 1..6";
		if (in->op == PROBECTL_FETCH_LOAD_REG &&
		    (in->operand >= sizeof(struct pt_regs) / sizeof(long) ||
		     (in->size != 8 && in->size != 4)))
			return "bad register";
		if (in->op == PROBECTL_FETCH_LOAD_STACK && in->operand > PROBECTL_FETCH_MAX_STACK)
			return "$stackN beyond 511";
		if (in->op == PROBECTL_FETCH_LOAD_RETVAL && !is_return)
			return "$retval outside a return probe";
		return NULL;
	case PROBECTL_FETCH_DEREF:
		if (!loaded)
			return "dereference before a load";
		return probectl_fetch_size_ok(in->size) ? NULL : "dereference size not 1, 2, 4, 8";
	case PROBECTL_FETCH_STORE_INT:
		if (!loaded)
			return "store before a load";
		return probectl_fetch_size_ok(in->size) ? NULL : "store size not 1, 2, 4, 8";
	case PROBECTL_FETCH_STORE_STRING:
		if (!loaded)
			return "store before a load";
		return in->operand >= 2 && in->operand <= PROBECTL_PATH_MAX ?
		       NULL : "string bound out of 2..4096";
	case PROBECTL_FETCH_STORE_ARRAY:
		if (!loaded)
			return "store before a load";
		if (!probectl_fetch_size_ok(in->size))
			return "array element size not 1, 2, 4, 8";
		return in->operand >= 1 && in->operand <= PROBECTL_FETCH_MAX_ARRAY ?
		       NULL : "array length out of 1..64";
	case PROBECTL_FETCH_STORE_COMM:
		if (loaded)
			return "comm after a load";
		return in->operand == PROBECTL_COMM_LEN ? NULL : "comm length not 16";
	case PROBECTL_FETCH_STORE_USTACK_SNAPSHOT:
		if (loaded)
			return "ustack snapshot after a load";
		if (in->operand < 1 || in->operand > PROBECTL_USTACK_SNAPSHOT_MAX)
			return "ustack snapshot size out of 1.."
			       __stringify(PROBECTL_USTACK_SNAPSHOT_MAX);
		return NULL;
	case PROBECTL_FETCH_LOAD_KSTACK:
		if (pos)
			return "a load that is not first";
		/* the id is 4 bytes; anything but a plain store would misread it */
		return in->operand >= 1 && in->operand <= PROBECTL_STACK_MAX_DEPTH ?
		       NULL : "kstack depth out of 1..127";
	case PROBECTL_FETCH_LOAD_USTACK:
		if (pos)
			return "a load that is not first";
		return in->operand >= 1 && in->operand <= PROBECTL_STACK_MAX_DEPTH ?
		       NULL : "ustack depth out of 1..127";
	case PROBECTL_FETCH_LOAD_EXEC:
		if (pos)
			return "a load that is not first";
		return in->operand <= PROBECTL_FETCH_EXEC_ARGS ?
		       NULL : "exec argument out of 0.." __stringify(PROBECTL_FETCH_EXEC_ARGS);
	case PROBECTL_FETCH_LOAD_ADDR:
		if (pos)
			return "a load that is not first";
		return probectl_fetch_check_addr(in);
	}
	return "unknown opcode";
}

/**
 * probectl_fetch_validate() - check fetch programs received from userspace.
 * @insns: the programs, one per argument, each ending at its STORE
 * @n: number of instructions
 * @is_return: the probe fires at function return ($retval allowed)
 * @extack: receives the first rule broken, with argument and instruction
 * @nargs: set to the number of arguments
 * @bytes: set to the most bytes the values add to a record
 *
 * Context: process context.
 * Return: 0 or -EINVAL.
 */
int probectl_fetch_validate(const struct probectl_fetch_insn *insns,
			    unsigned int n, bool is_return,
			    struct netlink_ext_ack *extack, u32 *nargs,
			    u32 *bytes)
{
	unsigned int i, pos = 0, depth = 0, arg = 0;
	bool loaded = false;
	const char *why;
	u32 total = 0;

	for (i = 0; i < n; i++) {
		why = probectl_fetch_check_insn(&insns[i], pos, loaded, is_return);
		if (!why && ++pos > PROBECTL_FETCH_MAX_INSNS)
			why = "more than 16 instructions";
		if (!why && insns[i].op == PROBECTL_FETCH_DEREF &&
		    ++depth > PROBECTL_FETCH_MAX_DEPTH)
			why = "more than 8 dereferences";
		if (!why && arg == PROBECTL_FETCH_MAX_ARGS)
			why = "more than 16 arguments";
		if (why) {
			kapi_set_err_msg_fmt_mod(extack,
						 "fetch argument %u, instruction %u: %s",
						 arg + 1, pos + 1, why);
			return -EINVAL;
		}
		loaded = true;
		if (!probectl_fetch_store_bytes(&insns[i]))
			continue;
		total += sizeof(struct probectl_fetch_value) +
			 ALIGN(probectl_fetch_store_bytes(&insns[i]), 8);
		arg++;
		pos = 0;
		depth = 0;
		loaded = false;
	}
	if (pos) {
		kapi_set_err_msg_fmt_mod(extack,
					 "fetch argument %u does not end with a store", arg + 1);
		return -EINVAL;
	}
	/* every part counted: the limit does not depend on the parts asked */
	if (sizeof(struct probectl_record) + PROBECTL_RECORD_PARTS_MAX + total >
	    PROBECTL_RECORD_MAX) {
		kapi_set_err_msg_fmt_mod(extack,
					 "fetched values need up to %u bytes, records hold %zu",
					 total,
					 PROBECTL_RECORD_MAX - sizeof(struct probectl_record) -
					 PROBECTL_RECORD_PARTS_MAX);
		return -EINVAL;
	}
	*nargs = arg;
	*bytes = total;
	return 0;
}

/**
 * probectl_fetch_split() - instructions of the first @nargs programs.
 * @insns: validated programs
 * @n: their instructions
 * @nargs: how many programs
 *
 * Context: process context.
 * Return: the index just after the store of argument @nargs (0 for 0).
 */
u32 probectl_fetch_split(const struct probectl_fetch_insn *insns, u32 n,
			 u32 nargs)
{
	u32 i;

	for (i = 0; i < n && nargs; i++)
		if (probectl_fetch_store_bytes(&insns[i]))
			nargs--;
	return i;
}

/**
 * probectl_fetch_has_op() - whether validated programs use an opcode.
 * @insns: the programs
 * @n: their instructions
 * @op: enum probectl_fetch_op
 *
 * Context: any.
 * Return: true when some instruction is @op.
 */
bool probectl_fetch_has_op(const struct probectl_fetch_insn *insns, u32 n, u8 op)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (insns[i].op == op)
			return true;
	return false;
}

/* Non-faulting read of @size bytes; user memory for uprobes or F_USER. */
static int probectl_fetch_read(void *dst, unsigned long addr, size_t size,
			       bool user)
{
	if (user)
		return copy_from_user_nofault(dst, (const void __user *)addr, size);
	return copy_from_kernel_nofault(dst, (const void *)addr, size);
}

/*
 * A NUL-terminated string of at most @max bytes (incl. NUL) into @dst, read
 * page by page so that a string ending just before an unmapped page still
 * reads. Sets the value's flags; returns its length incl. the NUL.
 */
static u16 probectl_fetch_string(char *dst, unsigned long addr, u32 max,
				 bool user, u8 *flags)
{
	u32 len = 0, chunk;
	char *nul;

	while (len < max - 1) {
		chunk = min_t(u32, max - 1 - len,
			      PAGE_SIZE - ((addr + len) & ~PAGE_MASK));
		if (probectl_fetch_read(dst + len, addr + len, chunk, user)) {
			if (!len)
				*flags |= PROBECTL_FETCH_V_FAULT;
			else
				*flags |= PROBECTL_FETCH_V_TRUNCATED;
			break;
		}
		nul = memchr(dst + len, '\0', chunk);
		if (nul)
			return nul - dst + 1;
		len += chunk;
	}
	if (len == max - 1)
		*flags |= PROBECTL_FETCH_V_TRUNCATED;
	if (*flags & PROBECTL_FETCH_V_FAULT)
		return 0;
	dst[len] = '\0';
	return len + 1;
}

/*
 * @size bytes of an array of @elem-byte elements into @dst, page by page:
 * an array that runs into an unmapped page keeps its whole elements before
 * it (TRUNCATED), as a string does; none readable is a fault. Returns the
 * bytes kept.
 */
static u32 probectl_fetch_array(void *dst, unsigned long addr, u32 size, u32 elem,
				bool user, u8 *flags)
{
	u32 len = 0, chunk;

	while (len < size) {
		chunk = min_t(u32, size - len, PAGE_SIZE - ((addr + len) & ~PAGE_MASK));
		if (probectl_fetch_read(dst + len, addr + len, chunk, user))
			break;
		len += chunk;
	}
	len -= len % elem;
	if (!len)
		*flags |= PROBECTL_FETCH_V_FAULT;
	else if (len < size)
		*flags |= PROBECTL_FETCH_V_TRUNCATED;
	return len;
}

/* The new program's AT_EXECFN: where exec copied the filename it was given. */
static unsigned long probectl_fetch_execfn(const struct mm_struct *mm, bool *fault)
{
	unsigned int i;

	for (i = 0; i + 1 < ARRAY_SIZE(mm->saved_auxv) && mm->saved_auxv[i] != AT_NULL;
	     i += 2)
		if (mm->saved_auxv[i] == AT_EXECFN)
			return mm->saved_auxv[i + 1];
	*fault = true;
	return 0;
}

/*
 * The address of string @n of the new program's argument area, the argv
 * strings exec copied onto its stack back to back: NULs counted within the
 * first PROBECTL_FETCH_EXEC_SCAN bytes, read without faulting (exec wrote
 * these pages, so they are present).
 */
static unsigned long probectl_fetch_cmdline(const struct mm_struct *mm, u32 n,
					    bool *fault)
{
	unsigned long addr = READ_ONCE(mm->arg_start);
	unsigned long end = READ_ONCE(mm->arg_end);
	unsigned long limit = addr + min(end - addr, (unsigned long)PROBECTL_FETCH_EXEC_SCAN);
	char buf[64];
	u32 chunk, i;

	if (end < addr)
		goto fault;
	while (n) {
		if (addr >= limit)
			goto fault;
		chunk = min_t(unsigned long, sizeof(buf), limit - addr);
		if (copy_from_user_nofault(buf, (const void __user *)addr, chunk))
			goto fault;
		for (i = 0; i < chunk && n; i++)
			if (!buf[i])
				n--;
		addr += i;
	}
	if (addr < end)
		return addr;
fault:
	*fault = true;
	return 0;
}

/* load-exec: see its uapi comment. */
static u64 probectl_fetch_exec(u32 n, const struct probectl_fetch_ctx *ctx, bool *fault)
{
	const struct mm_struct *mm = current->mm;
	unsigned long v = 0;

	if (!mm) {
		*fault = true;
		return 0;
	}
	if (!ctx->entry_mm || ctx->entry_mm == mm) {
		/* the caller's address space: where execve's arguments point */
		if (!n)
			return ctx->args[0];
		*fault = probectl_fetch_read(&v, ctx->args[1] + (n - 1) * sizeof(v),
					     sizeof(v), true);
		return v;
	}
	/* the exec replaced it: the old addresses mean nothing now */
	if (!n)
		return probectl_fetch_execfn(mm, fault);
	return probectl_fetch_cmdline(mm, n - 1, fault);
}

static u64 probectl_fetch_load(const struct probectl_fetch_insn *in,
			       const struct probectl_fetch_ctx *ctx, bool *fault)
{
	struct pt_regs *regs = ctx->regs;
	unsigned long v = 0;
	u64 r;

	switch (in->op) {
	case PROBECTL_FETCH_LOAD_ARG:
		return ctx->args[in->operand - 1];
	case PROBECTL_FETCH_LOAD_REG:
		r = ((unsigned long *)regs)[in->operand];
		return in->size == 4 ? (u32)r : r;
	case PROBECTL_FETCH_LOAD_STACK:
		if (!ctx->user)
			return regs_get_kernel_stack_nth(regs, in->operand);
		*fault = probectl_fetch_read(&v, regs->sp + in->operand * sizeof(long),
					     sizeof(v), true);
		return v;
	case PROBECTL_FETCH_LOAD_RETVAL:
		/* strace's rule for a failed call: what -c counts as an error */
		if (in->flags & PROBECTL_FETCH_F_ERRNO)
			return IS_ERR_VALUE((unsigned long)ctx->retval) ? ctx->retval : 0;
		return ctx->retval;
	case PROBECTL_FETCH_LOAD_PID:
		return current->tgid;
	case PROBECTL_FETCH_LOAD_TID:
		return current->pid;
	case PROBECTL_FETCH_LOAD_UID:
		return from_kuid(&init_user_ns, current_uid());
	case PROBECTL_FETCH_LOAD_CPU:
		return raw_smp_processor_id();
	case PROBECTL_FETCH_LOAD_IMM:
		return in->operand | (u64)(u32)in->offset << 32;
	case PROBECTL_FETCH_LOAD_KSTACK:
		return probectl_stack_id(ctx->stacks, ctx->regs, in->operand);
	case PROBECTL_FETCH_LOAD_USTACK:
		return probectl_ustack_id(ctx->stacks, ctx->user ? ctx->regs : NULL,
					  in->operand,
					  in->flags & PROBECTL_FETCH_F_FUNC_ENTRY,
					  probectl_mm_pin(ctx->pins));
	case PROBECTL_FETCH_LOAD_EXEC:
		return probectl_fetch_exec(in->operand, ctx, fault);
	case PROBECTL_FETCH_LOAD_ADDR:
		/* validated: both are words of pt_regs, or no base */
		r = ((unsigned long *)regs)[probectl_fetch_addr_index(in)] * in->size;
		if (probectl_fetch_addr_base(in) != PROBECTL_FETCH_ADDR_NO_BASE)
			r += ((unsigned long *)regs)[probectl_fetch_addr_base(in)];
		return r;
	}
	return 0;
}

/* Runs one argument's program from @in; returns the instructions used. */
static unsigned int probectl_fetch_one(const struct probectl_fetch_insn *in,
				       const struct probectl_fetch_ctx *ctx,
				       struct probectl_fetch_value *val)
{
	void *data = val + 1;
	unsigned int i = 0;
	bool fault = false;
	u64 acc = 0, v;

	val->len = 0;
	val->flags = 0;
	val->reserved = 0;
	val->maps_seq = 0;
	for (;; i++, in++) {
		bool user = ctx->user || (in->flags & PROBECTL_FETCH_F_USER);

		if (probectl_fetch_is_load(in->op)) {
			acc = probectl_fetch_load(in, ctx, &fault);
			continue;
		}
		if (in->op == PROBECTL_FETCH_DEREF) {
			v = 0;
			if (!fault)
				fault = probectl_fetch_read(&v, acc + in->offset, in->size, user);
			acc = v;
			continue;
		}
		if (fault)
			break;
		switch (in->op) {
		case PROBECTL_FETCH_STORE_INT:
			memcpy(data, &acc, in->size);
			val->len = in->size;
			break;
		case PROBECTL_FETCH_STORE_STRING:
			val->len = probectl_fetch_string(data, acc + in->offset, in->operand,
							 user, &val->flags);
			break;
		case PROBECTL_FETCH_STORE_ARRAY:
			val->len = probectl_fetch_array(data, acc + in->offset,
							in->size * in->operand, in->size,
							user, &val->flags);
			break;
		case PROBECTL_FETCH_STORE_COMM:
			memcpy(data, current->comm, PROBECTL_COMM_LEN);
			((char *)data)[PROBECTL_COMM_LEN - 1] = '\0';
			val->len = strnlen(data, PROBECTL_COMM_LEN) + 1;
			break;
		case PROBECTL_FETCH_STORE_USTACK_SNAPSHOT:
			val->len = probectl_ustack_snapshot(ctx->user ? ctx->regs : NULL, data,
							    in->operand, &val->flags);
			if (val->len)
				val->maps_seq = probectl_mm_pin(ctx->pins);
			break;
		}
		break;
	}
	if (fault)
		val->flags |= PROBECTL_FETCH_V_FAULT;
	/* the store ends the program, also when a fault skipped it */
	while (!probectl_fetch_store_bytes(in)) {
		in++;
		i++;
	}
	return i + 1;
}

/**
 * probectl_fetch_run() - run fetch programs into a record.
 * @insns: whole programs (validated at PROBE_ADD): all of a probe's, or
 *	   the entry or return part of a kretprobe's
 * @n: their instructions
 * @ctx: registers and what the handler knows
 * @out: where the first struct probectl_fetch_value goes; room for the
 *	 bytes probectl_fetch_validate() computed for these programs
 *
 * Context: probe handler (any context); reads memory only through the
 * non-faulting accessors.
 * Return: bytes written, a multiple of 8.
 */
u32 probectl_fetch_run(const struct probectl_fetch_insn *insns, u32 n,
		       const struct probectl_fetch_ctx *ctx, void *out)
{
	struct probectl_fetch_value *val;
	unsigned int used = 0;
	u32 off = 0;

	while (used < n) {
		val = out + off;
		used += probectl_fetch_one(insns + used, ctx, val);
		/* no stale ring bytes, nor bytes read past a string's NUL */
		memset((void *)(val + 1) + val->len, 0, ALIGN(val->len, 8) - val->len);
		off += sizeof(*val) + ALIGN(val->len, 8);
	}
	return off;
}
NOKPROBE_SYMBOL(probectl_fetch_run);

/**
 * probectl_fetch_session() - give a handler's context its session's stack map and pin table.
 * @p: the probe
 * @c: the context the handler built
 *
 * Context: probe handler (any context).
 */
void probectl_fetch_session(const struct probectl_probe *p, struct probectl_fetch_ctx *c)
{
	if (p->session) {
		c->stacks = READ_ONCE(p->session->stacks);
		c->pins = READ_ONCE(p->session->pins);
	}
}
NOKPROBE_SYMBOL(probectl_fetch_session);

/**
 * probectl_fetch_int() - run one integer argument's program alone.
 * @p: the probe
 * @ctx: the handler's context, probectl_fetch_session() applied
 * @start: the program's first instruction in @p->fetch; it ends in STORE_INT
 * @out: receives the value as a record holds it: its width, zero-extended
 *
 * What probectl_fetch_run() stores for this argument, without the value's
 * header, padding or the other arguments: for aggregations that need a
 * few integers and no record. A validated integer program is one load,
 * its dereferences and the store, so it runs here without the general
 * interpreter's per-instruction dispatch, value header and byte copies.
 *
 * Context: probe handler (any context).
 * Return: false when the program faulted (@out is then 0).
 */
bool probectl_fetch_int(const struct probectl_probe *p, const struct probectl_fetch_ctx *ctx,
			u32 start, u64 *out)
{
	const struct probectl_fetch_insn *in = p->fetch + start;
	bool fault = false;
	u64 acc, v;

	acc = probectl_fetch_load(in, ctx, &fault);
	for (in++; in->op == PROBECTL_FETCH_DEREF; in++) {
		if (fault)
			continue;
		v = 0;	/* a narrower read zero-extends (little-endian) */
		fault = probectl_fetch_read(&v, acc + in->offset, in->size,
					    ctx->user || (in->flags & PROBECTL_FETCH_F_USER));
		acc = v;
	}
	if (fault) {
		*out = 0;
		return false;
	}
	/* STORE_INT keeps its low in->size bytes */
	*out = in->size < sizeof(u64) ? acc & (BIT_ULL(in->size * 8) - 1) : acc;
	return true;
}
NOKPROBE_SYMBOL(probectl_fetch_int);

/**
 * probectl_fetch_entry() - the values a kretprobe reads at function entry.
 * @p: the probe
 * @ctx: registers and saved arguments at entry
 * @out: room for p->fetch_entry_bytes bytes
 *
 * The first p->fetch_entry_insns instructions, with the session's stack
 * map and pin table as probectl_fetch_all() gives them: a syscall's stack is taken here,
 * where the syscall's own function is still on it.
 *
 * Context: probe handler (any context).
 * Return: bytes written, a multiple of 8.
 */
u32 probectl_fetch_entry(const struct probectl_probe *p,
			 const struct probectl_fetch_ctx *ctx, void *out)
{
	struct probectl_fetch_ctx c = *ctx;

	probectl_fetch_session(p, &c);
	return probectl_fetch_run(p->fetch, p->fetch_entry_insns, &c, out);
}
NOKPROBE_SYMBOL(probectl_fetch_entry);

/*
 * A kretprobe's entry values into a record at its return, the load-exec
 * ones that faulted at entry read again now (V_REREAD): a handler must not
 * fault pages in, and by the return a failed exec has faulted its path in
 * and a successful one has copied its strings to the new program. Each
 * fits: a value is at most what its program may store.
 */
static u32 probectl_fetch_reread(const struct probectl_probe *p,
				 const struct probectl_fetch_ctx *c, void *out)
{
	const struct probectl_fetch_insn *in = p->fetch;
	const struct probectl_fetch_value *v;
	struct probectl_fetch_value *nv;
	u32 used = 0, off = 0, voff = 0, n, vlen;

	while (used < p->fetch_entry_insns && voff < c->entry_len) {
		v = c->entry_vals + voff;
		vlen = sizeof(*v) + ALIGN(v->len, 8);
		n = 1;
		while (!probectl_fetch_store_bytes(&in[used + n - 1]))
			n++;
		if ((v->flags & PROBECTL_FETCH_V_FAULT) &&
		    in[used].op == PROBECTL_FETCH_LOAD_EXEC) {
			nv = out + off;
			probectl_fetch_one(in + used, c, nv);
			nv->flags |= PROBECTL_FETCH_V_REREAD;
			memset((void *)(nv + 1) + nv->len, 0, ALIGN(nv->len, 8) - nv->len);
			off += sizeof(*nv) + ALIGN(nv->len, 8);
		} else {
			memcpy(out + off, v, vlen);
			off += vlen;
		}
		voff += vlen;
		used += n;
	}
	return off;
}

/**
 * probectl_fetch_all() - a probe's fetched values, as they go into a record.
 * @p: the probe
 * @ctx: registers and what the handler knows; for a kretprobe's return,
 *	 the values its entry handler fetched (@ctx->entry_vals)
 * @out: room for p->fetch_bytes bytes
 *
 * The first p->fetch_entry_insns instructions ran at entry: their values
 * are copied; the rest run now.
 *
 * Context: probe handler (any context).
 * Return: bytes written, a multiple of 8.
 */
u32 probectl_fetch_all(const struct probectl_probe *p,
		       const struct probectl_fetch_ctx *ctx, void *out)
{
	struct probectl_fetch_ctx c = *ctx;
	u32 len = 0;

	probectl_fetch_session(p, &c);
	if (c.entry_len && p->fetch_reread) {
		len = probectl_fetch_reread(p, &c, out);
	} else if (c.entry_len) {
		memcpy(out, c.entry_vals, c.entry_len);
		len = c.entry_len;
	}
	return len + probectl_fetch_run(p->fetch + p->fetch_entry_insns,
					p->fetch_insns - p->fetch_entry_insns,
					&c, out + len);
}
NOKPROBE_SYMBOL(probectl_fetch_all);
