// SPDX-License-Identifier: GPL-2.0
/*
 * iser_ffp -m random: the sessions, the pings between windows of PDUs,
 * what came back, and the summary line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ffp.h"
#include "random.h"

#define RND_WINDOW	8		/* PDUs between two pings */
#define RND_ITT_PING	0x20000000u	/* + n: the tool's pings */
#define RND_ITT_CAP	0x30000000u	/* READ CAPACITY after login */

unsigned long long seed;
unsigned long count = 10000, first_pdu;
int verbose;
unsigned char *data_buf, *verdict;
struct ibv_mr *data_mr;
uint64_t cap_blocks;
uint32_t blk_len;
static uint32_t ping_itt;
static int ping_seen, cap_done, cap_status = -1;

static struct {
	unsigned long sent, connections, closed, stalled, login_failed;
	unsigned long good_bad, bad, bad_answered, underfed_good;
	unsigned long responses, rejects, hello_replies;
} rs;

static int sn_gt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

/* -v: one line for each PDU sent */
static void rnd_show(unsigned long idx, uint32_t len)
{
	const unsigned char *h = conn.tx_buf, *bhs = h + ISDM_HDR_LEN_EXT;

	if (len < HDR) {
		printf("pdu %lu: iSER 0x%02x, %u bytes\n", idx, h[0], len);
		return;
	}
	printf("pdu %lu: iSER 0x%02x op 0x%02x flags 0x%02x ahs %u dlen %u ",
	       idx, h[0], bhs[0], bhs[1], bhs[4], itool_get_be24(bhs + 5));
	printf("itt 0x%08x f20 0x%08x sn 0x%08x/0x%08x cdb0 0x%02x lun %02x%02x\n",
	       itool_get_be32(bhs + 16), itool_get_be32(bhs + 20),
	       itool_get_be32(bhs + 24), itool_get_be32(bhs + 28), bhs[32],
	       bhs[8], bhs[9]);
}

/* what came back: sequence numbers, responses to malformed commands */
static void rnd_note(const unsigned char *msg, int len)
{
	const unsigned char *bhs = msg + ISDM_HDR_LEN_EXT;
	uint32_t itt, idx, exp;
	unsigned char op;

	if (len >= 1 && (msg[0] & ISDM_OP_MASK) == ISDM_OP_HELLO_REPLY) {
		rs.hello_replies++;
		return;
	}
	if (len < HDR)
		return;
	rs.responses++;
	op = bhs[0] & ISDM_BHS_OPCODE_MASK;
	itt = itool_get_be32(bhs + 16);
	exp = itool_get_be32(bhs + 28);
	if (op != ISDM_OP_NOP_IN || itt != 0xffffffff)
		if (sn_gt(itool_get_be32(bhs + 24) + 1, exp_stat_sn))
			exp_stat_sn = itool_get_be32(bhs + 24) + 1;
	if (sn_gt(exp, cmd_sn))
		cmd_sn = exp;
	switch (op) {
	case ISDM_OP_NOP_IN:
		if (itt == ping_itt) {
			ping_seen = 1;
			cmd_sn = exp;	/* everything before the ping is done */
		}
		break;
	case ISDM_OP_REJECT:
		rs.rejects++;
		break;
	case ISDM_OP_SCSI_RSP:
		if (itt == RND_ITT_CAP) {
			cap_status = bhs[2] ? 0x100 : bhs[3];
			cap_done = 1;
			break;
		}
		idx = itt - RND_ITT_CMD;
		if (itt < RND_ITT_CMD || idx >= first_pdu + count)
			break;
		if (verdict[idx] == V_BAD && !bhs[2] && !bhs[3]) {
			rs.good_bad++;
			fprintf(stderr, "iser_ffp: PDU %u (ITT 0x%08x): %s\n",
				idx, itt, "malformed, got status GOOD");
		} else if (verdict[idx] == V_BAD) {
			rs.bad_answered++;
		} else if (verdict[idx] == V_UNDERFED && !bhs[2] && !bhs[3]) {
			rs.underfed_good++;
		}
		break;
	default:
		break;
	}
}

