// SPDX-License-Identifier: GPL-2.0
/*
 * iser_tgt: an iSER target in userspace that lets open-iscsi log in over
 * iSER (a normal session) and then sends, once per connection, what an
 * iSER initiator must refuse.
 *
 * It listens on ADDR PORT with rdma_cm and accepts one connection at a
 * time. The CM REP says what a Linux target says: no zero-based virtual
 * addressing (so both sides use the 28-byte expanded header and absolute
 * addresses), Send with Invalidate when the initiator's REQ offers it. It
 * answers every login key iscsid offers (AuthMethod=None, digests None,
 * RDMAExtensions=Yes, the iSER data segment lengths, the numeric keys as a
 * real target would) for the target TARGET_IQN below, and then serves one
 * 1 MiB LUN of zeros: INQUIRY, REPORT LUNS, READ CAPACITY, MODE SENSE, TEST
 * UNIT READY, READ (data by RDMA Write to the command's read STag, the
 * SCSI Response by Send with Invalidate of that STag), NOP-Out, Task
 * Management, Text and Logout.
 *
 * Connection N gets the Nth case of -c. A login case acts on the first
 * Login Request; a full-feature case on the trigger: the first READ of
 * block -t LBA (every SCSI command before it is answered properly), or
 * the first SCSI command without -t:
 *
 *   good        nothing: serve until the initiator logs out or disconnects
 *   reserved    CM REP and iSER headers with every reserved bit set (the
 *               initiator must ignore them); the trigger is answered, then
 *               the tool disconnects
 *   login-dlen  a Login Response whose DataSegmentLength exceeds the Send
 *   login-op    a NOP-In in the login phase
 *   dlen        SCSI Response, DataSegmentLength 4096, the Send carries none
 *   dlen-big    SCSI Response, DataSegmentLength 2^24-1, none carried
 *   pad         SCSI Response with 8 bytes past its (empty) data segment
 *   short       a 40-byte Send: less than iSER header + BHS
 *   ahs         SCSI Response with a 4-byte AHS
 *   itt         the trigger answered, then a second SCSI Response for
 *               its ITT, whose task is gone
 *   itt-bogus   SCSI Response for ITT 0x0badf00d, which was never issued
 *   inv-rkey    data, then Send with Invalidate of the task's rkey + 1
 *   inv-other   the trigger held; the next command gets its data and a
 *               Send with Invalidate of the held command's STag
 *   inv-nop     the trigger held; an unsolicited NOP-In by Send with
 *               Invalidate of its STag (a PDU that must not carry one)
 *   inv-unneg   CM REP without Send with Invalidate; the trigger's
 *               response comes with Send with Invalidate all the same
 *   op-login    a Login Response in full feature phase
 *   op-r2t      an R2T (iSER targets use RDMA Read)
 *   op-datain   a SCSI Data-In PDU (iSER targets use RDMA Write)
 *   op-unknown  opcode 0x28, which RFC 3720 does not define
 *   iser-op     a SCSI Response behind iSER opcode 0x4 (reserved)
 *   bigsend     a 64 KiB Send, larger than the initiator's receive buffers
 *               when its MaxRecvDataSegmentLength is below that
 *   late-write  the trigger's data and its SCSI Response by plain Send
 *               (no invalidation), then, 1 s later, an RDMA Write of 512
 *               bytes of 0xa5 to the same read STag: the command has
 *               completed, so the STag must be invalid by then (RFC 5046
 *               7.3.2) and the write must fail
 *   abort-late  the trigger held without an answer; when the initiator's
 *               ABORT TASK for it comes, a TMF Response "function
 *               complete", then, 1 s later, an RDMA Write of 512 bytes
 *               of 0xa5 to the held command's read STag: the task ended
 *               without a response, so its STag must be invalid by then
 *               (RFC 5046 8.3.2) and the write must fail
 *   hello-unasked  a HelloReply (12 bytes, accepting) where no Hello was
 *               sent: the wrong phase for it
 *
 * A Hello from the initiator (ib_iser hello=on: its first iSER message
 * after the login) is answered with a proper HelloReply (version 1,
 * iSER-ORD = min(its iSER-IRD, 16)), except in these cases, which act on
 * it instead of on the trigger:
 *
 *   hello-rej   a HelloReply with the reject bit set
 *   hello-ver   a HelloReply that accepts iSER version 2
 *   hello-len   a HelloReply of 16 bytes (RFC 5046: a format error)
 *   hello-none  no answer at all
 *   hello-pdu   a NOP-In (ping) instead of the HelloReply
 *
 * It prints one line per connection, for the scenario to judge:
 *
 *   case=NAME login=ok|no sent=yes|no closed=yes|no|self[ hello=yes]
 *   [ late=...]
 *
 * login: full feature phase reached; sent: the case's PDU went out;
 * closed: the initiator disconnected within 20 s of it (self: the tool
 * did, for good and reserved when it had to); late (late-write and
 * abort-late only):
 * written when the late RDMA Write succeeded, refused when it failed;
 * hello=yes: the initiator sent a Hello on the connection.
 *
 * When the last case is good, further connections are served as good ones
 * (a line each) until the initiator logs out or none comes within -w
 * seconds.
 *
 * usage: iser_tgt [-c CASE,...] [-t LBA] [-w SECONDS] ADDR PORT.  Exit
 * status 0 when every case got a connection, 1 on a local error or when
 * no connection came within -w seconds (default 240).
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iser_tool.h"

#define TARGET_IQN	"iqn.2003-01.org.linux-iscsi.iser-vm:hostile"
#define NR_RX		16
#define DSL_MAX		8192
#define RX_SIZE		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + DSL_MAX)
#define BIG_LEN		65536
#define TX_SIZE		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + BIG_LEN)
#define ZERO_SIZE	(1024 * 1024)
#define INFO_SIZE	4096
#define BLOCKS		2048		/* of 512 bytes: 1 MiB */
#define MAX_WRITES	8		/* RDMA Writes in front of a response */
#define CLOSE_SEC	20
#define MAX_CASES	64
#define NO_TRIGGER	(~0ULL)

