// SPDX-License-Identifier: GPL-2.0
/*
 * iser_tgt: one connection at a time. The next connection request, its
 * CM REP, the receive loop through the login, the Hello and full feature
 * phase, and its summary line.
 */
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tgt.h"

#define NR_RX		16
#define RX_SIZE		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + DSL_MAX)
#define TX_SIZE		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + BIG_LEN)
#define CLOSE_SEC	20
#define LATE_SEC	10

const struct tgt_case *tcase;
int send_inv, rsvd_bits, logged_in, sent, fired;
uint32_t stat_sn, exp_cmd_sn;
uint32_t mrdsl = DSL_MAX;
struct cmd held;
int have_held;
struct cmd aborted;
int have_aborted;
int logged_out;
int hello_seen;
const char *late;
int storm;
const char *pre;

/*
 * Mark the kernel log with what a connection does (its case, the Hello it
 * received), so that a scenario can show the initiator's lines of one case
 * or act at a point of the exchange. Best effort: without /dev/kmsg the
 * cases are served all the same.
 */
static void kmsg_mark(const char *what, const char *name)
{
	FILE *f = fopen("/dev/kmsg", "w");

	if (!f)
		return;
	fprintf(f, "iser_tgt: %s %s\n", what, name);
	fclose(f);
}

/*
 * One full-feature PDU. 0 to go on, 1 when the case was done (wait for
 * the initiator to close), -1 on a local error.
 */
static int ffp_step(const unsigned char *msg)
{
	const unsigned char *bhs = msg + HDR_LEN;
	unsigned char op = bhs[0] & ISDM_BHS_OPCODE_MASK;
	uint32_t itt = itool_get_be32(bhs + 16);
	unsigned char *r;
	struct answer a;
	struct cmd c;
	uint64_t lba;
	int ret;

	if (!(bhs[0] & ISDM_BHS_IMMEDIATE) &&
	    itool_get_be32(bhs + 24) == exp_cmd_sn &&
	    op != ISDM_OP_DATA_OUT && op != ISDM_OP_SNACK)
		exp_cmd_sn++;
	switch (op) {
	case ISDM_OP_NOP_OUT:
		if (itt == 0xffffffff)
			return 0;	/* the answer to our ping */
		if (rmode && answer_live(1))
			return -1;
		return nop_answer(itt);
	case ISDM_OP_SCSI_CMD:
		if (rmode)
			return rnd_cmd(msg);
		parse_cmd(msg, &c);
		if (have_held) {
			/* inv-other: the held command's STag, not this one's */
			emulate(&c, &a, &lba);
			sent = 1;
			respond(&c, &a, c.itt, 1, held.stag);
			return 1;
		}
		if ((tcase->flags & TC_GOOD) || fired || !is_trigger(&c))
			return respond_ok(&c);
		fired = 1;
		/*
		 * A Send the initiator refuses may fail here: it went out.
		 * A case without a trigger function (a hello case whose
		 * Hello did not come) leaves the trigger unanswered.
		 */
		ret = tcase->trigger ? tcase->trigger(&c) : -1;
		if ((tcase->flags & TC_HOLD) && !ret)
			return 0;
		sent = 1;
		if (tcase->flags & TC_DISCONNECT) {
			rdma_disconnect(t.id);
			return 2;
		}
		return 1;
	case ISDM_OP_TMF_REQ:
		if (rmode) {
			/* the tasks it ends are gone: no answer for them */
			unsigned char f = bhs[1] & 0x7f;
			int i = live_find(itool_get_be32(bhs + 20));

			if (f == 1 && i >= 0)
				live_del(i);
			else if (f == 2 || f == 3 || (f >= 5 && f <= 7))
				while (nr_live)
					live_del(0);
		}
		rsp_start(ISDM_OP_TMF_RSP, ISDM_BHS_FINAL, 0, itt, 1);
		/* abort-*: ABORT TASK (function 1) of the held trigger */
		if (have_aborted && (bhs[1] & 0x7f) == 1 &&
		    itool_get_be32(bhs + 20) == aborted.itt &&
		    (tcase->flags & TC_STORM)) {
			have_aborted = 0;
			sent = 1;
			return write_storm(&aborted, HDR_LEN + ISDM_BHS_LEN);
		}
		ret = post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
		if (ret || !have_aborted || (bhs[1] & 0x7f) != 1 ||
		    itool_get_be32(bhs + 20) != aborted.itt)
			return ret;
		have_aborted = 0;
		sent = 1;
		sleep(1);
		late = late_write(&aborted) ? "refused" : "written";
		return 1;
	case ISDM_OP_TEXT_REQ:
		r = rsp_start(ISDM_OP_TEXT_RSP, ISDM_BHS_FINAL, 0, itt, 1);
		itool_put_be32(r + 20, 0xffffffff);
		return post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
	case ISDM_OP_LOGOUT_REQ:
		/* random mode: iscsid may log out on an Async Message */
		if (!rmode || ridx >= rend || rstop)
			logged_out = 1;
		rsp_start(ISDM_OP_LOGOUT_RSP, ISDM_BHS_FINAL, 0, itt, 1);
		post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
		return 1;
	default:
		return 0;		/* Data-Out, SNACK: not expected here */
	}
}

