// SPDX-License-Identifier: GPL-2.0
/*
 * ib_iser: the iSER Hello (RFC 5046 5.1.3, 9.3, 9.4): its Send and the
 * HelloReply that answers it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rdma/ib_verbs.h>

#include "isi.h"

/* End the Hello exchange in @state and wake isi_conn_start(). */
static void isi_hello_end(struct isi_conn *ic, int state)
{
	/* hello_res before the state; isi_hello_exchange() reads them */
	smp_store_release(&ic->hello_state, state);
	wake_up_all(&ic->wq);
}

static void isi_hello_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct isi_conn *ic = isi_qp_conn(wc);

	atomic_dec(&ic->sq_used);
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
 * Return: 0, or a negative errno when it could not be posted.
 */
int isi_hello_send(struct isi_conn *ic)
{
	struct isdm_send_op op = { .kind = ISDM_SEND_SE };
	struct isdm_tx *tx = &ic->hello_tx;
	int ret;

	isdm_hello_build(&ic->hello, min_t(u32, ic->ird, U16_MAX));
	tx->hdr = (u8 *)&ic->hello;
	tx->num_sge = 1;
	ret = isdm_tx_map(ic->base.dev, tx, 0, sizeof(ic->hello), &op,
			  isi_hello_send_done);
	if (ret)
		return ret;
	if (!isi_sq_reserve(ic, 1)) {
		ret = -EAGAIN;
		goto unmap;
	}
	/*
	 * Before the post, as a release: the HelloReply may complete before
	 * ib_post_send() returns, and its receive must see SENT
	 */
	smp_store_release(&ic->hello_state, ISI_HELLO_SENT);
	ret = isdm_tx_post(&ic->base, tx, NULL);
	if (!ret)
		return 0;
	WRITE_ONCE(ic->hello_state, ISI_HELLO_NONE);
	atomic_dec(&ic->sq_used);
unmap:
	isdm_tx_unmap(ic->base.dev, tx);
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
	struct sockaddr *dst =
		(struct sockaddr *)&ic->base.cm_id->route.addr.dst_addr;
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
