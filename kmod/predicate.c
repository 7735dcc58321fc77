// SPDX-License-Identifier: GPL-2.0
/*
 * Per-probe predicates (PROBECTL_A_PROBE_FILTER): validated at PROBE_ADD
 * against the probe's fetch programs, run in the handler on values fetched
 * into per-CPU scratch, before any ring space is reserved; so a rejected
 * hit costs no ring space and is counted as rejected, never as dropped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/glob.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uidgid.h>

#include "probectl.h"

/*
 * Scratch levels per CPU: task, softirq, hardirq, NMI. A uprobe handler
 * (preemptible task context) can be interrupted by a kprobe handler on the
 * same CPU, which then takes the next level.
 */
#define PROBECTL_SCRATCH_LEVELS	4

struct probectl_scratch {
	int nest;
	u8 buf[PROBECTL_SCRATCH_LEVELS][PROBECTL_RECORD_MAX];
};

static struct probectl_scratch __percpu *probectl_scratch;

/**
 * probectl_pred_init() - allocate the per-CPU scratch of filtered probes.
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int probectl_pred_init(void)
{
	probectl_scratch = alloc_percpu(struct probectl_scratch);
	return probectl_scratch ? 0 : -ENOMEM;
}

/**
 * probectl_pred_exit() - free the scratch; no handler may run any more.
 *
 * Context: module exit, after every probe is unregistered.
 */
void probectl_pred_exit(void)
{
	free_percpu(probectl_scratch);
}

/* What a fetch argument's program stores, as a predicate sees it. */
struct probectl_arg_type {
	bool string;
	u8 width;	/* integers: bytes */
};

/* The type of every argument, from each program's STORE. */
static unsigned int probectl_pred_arg_types(const struct probectl_fetch_insn *fetch,
					    u32 n, struct probectl_arg_type *types)
{
	unsigned int i, nargs = 0;

	for (i = 0; i < n && nargs < PROBECTL_FETCH_MAX_ARGS; i++) {
		switch (fetch[i].op) {
		case PROBECTL_FETCH_STORE_INT:
			types[nargs].string = false;
			types[nargs++].width = fetch[i].size;
			break;
		case PROBECTL_FETCH_STORE_STRING:
		case PROBECTL_FETCH_STORE_COMM:
			types[nargs].string = true;
			types[nargs++].width = 0;
			break;
		case PROBECTL_FETCH_STORE_ARRAY:
		case PROBECTL_FETCH_STORE_USTACK_SNAPSHOT:
			types[nargs].string = false;
			types[nargs++].width = 0;	/* arrays: not comparable */
			break;
		}
	}
	return nargs;
}

static bool probectl_pred_is_string_cmp(u8 cmp)
{
	return cmp == PROBECTL_FILTER_EQ || cmp == PROBECTL_FILTER_NE ||
	       cmp == PROBECTL_FILTER_GLOB || cmp == PROBECTL_FILTER_NOTGLOB;
}

/* One TEST instruction; NULL when it is valid. */
static const char *probectl_pred_check_test(const struct probectl_filter_insn *in,
					    const struct probectl_arg_type *types,
					    unsigned int nargs, unsigned int nstrings,
					    bool is_return)
{
	bool string;
	u8 width = 4;

	if (in->cmp >= __PROBECTL_FILTER_CMP_MAX)
		return "unknown comparison";
	if (in->field >= __PROBECTL_FILTER_FIELD_MAX)
		return "unknown field";
	if (in->field == PROBECTL_FILTER_FIELD_RETVAL) {
		if (!is_return)
			return "retval in a probe that does not return";
		/* $retval:s32: an int function leaves the upper half of ax undefined */
		width = in->width == 1 || in->width == 2 || in->width == 4 ? in->width : 8;
	}
	if (in->flags & ~(PROBECTL_FILTER_F_SIGNED | PROBECTL_FILTER_F_STRING))
		return "unknown flags";
	string = in->field == PROBECTL_FILTER_FIELD_COMM;
	if (in->field == PROBECTL_FILTER_FIELD_ARG) {
		if (in->arg >= nargs)
			return "arg beyond the fetch list";
		if (!types[in->arg].string && !types[in->arg].width)
			return "arrays cannot be compared";
		string = types[in->arg].string;
		width = types[in->arg].width;
	}
	if (string != !!(in->flags & PROBECTL_FILTER_F_STRING))
		return string ? "integer compare on a string" : "string compare on an integer";
	if (string) {
		if (!probectl_pred_is_string_cmp(in->cmp))
			return "strings take == != ~ !~ only";
		if (in->flags & PROBECTL_FILTER_F_SIGNED)
			return "signed string compare";
		if (in->value >= nstrings)
			return "string index out of range";
		return NULL;
	}
	if (in->cmp == PROBECTL_FILTER_GLOB || in->cmp == PROBECTL_FILTER_NOTGLOB)
		return "glob on an integer";
	if (in->width != width)
		return "width differs from the field's size";
	return NULL;
}

