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
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iser_tool.h"

#define NR_RX		8
#define RX_SIZE		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + 8192)
#define TX_SIZE		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + 65536)
#define WAIT_SEC	10

enum mode { NOP, HELLO, SNACK, LOGIN, SCSI, BADDLEN, BIGSEND };
static const char *const mode_names[] = {
	"nop", "hello", "snack", "login", "scsi", "baddlen", "bigsend",
};

static struct itool t;
static uint32_t cmd_sn, exp_stat_sn;

static int connect_target(const char *addr, const char *port)
{
	struct addrinfo *ai, hints = { .ai_socktype = SOCK_STREAM };
	struct rdma_conn_param cp = {};
	struct isdm_cm_req req = { .flags = ISDM_CM_ZBVA_EXC };

	if (getaddrinfo(addr, port, &hints, &ai))
		return -1;
	t.ch = rdma_create_event_channel();
	if (!t.ch || rdma_create_id(t.ch, &t.id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(t.id, NULL, ai->ai_addr, 2000) ||
	    itool_cm_wait(&t, RDMA_CM_EVENT_ADDR_RESOLVED, 5) ||
	    rdma_resolve_route(t.id, 2000) ||
	    itool_cm_wait(&t, RDMA_CM_EVENT_ROUTE_RESOLVED, 5))
		return -1;
	freeaddrinfo(ai);
	if (itool_verbs_init(&t, NR_RX, RX_SIZE, TX_SIZE))
		return -1;
	cp.initiator_depth = 1;
	cp.responder_resources = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	cp.private_data = &req;
	cp.private_data_len = sizeof(req);
	if (rdma_connect(t.id, &cp))
		return -1;
	return itool_cm_wait(&t, RDMA_CM_EVENT_ESTABLISHED, 10);
}

static unsigned char *pdu_start(unsigned char op, unsigned char flags,
				uint32_t dlen)
{
	return itool_pdu_start(&t, op, flags, dlen);
}

static int send_buf(uint32_t len)
{
	return itool_send(&t, len);
}

static int recv_msg(unsigned char **msg)
{
	return itool_recv(&t, msg, WAIT_SEC);
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
	itool_put_be32(bhs + 16, 0x1000);	/* ITT */
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
	exp_stat_sn = itool_get_be32(rsp + 24) + 1;
	cmd_sn = itool_get_be32(rsp + 28);	/* ExpCmdSN */
	return 0;
}

/* A NOP-Out ping; 0 when the matching NOP-In came back. */
static int ping(uint32_t itt)
{
	unsigned char *bhs, *msg;
	int len;

	bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE, ISDM_BHS_FINAL, 0);
	itool_put_be32(bhs + 16, itt);
	itool_put_be32(bhs + 20, 0xffffffff);		/* TTT */
	itool_put_be32(bhs + 24, cmd_sn);
	itool_put_be32(bhs + 28, exp_stat_sn);
	if (send_buf(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN))
		return -1;
	for (;;) {
		len = recv_msg(&msg);
		if (len < ISDM_HDR_LEN_EXT + ISDM_BHS_LEN)
			return -1;
		bhs = msg + ISDM_HDR_LEN_EXT;
		if ((bhs[0] & ISDM_BHS_OPCODE_MASK) == ISDM_OP_NOP_IN &&
		    itool_get_be32(bhs + 16) == itt)
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
		itool_put_be32(bhs + 16, 0xffffffff);
		break;
	case LOGIN:
		bhs = pdu_start(ISDM_OP_LOGIN_REQ | ISDM_BHS_IMMEDIATE, 0x87, 0);
		itool_put_be32(bhs + 16, 0x2000);
		break;
	case SCSI:
		/* TEST UNIT READY, immediate, no data */
		bhs = pdu_start(ISDM_OP_SCSI_CMD | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x3000);
		break;
	case BADDLEN:
		bhs = pdu_start(ISDM_OP_TEXT_REQ | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 4096);
		itool_put_be32(bhs + 16, 0x4000);
		break;
	case BIGSEND:
		bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 65536);
		itool_put_be32(bhs + 16, 0x5000);
		itool_put_be32(bhs + 20, 0xffffffff);
		memset(bhs + ISDM_BHS_LEN, 0x5a, 65536);
		if (send_buf(TX_SIZE) == 0)
			return -2;	/* the target took it whole */
		return -1;
	default:
		return -1;
	}
	itool_put_be32(bhs + 24, cmd_sn);
	itool_put_be32(bhs + 28, exp_stat_sn);
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
	exp_stat_sn = itool_get_be32(bhs + 24) + 1;
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

	memcpy(t.tx_buf, &h, sizeof(h));
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
		       t.closed ? "yes" : "no");
		return 0;
	}
	if (mode == HELLO)
		hello_reply = hello();
	else if (mode != NOP)
		reject = offend(mode);
	if (mode != BADDLEN && mode != BIGSEND)
		nop_in = ping(0x100) == 0;
	itool_cm_wait(&t, RDMA_CM_EVENT_DISCONNECTED,
		      mode == BADDLEN || mode == BIGSEND ? 5 : 1);
	if (reject >= 0)
		printf("login=ok hello_reply=%s reject=0x%02x nop_in=%s closed=%s\n",
		       hello_reply, reject, nop_in ? "yes" : "no",
		       t.closed ? "yes" : "no");
	else
		printf("login=ok hello_reply=%s reject=none nop_in=%s closed=%s\n",
		       hello_reply, nop_in ? "yes" : "no",
		       t.closed ? "yes" : "no");
	fflush(stdout);
	return 0;
}