enum tcase {
	GOOD, RESERVED, LOGIN_DLEN, LOGIN_OP, DLEN, DLEN_BIG, PAD, SHORT, AHS,
	ITT, ITT_BOGUS, INV_RKEY, INV_OTHER, INV_NOP, INV_UNNEG, OP_LOGIN,
	OP_R2T, OP_DATAIN, OP_UNKNOWN, ISER_OP, BIGSEND, LATE_WRITE,
	ABORT_LATE, HELLO_UNASKED, HELLO_REJ, HELLO_VER, HELLO_LEN, HELLO_NONE,
	HELLO_PDU,
};

static const char *const case_names[] = {
	"good", "reserved", "login-dlen", "login-op", "dlen", "dlen-big", "pad",
	"short", "ahs", "itt", "itt-bogus", "inv-rkey", "inv-other", "inv-nop",
	"inv-unneg", "op-login", "op-r2t", "op-datain", "op-unknown", "iser-op",
	"bigsend", "late-write", "abort-late", "hello-unasked", "hello-rej",
	"hello-ver", "hello-len", "hello-none", "hello-pdu",
};

#define NR_CASE_NAMES	ARRAY_SIZE(case_names)

/* a received SCSI Command */
struct cmd {
	uint32_t itt;
	uint32_t edtl;
	int rsv;
	uint32_t stag;
	uint64_t va;
	int lun0;
	unsigned char cdb[16];
};

static struct itool t;
static struct ibv_mr *data_mr;
/* ZERO_SIZE zeros (READ data), then INFO_SIZE bytes for other answers */
static unsigned char data_buf[ZERO_SIZE + INFO_SIZE];
static uint64_t trigger_lba = NO_TRIGGER;
static uint16_t next_tsih = 1;

/* this connection */
static enum tcase tcase;
static int send_inv, rsvd_bits, logged_in, sent, fired;
static uint32_t stat_sn, exp_cmd_sn;
static struct cmd held;
static int have_held;
/* abort-late: the trigger, held until its ABORT TASK */
static struct cmd aborted;
static int have_aborted;
/* the initiator sent a Logout Request (on any connection) */
static int logged_out;
/* a Hello came on this connection */
static int hello_seen;
/* late-write: what became of the late RDMA Write */
static const char *late;

/* Response header: iSER header + BHS with ITT, StatSN, ExpCmdSN, MaxCmdSN. */
static unsigned char *rsp_start(unsigned char op, unsigned char flags,
				uint32_t dlen, uint32_t itt, int advance)
{
	unsigned char *bhs = itool_pdu_start(&t, op, flags, dlen);

	t.tx_buf[0] |= rsvd_bits;
	itool_put_be32(bhs + 16, itt);
	itool_put_be32(bhs + 24, advance ? stat_sn++ : stat_sn);
	itool_put_be32(bhs + 28, exp_cmd_sn);
	itool_put_be32(bhs + 32, exp_cmd_sn + 63);
	return bhs;
}

