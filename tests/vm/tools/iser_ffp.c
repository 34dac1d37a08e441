// SPDX-License-Identifier: GPL-2.0
/*
 * iser_ffp: an iSER initiator in userspace that logs in properly and then
 * sends, in full feature phase, what an iSER target must refuse.
 *
 * It connects over rdma_cm with Annex A12 private data (no ZBVA, so the
 * target uses the 28-byte expanded header), logs in to a discovery session
 * in one step (operational stage straight to full feature phase, no
 * authentication) and then, per mode:
 *
 *   nop      a NOP-Out ping; the target must answer with a NOP-In
 *   hello    an iSER Hello as the first full-feature message; the target
 *            must answer with a HelloReply (RFC 5046 5.1.3), then a ping
 *   snack    a SNACK, which iSER forbids (RFC 5046 7.3.1); then a ping
 *   login    a Login Request in full feature phase; then a ping
 *   scsi     a SCSI Command in a discovery session; then a ping
 *   baddlen  a Text Request whose DataSegmentLength claims more than the
 *            Send carries: the target must close the connection
 *   bigsend  a NOP-Out carrying 64 KiB, more than the 8 KiB the target's
 *            receive buffers hold: the target must close the connection
 *
 * It prints one line, for the scenario to judge:
 *
 *   login=ok|failed hello_reply=ok|rejected|none reject=0xRR|none
 *   nop_in=yes|no closed=yes|no
 *
 * usage: iser_ffp [-m MODE] ADDR PORT.  Exit status 0 when it ran, 1 on a
 * local error (bad arguments, no RDMA device, connection refused).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "isdm/iser_wire.h"

#define NR_RX		8
#define RX_SIZE		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + 8192)
#define TX_SIZE		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + 65536)
#define WAIT_SEC	10

enum mode { NOP, HELLO, SNACK, LOGIN, SCSI, BADDLEN, BIGSEND };
static const char *const mode_names[] = {
	"nop", "hello", "snack", "login", "scsi", "baddlen", "bigsend",
};

static struct rdma_event_channel *ch;
static struct rdma_cm_id *id;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *rx_mr, *tx_mr;
static unsigned char rx_buf[NR_RX][RX_SIZE];
static unsigned char tx_buf[TX_SIZE];
static int closed;
static uint32_t cmd_sn, exp_stat_sn;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void put_be32(unsigned char *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static uint32_t get_be32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

/* Wait for the CM event @want; note a disconnect on the way. */
static int cm_wait(enum rdma_cm_event_type want, double secs)
{
	double end = now() + secs;

	while (now() < end) {
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		struct rdma_cm_event *ev;
		enum rdma_cm_event_type got;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (rdma_get_cm_event(ch, &ev))
			return -1;
		got = ev->event;
		rdma_ack_cm_event(ev);
		if (got == RDMA_CM_EVENT_DISCONNECTED)
			closed = 1;
		if (got == want)
			return 0;
		if (got != RDMA_CM_EVENT_DISCONNECTED &&
		    got != RDMA_CM_EVENT_TIMEWAIT_EXIT)
			return -1;
	}
	return -1;
}

/* Look for a disconnect without waiting for anything else. */
static void cm_poll(double secs)
{
	cm_wait(RDMA_CM_EVENT_DISCONNECTED, secs);
}

static int post_rx(int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)rx_buf[i], .length = RX_SIZE,
		.lkey = rx_mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = i, .sg_list = &sge, .num_sge = 1,
	}, *bad;

	return ibv_post_recv(id->qp, &wr, &bad);
}

static int connect_target(const char *addr, const char *port)
{
	struct addrinfo *ai, hints = { .ai_socktype = SOCK_STREAM };
	struct ibv_qp_init_attr qa = {};
	struct rdma_conn_param cp = {};
	struct isdm_cm_req req = { .flags = ISDM_CM_ZBVA_EXC };
	int i;

	if (getaddrinfo(addr, port, &hints, &ai))
		return -1;
	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, ai->ai_addr, 2000) ||
	    cm_wait(RDMA_CM_EVENT_ADDR_RESOLVED, 5) ||
	    rdma_resolve_route(id, 2000) ||
	    cm_wait(RDMA_CM_EVENT_ROUTE_RESOLVED, 5))
		return -1;
	freeaddrinfo(ai);
	pd = ibv_alloc_pd(id->verbs);
	cq = pd ? ibv_create_cq(id->verbs, 32, NULL, NULL, 0) : NULL;
	if (!cq)
		return -1;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 8;
	qa.cap.max_recv_wr = NR_RX;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, pd, &qa))
		return -1;
	rx_mr = ibv_reg_mr(pd, rx_buf, sizeof(rx_buf), IBV_ACCESS_LOCAL_WRITE);
	tx_mr = ibv_reg_mr(pd, tx_buf, sizeof(tx_buf), 0);
	if (!rx_mr || !tx_mr)
		return -1;
	for (i = 0; i < NR_RX; i++)
		if (post_rx(i))
			return -1;
	cp.initiator_depth = 1;
	cp.responder_resources = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	cp.private_data = &req;
	cp.private_data_len = sizeof(req);
	if (rdma_connect(id, &cp))
		return -1;
	return cm_wait(RDMA_CM_EVENT_ESTABLISHED, 10);
}