/*
 * Splits @blob (NUL-terminated literals back to back) into @p->filter_str;
 * returns how many, or -EINVAL.
 */
static int probectl_pred_strings(struct probectl_probe *p, const char *blob, u32 len)
{
	unsigned int n = 0;
	size_t l;
	u32 off = 0;

	while (off < len) {
		if (n == PROBECTL_FILTER_MAX_STRINGS)
			return -E2BIG;
		l = strnlen(blob + off, len - off);
		if (off + l == len || l > PROBECTL_FILTER_MAX_STRLEN)
			return -EINVAL;
		p->filter_str[n++] = blob + off;
		off += l + 1;
	}
	return n;
}

/**
 * probectl_pred_set() - validate a predicate and attach it to a probe.
 * @p: the probe, its fetch programs already validated and set
 * @req: the request carrying the predicate (filter, filter_insns, strings)
 * @extack: receives the first rule broken, naming the instruction
 *
 * Checks: 1..PROBECTL_FILTER_MAX_INSNS instructions, known opcodes,
 * comparisons, fields and flags; retval only in return probes (kretprobe,
 * uretprobe), arguments within the fetch list, strings
 * compared only with strings and integers with their own width; string
 * literals NUL-terminated, at most PROBECTL_FILTER_MAX_STRINGS of at most
 * PROBECTL_FILTER_MAX_STRLEN bytes; the stack never underflows nor holds
 * more than PROBECTL_FILTER_MAX_STACK values, and ends with exactly one.
 *
 * Context: process context, may sleep.
 * Return: 0, -EINVAL with an extack message, or -ENOMEM.
 */
int probectl_pred_set(struct probectl_probe *p, const struct probectl_probe_req *req,
		      struct netlink_ext_ack *extack)
{
	struct probectl_arg_type types[PROBECTL_FETCH_MAX_ARGS];
	bool is_return = p->kind == PROBECTL_KIND_KRETPROBE ||
			 p->kind == PROBECTL_KIND_URETPROBE;
	unsigned int i, depth = 0, nargs;
	const char *why = NULL;
	int nstr = 0;