/*
 * Send @len bytes of t.tx_buf, after @nw RDMA Writes in @w; with
 * Send with Invalidate of @inv when @use_inv. 0 when the Send completed.
 */
static int post_rsp(uint32_t len, struct ibv_send_wr *w, int nw, int use_inv,
		    uint32_t inv)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)t.tx_buf, .length = len,
		.lkey = t.tx_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = use_inv ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
		.send_flags = IBV_SEND_SOLICITED,
	};
	int i;

	if (use_inv)
		wr.invalidate_rkey = inv;
	for (i = 0; i < nw; i++)
		w[i].next = i + 1 < nw ? &w[i + 1] : &wr;
	return itool_send_wr(&t, nw ? w : &wr, &wr, 10);
}

/*
 * RDMA Writes of @len bytes at @src to the read buffer of @c; their WRs
 * and SGEs in @w and @sge. The number of WRs.
 */
static int data_writes(const struct cmd *c, const unsigned char *src,
		       uint32_t len, struct ibv_send_wr *w,
		       struct ibv_sge *sge)
{
	uint32_t off = 0, n;
	int nw = 0;

	while (off < len && nw < MAX_WRITES) {
		n = len - off < ZERO_SIZE ? len - off : ZERO_SIZE;
		memset(&w[nw], 0, sizeof(w[nw]));
		sge[nw].addr = (uintptr_t)src;
		sge[nw].length = n;
		sge[nw].lkey = data_mr->lkey;
		w[nw].sg_list = &sge[nw];
		w[nw].num_sge = 1;
		w[nw].opcode = IBV_WR_RDMA_WRITE;
		w[nw].wr.rdma.remote_addr = c->va + off;
		w[nw].wr.rdma.rkey = c->stag;
		nw++;
		off += n;
	}
	return nw;
}

struct answer {
	const unsigned char *data;
	uint32_t len;
	unsigned char status;		/* 0 GOOD, 2 CHECK CONDITION */
	unsigned char sense[3];		/* key, ASC, ASCQ */
};

static void check(struct answer *a, unsigned char key, unsigned char asc)
{
	a->status = 2;
	a->sense[0] = key;
	a->sense[1] = asc;
	a->sense[2] = 0;
}

static void put_be64(unsigned char *p, uint64_t v)
{
	itool_put_be32(p, v >> 32);
	itool_put_be32(p + 4, (uint32_t)v);
}

/* The LUN: a 1 MiB disk of zeros. Sets @lba for READs, else leaves it. */
static void emulate(const struct cmd *c, struct answer *a, uint64_t *lba)
{
	const unsigned char *cdb = c->cdb;
	unsigned char *info = data_buf + ZERO_SIZE;

	memset(a, 0, sizeof(*a));
	memset(info, 0, INFO_SIZE);
	a->data = info;
	if (!c->lun0 && cdb[0] != 0x12 && cdb[0] != 0xa0) {
		check(a, 0x05, 0x25);	/* LOGICAL UNIT NOT SUPPORTED */
		return;
	}
	switch (cdb[0]) {
	case 0x00:			/* TEST UNIT READY */
	case 0x35:			/* SYNCHRONIZE CACHE */
		break;
	case 0x12:			/* INQUIRY */
		if (cdb[1] & 1) {
			if (cdb[2] != 0) {
				check(a, 0x05, 0x24);
				break;
			}
			a->len = 5;	/* supported pages: 0 only */
			info[3] = 1;
			break;
		}
		info[0] = c->lun0 ? 0x00 : 0x7f;
		info[2] = 5;
		info[3] = 2;
		info[4] = 31;
		memcpy(info + 8, "ISERTOOLhostile peer    0001", 28);
		a->len = 36;
		break;
	case 0xa0:			/* REPORT LUNS: LUN 0 */
		info[3] = 8;
		a->len = 16;
		break;
	case 0x25:			/* READ CAPACITY (10) */
		itool_put_be32(info, BLOCKS - 1);
		itool_put_be32(info + 4, 512);
		a->len = 8;
		break;
	case 0x9e:			/* READ CAPACITY (16) */
		if ((cdb[1] & 0x1f) != 0x10) {
			check(a, 0x05, 0x20);
			break;
		}
		put_be64(info, BLOCKS - 1);
		itool_put_be32(info + 8, 512);
		a->len = 32;
		break;
	case 0x1a:			/* MODE SENSE (6): header only */
		info[0] = 3;
		a->len = 4;
		break;
	case 0x5a:			/* MODE SENSE (10) */
		info[1] = 6;
		a->len = 8;
		break;
	case 0x28:			/* READ (10) */
		*lba = itool_get_be32(cdb + 2);
		a->len = (uint32_t)(cdb[7] << 8 | cdb[8]) * 512;
		a->data = data_buf;
		break;
	case 0x88:			/* READ (16) */
		*lba = (uint64_t)itool_get_be32(cdb + 2) << 32 |
		       itool_get_be32(cdb + 6);
		a->len = itool_get_be32(cdb + 10) * 512;
		a->data = data_buf;
		break;
	case 0x2a:			/* WRITE: write protected */
	case 0x8a:
		check(a, 0x07, 0x27);
		break;
	default:
		check(a, 0x05, 0x20);	/* INVALID COMMAND OPERATION CODE */
		break;
	}
	if (a->data == data_buf && a->len > (uint32_t)MAX_WRITES * ZERO_SIZE)
		check(a, 0x05, 0x24);
}

