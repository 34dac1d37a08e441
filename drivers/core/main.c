// SPDX-License-Identifier: GPL-2.0
/*
 * iser_dm: the iSER datamover core shared by ib_iser (initiator) and
 * ib_isert (target).
 */
#include <linux/debugfs.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <rdma/rdma_cm.h>

#include "isdm/isdm.h"
#include "core.h"

/*
 * The Annex A12 switches of the two modules (ib_iser.zbva, ib_isert.zbva,
 * ... send_inv): the words are those of the administration guide; the
 * kernel's boolean words are accepted too.
 */
static int isdm_param_set(const char *val, const struct kernel_param *kp,
			  const char *on_word)
{
	struct isdm_feature_param *p = kp->arg;
	bool on;

	if (sysfs_streq(val, on_word) || sysfs_streq(val, "on"))
		on = true;
	else if (sysfs_streq(val, "off"))
		on = false;
	else if (kstrtobool(val, &on))
		return -EINVAL;
	WRITE_ONCE(p->on, on);
	return 0;
}

static int isdm_param_set_zbva(const char *val, const struct kernel_param *kp)
{
	return isdm_param_set(val, kp, "auto");
}

static int isdm_param_get_zbva(char *buf, const struct kernel_param *kp)
{
	const struct isdm_feature_param *p = kp->arg;

	return sysfs_emit(buf, "%s\n", READ_ONCE(p->on) ? "auto" : "off");
}

static int isdm_param_set_send_inv(const char *val,
				   const struct kernel_param *kp)
{
	return isdm_param_set(val, kp, "on");
}

static int isdm_param_get_send_inv(char *buf, const struct kernel_param *kp)
{
	const struct isdm_feature_param *p = kp->arg;

	return sysfs_emit(buf, "%s\n", READ_ONCE(p->on) ? "on" : "off");
}

/* zbva=auto|off: offer ZBVA, or declare the ZBVA exception (CA12-14) */
const struct kernel_param_ops isdm_param_zbva_ops = {
	.set	= isdm_param_set_zbva,
	.get	= isdm_param_get_zbva,
};
EXPORT_SYMBOL_GPL(isdm_param_zbva_ops);

/* send_inv=on|off: offer Send with Invalidate, or declare the exception */
const struct kernel_param_ops isdm_param_send_inv_ops = {
	.set	= isdm_param_set_send_inv,
	.get	= isdm_param_get_send_inv,
};
EXPORT_SYMBOL_GPL(isdm_param_send_inv_ops);

/*
 * The RC transport timers of the two modules (ib_iser.ack_timeout,
 * ib_isert.ack_timeout, ib_iser.retry_count): how soon a Send or RDMA
 * operation that the peer does not acknowledge fails its connection. A
 * WR is sent again after 4.096 us * 2^ack_timeout without an ACK, and
 * fails after retry_count such resends: with I/O in flight that is the
 * time a dead path takes to show. 0 for ack_timeout leaves rdma_cm's
 * value, which it derives from the path (on RoCE 19, 2.1 s a try, on 6.1;
 * 17, 0.54 s, on 6.12).
 */
static int isdm_param_set_range(const char *val, const struct kernel_param *kp,
				unsigned int lo, unsigned int hi, bool zero_ok)
{
	unsigned int v;

	if (kstrtouint(val, 0, &v))
		return -EINVAL;
	if (!(zero_ok && !v) && (v < lo || v > hi))
		return -ERANGE;
	WRITE_ONCE(*(unsigned int *)kp->arg, v);
	return 0;
}

static int isdm_param_set_ack_timeout(const char *val,
				      const struct kernel_param *kp)
{
	return isdm_param_set_range(val, kp, ISDM_ACK_TIMEOUT_MIN, 31, true);
}

static int isdm_param_set_retry_count(const char *val,
				      const struct kernel_param *kp)
{
	return isdm_param_set_range(val, kp, 1, 7, false);
}

/* ack_timeout=0|10..31: the local ACK timeout's exponent, 0 for rdma_cm's */
const struct kernel_param_ops isdm_param_ack_timeout_ops = {
	.set	= isdm_param_set_ack_timeout,
	.get	= param_get_uint,
};
EXPORT_SYMBOL_GPL(isdm_param_ack_timeout_ops);

/* retry_count=1..7: transport resends before a WR fails */
const struct kernel_param_ops isdm_param_retry_count_ops = {
	.set	= isdm_param_set_retry_count,
	.get	= param_get_uint,
};
EXPORT_SYMBOL_GPL(isdm_param_retry_count_ops);

