// SPDX-License-Identifier: GPL-2.0
/*
 * iser_ffp: an iSER initiator in userspace that logs in properly and then
 * sends, in full feature phase, what an iSER target must refuse.
 *
 * It connects over rdma_cm with Annex A12 private data (no ZBVA, so the
 * target uses the 28-byte expanded header) and logs in with one step
 * (operational stage straight to full feature phase, no authentication;
 * more Login Requests follow only if the target does not transit at
 * once): to a discovery session, or with -n TARGET to a normal session
 * with that TargetName (-i names the initiator, which needs an ACL),
 * offering InitialR2T=No, ImmediateData=Yes and FirstBurstLength=65536.
 * Then, per mode:
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
 *   textcont (discovery) SendTargets=All; while the Text Response has the
 *            C bit, an empty continuation Text Request with its TTT (RFC
 *            3720 10.10.4); the exchange must end in a final response
 *
 * and, in a normal session (-n), SCSI Commands (non-immediate, CmdSN in
 * order, LUN 0, no STags unless said) followed by a ping:
 *
 *   ahs0     TEST UNIT READY with an extended-CDB AHS whose AHSLength is 0
 *            (TotalAHSLength 1): must be refused
 *   ahsover  an extended-CDB AHS with AHSLength 5 in TotalAHSLength 1 (the
 *            segment overruns the AHS): must be refused
 *   ahstype  an AHS of the reserved type 3: must be refused
 *   ahsnop   a NOP-Out ping carrying an extended-CDB AHS: must be refused
 *   ahsshort a 32-byte variable-length CDB whose extended-CDB AHS carries
 *            only 17 bytes of it: must be refused
 *   cdblong  the same CDB with no AHS at all: must be refused
 *   ecdb     the same CDB complete in a well-formed extended-CDB AHS
 *            (AHSLength 17): LIO answers with a SCSI Response (CHECK
 *            CONDITION: the service action is not supported)
 *   bidi     a bidirectional command (R and W, fake STags for both) with a
 *            well-formed Expected Bidirectional Read-Data Length AHS: LIO
 *            rejects bidirectional commands with a Reject
 *   immf1    a WRITE(10) of 8 KiB carrying 4 KiB of immediate data with
 *            F=1 and no Write STag under InitialR2T=No: nothing may follow
 *            unsolicited and the target cannot fetch the rest; must be
 *            refused at once
 *
 * It prints one line, for the scenario to judge:
 *
 *   login=ok|failed hello_reply=ok|rejected|none reject=0xRR|none
 *   nop_in=yes|no closed=yes|no status=0xSS|none text=N/final|N/none|none
 *
 * status is the SCSI Response's status; text counts the Text Responses of
 * textcont and says whether the last was final. initial_r2t=no is
 * appended in a normal session when InitialR2T=No was negotiated.
 *
 * usage: iser_ffp [-m MODE] [-n TARGET] [-i INITIATOR] ADDR PORT.  Exit
 * status 0 when it ran, 1 on a local error (bad arguments, no RDMA
 * device, connection refused).
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
#define HDR		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN)

enum mode {
	NOP, HELLO, SNACK, LOGIN, SCSI, BADDLEN, BIGSEND, TEXTCONT,
	AHS0, AHSOVER, AHSTYPE, AHSNOP, AHSSHORT, CDBLONG, ECDB, BIDI, IMMF1,
};

static const char *const mode_names[] = {
	"nop", "hello", "snack", "login", "scsi", "baddlen", "bigsend",
	"textcont", "ahs0", "ahsover", "ahstype", "ahsnop", "ahsshort",
	"cdblong", "ecdb", "bidi", "immf1",
};

static struct itool t;
static uint32_t cmd_sn, exp_stat_sn;
static const char *target_name;
static const char *initiator_name = "iqn.2004-10.org.debian:iser-vm-ffp";
static int initial_r2t_no;

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

/* "key=value\0" into @buf at @len; the new length */
static size_t add_key(char *buf, size_t len, const char *key,
		      const char *val)
{
	return len + sprintf(buf + len, "%s=%s", key, val) + 1;
}

