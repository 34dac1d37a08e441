// SPDX-License-Identifier: GPL-2.0
/*
 * ib_iser: the iSER Hello (RFC 5046 5.1.3, 9.3, 9.4): whether a
 * connection sends it (module parameter hello), its Send, the HelloReply
 * that answers it and the wait for that reply when the connection starts.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <rdma/ib_verbs.h>

#include "isi.h"

static const char * const isi_hello_names[] = {
	[ISI_HELLO_AUTO] = "auto",
	[ISI_HELLO_ON] = "on",
	[ISI_HELLO_OFF] = "off",
};

static int hello = ISI_HELLO_AUTO;

static int isi_hello_param_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(isi_hello_names, val);

	if (i < 0)
		return -EINVAL;
	WRITE_ONCE(*(int *)kp->arg, i);
	return 0;
}

static int isi_hello_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", isi_hello_names[READ_ONCE(*(int *)kp->arg)]);
}

static const struct kernel_param_ops isi_hello_ops = {
	.set	= isi_hello_param_set,
	.get	= isi_hello_param_get,
};
module_param_cb(hello, &isi_hello_ops, &hello, 0644);
MODULE_PARM_DESC(hello,
		 "iSER Hello after login: auto (only over iWARP to a target whose MPA reply carries no Annex A12 header, i.e. not a Linux one; never on InfiniBand/RoCE), on (always; the target must answer with a HelloReply within 5 s), off (never) (default auto)");

/* End the Hello exchange in @state and wake isi_conn_start(). */
static void isi_hello_end(struct isi_conn *ic, int state)
{
	/* hello_res before the state; isi_hello_wait() reads them */
	smp_store_release(&ic->hello_state, state);
	wake_up_all(&ic->wq);
}

static void isi_hello_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct isi_conn *ic = isi_qp_conn(wc);

	isdm_credits_give(&ic->sq, 1);
	isdm_tx_unmap(ic->base.dev, &ic->hello_tx);
	if (wc->status == IB_WC_SUCCESS)
		return;
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_err_ratelimited("iSER Hello send failed: %s (%d)\n",
				   ib_wc_status_msg(wc->status), wc->status);
	if (READ_ONCE(ic->hello_state) == ISI_HELLO_SENT)
		isi_hello_end(ic, ISI_HELLO_FAILED);
}

/**
 * isi_hello_send() - send the iSER Hello as the connection's first iSER
 *	message of the full feature phase
 * @ic: the connection, its full-feature receive buffers posted
 *
 * The Hello declares the QP's responder resources (the IRD the CM exchange
 * fixed) as iSER-IRD and goes as a SendSE (RFC 5046 appendix A). The next
 * message received must be the HelloReply (isi_recv_done()).
 *
 * Context: @ic->lock held, the connection up: device removal, which takes
 * the lock, cannot take the QP away meanwhile.
 * Return: 0, or a negative errno when it could not be posted (logged).
 */
int isi_hello_send(struct isi_conn *ic)
{
	int ret;

	lockdep_assert_held(&ic->lock);

	isdm_hello_build(&ic->hello, min_t(u32, ic->ird, U16_MAX));
	if (!isdm_credits_take(&ic->sq, 1)) {
		pr_err_ratelimited("%pISpc: no send queue room for the iSER Hello\n",
				   &ic->dst);
		return -EAGAIN;
	}
	/*
	 * Before the post, as a release: the HelloReply may complete before
	 * ib_post_send() returns, and its receive must see SENT
	 */
	smp_store_release(&ic->hello_state, ISI_HELLO_SENT);
	ret = isdm_hello_post(&ic->base, &ic->hello_tx, &ic->hello,
			      sizeof(ic->hello), isi_hello_send_done);
	if (!ret)
		return 0;
	WRITE_ONCE(ic->hello_state, ISI_HELLO_NONE);
	isdm_credits_give(&ic->sq, 1);
	pr_err_ratelimited("%pISpc: cannot send the iSER Hello: %d\n",
			   &ic->dst, ret);
	return ret;
}

/**
 * isi_hello_reply() - take the first message received after our Hello
 * @ic: the connection
 * @buf: the message
 * @len: its length
 *
 * The first message after our Hello: it must be a HelloReply of exactly 12
 * bytes (RFC 5046 10.1.3.3, 10.1.3.4) that accepts version 1. Anything
 * else, or a reject, fails the exchange; isi_conn_start() then refuses to
 * start the connection, and iscsid tears it down.
 */
