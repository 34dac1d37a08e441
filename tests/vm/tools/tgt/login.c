// SPDX-License-Identifier: GPL-2.0
/*
 * iser_tgt: the login phase. Every key iscsid offers gets the answer a
 * Linux target gives; the login cases (struct tgt_case's @login) answer
 * the first Login Request with what the initiator must refuse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tgt.h"

static uint16_t next_tsih = 1;

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

/*
 * The login cases, the answer to the Login Request @req: a Login Response
 * whose header says 1000 bytes of data segment, and carries none
 * (login-dlen), or (@nop, login-op) a NOP-In.
 */
static int login_bad(const unsigned char *req, int nop)
{
	unsigned char *bhs;

	bhs = rsp_start(nop ? ISDM_OP_NOP_IN : ISDM_OP_LOGIN_RSP, 0x81, 1000,
			itool_get_be32(req + 16), 1);
	memcpy(bhs + 8, req + 8, 6);
	if (nop)
		memset(bhs + 5, 0, 3);
	sent = 1;
	fired = 1;
	post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
	return 1;
}

int login_dlen(const unsigned char *req)
{
	return login_bad(req, 0);
}

int login_op(const unsigned char *req)
{
	return login_bad(req, 1);
}

/*
 * login-none: the Login Request gets no answer. The initiator's login
 * timer must end the connection, and its next one must log in.
 */
int login_none(const unsigned char *req)
{
	(void)req;
	sent = 1;
	fired = 1;
	return 1;
}

/*
 * login-drop: the tool disconnects instead of answering the Login
 * Request: the initiator's kernel reports the failure during the login.
 */
int login_drop(const unsigned char *req)
{
	(void)req;
	sent = 1;
	fired = 1;
	rdma_disconnect(t.id);
	return 2;
}

/* One Login Request: answer it, or do the login case. */
int login_step(const unsigned char *msg, int len)
{
	const unsigned char *req = msg + HDR_LEN;
	uint32_t dlen = itool_get_be24(req + 5), hl, off = 0, n = 0;
	unsigned char *bhs, csg = (req[1] >> 2) & 3, nsg = req[1] & 3;
	int transit = req[1] & 0x80;
	char *out, *keys;

	if ((uint32_t)len < HDR_LEN + ISDM_BHS_LEN + dlen)
		return -1;
	if (!stat_sn && !exp_cmd_sn)
		stat_sn = itool_get_be32(req + 28);
	exp_cmd_sn = itool_get_be32(req + 24);
	hl = HDR_LEN + ISDM_BHS_LEN;
	if (tcase->login)
		return tcase->login(req);
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
		if (!strncmp(kv, "InitiatorRecvDataSegmentLength=", 31) ||
		    !strncmp(kv, "MaxRecvDataSegmentLength=", 25)) {
			unsigned long v = strtoul(strchr(kv, '=') + 1, NULL, 10);

			if (v >= 512 && v < mrdsl)
				mrdsl = v & ~3ul;
		}
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