/*
 * Answer @c with @a: data by RDMA Write, then the SCSI Response, by Send
 * with Invalidate of @inv when @use_inv, for ITT @itt.
 */
static int respond(const struct cmd *c, const struct answer *a, uint32_t itt,
		   int use_inv, uint32_t inv)
{
	struct ibv_send_wr w[MAX_WRITES];
	struct ibv_sge sge[MAX_WRITES];
	uint32_t len = a->status ? 0 : a->len, dlen = a->status ? 20 : 0;
	unsigned char *bhs, flags = ISDM_BHS_FINAL;
	int nw = 0;

	if (len > c->edtl)
		len = c->edtl;
	if (len && c->rsv)
		nw = data_writes(c, a->data, len, w, sge);
	if (!c->rsv)
		len = 0;
	if (len < c->edtl)
		flags |= 0x02;		/* underflow */
	bhs = rsp_start(ISDM_OP_SCSI_RSP, flags, dlen, itt, 1);
	bhs[3] = a->status;
	itool_put_be32(bhs + 44, c->edtl - len);
	if (dlen) {
		unsigned char *s = bhs + ISDM_BHS_LEN;

		memset(s, 0, dlen);
		s[1] = 18;		/* SenseLength, then fixed sense */
		s[2] = 0x70;
		s[4] = a->sense[0];
		s[9] = 10;
		s[14] = a->sense[1];
		s[15] = a->sense[2];
	}
	return post_rsp(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + dlen, w, nw, use_inv,
			inv);
}

static int respond_ok(const struct cmd *c)
{
	struct answer a;
	uint64_t lba;

	emulate(c, &a, &lba);
	return respond(c, &a, c->itt, send_inv && c->rsv, c->stag);
}

/*
 * late-write: 512 bytes of 0xa5 by RDMA Write to the read buffer of @c,
 * whose command has completed. 0 when the write succeeded.
 */
static int late_write(const struct cmd *c)
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

/* A HelloReply of @len bytes in t.tx_buf: @flags, CurVer @ver, @ord. */
static int hello_reply(unsigned char flags, unsigned char ver, uint16_t ord,
		       uint32_t len)
{
	memset(t.tx_buf, 0, len);
	t.tx_buf[0] = ISDM_OP_HELLO_REPLY | flags;
	t.tx_buf[1] = (ISDM_ISER_VERSION << 4) | ver;
	t.tx_buf[2] = ord >> 8;
	t.tx_buf[3] = ord & 0xff;
	return post_rsp(len, NULL, 0, 0, 0);
}

/*
 * A Hello from the initiator: answer it, or do the case's wrong thing. 0 to
 * go on, 1 when the case was done (the initiator must close), -1 on a local
 * error.
 */
static int hello_step(const unsigned char *msg, int len)
{
	uint16_t ird = len >= 4 ? (msg[2] << 8) | msg[3] : 0;
	uint16_t ord = ird < 16 ? ird : 16;

	hello_seen = 1;
	switch (tcase) {
	case HELLO_REJ:
		hello_reply(ISDM_HELLO_REPLY_REJ, ISDM_ISER_VERSION, ord,
			    ISDM_HELLO_LEN);
		break;
	case HELLO_VER:
		hello_reply(0, 2, ord, ISDM_HELLO_LEN);
		break;
	case HELLO_LEN:
		hello_reply(0, ISDM_ISER_VERSION, ord, ISDM_HELLO_LEN + 4);
		break;
	case HELLO_NONE:
		break;
	case HELLO_PDU:
		rsp_start(ISDM_OP_NOP_IN, ISDM_BHS_FINAL, 0, 0xffffffff, 0);
		post_rsp(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN, NULL, 0, 0, 0);
		break;
	default:
		return hello_reply(0, ISDM_ISER_VERSION, ord, ISDM_HELLO_LEN) ?
		       -1 : 0;
	}
	/* a Send the initiator refuses may fail here: it went out */
	fired = 1;
	sent = 1;
	return 1;
}

