// SPDX-License-Identifier: GPL-2.0
/*
 * iser_tgt: RDMA Writes to a command's read STag after the command ended,
 * which the initiator must have invalidated by then (RFC 5046 7.3.2,
 * 8.3.2): one late write (late-write, abort-late), and the storm of
 * writes behind a TMF Response (abort-zbva). The trigger functions of
 * those cases are here; ffp_step() hands the ABORT TASK of a held trigger
 * to late_write() or write_storm().
 */
#include <string.h>
#include <unistd.h>

#include "tgt.h"

/*
 * late-write: 512 bytes of 0xa5 by RDMA Write to the read buffer of @c,
 * whose command has completed. 0 when the write succeeded.
 */
int late_write(const struct cmd *c)
{
	unsigned char *src = data_buf + ZERO_SIZE;
	struct ibv_sge sge = {
		.addr = (uintptr_t)src, .length = 512, .lkey = data_mr->lkey,
	};
	struct ibv_send_wr w = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
	};

	memset(src, 0xa5, 512);
	w.wr.rdma.remote_addr = c->va;
	w.wr.rdma.rkey = c->stag;
	return itool_send_wr(&t, &w, &w, 10);
}

/*
 * abort-zbva: the TMF Response (@rsp_len bytes in t.tx_buf) for @c, whose
 * task the initiator aborted, with STORM_WRS RDMA Writes of STORM_LEN bytes
 * to its read buffer right behind it in the send queue, and a new one for
 * each that completes, so that the queue never runs dry, until one fails or
 * STORM_SEC seconds passed. The initiator's error handler ends the task and
 * invalidates its STag while they arrive (soft-RoCE on a debug kernel
 * takes them at about 1 MiB/s): they land until the invalidation, and the
 * memory behind the STag must stay the initiator's until then (KASAN
 * reports a write into freed pages). -1 when the TMF Response failed, else
 * 1: the case is done.
 */
int write_storm(const struct cmd *c, uint32_t rsp_len)
{
	struct ibv_sge rsge = {
		.addr = (uintptr_t)t.tx_buf, .length = rsp_len,
		.lkey = t.tx_mr->lkey,
	};
	struct ibv_sge sge = {
		.addr = (uintptr_t)(data_buf + ZERO_SIZE), .length = STORM_LEN,
		.lkey = data_mr->lkey,
	};
	struct ibv_send_wr w[STORM_WRS + 1], *bad;
	double end = itool_now() + STORM_SEC;
	int i, out, failed = 0;
	struct ibv_wc wc;

	memset(data_buf + ZERO_SIZE, 0xa5, STORM_LEN);
	memset(w, 0, sizeof(w));
	/* the TMF Response, then the writes */
	w[0].sg_list = &rsge;
	w[0].num_sge = 1;
	w[0].opcode = IBV_WR_SEND;
	w[0].send_flags = IBV_SEND_SOLICITED | IBV_SEND_SIGNALED;
	w[0].wr_id = STORM_ID;
	for (i = 1; i <= STORM_WRS; i++) {
		w[i].sg_list = &sge;
		w[i].num_sge = 1;
		w[i].opcode = IBV_WR_RDMA_WRITE;
		w[i].send_flags = IBV_SEND_SIGNALED;
		w[i].wr_id = STORM_ID + 1;
		w[i].wr.rdma.remote_addr = c->va;
		w[i].wr.rdma.rkey = c->stag;
		w[i - 1].next = &w[i];
	}
	storm = 0;
	if (ibv_post_send(t.id->qp, w, &bad))
		return -1;
	w[STORM_WRS].next = NULL;
	out = STORM_WRS + 1;
	while (out) {
		/* busy: the next write goes out as soon as a slot is free */
		int n = ibv_poll_cq(t.cq, 1, &wc);

		if (n < 0 || itool_now() > end + 10)
			break;
		if (!n)
			continue;
		if (wc.wr_id != STORM_ID && wc.wr_id != STORM_ID + 1) {
			/* a receive: the initiator's next PDU */
			if (t.nr_stashed < ITOOL_MAX_RX)
				t.stashed[t.nr_stashed++] = wc;
			continue;
		}
		out--;
		if (wc.wr_id == STORM_ID) {
			if (wc.status != IBV_WC_SUCCESS)
				return -1;
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			/* the rest is flushed */
			failed = 1;
			break;
		}
		storm++;
		/* the next write in the slot this one left */
		if (itool_now() < end &&
		    !ibv_post_send(t.id->qp, &w[STORM_WRS], &bad))
			out++;
	}
	late = failed ? "refused" : "written";
	return 1;
}

/* late-write: the trigger answered by plain Send, then a late write */
int fire_late_write(const struct cmd *c)
{
	struct answer a;
	uint64_t lba;

	emulate(c, &a, &lba);
	if (!c->rsv)
		return -1;
	if (respond(c, &a, c->itt, 0, 0))
		return -1;
	sleep(1);
	late = late_write(c) ? "refused" : "written";
	return 0;
}

/* abort-late: the trigger held without an answer until its ABORT TASK */
int fire_abort_late(const struct cmd *c)
{
	if (!c->rsv)
		return -1;
	aborted = *c;
	have_aborted = 1;
	return 0;		/* acts on the ABORT TASK */
}

/* abort-zbva: the same, after a write while the task is live */
int fire_abort_zbva(const struct cmd *c)
{
	if (!c->rsv)
		return -1;
	/* the task is live, the write must land */
	pre = late_write(c) ? "refused" : "landed";
	aborted = *c;
	have_aborted = 1;
	return 0;		/* acts on the ABORT TASK */
}