/* Accept the connection of @ev with the REP private data of the case. */
static int accept_conn(struct rdma_cm_event *ev)
{
	struct isdm_cm_req req = { .flags = ISDM_CM_ZBVA_EXC | ISDM_CM_SIE_EXC };
	struct isdm_cm_rep rep = {};
	struct rdma_conn_param cp = {};
	size_t n = ev->param.conn.private_data_len;
	int ret;

	if (n > sizeof(req))
		n = sizeof(req);
	if (ev->param.conn.private_data && n)
		memcpy(&req, ev->param.conn.private_data, n);
	/*
	 * what a Linux target answers: no ZBVA, Send with Invalidate if
	 * offered; abort-zbva takes ZBVA when offered (the 12-byte header)
	 */
	send_inv = !(req.flags & ISDM_CM_SIE_EXC) && !(tcase->flags & TC_NO_SIE);
	rep.flags = ISDM_CM_ZBVA_EXC | (send_inv ? 0 : ISDM_CM_SIE_EXC);
	t.hdr_len = 0;
	if ((tcase->flags & TC_ZBVA) && !(req.flags & ISDM_CM_ZBVA_EXC)) {
		rep.flags &= ~ISDM_CM_ZBVA_EXC;
		t.hdr_len = ISDM_HDR_LEN_RFC;
	}
	if (tcase->flags & TC_RSVD) {
		rep.flags |= 0x3f;
		memset(rep.rsvd, 0xff, sizeof(rep.rsvd));
		rsvd_bits = 0x03;
	}
	t.id = ev->id;
	/* abort-zbva keeps STORM_WRS RDMA Writes and a Send in flight */
	t.sq_depth = tcase->flags & TC_STORM ? STORM_WRS + 1 : 0;
	ret = itool_verbs_init(&t, NR_RX, RX_SIZE, TX_SIZE);
	if (!ret) {
		data_mr = ibv_reg_mr(t.pd, data_buf, sizeof(data_buf), 0);
		ret = data_mr ? 0 : -1;
	}
	cp.responder_resources = ev->param.conn.initiator_depth ? 1 : 0;
	cp.initiator_depth = ev->param.conn.responder_resources ? 1 : 0;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	cp.private_data = &rep;
	cp.private_data_len = sizeof(rep);
	if (!ret)
		ret = rdma_accept(t.id, &cp);
	else
		rdma_reject(t.id, NULL, 0);
	rdma_ack_cm_event(ev);
	if (ret)
		return -1;
	return itool_cm_wait(&t, RDMA_CM_EVENT_ESTABLISHED, 10);
}

/*
 * connect-late: hold the connection request of @ev LATE_SEC without an
 * answer (the initiator's connect does not complete), keeping a request
 * that comes meanwhile for the next case, then reject it.
 */
static void hold_request(struct rdma_cm_event *ev)
{
	double end = itool_now() + LATE_SEC;
	struct rdma_cm_id *id = ev->id;
	struct rdma_cm_event *e;

	while (itool_now() < end) {
		struct pollfd pfd = { .fd = t.ch->fd, .events = POLLIN };

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (rdma_get_cm_event(t.ch, &e))
			break;
		if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST && !t.pending &&
		    e->id != id) {
			t.pending = e;	/* acknowledged by its taker */
			continue;
		}
		rdma_ack_cm_event(e);
	}
	rdma_reject(id, NULL, 0);
	rdma_ack_cm_event(ev);
	rdma_destroy_id(id);
}

/* The next connection request within @secs, or NULL. */
struct rdma_cm_event *next_request(double secs)
{
	double end = itool_now() + secs;
	struct rdma_cm_event *ev;

	if (t.pending) {
		ev = t.pending;
		t.pending = NULL;
		return ev;
	}
	while (itool_now() < end) {
		struct pollfd pfd = { .fd = t.ch->fd, .events = POLLIN };

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (rdma_get_cm_event(t.ch, &ev))
			return NULL;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			return ev;
		rdma_ack_cm_event(ev);
	}
	return NULL;
}