/* The trigger of a full-feature case: send what the initiator must refuse. */
static int offend(const struct cmd *c)
{
	struct answer a;
	struct cmd dup;
	unsigned char *bhs;
	uint64_t lba;
	uint32_t hl = ISDM_HDR_LEN_EXT + ISDM_BHS_LEN;

	emulate(c, &a, &lba);
	switch (tcase) {
	case DLEN:
	case DLEN_BIG:
		rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL,
			  tcase == DLEN ? 4096 : 0xffffff, c->itt, 1);
		return post_rsp(hl, NULL, 0, 0, 0);
	case PAD:
		rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
		memset(t.tx_buf + hl, 0, 8);
		return post_rsp(hl + 8, NULL, 0, 0, 0);
	case SHORT:
		rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
		return post_rsp(40, NULL, 0, 0, 0);
	case AHS:
		bhs = rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
		bhs[4] = 1;
		memset(t.tx_buf + hl, 0, 4);
		return post_rsp(hl + 4, NULL, 0, 0, 0);
	case ITT:
		if (respond_ok(c))
			return -1;
		dup = *c;
		dup.rsv = 0;
		memset(&a, 0, sizeof(a));
		return respond(&dup, &a, c->itt, 0, 0);
	case ITT_BOGUS:
		return respond(c, &a, 0x0badf00d, 0, 0);
	case INV_RKEY:
		return respond(c, &a, c->itt, 1,
			       (c->stag & ~0xffu) | ((c->stag + 1) & 0xff));
	case INV_UNNEG:
		return respond(c, &a, c->itt, 1, c->stag);
	case INV_OTHER:
		held = *c;
		have_held = 1;
		return 0;		/* acts on the next command */
	case INV_NOP:
		/* an unsolicited NOP-In (a ping) carries no StatSN advance */
		bhs = rsp_start(ISDM_OP_NOP_IN, ISDM_BHS_FINAL, 0, 0xffffffff, 0);
		itool_put_be32(bhs + 20, 0x1234);
		return post_rsp(hl, NULL, 0, 1, c->stag);
	case OP_LOGIN:
		bhs = rsp_start(ISDM_OP_LOGIN_RSP, 0x87, 0, c->itt, 1);
		return post_rsp(hl, NULL, 0, 0, 0);
	case OP_R2T:
		bhs = rsp_start(ISDM_OP_R2T, ISDM_BHS_FINAL, 0, c->itt, 0);
		itool_put_be32(bhs + 20, 1);		/* TTT */
		itool_put_be32(bhs + 44, c->edtl);	/* desired length */
		return post_rsp(hl, NULL, 0, 0, 0);
	case OP_DATAIN:
		rsp_start(ISDM_OP_DATA_IN, ISDM_BHS_FINAL, 0, c->itt, 0);
		return post_rsp(hl, NULL, 0, 0, 0);
	case OP_UNKNOWN:
		rsp_start(0x28, ISDM_BHS_FINAL, 0, c->itt, 1);
		return post_rsp(hl, NULL, 0, 0, 0);
	case ISER_OP:
		rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
		t.tx_buf[0] = 0x40;
		return post_rsp(hl, NULL, 0, 0, 0);
	case BIGSEND:
		rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, BIG_LEN, c->itt, 1);
		memset(t.tx_buf + hl, 0, BIG_LEN);
		return post_rsp(hl + BIG_LEN, NULL, 0, 0, 0);
	case ABORT_LATE:
		if (!c->rsv)
			return -1;
		aborted = *c;
		have_aborted = 1;
		return 0;		/* acts on the ABORT TASK */
	case LATE_WRITE:
		if (!c->rsv)
			return -1;
		if (respond(c, &a, c->itt, 0, 0))
			return -1;
		sleep(1);
		late = late_write(c) ? "refused" : "written";
		return 0;
	case RESERVED:
		return respond_ok(c);
	case HELLO_UNASKED:
		return hello_reply(0, ISDM_ISER_VERSION, 1, ISDM_HELLO_LEN);
	default:
		return -1;
	}
}