/* Receives that completed while a Send was awaited, oldest first. */
static struct ibv_wc stashed[NR_RX];
static int nr_stashed;
/* the buffer recv_msg() handed out last, posted again on the next call */
static int last_rx = -1;

/* The next completion, or -1 when none came within WAIT_SEC. */
static int wait_wc(struct ibv_wc *wc)
{
	double end = now() + WAIT_SEC;

	while (now() < end) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			return -1;
		if (n == 1)
			return 0;
		usleep(1000);
	}
	return -1;
}

/* Send @len bytes of tx_buf; 0 when the Send completed successfully. */
static int send_buf(uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)tx_buf, .length = len, .lkey = tx_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = ~0ULL, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(id->qp, &wr, &bad))
		return -1;
	while (!wait_wc(&wc)) {
		if (wc.wr_id == ~0ULL)
			return wc.status == IBV_WC_SUCCESS ? 0 : -1;
		/* an answer may complete before our Send's completion */
		if (nr_stashed < NR_RX)
			stashed[nr_stashed++] = wc;
	}
	return -1;
}

/*
 * The next received message: its length, and its buffer in @msg (valid
 * until the next call), or -1 when none came in time or the connection
 * failed.
 */
static int recv_msg(unsigned char **msg)
{
	struct ibv_wc wc;

	if (last_rx >= 0)
		post_rx(last_rx);
	last_rx = -1;
	do {
		if (nr_stashed) {
			wc = stashed[0];
			memmove(stashed, stashed + 1,
				--nr_stashed * sizeof(stashed[0]));
		} else if (wait_wc(&wc)) {
			return -1;
		}
	} while (wc.wr_id == ~0ULL);	/* a stray Send completion */
	if (wc.status != IBV_WC_SUCCESS)
		return -1;
	last_rx = wc.wr_id;
	*msg = rx_buf[last_rx];
	return wc.byte_len;
}

/* iSER expanded header (no STags) + BHS with @op, @flags, @dlen. */
static unsigned char *pdu_start(unsigned char op, unsigned char flags,
				uint32_t dlen)
{
	unsigned char *bhs = tx_buf + ISDM_HDR_LEN_EXT;

	memset(tx_buf, 0, ISDM_HDR_LEN_EXT + ISDM_BHS_LEN);
	tx_buf[0] = ISDM_OP_CTRL;
	bhs[0] = op;
	bhs[1] = flags;
	bhs[5] = dlen >> 16;
	bhs[6] = dlen >> 8;
	bhs[7] = dlen;
	return bhs;
}