/**
 * isdm_cm_set_ack_timeout() - apply a module's ack_timeout to a connection
 * @cm_id: the connection's rdma_cm id, before its route is resolved (the
 *	active side: rdma_cm derives the path's packet lifetime from it) or
 *	before rdma_accept() (the passive side)
 * @ack_timeout: the module parameter (isdm_param_ack_timeout_ops)
 *
 * Return: 0, or rdma_set_ack_timeout()'s error.
 */
int isdm_cm_set_ack_timeout(struct rdma_cm_id *cm_id,
			    const unsigned int *ack_timeout)
{
	unsigned int t = READ_ONCE(*ack_timeout);

	return t ? rdma_set_ack_timeout(cm_id, t) : 0;
}
EXPORT_SYMBOL_GPL(isdm_cm_set_ack_timeout);

/**
 * isdm_caps_offer() - what one side offers on one connection
 * @dev: the device, whose @caps say what it can do
 * @zbva: the module's ZBVA switch
 * @send_inv: the module's Send-with-Invalidate switch
 * @caps: filled: the device's abilities less what the switches turn off
 *
 * Called once per connection (REQ or REP), so a parameter changed through
 * sysfs applies to the next connection and never to half of one.
 */
void isdm_caps_offer(const struct isdm_device *dev,
		     const struct isdm_feature_param *zbva,
		     const struct isdm_feature_param *send_inv,
		     struct isdm_caps *caps)
{
	caps->zbva = dev->caps.zbva && READ_ONCE(zbva->on);
	caps->send_inv = dev->caps.send_inv && READ_ONCE(send_inv->on);
}
EXPORT_SYMBOL_GPL(isdm_caps_offer);

/**
 * isdm_mode_show() - print what the CM exchange fixed, for a debugfs view
 * @m: the view
 * @mode: the connection's header form, ZBVA and Send with Invalidate
 *
 * Three "key: value" lines, the same on both sides: header (its length and
 * form), zbva, send_with_invalidate.
 */
void isdm_mode_show(struct seq_file *m, const struct isdm_mode *mode)
{
	seq_printf(m, "header: %u (%s)\n", mode->hdr_len,
		   mode->hdr_len == ISDM_HDR_LEN_RFC ?
		   "RFC 7145 12-byte" : "Annex A12 28-byte expanded");
	seq_printf(m, "zbva: %d\n", mode->zbva);
	seq_printf(m, "send_with_invalidate: %d\n", mode->send_inv);
}
EXPORT_SYMBOL_GPL(isdm_mode_show);

atomic_long_t isdm_rx_ring_bytes = ATOMIC_LONG_INIT(0);
static struct dentry *isdm_dbg;

/*
 * /sys/kernel/debug/iser_dm/rx_ring_bytes: the receive buffers of every
 * connection of both sides, in bytes of pages; 0 when no connection is up.
 * The rings are whole pages, which neither the slab statistics nor
 * kmemleak see, so this is the count that shows a ring that was not freed.
 */
static int isdm_rx_bytes_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "%ld\n", atomic_long_read(&isdm_rx_ring_bytes));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(isdm_rx_bytes);

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
/*
 * debugfs iser_dm/fail_queues/: a fault-injection attribute
 * (probability, interval, times...; see the kernel's fault-injection
 * documentation) that fails isdm_queues_create() with -ENOMEM, as a
 * device out of QPs or CQs fails it. Kernels built with
 * CONFIG_FAULT_INJECTION_DEBUG_FS only: the tests of both sides' refusal
 * of a connection no device can carry.
 */
DECLARE_FAULT_ATTR(isdm_fail_queues);

static void isdm_fault_init(void)
{
	fault_create_debugfs_attr("fail_queues", isdm_dbg, &isdm_fail_queues);
}
#else
static void isdm_fault_init(void)
{
}
#endif

static int __init isdm_init(void)
{
	int ret = isdm_device_init();

	if (ret)
		return ret;
	isdm_dbg = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("rx_ring_bytes", 0444, isdm_dbg, NULL,
			    &isdm_rx_bytes_fops);
	isdm_fault_init();
	return 0;
}

static void __exit isdm_exit(void)
{
	debugfs_remove_recursive(isdm_dbg);
	isdm_device_exit();
}

module_init(isdm_init);
module_exit(isdm_exit);

MODULE_DESCRIPTION("iSER datamover core (RFC 5046, IBTA Annex A12)");
MODULE_VERSION(ISDM_VERSION);
MODULE_LICENSE("GPL");
