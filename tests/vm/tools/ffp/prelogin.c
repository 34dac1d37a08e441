// SPDX-License-Identifier: GPL-2.0
/*
 * iser_ffp: connections that never finish their login. Login Requests cut
 * short (shortlogin), a second request while the first response waits
 * in RNR retry (loginrace), and a login left silent (loginstall,
 * loginrnr).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ffp.h"

#define SHORT_WAIT	10	/* shortlogin: for the close */

/*
 * -m shortlogin: per length 1..75, a connection whose first message is the
 * start of a Login Request (iSER header and BHS, 76 bytes) cut to that
 * length; the target must close it without an answer.
 */
void short_login(const char *addr, const char *port)
{
	unsigned int len, closed = 0, answered = 0, no_conn = 0, unsent = 0;
	unsigned int rejected = 0;
	char open_lens[400] = "", slow[400] = "";
	size_t on = 0, sn = 0;
	unsigned char *bhs, *msg;
	double start, took, slowest = 0;

	for (len = 1; len < HDR; len++) {
		memset(&conn, 0, sizeof(conn));
		if (connect_target(addr, port)) {
			no_conn++;
			ffp_hangup();
			continue;
		}
		/* Transit, CSG operational (1), NSG full feature (3) */
		bhs = pdu_start(ISDM_OP_LOGIN_REQ | ISDM_BHS_IMMEDIATE, 0x87, 0);
		bhs[8] = 0x80;
		bhs[13] = 0x2b;
		itool_put_be32(bhs + 16, 0x1000 + len);	/* ITT */
		start = itool_now();
		if (send_buf(len))
			unsent++;
		if (itool_recv(&conn, &msg, SHORT_WAIT) >= 0)
			answered++;
		took = itool_now() - start;
		if (!conn.closed && took < SHORT_WAIT)
			itool_cm_wait(&conn, RDMA_CM_EVENT_DISCONNECTED,
				      SHORT_WAIT - took);
		took = itool_now() - start;
		if (conn.closed) {
			closed++;
			rejected += conn.rejected;
			if (took > slowest)
				slowest = took;
			if (took >= 1 && sn < sizeof(slow) - 16)
				sn += snprintf(slow + sn, sizeof(slow) - sn,
					       "%s%u:%u.%u", sn ? "," : "", len,
					       (unsigned int)took % 100,
					       (unsigned int)(took * 10) % 10);
		} else if (on < sizeof(open_lens) - 8) {
			on += snprintf(open_lens + on, sizeof(open_lens) - on,
				       "%s%u", on ? "," : "", len);
		}
		ffp_hangup();
	}
	printf("shortlogin lengths=1-%u closed=%u answered=%u unsent=%u",
	       (unsigned int)HDR - 1, closed, answered, unsent);
	printf(" no_connection=%u slowest=%.1f slow=%s open=%s rejected=%u\n",
	       no_conn, slowest, sn ? slow : "none", on ? open_lens : "none",
	       rejected);
}