/* Login: the answer to one key=value offer, appended at @out. */
static size_t login_key(const char *kv, char *out, size_t room)
{
	static const char *const fixed[][2] = {
		{ "AuthMethod", "None" }, { "HeaderDigest", "None" },
		{ "DataDigest", "None" }, { "RDMAExtensions", "Yes" },
		{ "IFMarker", "No" }, { "OFMarker", "No" },
		{ "InitialR2T", "Yes" }, { "DataPDUInOrder", "Yes" },
		{ "DataSequenceInOrder", "Yes" }, { "ErrorRecoveryLevel", "0" },
		{ "MaxConnections", "1" }, { "MaxOutstandingR2T", "1" },
		{ "MaxOutstandingUnexpectedPDUs", "0" },
	};
	/* numeric, result function minimum: the offer up to our limit */
	static const struct { const char *key; unsigned long max; } mins[] = {
		{ "MaxBurstLength", 262144 }, { "FirstBurstLength", 65536 },
		{ "DefaultTime2Retain", 0 },
		{ "TargetRecvDataSegmentLength", DSL_MAX },
		{ "InitiatorRecvDataSegmentLength", 16777215 },
	};
	/* declarations we take note of and do not answer */
	static const char *const quiet[] = {
		"InitiatorName", "InitiatorAlias", "SessionType", "TargetName",
		"MaxRecvDataSegmentLength",
	};
	const char *eq = strchr(kv, '=');
	size_t klen, i;
	int n;

	if (!eq)
		return 0;
	klen = eq - kv;
	for (i = 0; i < ARRAY_SIZE(quiet); i++)
		if (strlen(quiet[i]) == klen && !strncmp(kv, quiet[i], klen))
			return 0;
	for (i = 0; i < ARRAY_SIZE(fixed); i++)
		if (strlen(fixed[i][0]) == klen &&
		    !strncmp(kv, fixed[i][0], klen)) {
			n = snprintf(out, room, "%s=%s", fixed[i][0],
				     fixed[i][1]);
			return n < 0 || (size_t)n >= room ? 0 : n + 1;
		}
	for (i = 0; i < ARRAY_SIZE(mins); i++)
		if (strlen(mins[i].key) == klen &&
		    !strncmp(kv, mins[i].key, klen)) {
			unsigned long v = strtoul(eq + 1, NULL, 10);

			n = snprintf(out, room, "%s=%lu", mins[i].key,
				     v < mins[i].max ? v : mins[i].max);
			return n < 0 || (size_t)n >= room ? 0 : n + 1;
		}
	if (!strncmp(kv, "DefaultTime2Wait", klen) ||
	    !strncmp(kv, "ImmediateData", klen)) {
		/* maximum / AND with Yes: the offer itself */
		n = snprintf(out, room, "%s", kv);
	} else {
		n = snprintf(out, room, "%.*s=NotUnderstood", (int)klen, kv);
	}
	return n < 0 || (size_t)n >= room ? 0 : n + 1;
}

/* One Login Request: answer it, or do the login case. */
static int login_step(const unsigned char *msg, int len)
{
	const unsigned char *req = msg + ISDM_HDR_LEN_EXT;
	uint32_t dlen = itool_get_be24(req + 5), hl, off = 0, n = 0;
	unsigned char *bhs, csg = (req[1] >> 2) & 3, nsg = req[1] & 3;
	int transit = req[1] & 0x80;
	char *out, *keys;

	if ((uint32_t)len < ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + dlen)
		return -1;
	if (!stat_sn && !exp_cmd_sn)
		stat_sn = itool_get_be32(req + 28);
	exp_cmd_sn = itool_get_be32(req + 24);
	hl = ISDM_HDR_LEN_EXT + ISDM_BHS_LEN;
	if (tcase == LOGIN_DLEN || tcase == LOGIN_OP) {
		bhs = rsp_start(tcase == LOGIN_OP ? ISDM_OP_NOP_IN :
				ISDM_OP_LOGIN_RSP, 0x81, 1000,
				itool_get_be32(req + 16), 1);
		memcpy(bhs + 8, req + 8, 6);
		if (tcase == LOGIN_OP)
			memset(bhs + 5, 0, 3);
		sent = 1;
		fired = 1;
		post_rsp(hl, NULL, 0, 0, 0);
		return 1;
	}
	/* copy the keys: the receive buffer is reused */
	keys = calloc(1, dlen + 1);
	if (!keys)
		return -1;
	memcpy(keys, req + ISDM_BHS_LEN, dlen);
	out = (char *)t.tx_buf + hl;
	/* RFC 3720 12.9: in the first response of a normal session */
	if (csg == 0)
		n = snprintf(out, DSL_MAX, "TargetPortalGroupTag=1") + 1;
	while (off < dlen) {
		const char *kv = keys + off;

		n += login_key(kv, out + n, DSL_MAX - n);
		off += strlen(kv) + 1;
	}
	free(keys);
	bhs = rsp_start(ISDM_OP_LOGIN_RSP, 0, n, itool_get_be32(req + 16), 1);
	bhs[1] = (transit ? 0x80 : 0) | csg << 2 | (transit ? nsg : 0);
	memcpy(bhs + 8, req + 8, 6);
	if (transit && nsg == 3) {
		uint16_t tsih = req[14] << 8 | req[15];

		if (!tsih)
			tsih = next_tsih++;
		bhs[14] = tsih >> 8;
		bhs[15] = tsih;
	}
	memset(out + n, 0, ((n + 3) & ~3u) - n);
	if (post_rsp(hl + ((n + 3) & ~3u), NULL, 0, 0, 0))
		return -1;
	if (transit && nsg == 3)
		logged_in = 1;
	return 0;
}

