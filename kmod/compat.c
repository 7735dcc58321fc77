// SPDX-License-Identifier: GPL-2.0
/*
 * Out-of-line parts of the version shims in compat.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kernel.h>
#include <net/netlink.h>

#include "compat.h"

#ifndef NL_SET_ERR_MSG_FMT_MOD
static char kapi_errmsg_slots[KAPI_ERRMSG_SLOTS][KAPI_ERRMSG_LEN];
static atomic_t kapi_errmsg_next = ATOMIC_INIT(0);

/**
 * kapi_errmsg_format() - format an extack message on kernels before 6.2
 * @fmt: printf format
 *
 * Return: the formatted text in a static slot (see compat.h for why a slot
 * outlives the request); never NULL.
 */
const char *kapi_errmsg_format(const char *fmt, ...)
{
	unsigned int i = (unsigned int)atomic_inc_return(&kapi_errmsg_next) %
			 KAPI_ERRMSG_SLOTS;
	char *slot = kapi_errmsg_slots[i];
	va_list args;

	va_start(args, fmt);
	vsnprintf(slot, KAPI_ERRMSG_LEN - 1, fmt, args);
	va_end(args);
	return slot;
}
#endif