static int login(void)
{
	static const char keys[] =
		"InitiatorName=iqn.2004-10.org.debian:iser-vm-ffp\0"
		"SessionType=Discovery\0"
		"HeaderDigest=None\0"
		"DataDigest=None\0"
		"RDMAExtensions=Yes\0"
		"InitiatorRecvDataSegmentLength=8192\0"
		"TargetRecvDataSegmentLength=8192\0"
		"MaxOutstandingUnexpectedPDUs=0\0";
	uint32_t dlen = sizeof(keys) - 1;
	unsigned char *bhs, *msg, *rsp;
	int len;

	/* Transit, CSG operational (1), NSG full feature (3) */
	bhs = pdu_start(ISDM_OP_LOGIN_REQ | ISDM_BHS_IMMEDIATE, 0x87, dlen);
	bhs[8] = 0x80;		/* ISID: random type */
	bhs[13] = 0x2a;
	put_be32(bhs + 16, 0x1000);	/* ITT */
	memcpy(bhs + ISDM_BHS_LEN, keys, dlen);
	if (send_buf(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + ((dlen + 3) & ~3u)))
		return -1;
	len = recv_msg(&msg);
	if (len < ISDM_HDR_LEN_EXT + ISDM_BHS_LEN)
		return -1;
	rsp = msg + ISDM_HDR_LEN_EXT;
	if ((rsp[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_LOGIN_RSP ||
	    rsp[36] != 0 || (rsp[1] & 0x83) != 0x83) {
		fprintf(stderr, "iser_ffp: login response op 0x%02x flags 0x%02x status %u/%u\n",
			rsp[0], rsp[1], rsp[36], rsp[37]);
		return -1;
	}
	exp_stat_sn = get_be32(rsp + 24) + 1;
	cmd_sn = get_be32(rsp + 28);	/* ExpCmdSN */
	return 0;
}

/* A NOP-Out ping; 0 when the matching NOP-In came back. */
static int ping(uint32_t itt)
{
	unsigned char *bhs, *msg;
	int len;

	bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE, ISDM_BHS_FINAL, 0);
	put_be32(bhs + 16, itt);
	put_be32(bhs + 20, 0xffffffff);		/* TTT */
	put_be32(bhs + 24, cmd_sn);
	put_be32(bhs + 28, exp_stat_sn);
	if (send_buf(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN))
		return -1;
	for (;;) {
		len = recv_msg(&msg);
		if (len < ISDM_HDR_LEN_EXT + ISDM_BHS_LEN)
			return -1;
		bhs = msg + ISDM_HDR_LEN_EXT;
		if ((bhs[0] & ISDM_BHS_OPCODE_MASK) == ISDM_OP_NOP_IN &&
		    get_be32(bhs + 16) == itt)
			return 0;
	}
}

/* Send the forbidden PDU of @mode; the Reject's reason, or -1 if none. */
static int offend(enum mode mode)
{
	unsigned char *bhs, *msg;
	int len;

	switch (mode) {
	case SNACK:
		bhs = pdu_start(ISDM_OP_SNACK, ISDM_BHS_FINAL, 0);
		put_be32(bhs + 16, 0xffffffff);
		break;
	case LOGIN:
		bhs = pdu_start(ISDM_OP_LOGIN_REQ | ISDM_BHS_IMMEDIATE, 0x87, 0);
		put_be32(bhs + 16, 0x2000);
		break;
	case SCSI:
		/* TEST UNIT READY, immediate, no data */
		bhs = pdu_start(ISDM_OP_SCSI_CMD | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 0);
		put_be32(bhs + 16, 0x3000);
		break;
	case BADDLEN:
		bhs = pdu_start(ISDM_OP_TEXT_REQ | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 4096);
		put_be32(bhs + 16, 0x4000);
		break;
	case BIGSEND:
		bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 65536);
		put_be32(bhs + 16, 0x5000);
		put_be32(bhs + 20, 0xffffffff);
		memset(bhs + ISDM_BHS_LEN, 0x5a, 65536);
		if (send_buf(TX_SIZE) == 0)
			return -2;	/* the target took it whole */
		return -1;
	default:
		return -1;
	}
	put_be32(bhs + 24, cmd_sn);
	put_be32(bhs + 28, exp_stat_sn);
	if (send_buf(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN))
		return -1;
	if (mode == BADDLEN)
		return -1;
	len = recv_msg(&msg);
	if (len < ISDM_HDR_LEN_EXT + ISDM_BHS_LEN)
		return -1;
	bhs = msg + ISDM_HDR_LEN_EXT;
	if ((bhs[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_REJECT)
		return -1;
	exp_stat_sn = get_be32(bhs + 24) + 1;
	return bhs[2];
}

static const char *hello(void)
{
	struct isdm_hello h = {
		.flags = ISDM_OP_HELLO,
		.max_min_ver = ISDM_ISER_VERSION << 4 | ISDM_ISER_VERSION,
		.ird = htons(1),
	};
	unsigned char *msg;
	int len;

	memcpy(tx_buf, &h, sizeof(h));
	if (send_buf(sizeof(h)))
		return "none";
	len = recv_msg(&msg);
	if (len != ISDM_HELLO_LEN ||
	    (msg[0] & ISDM_OP_MASK) != ISDM_OP_HELLO_REPLY)
		return "none";
	return msg[0] & ISDM_HELLO_REPLY_REJ ? "rejected" : "ok";
}

int main(int argc, char **argv)
{
	const char *hello_reply = "none";
	enum mode mode = NOP;
	int opt, reject = -1, nop_in = 0;
	unsigned int i;

	while ((opt = getopt(argc, argv, "m:")) != -1) {
		if (opt != 'm')
			return 1;
		for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
			if (!strcmp(optarg, mode_names[i]))
				break;
		if (i == sizeof(mode_names) / sizeof(mode_names[0])) {
			fprintf(stderr, "iser_ffp: unknown mode %s\n", optarg);
			return 1;
		}
		mode = i;
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: iser_ffp [-m nop|hello|snack|login|scsi|baddlen|bigsend] ADDR PORT\n");
		return 1;
	}
	if (connect_target(argv[optind], argv[optind + 1])) {
		fprintf(stderr, "iser_ffp: cannot connect to %s:%s (%s)\n",
			argv[optind], argv[optind + 1], strerror(errno));
		return 1;
	}
	if (login()) {
		printf("login=failed hello_reply=none reject=none nop_in=no closed=%s\n",
		       closed ? "yes" : "no");
		return 0;
	}
	if (mode == HELLO)
		hello_reply = hello();
	else if (mode != NOP)
		reject = offend(mode);
	if (mode != BADDLEN && mode != BIGSEND)
		nop_in = ping(0x100) == 0;
	cm_poll(mode == BADDLEN || mode == BIGSEND ? 5 : 1);
	if (reject >= 0)
		printf("login=ok hello_reply=%s reject=0x%02x nop_in=%s closed=%s\n",
		       hello_reply, reject, nop_in ? "yes" : "no",
		       closed ? "yes" : "no");
	else
		printf("login=ok hello_reply=%s reject=none nop_in=%s closed=%s\n",
		       hello_reply, nop_in ? "yes" : "no",
		       closed ? "yes" : "no");
	fflush(stdout);
	return 0;
}