/* does the text data @d (@dlen bytes) hold the pair @kv? */
static int has_pair(const unsigned char *d, uint32_t dlen, const char *kv)
{
	size_t n = strlen(kv) + 1;
	uint32_t i;

	for (i = 0; i + n <= dlen; i++)
		if ((i == 0 || d[i - 1] == 0) && !memcmp(d + i, kv, n))
			return 1;
	return 0;
}

/* keys the tool offers itself; any other key in a response is a proposal */
static int offered(const char *kv)
{
	static const char *const ours[] = {
		"InitiatorName=", "SessionType=", "TargetName=", "InitialR2T=",
		"ImmediateData=", "FirstBurstLength=", "MaxBurstLength=",
		"ErrorRecoveryLevel=", "DefaultTime2Wait=",
		"DefaultTime2Retain=", "MaxOutstandingR2T=", "HeaderDigest=",
		"DataDigest=", "RDMAExtensions=",
		"InitiatorRecvDataSegmentLength=",
		"TargetRecvDataSegmentLength=", "MaxOutstandingUnexpectedPDUs=",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ours); i++)
		if (!strncmp(kv, ours[i], strlen(ours[i])))
			return 1;
	return 0;
}

/*
 * The pairs of a Login Response the tool did not offer, copied into @buf
 * (@size bytes) as its answer: the target's value is accepted.
 */
static uint32_t echo_proposals(char *buf, size_t size, const unsigned char *d,
			       uint32_t dlen)
{
	uint32_t i = 0, n = 0, l;

	while (i < dlen) {
		l = strnlen((const char *)d + i, dlen - i);
		if (l && memchr(d + i, '=', l) && !offered((const char *)d + i) &&
		    strncmp((const char *)d + i, "TargetPortalGroupTag=", 21) &&
		    strncmp((const char *)d + i, "TargetAlias=", 12) &&
		    n + l + 1 <= size) {
			memcpy(buf + n, d + i, l);
			buf[n + l] = 0;
			n += l + 1;
		}
		i += l + 1;
	}
	return n;
}