	if (!req->filter_insns || req->filter_insns > PROBECTL_FILTER_MAX_INSNS) {
		kapi_set_err_msg_fmt_mod(extack, "PROBE_FILTER: %u instructions, not 1..%u",
					 req->filter_insns, PROBECTL_FILTER_MAX_INSNS);
		return -EINVAL;
	}
	if (req->filter_strings_len) {
		p->filter_blob = kmemdup(req->filter_strings, req->filter_strings_len,
					 GFP_KERNEL);
		if (!p->filter_blob)
			return -ENOMEM;
		nstr = probectl_pred_strings(p, p->filter_blob, req->filter_strings_len);
	}
	if (nstr < 0) {
		kapi_set_err_msg_fmt_mod(extack,
					 "PROBE_FILTER_STRINGS: more than %u, unterminated or over %u bytes",
					 PROBECTL_FILTER_MAX_STRINGS, PROBECTL_FILTER_MAX_STRLEN);
		return -EINVAL;
	}
	nargs = probectl_pred_arg_types(p->fetch, p->fetch_insns, types);
	for (i = 0; i < req->filter_insns && !why; i++) {
		const struct probectl_filter_insn *in = &req->filter[i];

		switch (in->op) {
		case PROBECTL_FILTER_TEST:
			why = probectl_pred_check_test(in, types, nargs, nstr, is_return);
			if (!why && ++depth > PROBECTL_FILTER_MAX_STACK)
				why = "stack deeper than 8";
			break;
		case PROBECTL_FILTER_AND:
		case PROBECTL_FILTER_OR:
			if (depth < 2)
				why = "stack underflow";
			depth--;
			break;
		case PROBECTL_FILTER_NOT:
			if (depth < 1)
				why = "stack underflow";
			break;
		default:
			why = "unknown opcode";
		}
	}
	if (why) {
		kapi_set_err_msg_fmt_mod(extack, "PROBE_FILTER instruction %u: %s", i, why);
		return -EINVAL;
	}
	if (depth != 1) {
		kapi_set_err_msg_fmt_mod(extack, "PROBE_FILTER leaves %u values, not 1", depth);
		return -EINVAL;
	}
	p->filter = kmemdup(req->filter, req->filter_insns * sizeof(*req->filter), GFP_KERNEL);
	if (!p->filter)
		return -ENOMEM;
	p->filter_insns = req->filter_insns;
	return 0;
}

static s64 probectl_pred_sext(u64 v, unsigned int width)
{
	unsigned int shift = 64 - width * 8;

	return (s64)(v << shift) >> shift;
}

static bool probectl_pred_int(const struct probectl_filter_insn *in, u64 raw)
{
	u64 lit = in->value;

	if (in->width < 8) {
		raw &= (1ULL << (in->width * 8)) - 1;
		lit &= (1ULL << (in->width * 8)) - 1;
	}
	if (in->cmp == PROBECTL_FILTER_MASK)
		return raw & in->value;
	if (in->flags & PROBECTL_FILTER_F_SIGNED) {
		s64 a = probectl_pred_sext(raw, in->width);
		s64 b = probectl_pred_sext(lit, in->width);

		switch (in->cmp) {
		case PROBECTL_FILTER_EQ: return a == b;
		case PROBECTL_FILTER_NE: return a != b;
		case PROBECTL_FILTER_LT: return a < b;
		case PROBECTL_FILTER_LE: return a <= b;
		case PROBECTL_FILTER_GT: return a > b;
		case PROBECTL_FILTER_GE: return a >= b;
		}
		return false;
	}
	switch (in->cmp) {
	case PROBECTL_FILTER_EQ: return raw == lit;
	case PROBECTL_FILTER_NE: return raw != lit;
	case PROBECTL_FILTER_LT: return raw < lit;
	case PROBECTL_FILTER_LE: return raw <= lit;
	case PROBECTL_FILTER_GT: return raw > lit;
	case PROBECTL_FILTER_GE: return raw >= lit;
	}
	return false;
}

static bool probectl_pred_str(const struct probectl_filter_insn *in, const char *lit,
			      const char *s)
{
	switch (in->cmp) {
	case PROBECTL_FILTER_EQ: return !strcmp(s, lit);
	case PROBECTL_FILTER_NE: return strcmp(s, lit);
	case PROBECTL_FILTER_GLOB: return glob_match(lit, s);
	case PROBECTL_FILTER_NOTGLOB: return !glob_match(lit, s);
	}
	return false;
}

