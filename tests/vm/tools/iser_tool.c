// SPDX-License-Identifier: GPL-2.0
/*
 * Shared by the userspace iSER tools: see iser_tool.h.
 */
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "iser_tool.h"

double itool_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Wait up to @secs for the CM event @want; note a disconnect on the way
 * and keep a connection request for later. 0 when @want came; -1 on
 * timeout or any other event.
 */
int itool_cm_wait(struct itool *t, enum rdma_cm_event_type want, double secs)
{
	double end = itool_now() + secs;

	/* a disconnect seen earlier (by a receive, say) is the one waited for */
	if (want == RDMA_CM_EVENT_DISCONNECTED && t->closed)
		return 0;
	do {
		struct pollfd pfd = { .fd = t->ch->fd, .events = POLLIN };
		struct rdma_cm_event *ev;
		enum rdma_cm_event_type got;

		if (poll(&pfd, 1, secs > 0 ? 100 : 0) <= 0)
			continue;
		if (rdma_get_cm_event(t->ch, &ev))
			return -1;
		got = ev->event;
		if (got == RDMA_CM_EVENT_CONNECT_REQUEST && !t->pending &&
		    want != got) {
			t->pending = ev;	/* acknowledged by its taker */
			return -1;
		}
		rdma_ack_cm_event(ev);
		if (got == RDMA_CM_EVENT_DISCONNECTED)
			t->closed = 1;
		/*
		 * the peer's CM rejected a connection that was established
		 * here (it let go of its id before it saw our RTU): closed
		 */
		if (got == RDMA_CM_EVENT_REJECTED && t->id && t->id->qp &&
		    want != RDMA_CM_EVENT_ESTABLISHED) {
			t->closed = 1;
			t->rejected = 1;
		}
		if (got == want)
			return 0;
		if (got != RDMA_CM_EVENT_DISCONNECTED &&
		    got != RDMA_CM_EVENT_TIMEWAIT_EXIT)
			return -1;
	} while (itool_now() < end);
	return -1;
}

int itool_post_rx(struct itool *t, int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(t->rx_buf + i * t->rx_size),
		.length = t->rx_size, .lkey = t->rx_mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = i, .sg_list = &sge, .num_sge = 1,
	}, *bad;

	return ibv_post_recv(t->id->qp, &wr, &bad);
}

/*
 * PD, CQ, an RC QP on t->id, @nr_rx receive buffers of @rx_size bytes
 * (all posted, unless t->rx_later) and a send buffer of @tx_size bytes.
 */
int itool_verbs_init(struct itool *t, int nr_rx, size_t rx_size,
		     size_t tx_size)
{
	struct ibv_qp_init_attr qa = {};
	int sq = t->sq_depth ? t->sq_depth : 16;
	int i;

	if (nr_rx > ITOOL_MAX_RX)
		return -1;
	t->nr_rx = nr_rx;
	t->rx_size = rx_size;
	t->tx_size = tx_size;
	t->last_rx = -1;
	t->nr_stashed = 0;
	t->pd = ibv_alloc_pd(t->id->verbs);
	/* every send may be signaled, and every receive completes */
	t->cq = t->pd ? ibv_create_cq(t->id->verbs,
				      sq + 2 * ITOOL_MAX_RX + 8,
				      NULL, NULL, 0) : NULL;
	if (!t->cq)
		return -1;
	qa.send_cq = t->cq;
	qa.recv_cq = t->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = sq;
	qa.cap.max_recv_wr = nr_rx;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(t->id, t->pd, &qa))
		return -1;
	t->rx_buf = calloc(nr_rx, rx_size);
	t->tx_buf = calloc(1, tx_size);
	if (!t->rx_buf || !t->tx_buf)
		return -1;
	t->rx_mr = ibv_reg_mr(t->pd, t->rx_buf, nr_rx * rx_size,
			      IBV_ACCESS_LOCAL_WRITE);
	t->tx_mr = ibv_reg_mr(t->pd, t->tx_buf, tx_size, 0);
	if (!t->rx_mr || !t->tx_mr)
		return -1;
	for (i = 0; i < nr_rx && !t->rx_later; i++)
		if (itool_post_rx(t, i))
			return -1;
	return 0;
}