/* what came in during the last Send */
static void rnd_drain(void)
{
	unsigned char *msg;
	int len;

	while (conn.nr_stashed) {
		len = itool_recv(&conn, &msg, 0.001);
		if (len >= 0)
			rnd_note(msg, len);
	}
}

/* wait until @done is set by rnd_note(); 0 when it was */
static int rnd_wait(const int *done, double secs)
{
	double end = itool_now() + secs;
	unsigned char *msg;
	int len;

	while (!*done && itool_now() < end) {
		len = itool_recv(&conn, &msg, end - itool_now());
		if (len < 0)
			break;
		rnd_note(msg, len);
	}
	return *done ? 0 : -1;
}

/* an immediate ping; 0 when the NOP-In came, so all before it was read */
static int rnd_ping(void)
{
	static uint32_t seq;
	unsigned char *bhs;

	ping_itt = RND_ITT_PING + (seq++ & 0x0fffffff);
	ping_seen = 0;
	bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE, ISDM_BHS_FINAL, 0);
	itool_put_be32(bhs + 16, ping_itt);
	itool_put_be32(bhs + 20, 0xffffffff);
	itool_put_be32(bhs + 24, cmd_sn);
	itool_put_be32(bhs + 28, exp_stat_sn);
	if (send_buf(HDR))
		return -1;
	rnd_drain();
	return rnd_wait(&ping_seen, WAIT_SEC);
}

/* READ CAPACITY (10) into the data buffer: the LUN's size */
static int rnd_capacity(void)
{
	unsigned char *bhs;

	cap_status = -1;
	cap_done = 0;
	bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_FINAL | ISDM_BHS_CMD_READ, 0);
	itool_put_be32(bhs + 16, RND_ITT_CAP);
	itool_put_be32(bhs + 20, 8);
	itool_put_be32(bhs + 24, cmd_sn++);
	itool_put_be32(bhs + 28, exp_stat_sn);
	memset(bhs + 32, 0, 16);
	bhs[32] = 0x25;
	conn.tx_buf[0] |= ISDM_CTRL_RSV;
	itool_put_be32(conn.tx_buf + 16, data_mr->rkey);
	itool_put_be32(conn.tx_buf + 20, (uint64_t)(uintptr_t)data_buf >> 32);
	itool_put_be32(conn.tx_buf + 24, (uintptr_t)data_buf);
	memset(data_buf, 0, 8);
	if (send_buf(HDR))
		return -1;
	rnd_drain();
	if (rnd_wait(&cap_done, WAIT_SEC) || cap_status)
		return -1;
	cap_blocks = (uint64_t)itool_get_be32(data_buf) + 1;
	blk_len = itool_get_be32(data_buf + 4);
	return blk_len ? 0 : -1;
}

/*
 * Did the target's QP refuse the Send just made (a NAK: a Send larger
 * than its receive buffer, say)? Then the PDU reached the target, which
 * closes the connection for it: it counts as sent. Sent again on the next
 * connection it would close that one too, for ever.
 */
static int rnd_refused(void)
{
	switch (conn.send_status) {
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_OP_ERR:
		return 1;
	default:
		return 0;
	}
}

/* the connection goes; the MR the STags named with it */
static void rnd_hangup(void)
{
	ffp_disconnect();
	if (data_mr)
		ibv_dereg_mr(data_mr);
	data_mr = NULL;
	ffp_release();
}