/* One comparison; @vals indexes the fetched values. */
static bool probectl_pred_test(const struct probectl_probe *p,
			       const struct probectl_filter_insn *in,
			       struct probectl_fetch_value *const *vals,
			       const struct probectl_fetch_ctx *ctx)
{
	const struct probectl_fetch_value *v;
	char comm[PROBECTL_COMM_LEN];
	u64 raw = 0;

	switch (in->field) {
	case PROBECTL_FILTER_FIELD_PID:
		return probectl_pred_int(in, current->tgid);
	case PROBECTL_FILTER_FIELD_TID:
		return probectl_pred_int(in, current->pid);
	case PROBECTL_FILTER_FIELD_UID:
		return probectl_pred_int(in, from_kuid(&init_user_ns, current_uid()));
	case PROBECTL_FILTER_FIELD_CPU:
		return probectl_pred_int(in, raw_smp_processor_id());
	case PROBECTL_FILTER_FIELD_RETVAL:
		return probectl_pred_int(in, ctx->retval);
	case PROBECTL_FILTER_FIELD_COMM:
		/* racy copy, as the record's comm */
		memcpy(comm, current->comm, sizeof(comm));
		comm[sizeof(comm) - 1] = '\0';
		return probectl_pred_str(in, p->filter_str[in->value], comm);
	}
	v = vals[in->arg];
	if (v->flags & PROBECTL_FETCH_V_FAULT)
		return false;
	if (in->flags & PROBECTL_FILTER_F_STRING)
		/* fetch stores strings NUL-terminated within len */
		return v->len && probectl_pred_str(in, p->filter_str[in->value],
						     (const char *)(v + 1));
	if (v->len != in->width)
		return false;
	memcpy(&raw, v + 1, v->len);	/* little-endian: zero-extends */
	return probectl_pred_int(in, raw);
}

/**
 * probectl_pred_run() - evaluate a probe's predicate on fetched values.
 * @p: the probe (predicate validated against its fetch programs)
 * @values: what probectl_fetch_run() wrote
 * @ctx: the handler's context (the return value of a return probe)
 *
 * Context: probe handler (any context); no locks, no sleeping.
 * Return: true to keep the hit.
 */
static bool probectl_pred_run(const struct probectl_probe *p, void *values,
			      const struct probectl_fetch_ctx *ctx)
{
	struct probectl_fetch_value *vals[PROBECTL_FETCH_MAX_ARGS];
	bool stack[PROBECTL_FILTER_MAX_STACK];
	struct probectl_fetch_value *v;
	unsigned int i, sp = 0, n = 0;
	u32 off = 0;

	for (i = 0; i < p->fetch_insns; i++) {
		if (!probectl_fetch_is_store(p->fetch[i].op) || n == PROBECTL_FETCH_MAX_ARGS)
			continue;
		v = values + off;
		vals[n++] = v;
		off += sizeof(*v) + ALIGN(v->len, 8);
	}
	for (i = 0; i < p->filter_insns; i++) {
		const struct probectl_filter_insn *in = &p->filter[i];

		switch (in->op) {
		case PROBECTL_FILTER_TEST:
			stack[sp++] = probectl_pred_test(p, in, vals, ctx);
			break;
		case PROBECTL_FILTER_AND:
			sp--;
			stack[sp - 1] = stack[sp - 1] && stack[sp];
			break;
		case PROBECTL_FILTER_OR:
			sp--;
			stack[sp - 1] = stack[sp - 1] || stack[sp];
			break;
		case PROBECTL_FILTER_NOT:
			stack[sp - 1] = !stack[sp - 1];
			break;
		}
	}
	return stack[0];
}
NOKPROBE_SYMBOL(probectl_pred_run);

/**
 * probectl_fetch_ints_only() - whether every program stores one integer.
 * @insns: a probe's validated fetch programs
 * @n: their instructions
 *
 * Stack ids are integers too, but need the session's map and pins.
 * Return: true when probectl_fetch_ints() can fetch them.
 */
bool probectl_fetch_ints_only(const struct probectl_fetch_insn *insns, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		u8 op = insns[i].op;

		if ((probectl_fetch_is_store(op) && op != PROBECTL_FETCH_STORE_INT) ||
		    op == PROBECTL_FETCH_LOAD_KSTACK || op == PROBECTL_FETCH_LOAD_USTACK)
			return false;
	}
	return true;
}