/* Undo itool_verbs_init() and destroy t->id; what exists goes. */
void itool_verbs_destroy(struct itool *t)
{
	if (t->id && t->id->qp)
		rdma_destroy_qp(t->id);
	if (t->rx_mr)
		ibv_dereg_mr(t->rx_mr);
	if (t->tx_mr)
		ibv_dereg_mr(t->tx_mr);
	if (t->cq)
		ibv_destroy_cq(t->cq);
	if (t->pd)
		ibv_dealloc_pd(t->pd);
	if (t->id)
		rdma_destroy_id(t->id);
	free(t->rx_buf);
	free(t->tx_buf);
	t->id = NULL;
	t->rx_mr = NULL;
	t->tx_mr = NULL;
	t->cq = NULL;
	t->pd = NULL;
	t->rx_buf = NULL;
	t->tx_buf = NULL;
}

/*
 * The next completion, or -1 when none came within @secs or the peer
 * disconnected and nothing is left in the CQ.
 */
int itool_wait_wc(struct itool *t, struct ibv_wc *wc, double secs)
{
	double end = itool_now() + secs;
	unsigned int spins = 0;

	while (itool_now() < end) {
		int n = ibv_poll_cq(t->cq, 1, wc);

		if (n < 0)
			return -1;
		if (n == 1)
			return 0;
		if (t->closed)
			return -1;
		if (++spins % 64 == 0)
			itool_cm_wait(t, RDMA_CM_EVENT_DISCONNECTED, 0);
		usleep(1000);
	}
	return -1;
}

/*
 * Post the chain @first, which ends in the signaled @send (wr_id
 * %ITOOL_SEND_ID), and wait for its completion; 0 when it succeeded.
 */
int itool_send_wr(struct itool *t, struct ibv_send_wr *first,
		  struct ibv_send_wr *send, double secs)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	send->wr_id = ITOOL_SEND_ID;
	send->send_flags |= IBV_SEND_SIGNALED;
	t->send_status = -1;	/* not posted, or no completion */
	if (ibv_post_send(t->id->qp, first, &bad))
		return -1;
	while (!itool_wait_wc(t, &wc, secs)) {
		if (wc.wr_id == ITOOL_SEND_ID) {
			t->send_status = wc.status;
			return wc.status == IBV_WC_SUCCESS ? 0 : -1;
		}
		/* an answer may complete before our Send's completion */
		if (t->nr_stashed < ITOOL_MAX_RX)
			t->stashed[t->nr_stashed++] = wc;
	}
	return -1;
}

/* Send @len bytes of t->tx_buf; 0 when the Send completed successfully. */
int itool_send(struct itool *t, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)t->tx_buf, .length = len,
		.lkey = t->tx_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
	};

	return itool_send_wr(t, &wr, &wr, 10);
}

/*
 * The next received message: its length, and its buffer in @msg (valid
 * until the next call), or -1 when none came within @secs or the
 * connection failed.
 */
int itool_recv(struct itool *t, unsigned char **msg, double secs)
{
	struct ibv_wc wc;

	if (t->last_rx >= 0)
		itool_post_rx(t, t->last_rx);
	t->last_rx = -1;
	do {
		if (t->nr_stashed) {
			wc = t->stashed[0];
			memmove(t->stashed, t->stashed + 1,
				--t->nr_stashed * sizeof(t->stashed[0]));
		} else if (itool_wait_wc(t, &wc, secs)) {
			return -1;
		}
	} while (wc.wr_id == ITOOL_SEND_ID);	/* a stray Send completion */
	if (wc.status != IBV_WC_SUCCESS)
		return -1;
	t->last_rx = wc.wr_id;
	*msg = t->rx_buf + t->last_rx * t->rx_size;
	return wc.byte_len;
}

/* iSER expanded header (no STags) + BHS with @op, @flags, @dlen. */
unsigned char *itool_pdu_start(struct itool *t, unsigned char op,
			       unsigned char flags, uint32_t dlen)
{
	size_t hl = t->hdr_len ? t->hdr_len : ISDM_HDR_LEN_EXT;
	unsigned char *bhs = t->tx_buf + hl;

	memset(t->tx_buf, 0, hl + ISDM_BHS_LEN);
	t->tx_buf[0] = ISDM_OP_CTRL;
	bhs[0] = op;
	bhs[1] = flags;
	bhs[5] = dlen >> 16;
	bhs[6] = dlen >> 8;
	bhs[7] = dlen;
	return bhs;
}

uint64_t itool_rng;

/* splitmix64 (never 0: xorshift64* would stay there) */
uint64_t itool_rnd_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x ? x : 1;
}