void isi_hello_reply(struct isi_conn *ic, const u8 *buf, u32 len)
{
	const struct sockaddr_storage *dst = &ic->dst;
	struct isdm_hello_result res;
	int ret;

	ret = isdm_hello_reply_parse(buf, len, &res);
	if (ret == -ERANGE) {
		pr_err_ratelimited("%pISpc: HelloReply names iSER version %u, we speak only %u; closing\n",
				   dst, res.cur_ver, ISDM_ISER_VERSION);
	} else if (ret) {
		pr_err_ratelimited("%pISpc: expected a HelloReply, got %u bytes (iSER byte 0x%02x): %d; closing\n",
				   dst, len, len ? buf[0] : 0, ret);
	} else if (res.reject) {
		pr_err_ratelimited("%pISpc: the target rejected our iSER Hello (its version %u, iSER-ORD %u); closing\n",
				   dst, res.cur_ver, res.ord);
		ret = -ECONNREFUSED;
	}
	if (ret) {
		isi_hello_end(ic, ISI_HELLO_FAILED);
		return;
	}
	/* RFC 5046 8.2: our IRD may shrink to iSER-ORD; the QP keeps its own */
	ic->hello_res = res;
	isi_hello_end(ic, ISI_HELLO_DONE);
}

/**
 * isi_hello_wanted() - what module parameter hello means for a connection
 * @ic: the connection, established
 *
 * Does this connection send a Hello (module parameter hello)? auto: only to
 * a target that has shown it is not a Linux-style (Annex A12) one, which is
 * only visible over iWARP: there the MPA reply's private data has its true
 * length, and Linux targets (the in-tree one and ours) always put the A12
 * header in it, while a plain RFC 5046 target sends none and expects the
 * Hello. Over InfiniBand and RoCE the REP's private data always has its
 * full size, zeros when the target wrote none, so nothing tells them apart
 * and no Hello is sent.
 *
 * Context: @ic->lock held, the connection up (its device and CM id are
 * there).
 * Return: true to send one.
 */
bool isi_hello_wanted(struct isi_conn *ic)
{
	switch (READ_ONCE(hello)) {
	case ISI_HELLO_ON:
		return true;
	case ISI_HELLO_OFF:
		return false;
	default:
		return rdma_protocol_iwarp(ic->base.dev->ib_dev,
					   ic->base.cm_id->port_num) &&
		       !ic->rep_pd;
	}
}

/* The Hello exchange is over, or the connection is going. */
static bool isi_hello_waits(struct isi_conn *ic)
{
	/* pairs with isi_hello_end() */
	return smp_load_acquire(&ic->hello_state) != ISI_HELLO_SENT ||
	       READ_ONCE(ic->state) != ISI_UP;
}

/**
 * isi_hello_wait() - wait for the HelloReply to the Hello just sent
 * @ic: the connection, its Hello posted (isi_hello_send())
 *
 * RFC 5046 5.1.1: after the final Login Response, the initiator's first
 * iSER message is the Hello; the target's first is the HelloReply. Wait for
 * it a bounded time, without the connection's lock (a CM event or a device
 * removal that ends the connection takes it, and wakes us). Only @ic's own
 * fields are read here: device removal may have freed the CM id and the
 * QP, so the log lines name the target by the connection's copy of its
 * address.
 *
 * Return: 0 once the target accepted; a negative errno (the connection
 * does not start).
 */
int isi_hello_wait(struct isi_conn *ic)
{
	const struct sockaddr_storage *dst = &ic->dst;
	long left;

	left = msecs_to_jiffies(ISI_HELLO_TIMEOUT_MS);
	left = wait_event_interruptible_timeout(ic->wq, isi_hello_waits(ic),
						left);
	/* pairs with isi_hello_end(): hello_res is complete in DONE */
	switch (smp_load_acquire(&ic->hello_state)) {
	case ISI_HELLO_DONE:
		pr_debug("%pISpc: HelloReply: version %u, iSER-ORD %u\n", dst,
			 ic->hello_res.cur_ver, ic->hello_res.ord);
		return 0;
	case ISI_HELLO_FAILED:
		return -EPROTO;		/* isi_hello_reply() said why */
	}
	if (left < 0)
		return left;
	if (READ_ONCE(ic->state) != ISI_UP) {
		pr_err_ratelimited("%pISpc: the connection ended before the HelloReply came; closing\n",
				   dst);
		return -ENOTCONN;
	}
	pr_err_ratelimited("%pISpc: no HelloReply within %u ms (a Linux-style target does not answer Hello: use ib_iser hello=auto or off); closing\n",
			   dst, ISI_HELLO_TIMEOUT_MS);
	return -ETIMEDOUT;
}