/* a new connection and session; 0 when it is in full feature phase */
static int rnd_session(const char *addr, const char *port)
{
	static uint16_t sessions;

	/*
	 * A new ISID for each session: a login with the ISID of a session
	 * whose connection LIO is still closing reinstates it, and with
	 * DefaultTime2Retain 0 LIO then may close the old session from its
	 * Time2Retain timer, whose handler takes a mutex in softirq context
	 * (iscsit_close_session() -> transport_deregister_session(); 6.1
	 * and 6.12, with any transport: the debug kernel reports "sleeping
	 * function called from invalid context"). Reinstatement during a
	 * teardown is the business of the other modes (cmdsngap, afterfail,
	 * gapreset, dropmid).
	 */
	isid_qualifier = 0x100 + (sessions++ & 0x7fff);
	cmd_sn = 0;
	exp_stat_sn = 0;
	if (connect_target(addr, port) || login())
		return -1;
	/* a page more than the STags name: see big_setup() (6.1's rxe) */
	data_mr = ibv_reg_mr(conn.pd, data_buf, RND_DATA + 4096,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			     IBV_ACCESS_REMOTE_WRITE);
	if (!data_mr)
		return -1;
	if (!cap_blocks && rnd_capacity()) {
		fprintf(stderr, "iser_ffp: READ CAPACITY failed (status 0x%x)\n",
			cap_status);
		return -1;
	}
	return 0;
}

/*
 * -m random: COUNT PDUs of the sequence SEED over as many connections as
 * it takes. 0 when it ran (the summary line judges), 1 on a local error.
 */
int random_run(const char *addr, const char *port)
{
	unsigned long idx = first_pdu, end = first_pdu + count;
	unsigned int in_flight, fails = 0;
	uint32_t saved_cmd_sn;
	int hello, down, lost;
	uint32_t len;

	data_buf = aligned_alloc(4096, RND_DATA + 4096);
	verdict = calloc(end + 1, 1);
	if (!data_buf || !verdict || end >= 0x0fffffff)
		return 1;
	nr_rx = ITOOL_MAX_RX;
	printf("random seed=%llu first=%lu count=%lu ", seed, first_pdu, count);
	printf("(replay: iser_ffp -m random -s %llu -F %lu -N %lu)\n",
	       seed, first_pdu, count);
	fflush(stdout);
	while (idx < end) {
		if (rnd_session(addr, port)) {
			rs.login_failed++;
			rnd_hangup();
			if (!cap_blocks && rs.connections == 0 && fails > 2)
				return 1;
			if (++fails >= 10)
				break;
			sleep(1);
			continue;
		}
		fails = 0;
		rs.connections++;
		in_flight = 0;
		down = 0;
		lost = 0;
		while (idx < end && !down) {
			saved_cmd_sn = cmd_sn;
			len = rnd_pdu(idx, &hello);
			if (send_buf(len) && !rnd_refused()) {
				/* the connection went: this PDU again, next one */
				cmd_sn = saved_cmd_sn;
				down = 1;
				lost = 1;
				break;
			}
			if (verbose)
				rnd_show(idx, len);
			rs.sent++;
			rs.bad += verdict[idx++] == V_BAD;
			rnd_drain();
			if (++in_flight < RND_WINDOW && idx < end && !conn.closed)
				continue;
			in_flight = 0;
			down = rnd_ping() != 0;
		}
		if (down && !conn.closed)
			itool_cm_wait(&conn, RDMA_CM_EVENT_DISCONNECTED, 2);
		if (down && !conn.closed && !lost) {
			/* up, but no answer to a ping within WAIT_SEC */
			rs.stalled++;
			fprintf(stderr, "iser_ffp: no answer to a ping after PDU %lu\n",
				idx - 1);
		} else if (down) {
			rs.closed++;
		}
		rnd_hangup();
	}
	printf("random seed=%llu sent=%lu connections=%lu good_status_on_bad=%lu ",
	       seed, rs.sent, rs.connections, rs.good_bad);
	printf("closed=%lu stalled=%lu login_failed=%lu bad_cmds=%lu ",
	       rs.closed, rs.stalled, rs.login_failed, rs.bad);
	printf("bad_answered=%lu underfed_good=%lu responses=%lu rejects=%lu ",
	       rs.bad_answered, rs.underfed_good, rs.responses, rs.rejects);
	printf("hello_replies=%lu\n", rs.hello_replies);
	fflush(stdout);
	return 0;
}