static void parse_cmd(const unsigned char *msg, struct cmd *c)
{
	const unsigned char *bhs = msg + ISDM_HDR_LEN_EXT;
	int i;

	c->itt = itool_get_be32(bhs + 16);
	c->edtl = itool_get_be32(bhs + 20);
	c->rsv = msg[0] & ISDM_CTRL_RSV;
	c->stag = itool_get_be32(msg + 16);
	c->va = (uint64_t)itool_get_be32(msg + 20) << 32 |
		itool_get_be32(msg + 24);
	c->lun0 = 1;
	for (i = 8; i < 16; i++)
		if (bhs[i])
			c->lun0 = 0;
	memcpy(c->cdb, bhs + 32, 16);
}

static int is_trigger(const struct cmd *c)
{
	struct answer a;
	uint64_t lba = NO_TRIGGER;

	if (trigger_lba == NO_TRIGGER)
		return 1;
	emulate(c, &a, &lba);
	return lba == trigger_lba;
}

/*
 * One full-feature PDU. 0 to go on, 1 when the case was done (wait for
 * the initiator to close), -1 on a local error.
 */
static int ffp_step(const unsigned char *msg)
{
	const unsigned char *bhs = msg + ISDM_HDR_LEN_EXT;
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
		r = rsp_start(ISDM_OP_NOP_IN, ISDM_BHS_FINAL, 0, itt, 1);
		itool_put_be32(r + 20, 0xffffffff);
		return post_rsp(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN, NULL, 0, 0, 0);
	case ISDM_OP_SCSI_CMD:
		parse_cmd(msg, &c);
		if (have_held) {
			/* inv-other: the held command's STag, not this one's */
			emulate(&c, &a, &lba);
			sent = 1;
			respond(&c, &a, c.itt, 1, held.stag);
			return 1;
		}
		if (tcase == GOOD || fired || !is_trigger(&c))
			return respond_ok(&c);
		fired = 1;
		/* a Send the initiator refuses may fail here: it went out */
		ret = offend(&c);
		if ((tcase == INV_OTHER || tcase == ABORT_LATE) && !ret)
			return 0;
		sent = 1;
		if (tcase == RESERVED) {
			rdma_disconnect(t.id);
			return 2;
		}
		return 1;
	case ISDM_OP_TMF_REQ:
		rsp_start(ISDM_OP_TMF_RSP, ISDM_BHS_FINAL, 0, itt, 1);
		ret = post_rsp(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN, NULL, 0, 0, 0);
		/* abort-late: ABORT TASK (function 1) of the held trigger */
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
		return post_rsp(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN, NULL, 0, 0, 0);
	case ISDM_OP_LOGOUT_REQ:
		logged_out = 1;
		rsp_start(ISDM_OP_LOGOUT_RSP, ISDM_BHS_FINAL, 0, itt, 1);
		post_rsp(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN, NULL, 0, 0, 0);
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
	/* what a Linux target answers: no ZBVA, Send with Invalidate if offered */
	send_inv = !(req.flags & ISDM_CM_SIE_EXC) && tcase != INV_UNNEG;
	rep.flags = ISDM_CM_ZBVA_EXC | (send_inv ? 0 : ISDM_CM_SIE_EXC);
	if (tcase == RESERVED) {
		rep.flags |= 0x3f;
		memset(rep.rsvd, 0xff, sizeof(rep.rsvd));
		rsvd_bits = 0x03;
	}
	t.id = ev->id;
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

/* The next connection request within @secs, or NULL. */
static struct rdma_cm_event *next_request(double secs)
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
static void serve(struct rdma_cm_event *ev, enum tcase c, double deadline)
{
	const char *closed = "no";
	unsigned char *msg;
	double until = 0;
	int len, ret = 0;

	tcase = c;
	send_inv = 0;
	rsvd_bits = 0;
	logged_in = 0;
	sent = 0;
	fired = 0;
	have_held = 0;
	have_aborted = 0;
	hello_seen = 0;
	late = NULL;
	stat_sn = 0;
	exp_cmd_sn = 0;
	t.closed = 0;
	if (accept_conn(ev)) {
		fprintf(stderr, "iser_tgt: accepting the connection failed\n");
		goto out;
	}
	while (!t.closed && !t.pending && itool_now() < deadline) {
		if (until && itool_now() > until)
			break;
		len = itool_recv(&t, &msg, 1);
		if (len < 0 || until)
			continue;	/* nothing, or the case is done: wait */
		if (logged_in && len > 0 && !hello_seen &&
		    (msg[0] & ISDM_OP_MASK) == ISDM_OP_HELLO) {
			ret = hello_step(msg, len);
			if (ret < 0)
				break;
			if (ret == 1)
				until = itool_now() + CLOSE_SEC;
			continue;
		}
		if (len < ISDM_HDR_LEN_EXT + ISDM_BHS_LEN)
			continue;
		if (!logged_in) {
			if ((msg[ISDM_HDR_LEN_EXT] & ISDM_BHS_OPCODE_MASK) ==
			    ISDM_OP_LOGIN_REQ)
				ret = login_step(msg, len);
		} else {
			ret = ffp_step(msg);
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
	printf("case=%s login=%s sent=%s closed=%s", case_names[c],
	       itool_yes_no(logged_in, "ok"), itool_yes_no(sent, "yes"), closed);
	if (hello_seen)
		printf(" hello=yes");
	if (late)
		printf(" late=%s", late);
	printf("\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	enum tcase cases[MAX_CASES] = { GOOD };
	struct addrinfo *ai, hints = {
		.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE,
	};
	struct rdma_cm_id *listener;
	int opt, nr = 1, i;
	double wait_sec = 240;
	char *s, *tok;
	unsigned int k;

	while ((opt = getopt(argc, argv, "c:t:w:")) != -1) {
		switch (opt) {
		case 'c':
			nr = 0;
			for (s = optarg; (tok = strtok(s, ",")); s = NULL) {
				for (k = 0; k < NR_CASE_NAMES; k++)
					if (!strcmp(tok, case_names[k]))
						break;
				if (k == NR_CASE_NAMES || nr == MAX_CASES) {
					fprintf(stderr, "iser_tgt: bad case %s\n",
						tok);
					return 1;
				}
				cases[nr++] = k;
			}
			break;
		case 't':
			trigger_lba = strtoull(optarg, NULL, 0);
			break;
		case 'w':
			wait_sec = atof(optarg);
			break;
		default:
			return 1;
		}
	}
	if (argc - optind != 2 || !nr) {
		fprintf(stderr, "usage: iser_tgt [-c CASE,...] [-t LBA] [-w SECONDS] ADDR PORT\n");
		return 1;
	}
	if (getaddrinfo(argv[optind], argv[optind + 1], &hints, &ai)) {
		fprintf(stderr, "iser_tgt: bad address %s:%s\n", argv[optind],
			argv[optind + 1]);
		return 1;
	}
	t.ch = rdma_create_event_channel();
	if (!t.ch || rdma_create_id(t.ch, &listener, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listener, ai->ai_addr) || rdma_listen(listener, 4)) {
		fprintf(stderr, "iser_tgt: cannot listen on %s:%s (%s)\n",
			argv[optind], argv[optind + 1], strerror(errno));
		return 1;
	}
	freeaddrinfo(ai);
	fprintf(stderr, "iser_tgt: %s listening on %s:%s, %d cases\n",
		TARGET_IQN, argv[optind], argv[optind + 1], nr);
	for (i = 0; i < nr; i++) {
		struct rdma_cm_event *ev = next_request(wait_sec);

		if (!ev) {
			printf("case=%s login=no sent=no closed=no conn=none\n",
			       case_names[cases[i]]);
			return 1;
		}
		serve(ev, cases[i], itool_now() + wait_sec);
	}
	/*
	 * A last good case serves every further connection until the
	 * initiator logs out: a session that recovers once more (a slow
	 * login retried) still finds its target.
	 */
	while (cases[nr - 1] == GOOD && !logged_out) {
		struct rdma_cm_event *ev = next_request(wait_sec);

		if (!ev)
			break;
		serve(ev, GOOD, itool_now() + wait_sec);
	}
	rdma_destroy_id(listener);
	rdma_destroy_event_channel(t.ch);
	return 0;
}