/* Serve one connection with case @c; print its summary line. */
void serve(struct rdma_cm_event *ev, const struct tgt_case *c,
	   double deadline)
{
	const char *closed = "no";
	unsigned char *msg;
	double until = 0;
	int len, ret = 0;

	tcase = c;
	if (!rmode)
		kmsg_mark("case", c->name);
	send_inv = 0;
	rsvd_bits = 0;
	logged_in = 0;
	sent = 0;
	fired = 0;
	have_held = 0;
	have_aborted = 0;
	hello_seen = 0;
	late = NULL;
	storm = 0;
	pre = NULL;
	stat_sn = 0;
	exp_cmd_sn = 0;
	t.closed = 0;
	mrdsl = DSL_MAX;
	while (nr_live)
		live_del(0);		/* the last connection's: stale */
	if (rmode)
		rs.connections++;
	if (c->flags & TC_LATE) {
		hold_request(ev);
		printf("case=%s login=no sent=yes closed=self\n", c->name);
		fflush(stdout);
		return;
	}
	if (accept_conn(ev)) {
		fprintf(stderr, "iser_tgt: accepting the connection failed\n");
		goto out;
	}
	while (!t.closed && !t.pending && itool_now() < deadline) {
		if (until && itool_now() > until)
			break;
		len = itool_recv(&t, &msg, 1);
		if (rmode && len < 0 && logged_in && !until && !t.closed &&
		    !t.pending) {
			/* a second without a PDU: answer, and one more */
			ret = answer_live(1);
			if (!ret && armed && !rstop && ridx < rend)
				ret = rnd_pdu(-1);
			if (ret) {
				rdma_disconnect(t.id);
				closed = "self";
				break;
			}
			continue;
		}
		if (len < 0)
			continue;
		if (until) {
			/*
			 * The case is done: wait for the initiator to end
			 * the connection on its own. Its pings are answered,
			 * so that no ping timeout ends it for it (a PDU it
			 * took would pass for one it refused).
			 */
			if (len >= HDR_LEN + ISDM_BHS_LEN &&
			    (msg[HDR_LEN] & ISDM_BHS_OPCODE_MASK) ==
			    ISDM_OP_NOP_OUT &&
			    itool_get_be32(msg + HDR_LEN + 16) !=
			    0xffffffff)
				nop_answer(itool_get_be32(msg +
							  HDR_LEN + 16));
			continue;
		}
		if (logged_in && len > 0 && !hello_seen &&
		    (msg[0] & ISDM_OP_MASK) == ISDM_OP_HELLO) {
			kmsg_mark("hello", tcase->name);
			ret = hello_step(msg, len);
			if (ret < 0)
				break;
			if (ret == 2) {
				closed = "self";
				break;
			}
			if (ret == 1)
				until = itool_now() + CLOSE_SEC;
			continue;
		}
		if (len < HDR_LEN + ISDM_BHS_LEN)
			continue;
		if (!logged_in) {
			if ((msg[HDR_LEN] & ISDM_BHS_OPCODE_MASK) ==
			    ISDM_OP_LOGIN_REQ)
				ret = login_step(msg, len);
		} else {
			ret = ffp_step(msg);
		}
		if (ret < 0 && rmode && logged_in) {
			/* a Send failed: the connection is gone */
			rdma_disconnect(t.id);
			closed = "self";
			break;
		}
		if (ret < 0)
			break;
		if (ret == 2) {
			closed = "self";
			break;
		}
		if (ret == 1)
			until = itool_now() + CLOSE_SEC;
	}
	if (t.closed)
		closed = "yes";
	else if (t.pending && fired && strcmp(closed, "self"))
		closed = "yes";		/* the initiator came back: it dropped us */
out:
	if (t.id && !t.closed)
		rdma_disconnect(t.id);
	if (data_mr)
		ibv_dereg_mr(data_mr);
	data_mr = NULL;
	itool_verbs_destroy(&t);
	if (rmode) {
		if (!strcmp(closed, "self"))
			rs.self_closed++;
		else if (t.closed || t.pending)
			rs.closed++;
		if (!rverbose)
			return;
		printf("connection %lu login=%s closed=%s next=%lu\n",
		       rs.connections, itool_yes_no(logged_in, "ok"),
		       t.closed || t.pending ? "yes" : closed, ridx);
		fflush(stdout);
		return;
	}
	printf("case=%s login=%s sent=%s closed=%s", c->name,
	       itool_yes_no(logged_in, "ok"), itool_yes_no(sent, "yes"), closed);
	if (hello_seen)
		printf(" hello=yes");
	if (late)
		printf(" late=%s", late);
	if (c->flags & TC_ZBVA)
		printf(" zbva=%s pre=%s landed=%d",
		       itool_yes_no(t.hdr_len, "yes"), pre ? pre : "none",
		       storm);
	if (pi_type == 2)
		printf(" read32=%lu", pi_read32);
	printf("\n");
	fflush(stdout);
}