/**
 * probectl_fetch_ints() - probectl_fetch_all() for probes of integers only.
 * @p: a probe with p->fetch_ints
 * @ctx: the handler's context (no session map needed: no stack loads)
 * @out: room for p->fetch_bytes bytes
 *
 * The same bytes as the general interpreter: per value a header (len the
 * integer's width, or 0 and the fault flag) and 8 bytes, zero-extended,
 * unless it faulted. One probectl_fetch_int() per value, without the
 * copy of @ctx, the per-instruction dispatch and the byte-wise padding.
 *
 * Context: probe handler (any context).
 * Return: bytes written, a multiple of 8.
 */
u32 probectl_fetch_ints(const struct probectl_probe *p,
			const struct probectl_fetch_ctx *ctx, void *out)
{
	struct probectl_fetch_value *val;
	u32 start = 0, end, off = 0;
	u64 v;

	while (start < p->fetch_insns) {
		for (end = start; p->fetch[end].op != PROBECTL_FETCH_STORE_INT; end++)
			;
		val = out + off;
		if (probectl_fetch_int(p, ctx, start, &v)) {
			*val = (struct probectl_fetch_value){ .len = p->fetch[end].size };
			memcpy(val + 1, &v, sizeof(v));
			off += sizeof(*val) + sizeof(v);
		} else {
			*val = (struct probectl_fetch_value){ .flags = PROBECTL_FETCH_V_FAULT };
			off += sizeof(*val);
		}
		start = end + 1;
	}
	return off;
}
NOKPROBE_SYMBOL(probectl_fetch_ints);

/**
 * probectl_record_begin() - fetch, filter and reserve one record.
 * @p: an admitted probe with a session
 * @ctx: what the fetch programs read
 * @evp: receives the ring event for probectl_record_commit()
 *
 * Without a predicate the values are fetched straight into the reserved
 * record. With one, they go to this CPU's scratch first (preemption off,
 * one level per nesting context), the predicate runs, and only a kept hit
 * reserves exactly the bytes fetched. An aggregating probe (aggr.c) takes
 * the same path and adds the hit to its map instead of reserving, unless
 * its map needs only integers (probectl_aggr_hit_direct(): no scratch).
 * The caller writes the parts after comm
 * (probectl_record_parts()) and the return flag, then commits.
 *
 * Context: probe handler (any context); no locks, no sleeping.
 * Return: the record, or NULL (rejected, ring full, or scratch nesting
 * exhausted; each counted).
 */
struct probectl_record *probectl_record_begin(struct probectl_probe *p,
					      const struct probectl_fetch_ctx *ctx,
					      struct ring_buffer_event **evp)
{
	struct probectl_record *rec = NULL;
	struct probectl_scratch *sc;
	u32 len;
	int nest;

	if (!p->filter && !p->aggr) {
		rec = probectl_record_reserve(p, p->fetch_bytes, evp);
		if (rec)
			probectl_record_fetch(p, rec, ctx);
		return rec;
	}
	if (p->aggr && probectl_aggr_hit_direct(p, ctx))
		return NULL;
	preempt_disable_notrace();
	sc = this_cpu_ptr(probectl_scratch);
	nest = this_cpu_inc_return(probectl_scratch->nest);
	if (nest > PROBECTL_SCRATCH_LEVELS) {
		this_cpu_inc(p->stats->dropped);
		goto out;
	}
	len = p->fetch_insns ? probectl_fetch_all(p, ctx, sc->buf[nest - 1]) : 0;
	if (p->filter && !probectl_pred_run(p, sc->buf[nest - 1], ctx)) {
		this_cpu_inc(p->stats->rejected);
		goto out;
	}
	if (p->aggr) {
		probectl_aggr_hit(p, ctx, sc->buf[nest - 1]);
		goto out;
	}
	rec = probectl_record_reserve(p, len, evp);
	if (rec) {
		memcpy((u8 *)rec + rec->size, sc->buf[nest - 1], len);
		rec->size += len;
	}
out:
	this_cpu_dec(probectl_scratch->nest);
	preempt_enable_notrace();
	return rec;
}
NOKPROBE_SYMBOL(probectl_record_begin);
