// SPDX-License-Identifier: GPL-2.0
/*
 * iser_ffp: connecting to the target, logging in, pings and answers.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffp.h"

struct itool conn;
uint32_t cmd_sn, exp_stat_sn;
const char *target_name;
const char *initiator_name = "iqn.2004-10.org.debian:iser-vm-ffp";
int initial_r2t_no;
int nr_rx = NR_RX;
int reject_reason = -1, scsi_status = -1;

int connect_target(const char *addr, const char *port)
{
	struct addrinfo *ai, hints = { .ai_socktype = SOCK_STREAM };
	struct rdma_conn_param cp = {};
	struct isdm_cm_req req = { .flags = ISDM_CM_ZBVA_EXC };

	/* its data buffer is a plain MR, which Send with Invalidate fails */
	if (nr_rx == ITOOL_MAX_RX)
		req.flags |= ISDM_CM_SIE_EXC;

	if (getaddrinfo(addr, port, &hints, &ai))
		return -1;
	conn.ch = rdma_create_event_channel();
	if (!conn.ch || rdma_create_id(conn.ch, &conn.id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(conn.id, NULL, ai->ai_addr, 2000) ||
	    itool_cm_wait(&conn, RDMA_CM_EVENT_ADDR_RESOLVED, 5) ||
	    rdma_resolve_route(conn.id, 2000) ||
	    itool_cm_wait(&conn, RDMA_CM_EVENT_ROUTE_RESOLVED, 5))
		return -1;
	freeaddrinfo(ai);
	if (itool_verbs_init(&conn, nr_rx, RX_SIZE, TX_SIZE))
		return -1;
	cp.initiator_depth = 1;
	cp.responder_resources = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	cp.private_data = &req;
	cp.private_data_len = sizeof(req);
	if (rdma_connect(conn.id, &cp))
		return -1;
	return itool_cm_wait(&conn, RDMA_CM_EVENT_ESTABLISHED, 10);
}

/* "key=value\0" into @buf at @len; the new length */
size_t add_key(char *buf, size_t len, const char *key, const char *val)
{
	return len + sprintf(buf + len, "%s=%s", key, val) + 1;
}

/*
 * The operational keys every login of the tool offers for iSER (no
 * digests, RDMAExtensions, 8 KiB data segments, no unexpected PDUs)
 * into @buf at @len; the new length
 */
size_t add_iser_keys(char *buf, size_t len)
{
	len = add_key(buf, len, "HeaderDigest", "None");
	len = add_key(buf, len, "DataDigest", "None");
	len = add_key(buf, len, "RDMAExtensions", "Yes");
	len = add_key(buf, len, "InitiatorRecvDataSegmentLength", "8192");
	len = add_key(buf, len, "TargetRecvDataSegmentLength", "8192");
	return add_key(buf, len, "MaxOutstandingUnexpectedPDUs", "0");
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

int login_send_only;	/* dropmid: send the first request, return */
/* -T: as open-iscsi, 0 unless asked (LIO keeps a failed session that long) */
const char *time2retain = "0";
/* the ISID's qualifier (its last two bytes): random mode's own per session */
uint16_t isid_qualifier = 0x2a;
/* addconn: the TSIH the target gave; the TSIH and CID a login sends */
uint16_t session_tsih, login_tsih, login_cid;

int login(void)
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
		dlen = add_key(keys, dlen, "DefaultTime2Retain", time2retain);
		dlen = add_key(keys, dlen, "MaxOutstandingR2T", "1");
	} else {
		dlen = add_key(keys, dlen, "SessionType", "Discovery");
	}
	dlen = add_iser_keys(keys, dlen);

	for (round = 0; round < 4; round++) {
		/* Transit, CSG operational (1), NSG full feature (3) */
		bhs = pdu_start(ISDM_OP_LOGIN_REQ | ISDM_BHS_IMMEDIATE, 0x87,
				dlen);
		bhs[8] = 0x80;		/* ISID: random type */
		bhs[12] = isid_qualifier >> 8;
		bhs[13] = isid_qualifier & 0xff;
		bhs[14] = login_tsih >> 8;
		bhs[15] = login_tsih & 0xff;
		itool_put_be32(bhs + 16, 0x1000);	/* ITT */
		bhs[20] = login_cid >> 8;
		bhs[21] = login_cid & 0xff;
		itool_put_be32(bhs + 28, exp_stat_sn);
		memcpy(bhs + ISDM_BHS_LEN, keys, dlen);
		if (send_buf(HDR + ((dlen + 3) & ~3u)))
			return -1;
		if (login_send_only)
			return 0;
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
		if ((rsp[1] & 0x83) == 0x83) {
			session_tsih = rsp[14] << 8 | rsp[15];
			return 0;
		}
		/* accept what the target proposed: echo its keys back */
		dlen = echo_proposals(keys, sizeof(keys), rsp + ISDM_BHS_LEN,
				      rlen);
	}
	fprintf(stderr, "iser_ffp: the target did not transit to full feature phase\n");
	return -1;
}

/* A NOP-Out ping; 0 when the matching NOP-In came back. */
int ping(uint32_t itt)
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
unsigned char *answer(void)
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

void note_answer(const unsigned char *bhs)
{
	if (!bhs)
		return;
	if ((bhs[0] & ISDM_BHS_OPCODE_MASK) == ISDM_OP_REJECT)
		reject_reason = bhs[2];
	else if ((bhs[0] & ISDM_BHS_OPCODE_MASK) == ISDM_OP_SCSI_RSP)
		scsi_status = bhs[3];
}

/* disconnect @conn, if it is up, and wait a little for the close */
void ffp_disconnect(void)
{
	if (conn.id && !conn.closed) {
		rdma_disconnect(conn.id);
		itool_cm_wait(&conn, RDMA_CM_EVENT_DISCONNECTED, 2);
	}
}

/* free @conn's verbs objects and cm id, and clear it for the next one */
void ffp_release(void)
{
	itool_verbs_destroy(&conn);
	if (conn.ch)
		rdma_destroy_event_channel(conn.ch);
	memset(&conn, 0, sizeof(conn));
}

/* the end of @conn: disconnect, then release */
void ffp_hangup(void)
{
	ffp_disconnect();
	ffp_release();
}

/* a status for a summary line: "none" when @v < 0, else 0xVV */
void status_str(char *buf, size_t size, int v)
{
	if (v < 0)
		snprintf(buf, size, "none");
	else
		snprintf(buf, size, "0x%02x", v);
}