/* the stage bits of a Login Response in @msg (@len bytes), or "none" */
static const char *login_stages(const unsigned char *msg, int len)
{
	static char buf[2][32];
	static int n;
	const unsigned char *bhs;
	char *b = buf[n++ & 1];

	if (len < HDR)
		return "none";
	bhs = msg + ISDM_HDR_LEN_EXT;
	if ((bhs[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_LOGIN_RSP)
		return "none";
	snprintf(b, sizeof(buf[0]), "%u%s%u/%u", (bhs[1] >> 2) & 3,
		 bhs[1] & 0x80 ? ">" : "-", bhs[1] & 3, bhs[36]);
	return b;
}

/*
 * A Login Request of these modes' session (ISID qualifier 0x2c, ITT
 * 0x1000) with stage bits @flags, the text @keys (@dlen bytes) and
 * ExpStatSN @exp_stat; 0 once sent
 */
static int send_login_req(unsigned char flags, const char *keys,
			  uint32_t dlen, uint32_t exp_stat)
{
	unsigned char *bhs;

	bhs = pdu_start(ISDM_OP_LOGIN_REQ | ISDM_BHS_IMMEDIATE, flags, dlen);
	bhs[8] = 0x80;
	bhs[13] = 0x2c;
	itool_put_be32(bhs + 16, 0x1000);
	itool_put_be32(bhs + 28, exp_stat);
	memcpy(bhs + ISDM_BHS_LEN, keys, dlen);
	return send_buf(HDR + ((dlen + 3) & ~3u));
}

/*
 * The first Login Request of a connection, for the security stage
 * (AuthMethod=None, T to the operational stage): of a normal session with
 * @target, or of a discovery session when @target is NULL. 0 once sent.
 */
static int send_security_login(const char *target)
{
	static char keys[512];
	uint32_t dlen = 0;

	dlen = add_key(keys, dlen, "InitiatorName", initiator_name);
	if (target) {
		dlen = add_key(keys, dlen, "SessionType", "Normal");
		dlen = add_key(keys, dlen, "TargetName", target);
	} else {
		dlen = add_key(keys, dlen, "SessionType", "Discovery");
	}
	dlen = add_key(keys, dlen, "AuthMethod", "None");
	/* Transit, CSG security (0), NSG operational (1) */
	return send_login_req(0x81, keys, dlen, 0);
}

/*
 * -m loginrace (discovery): a Login Request for the security stage, then,
 * while its Login Response still waits in RNR retry (no receive buffer is
 * posted yet), the Login Request for the operational stage; then the
 * receive buffers. Each response must arrive as it was sent: the first
 * with CSG 0 (security) and NSG 1, the second CSG 1 and NSG 3.
 */
void login_race(const char *addr, const char *port)
{
	static char keys[512];
	const char *first = "none", *second = "none";
	unsigned char *msg = NULL;
	uint32_t dlen;
	int i, len;

	memset(&conn, 0, sizeof(conn));
	conn.rx_later = 1;
	if (connect_target(addr, port)) {
		printf("loginrace connected=no\n");
		return;
	}
	if (send_security_login(NULL))
		goto out;
	/* the target answers it: that Send waits for a receive buffer */
	sleep(1);
	dlen = add_iser_keys(keys, 0);
	/* Transit, CSG operational (1), NSG full feature (3) */
	if (send_login_req(0x87, keys, dlen, 1))
		goto out;
	sleep(1);
	for (i = 0; i < conn.nr_rx; i++)
		if (itool_post_rx(&conn, i))
			goto out;
	len = recv_msg(&msg);
	first = login_stages(msg, len);
	if (len >= HDR) {
		len = recv_msg(&msg);
		second = login_stages(msg, len);
	}
out:
	printf("loginrace first=%s second=%s closed=%s\n", first, second,
	       itool_yes_no(conn.closed, "yes"));
	ffp_hangup();
}

/*
 * -m loginstall: the Login Request for the security stage, its Login
 * Response, then nothing more. A target that waits for the next
 * Login Request for ever keeps an unauthenticated connection, and LIO's
 * half-done login with it, as long as the peer likes.
 */
void login_stall(const char *addr, const char *port, int hold, int rnr)
{
	const char *first = "none";
	unsigned char *msg = NULL;
	double start = itool_now();
	int len;

	memset(&conn, 0, sizeof(conn));
	conn.rx_later = rnr;
	if (connect_target(addr, port)) {
		printf("%s connected=no\n", rnr ? "loginrnr" : "loginstall");
		return;
	}
	if (send_security_login(target_name))
		goto out;
	if (!rnr) {
		len = recv_msg(&msg);
		first = login_stages(msg, len);
	}
	start = itool_now();
	while (!conn.closed && itool_now() < start + hold)
		itool_cm_wait(&conn, RDMA_CM_EVENT_DISCONNECTED, 1);
out:
	if (rnr)
		printf("loginrnr closed_by_target=%s\n",
		       itool_yes_no(conn.closed, "yes"));
	else
		printf("loginstall first=%s closed=%s after=%.0f\n", first,
		       itool_yes_no(conn.closed, "yes"), itool_now() - start);
	ffp_hangup();
}