static int login(void)
{
	static char keys[1024];
	unsigned char *bhs, *msg, *rsp;
	uint32_t dlen = 0, rlen;
	int len, round;

	dlen = add_key(keys, dlen, "InitiatorName", initiator_name);
	if (target_name) {
		dlen = add_key(keys, dlen, "SessionType", "Normal");
		dlen = add_key(keys, dlen, "TargetName", target_name);
		dlen = add_key(keys, dlen, "InitialR2T", "No");
		dlen = add_key(keys, dlen, "ImmediateData", "Yes");
		dlen = add_key(keys, dlen, "FirstBurstLength", "65536");
		dlen = add_key(keys, dlen, "MaxBurstLength", "262144");
		dlen = add_key(keys, dlen, "ErrorRecoveryLevel", "0");
		dlen = add_key(keys, dlen, "DefaultTime2Wait", "2");
		dlen = add_key(keys, dlen, "DefaultTime2Retain", "20");
		dlen = add_key(keys, dlen, "MaxOutstandingR2T", "1");
	} else {
		dlen = add_key(keys, dlen, "SessionType", "Discovery");
	}
	dlen = add_key(keys, dlen, "HeaderDigest", "None");
	dlen = add_key(keys, dlen, "DataDigest", "None");
	dlen = add_key(keys, dlen, "RDMAExtensions", "Yes");
	dlen = add_key(keys, dlen, "InitiatorRecvDataSegmentLength", "8192");
	dlen = add_key(keys, dlen, "TargetRecvDataSegmentLength", "8192");
	dlen = add_key(keys, dlen, "MaxOutstandingUnexpectedPDUs", "0");

	for (round = 0; round < 4; round++) {
		/* Transit, CSG operational (1), NSG full feature (3) */
		bhs = pdu_start(ISDM_OP_LOGIN_REQ | ISDM_BHS_IMMEDIATE, 0x87,
				dlen);
		bhs[8] = 0x80;		/* ISID: random type */
		bhs[13] = 0x2a;
		itool_put_be32(bhs + 16, 0x1000);	/* ITT */
		itool_put_be32(bhs + 28, exp_stat_sn);
		memcpy(bhs + ISDM_BHS_LEN, keys, dlen);
		if (send_buf(HDR + ((dlen + 3) & ~3u)))
			return -1;
		len = recv_msg(&msg);
		if (len < HDR)
			return -1;
		rsp = msg + ISDM_HDR_LEN_EXT;
		if ((rsp[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_LOGIN_RSP ||
		    rsp[36] != 0) {
			fprintf(stderr,
				"iser_ffp: bad Login Response: op 0x%02x flags 0x%02x status %u/%u\n",
				rsp[0], rsp[1], rsp[36], rsp[37]);
			return -1;
		}
		rlen = itool_get_be24(rsp + 5);
		if (rlen > (uint32_t)len - HDR)
			rlen = len - HDR;
		if (has_pair(rsp + ISDM_BHS_LEN, rlen, "InitialR2T=No"))
			initial_r2t_no = 1;
		exp_stat_sn = itool_get_be32(rsp + 24) + 1;
		cmd_sn = itool_get_be32(rsp + 28);	/* ExpCmdSN */
		if ((rsp[1] & 0x83) == 0x83)
			return 0;
		/* accept what the target proposed: echo its keys back */
		dlen = echo_proposals(keys, sizeof(keys), rsp + ISDM_BHS_LEN,
				      rlen);
	}
	fprintf(stderr, "iser_ffp: the target did not transit to full feature phase\n");
	return -1;
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
	if (send_buf(HDR))
		return -1;
	for (;;) {
		len = recv_msg(&msg);
		if (len < HDR)
			return -1;
		bhs = msg + ISDM_HDR_LEN_EXT;
		if ((bhs[0] & ISDM_BHS_OPCODE_MASK) == ISDM_OP_NOP_IN &&
		    itool_get_be32(bhs + 16) == itt)
			return 0;
	}
}

/*
 * What came back for a PDU: the first Reject, SCSI Response or Text
 * Response (its BHS), or NULL when nothing did within WAIT_SEC or the
 * connection went down.
 */
static unsigned char *answer(void)
{
	unsigned char *msg, *bhs;
	int len;

	for (;;) {
		len = recv_msg(&msg);
		if (len < HDR)
			return NULL;
		bhs = msg + ISDM_HDR_LEN_EXT;
		switch (bhs[0] & ISDM_BHS_OPCODE_MASK) {
		case ISDM_OP_REJECT:
		case ISDM_OP_SCSI_RSP:
		case ISDM_OP_TEXT_RSP:
			exp_stat_sn = itool_get_be32(bhs + 24) + 1;
			return bhs;
		default:
			break;	/* e.g. a NOP-In ping of the target */
		}
	}
}

/* a variable-length CDB of 32 bytes (SPC-4 4.2.3) for an unsupported
 * service action
 */
static void varlen_cdb(unsigned char *cdb)
{
	memset(cdb, 0, 32);
	cdb[0] = 0x7f;			/* VARIABLE LENGTH */
	cdb[7] = 32 - 8;		/* ADDITIONAL CDB LENGTH */
	cdb[8] = 0xff;			/* SERVICE ACTION 0xfff0 */
	cdb[9] = 0xf0;
}

static int reject_reason = -1, scsi_status = -1;
static int text_parts, text_final;

static void note_answer(const unsigned char *bhs)
{
	if (!bhs)
		return;
	if ((bhs[0] & ISDM_BHS_OPCODE_MASK) == ISDM_OP_REJECT)
		reject_reason = bhs[2];
	else if ((bhs[0] & ISDM_BHS_OPCODE_MASK) == ISDM_OP_SCSI_RSP)
		scsi_status = bhs[3];
}

/* RFC 3720 10.10: SendTargets=All, then empty continuations */
static void text_exchange(void)
{
	static const char st[] = "SendTargets=All";
	unsigned char *bhs;
	uint32_t ttt = 0xffffffff, dlen = sizeof(st);

	for (text_parts = 0; text_parts < 16; ) {
		bhs = pdu_start(ISDM_OP_TEXT_REQ, ISDM_BHS_FINAL, dlen);
		itool_put_be32(bhs + 16, 0x6000);
		itool_put_be32(bhs + 20, ttt);
		itool_put_be32(bhs + 24, cmd_sn++);
		itool_put_be32(bhs + 28, exp_stat_sn);
		if (dlen)
			memcpy(bhs + ISDM_BHS_LEN, st, dlen);
		if (send_buf(HDR + ((dlen + 3) & ~3u)))
			return;
		bhs = answer();
		if (!bhs || (bhs[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_TEXT_RSP) {
			note_answer(bhs);
			return;
		}
		text_parts++;
		if (bhs[1] & ISDM_BHS_FINAL) {
			text_final = 1;
			return;
		}
		if (!(bhs[1] & 0x40))	/* neither F nor C */
			return;
		ttt = itool_get_be32(bhs + 20);
		dlen = 0;	/* the empty continuation */
	}
}

/* A SCSI Command PDU for @mode, with its AHS; the bytes to send. */
static uint32_t scsi_pdu(enum mode mode)
{
	unsigned char *bhs, *ahs, cdb[32];
	unsigned char flags = ISDM_BHS_FINAL;
	uint32_t edtl = 0, dlen = 0, words = 0;

	varlen_cdb(cdb);
	if (mode == BIDI) {
		flags |= ISDM_BHS_CMD_READ | ISDM_BHS_CMD_WRITE;
		edtl = 4096;
	} else if (mode == IMMF1) {
		flags |= ISDM_BHS_CMD_WRITE;
		edtl = 8192;
		dlen = 4096;
	}
	bhs = pdu_start(ISDM_OP_SCSI_CMD, flags, dlen);
	ahs = bhs + ISDM_BHS_LEN;
	/* the buffer still holds the login keys there */
	memset(ahs, 0, 64);
	itool_put_be32(bhs + 16, 0x7000 + mode);
	itool_put_be32(bhs + 20, edtl);
	itool_put_be32(bhs + 24, cmd_sn++);
	itool_put_be32(bhs + 28, exp_stat_sn);
	/* TEST UNIT READY unless said otherwise */
	switch (mode) {
	case AHS0:	/* AHSLength 0, type 1 (extended CDB) */
		words = 1;
		ahs[2] = 1;
		break;
	case AHSOVER:	/* AHSLength 5: 8 bytes, in 4 */
		words = 1;
		ahs[1] = 5;
		ahs[2] = 1;
		break;
	case AHSTYPE:	/* reserved type 3 */
		words = 2;
		ahs[1] = 5;
		ahs[2] = 3;
		break;
	case AHSSHORT:	/* 17 of the 32 CDB bytes: AHSLength 2 */
		memcpy(bhs + 32, cdb, 16);
		words = 2;
		ahs[1] = 2;
		ahs[2] = 1;
		ahs[4] = cdb[16];
		break;
	case CDBLONG:
		memcpy(bhs + 32, cdb, 16);
		break;
	case ECDB:	/* RFC 3720 10.2.2.3: AHSLength = 32 - 15 */
		memcpy(bhs + 32, cdb, 16);
		words = 5;
		ahs[1] = 17;
		ahs[2] = 1;
		memcpy(ahs + 4, cdb + 16, 16);
		break;
	case BIDI:	/* RFC 3720 10.2.2.4: AHSLength 5, type 2 */
		bhs[32] = 0x53;		/* XDWRITEREAD(10) */
		bhs[40] = 8;		/* 8 blocks */
		words = 2;
		ahs[1] = 5;
		ahs[2] = 2;
		itool_put_be32(ahs + 4, 4096);
		/* fake STags: LIO refuses the command before any transfer */
		t.tx_buf[0] |= ISDM_CTRL_WSV | ISDM_CTRL_RSV;
		itool_put_be32(t.tx_buf + 4, 0x1234);
		itool_put_be32(t.tx_buf + 16, 0x5678);
		break;
	case IMMF1:	/* WRITE(10), LBA 0, 16 blocks of 512 */
		bhs[32] = 0x2a;
		bhs[40] = 16;
		memset(ahs, 0x5a, dlen);
		break;
	default:
		break;
	}
	bhs[4] = words;
	return HDR + words * 4 + dlen;
}

/* Send the PDU of @mode and note what came back. */
static void offend(enum mode mode)
{
	unsigned char *bhs, *msg;
	uint32_t len;
	int n;

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
		send_buf(TX_SIZE);
		return;
	case TEXTCONT:
		text_exchange();
		return;
	case AHSNOP:
		/* a ping with a well-formed extended-CDB AHS of 4 + 4 bytes */
		bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x5100);
		itool_put_be32(bhs + 20, 0xffffffff);
		itool_put_be32(bhs + 24, cmd_sn);
		itool_put_be32(bhs + 28, exp_stat_sn);
		bhs[4] = 2;
		memset(bhs + ISDM_BHS_LEN, 0, 8);
		bhs[ISDM_BHS_LEN + 1] = 5;
		bhs[ISDM_BHS_LEN + 2] = 1;
		if (send_buf(HDR + 8))
			return;
		for (;;) {
			n = recv_msg(&msg);
			if (n < HDR)
				return;
			bhs = msg + ISDM_HDR_LEN_EXT;
			if ((bhs[0] & ISDM_BHS_OPCODE_MASK) == ISDM_OP_NOP_IN) {
				scsi_status = -2;	/* answered */
				return;
			}
		}
	case AHS0:
	case AHSOVER:
	case AHSTYPE:
	case AHSSHORT:
	case CDBLONG:
	case ECDB:
	case BIDI:
	case IMMF1:
		len = scsi_pdu(mode);
		if (send_buf(len))
			return;
		note_answer(answer());
		return;
	default:
		return;
	}
	itool_put_be32(bhs + 24, cmd_sn);
	itool_put_be32(bhs + 28, exp_stat_sn);
	if (send_buf(HDR))
		return;
	if (mode == BADDLEN)
		return;
	note_answer(answer());
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

/* modes after which the target must have closed the connection */
static int closes(enum mode mode)
{
	switch (mode) {
	case BADDLEN:
	case BIGSEND:
	case AHS0 ... CDBLONG:
	case IMMF1:
		return 1;
	default:
		return 0;
	}
}

int main(int argc, char **argv)
{
	const char *hello_reply = "none";
	char reject[16] = "none", status[16] = "none", text[32] = "none";
	enum mode mode = NOP;
	int opt, nop_in = 0;
	unsigned int i;

	while ((opt = getopt(argc, argv, "m:n:i:")) != -1) {
		switch (opt) {
		case 'n':
			target_name = optarg;
			continue;
		case 'i':
			initiator_name = optarg;
			continue;
		case 'm':
			break;
		default:
			return 1;
		}
		for (i = 0; i < ARRAY_SIZE(mode_names); i++)
			if (!strcmp(optarg, mode_names[i]))
				break;
		if (i == ARRAY_SIZE(mode_names)) {
			fprintf(stderr, "iser_ffp: unknown mode %s\n", optarg);
			return 1;
		}
		mode = i;
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: iser_ffp [-m MODE] [-n TARGET] [-i INITIATOR] ADDR PORT\n");
		return 1;
	}
	if (connect_target(argv[optind], argv[optind + 1])) {
		fprintf(stderr, "iser_ffp: cannot connect to %s:%s (%s)\n",
			argv[optind], argv[optind + 1], strerror(errno));
		return 1;
	}
	if (login()) {
		printf("login=failed hello_reply=none reject=none nop_in=no closed=%s%s\n",
		       itool_yes_no(t.closed, "yes"), " status=none text=none");
		return 0;
	}
	if (mode == HELLO)
		hello_reply = hello();
	else if (mode != NOP)
		offend(mode);
	if (mode != BADDLEN && mode != BIGSEND)
		nop_in = ping(0x100) == 0;
	itool_cm_wait(&t, RDMA_CM_EVENT_DISCONNECTED, closes(mode) ? 5 : 1);
	if (reject_reason >= 0)
		snprintf(reject, sizeof(reject), "0x%02x", reject_reason);
	if (scsi_status >= 0)
		snprintf(status, sizeof(status), "0x%02x", scsi_status);
	else if (scsi_status == -2)
		snprintf(status, sizeof(status), "nop_in");
	if (mode == TEXTCONT)
		snprintf(text, sizeof(text), "%d/%s", text_parts,
			 text_final ? "final" : "none");
	printf("login=ok hello_reply=%s reject=%s nop_in=%s closed=%s status=%s text=%s%s\n",
	       hello_reply, reject, nop_in ? "yes" : "no",
	       t.closed ? "yes" : "no", status, text,
	       target_name ? (initial_r2t_no ? " initial_r2t=no" :
			      " initial_r2t=yes") : "");
	fflush(stdout);
	return 0;
}
