// SPDX-License-Identifier: GPL-2.0
/*
 * probectl: dynamic kernel tracing controlled over generic netlink.
 *
 * This file only sets the module up in order and tears it down in reverse;
 * the protocol lives in genl.c, the probe table in probe.c, the record
 * transport in session.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/netlink.h>
#include <net/genetlink.h>

#include "genl.h"
#include "probectl.h"
#include "version.h"

unsigned int probectl_buffer_kb = 256;

/* An out-of-range value is refused (the write fails with EINVAL), not clamped. */
static int probectl_buffer_kb_set(const char *val, const struct kernel_param *kp)
{
	int err = param_set_uint_minmax(val, kp, PROBECTL_RING_KB_MIN,
					PROBECTL_RING_KB_MAX);

	if (err)
		pr_warn("buffer_kb must be a number of KiB from %u to %u\n",
			PROBECTL_RING_KB_MIN, PROBECTL_RING_KB_MAX);
	return err;
}

static const struct kernel_param_ops probectl_buffer_kb_ops = {
	.set = probectl_buffer_kb_set,
	.get = param_get_uint,
};
module_param_cb(buffer_kb, &probectl_buffer_kb_ops, &probectl_buffer_kb, 0644);
MODULE_PARM_DESC(buffer_kb,
		 "Ring buffer per CPU per session in KiB, used for sessions created afterwards (default 256, min 8, max 1048576)");

unsigned int probectl_drain_interval_ms = 10;

/*
 * Sessions take a new interval at once: a drain waiting out the old one is
 * run now, and rearms with the new.
 */
static int probectl_drain_interval_set(const char *val,
				       const struct kernel_param *kp)
{
	int err = param_set_uint_minmax(val, kp, 1, PROBECTL_DRAIN_INTERVAL_MAX);

	if (err) {
		pr_warn("drain_interval_ms must be a number of ms from 1 to %u\n",
			PROBECTL_DRAIN_INTERVAL_MAX);
		return err;
	}
	probectl_session_kick_all();
	return 0;
}

static const struct kernel_param_ops probectl_drain_interval_ops = {
	.set = probectl_drain_interval_set,
	.get = param_get_uint,
};
module_param_cb(drain_interval_ms, &probectl_drain_interval_ops,
		&probectl_drain_interval_ms, 0644);
MODULE_PARM_DESC(drain_interval_ms,
		 "Longest wait in ms before buffered records are delivered to their session, for running sessions too; a CPU that buffered wake_percent of its ring delivers at once (default 10, min 1, max 60000)");

unsigned int probectl_wake_percent = 25;

/* As buffer_kb: a value over 100 is refused, not clamped. */
static int probectl_wake_percent_set(const char *val,
				     const struct kernel_param *kp)
{
	int err = param_set_uint_minmax(val, kp, 0, 100);

	if (err)
		pr_warn("wake_percent must be a percentage from 0 to 100\n");
	return err;
}

static const struct kernel_param_ops probectl_wake_percent_ops = {
	.set = probectl_wake_percent_set,
	.get = param_get_uint,
};
module_param_cb(wake_percent, &probectl_wake_percent_ops,
		&probectl_wake_percent, 0644);
MODULE_PARM_DESC(wake_percent,
		 "Share of a CPU's ring, in percent, whose records wake the drain at once, for sessions created afterwards; 0 wakes it for any record, 100 leaves it to drain_interval_ms alone (default 25; ftrace's buffer_percent does the same for its readers)");

static int __init probectl_init(void)
{
	int err;

	/*
	 * The notifier goes first: once the family is visible, sockets can
	 * own probes, and their release must already be noticed.
	 */
	probectl_session_set_transport(&probectl_genl_transport);
	err = probectl_session_init();
	if (err)
		goto err_out;

	err = probectl_pred_init();
	if (err)
		goto err_session;

	err = probectl_stack_init();
	if (err)
		goto err_filter;

	err = probectl_track_init();
	if (err)
		goto err_stack;

	err = netlink_register_notifier(&probectl_netlink_notifier);
	if (err)
		goto err_track;

	err = genl_register_family(&probectl_genl_family);
	if (err)
		goto err_notifier;

	pr_info("loaded, release %s, genl family %s version %u\n",
		PROBECTL_RELEASE, PROBECTL_GENL_NAME, PROBECTL_GENL_VERSION);
	return 0;

err_notifier:
	netlink_unregister_notifier(&probectl_netlink_notifier);
err_track:
	probectl_track_exit();
err_stack:
	probectl_stack_exit();
err_filter:
	probectl_pred_exit();
err_session:
	probectl_session_exit();
err_out:
	return err;
}

static void __exit probectl_exit(void)
{
	/*
	 * Probes first (KERNEL-API.md section 6): refuse new requests, then
	 * unregister every probe (no handler runs afterwards), stop every
	 * drain and free the rings. Only then can the family and the notifier
	 * go. Doits still in flight see the shutdown flag and fail cleanly.
	 */
	probectl_shutdown();
	genl_unregister_family(&probectl_genl_family);
	netlink_unregister_notifier(&probectl_netlink_notifier);
	probectl_track_exit();
	probectl_stack_exit();
	probectl_pred_exit();
	probectl_session_exit();
	/* probes are freed from RCU callbacks that live in this module */
	rcu_barrier();
	pr_info("unloaded\n");
}

module_init(probectl_init);
module_exit(probectl_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("probectl: kprobes, kretprobes, uprobes and uretprobes over generic netlink");
MODULE_ALIAS_GENL_FAMILY(PROBECTL_GENL_NAME);
/* /sys/module/probectl/version: what `probectl --version` reports */
MODULE_VERSION(PROBECTL_RELEASE);
