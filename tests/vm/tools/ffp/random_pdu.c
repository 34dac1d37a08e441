// SPDX-License-Identifier: GPL-2.0
/*
 * iser_ffp -m random: drawing PDU i of a sequence from its own PRNG state.
 */
#include <stdio.h>
#include <string.h>

#include "ffp.h"
#include "random.h"

#define RND_MAX_DATA	8192		/* the target's RecvDataSegmentLength */
#define RND_RING	8		/* recent writes Data-Out may follow */

static uint32_t last_ok_itt = RND_ITT_CMD;

/* the recent WRITEs a Data-Out may follow */
static struct {
	uint32_t itt, edtl, next, datasn;
} ring[RND_RING];
static unsigned int ring_n;

/* an ITT for a PDU other than a SCSI Command: never one of the tool's */
static uint32_t rnd_itt(void)
{
	uint32_t itt = (uint32_t)rnd64();

	if (pct(10))
		return 0xffffffff;
	if ((itt >> 28) >= 1 && (itt >> 28) <= 3)
		itt |= 0x40000000;
	return itt;
}

/* CmdSN: mostly the expected one; *@exact says whether it is */
static uint32_t rnd_cmdsn(int *exact)
{
	uint32_t r = rnd(100);

	*exact = r < 80;
	if (r < 80)
		return cmd_sn;
	if (r < 88)
		return cmd_sn + 1 + rnd(6);
	if (r < 93)
		return cmd_sn - 1 - rnd(6);
	return (uint32_t)rnd64();
}

static uint32_t rnd_expstatsn(void)
{
	uint32_t r = rnd(100);

	if (r < 85)
		return exp_stat_sn;
	if (r < 93)
		return exp_stat_sn + rnd(11) - 5;
	return (uint32_t)rnd64();
}

/* LUN field (bytes 8-15): mostly LUN 0 */
static void rnd_lun(unsigned char *bhs)
{
	unsigned int i;

	if (pct(92))
		return;
	if (pct(50)) {
		bhs[9] = rnd(256);
		return;
	}
	for (i = 8; i < 16; i++)
		bhs[i] = rnd(256);
}

static int lun0(const unsigned char *bhs)
{
	static const unsigned char zero[8];

	return !memcmp(bhs + 8, zero, 8);
}

/* random bytes of a data segment, its padding zero */
static void rnd_fill(unsigned char *p, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = rnd(256);
	memset(p + len, 0, ((len + 3) & ~3u) - len);
}

/*
 * A Read or a Write STag (and VA) for @len bytes in the iSER header: mostly
 * inside the registered data buffer, sometimes random (the target's RDMA to
 * it must fail and the connection with it).
 */
static void rnd_stag(int write, uint32_t len)
{
	unsigned char *h = conn.tx_buf;
	uint64_t va = (uintptr_t)data_buf;
	uint32_t stag = data_mr->rkey;

	if (len < RND_DATA)
		va += (uint64_t)rnd((RND_DATA - len) / 512 + 1) * 512;
	if (pct(4)) {
		stag = (uint32_t)rnd64();
		va = rnd64();
	}
	h[0] |= write ? ISDM_CTRL_WSV : ISDM_CTRL_RSV;
	itool_put_be32(h + (write ? 4 : 16), stag);
	itool_put_be32(h + (write ? 8 : 20), va >> 32);
	itool_put_be32(h + (write ? 12 : 24), va);
}

/* SCSI opcodes a random CDB avoids: they would outlive the run */
static int rnd_cdb_ok(unsigned char op)
{
	switch (op) {
	case 0x16: case 0x56:	/* RESERVE */
	case 0x5f:		/* PERSISTENT RESERVE OUT */
	case 0xa4:		/* MAINTENANCE OUT (SET TARGET PORT GROUPS) */
	case 0x83:		/* EXTENDED COPY */
		return 0;
	default:
		return 1;
	}
}

/* the CDB of a READ or WRITE(10) of PDU @idx: 1 when it is out of range */
static int rnd_rw10(unsigned char *cdb, int write, uint32_t *n)
{
	uint64_t lba;
	uint32_t r = rnd(100);

	*n = r < 5 ? 0 : r < 92 ? 1 + rnd(64) : rnd(65536);
	r = rnd(100);
	if (r < 70 && cap_blocks >= *n)
		lba = rnd64() % (cap_blocks - *n + 1);
	else if (r < 90)	/* just past the end */
		lba = cap_blocks + rnd(8) - (*n < cap_blocks ? *n : 0);
	else
		lba = (uint32_t)rnd64();
	lba &= 0xffffffff;
	memset(cdb, 0, 16);
	cdb[0] = write ? 0x2a : 0x28;
	if (pct(5))
		cdb[1] = rnd(256);
	itool_put_be32(cdb + 2, lba);
	cdb[7] = *n >> 8;
	cdb[8] = *n;
	return *n && lba + *n > cap_blocks;
}

/* a SCSI Command with its AHS and immediate data; the bytes of the Send */
static uint32_t rnd_scsi(unsigned long idx, unsigned char *bhs, int *exact)
{
	static const unsigned char rd_ops[] = { 0x00, 0x12, 0x25, 0x1a, 0xa0, 0x03 };
	unsigned char *cdb = bhs + 32, *ahs = bhs + ISDM_BHS_LEN;
	uint32_t edtl = 0, dlen = 0, words = 0, n = 0, unsol, itt, i;
	unsigned int kind = rnd(100), ak = rnd(100);
	int oor = 0, rw = 0, write = 0, reuse = pct(3);
	unsigned char flags;

	memset(conn.tx_buf, 0, HDR);
	conn.tx_buf[0] = ISDM_OP_CTRL;
	if (kind < 70) {	/* READ(10), WRITE(10) */
		write = kind >= 35;
		oor = rnd_rw10(cdb, write, &n);
		edtl = n * blk_len;
		if (pct(20))
			edtl = pct(30) ? 0 : pct(50) ? rnd(edtl + 1) : rnd(1 << 20);
		rw = write ? ISDM_BHS_CMD_WRITE : ISDM_BHS_CMD_READ;
	} else if (kind < 85) {	/* commands that return data */
		cdb[0] = rd_ops[rnd(ARRAY_SIZE(rd_ops))];
		edtl = cdb[0] ? 1 + rnd(255) : 0;
		if (cdb[0] == 0xa0)
			itool_put_be32(cdb + 6, edtl);
		else if (cdb[0] == 0x25)
			edtl = 8;
		else if (cdb[0])
			cdb[4] = edtl;
		if (cdb[0] == 0x12 && pct(30)) {
			cdb[1] = 1;		/* EVPD */
			cdb[2] = pct(70) ? rnd(4) * 0x80 + (pct(50) ? 0x03 : 0) : rnd(256);
		}
		rw = edtl ? ISDM_BHS_CMD_READ : 0;
	} else {		/* anything */
		do
			cdb[0] = rnd(256);
		while (!rnd_cdb_ok(cdb[0]));
		for (i = 1; i < 16; i++)
			cdb[i] = pct(50) ? 0 : rnd(256);
		rw = pct(40) ? ISDM_BHS_CMD_READ : pct(50) ? ISDM_BHS_CMD_WRITE : 0;
		edtl = rw ? rnd(65537) : 0;
	}
	if (pct(8))		/* directions that need not match */
		rw = rnd(4) << 5;
	if (!(rw & ISDM_BHS_CMD_WRITE))
		write = 0;
	flags = rw | rnd(8);	/* ATTR */
	if (pct(92))
		flags |= ISDM_BHS_FINAL;
	if ((rw & ISDM_BHS_CMD_WRITE) && edtl && pct(50))
		dlen = 1 + rnd(edtl < RND_MAX_DATA ? edtl : RND_MAX_DATA);
	else if (pct(2))
		dlen = rnd(RND_MAX_DATA + 1);	/* data on a command without W */

	/* AHS: mostly none, sometimes well-formed, sometimes not */
	memset(ahs, 0, 64);
	if (ak < 4) {		/* 32-byte variable-length CDB, AHSLength 17 */
		cdb[0] = 0x7f;
		cdb[7] = 24;
		words = 5;
		ahs[1] = 17;
		ahs[2] = 1;
		for (i = 4; i < 20; i++)
			ahs[i] = rnd(256);
	} else if (ak < 6) {	/* bidirectional read length, R and W */
		rw = ISDM_BHS_CMD_READ | ISDM_BHS_CMD_WRITE;
		flags |= rw;
		words = 2;
		ahs[1] = 5;
		ahs[2] = 2;
		itool_put_be32(ahs + 4, rnd(65537));
	} else if (ak < 8) {	/* anything */
		words = 1 + rnd(4);
		for (i = 0; i < words * 4; i++)
			ahs[i] = pct(50) ? 0 : rnd(256);
	}
	if (dlen > RND_MAX_DATA - words * 4)
		dlen = RND_MAX_DATA - words * 4;

	/* the stored login keys are still in the buffer: header again */
	bhs[0] = ISDM_OP_SCSI_CMD | (pct(10) ? ISDM_BHS_IMMEDIATE : 0);
	bhs[1] = flags;
	bhs[4] = words;
	bhs[5] = dlen >> 16;
	bhs[6] = dlen >> 8;
	bhs[7] = dlen;
	rnd_lun(bhs);
	itt = reuse ? last_ok_itt : RND_ITT_CMD + (uint32_t)idx;
	itool_put_be32(bhs + 16, itt);
	itool_put_be32(bhs + 20, edtl);
	itool_put_be32(bhs + 24, rnd_cmdsn(exact));
	itool_put_be32(bhs + 28, rnd_expstatsn());
	rnd_fill(ahs + words * 4, dlen);

	/* STags: what the command needs, mostly; sometimes too much or little */
	unsol = dlen;
	if (initial_r2t_no && !(flags & ISDM_BHS_FINAL))
		unsol = edtl < 65536 ? edtl : 65536;
	if ((rw & ISDM_BHS_CMD_READ) && (edtl || pct(5)) && pct(97))
		rnd_stag(0, edtl);
	if ((rw & ISDM_BHS_CMD_WRITE) && (edtl > unsol || pct(5)) && pct(97))
		rnd_stag(1, edtl);
	if (pct(2))
		rnd_stag(pct(50), edtl);

	if (write && !reuse) {
		i = ring_n++ % RND_RING;
		ring[i].itt = itt;
		ring[i].edtl = edtl;
		ring[i].next = dlen;
		ring[i].datasn = 0;
	}
	/* what must not get GOOD: see the header comment */
	if (!reuse && lun0(bhs) && (cdb[0] == 0x28 || cdb[0] == 0x2a)) {
		if (oor)
			verdict[idx] = V_BAD;
		else if (cdb[0] == 0x2a && n && (!write || edtl < n * blk_len))
			verdict[idx] = V_UNDERFED;
	}
	if (verdict[idx] != V_BAD)
		last_ok_itt = itt;
	return HDR + words * 4 + ((dlen + 3) & ~3u);
}

/* Data-Out: mostly for a recent write, at the offset it is at */
static uint32_t rnd_data_out(unsigned long idx)
{
	unsigned char *bhs;
	uint32_t dlen, off, sn, itt, ttt = 0xffffffff;
	unsigned int i;

	if (ring_n && pct(75)) {
		i = rnd(ring_n < RND_RING ? ring_n : RND_RING);
		itt = ring[i].itt;
		off = pct(85) ? ring[i].next : rnd(ring[i].edtl + 8192);
		dlen = ring[i].edtl > off ? ring[i].edtl - off : 0;
		if (dlen > RND_MAX_DATA || pct(10))
			dlen = 1 + rnd(RND_MAX_DATA);
		sn = pct(90) ? ring[i].datasn : rnd(8);
		ring[i].next = off + dlen;
		ring[i].datasn++;
	} else {
		itt = pct(30) ? rnd_itt() : RND_ITT_CMD + rnd(idx + 1);
		off = rnd(1 << 20);
		dlen = rnd(RND_MAX_DATA + 1);
		sn = rnd(8);
	}
	if (pct(8))
		ttt = (uint32_t)rnd64();
	bhs = pdu_start(ISDM_OP_DATA_OUT, pct(70) ? ISDM_BHS_FINAL : 0, dlen);
	rnd_lun(bhs);
	itool_put_be32(bhs + 16, itt);
	itool_put_be32(bhs + 20, ttt);
	itool_put_be32(bhs + 28, rnd_expstatsn());
	itool_put_be32(bhs + 36, sn);
	itool_put_be32(bhs + 40, off);
	rnd_fill(bhs + ISDM_BHS_LEN, dlen);
	return HDR + ((dlen + 3) & ~3u);
}

static const char *const rnd_texts[] = {
	"SendTargets=All", "SendTargets=", "MaxRecvDataSegmentLength=4096",
	"X-org.example.key=1", "HeaderDigest=CRC32C", "TargetAlias=x",
	"=", "NoSuchKey",
};

/*
 * PDU @idx of the sequence in conn.tx_buf: the bytes of its Send. *@hello is
 * set for an iSER Hello.
 */
uint32_t rnd_pdu(unsigned long idx, int *hello)
{
	unsigned char *bhs = conn.tx_buf + ISDM_HDR_LEN_EXT, op;
	uint32_t dlen = 0, len, r, i, words = 0;
	int exact = 0, consumes = 0;
	const char *s;

	itool_rng = itool_rnd_mix(seed ^ itool_rnd_mix(idx));
	*hello = 0;
	r = rnd(1000);
	if (r < 545) {
		len = rnd_scsi(idx, bhs, &exact);
		consumes = 1;
	} else if (r < 695) {
		len = rnd_data_out(idx);
	} else if (r < 835) {	/* NOP-Out */
		dlen = pct(75) ? 0 : rnd(pct(80) ? 1025 : RND_MAX_DATA + 1);
		bhs = pdu_start(ISDM_OP_NOP_OUT | (pct(70) ? ISDM_BHS_IMMEDIATE : 0),
				pct(95) ? ISDM_BHS_FINAL : rnd(256), dlen);
		rnd_lun(bhs);
		itool_put_be32(bhs + 16, rnd_itt());
		itool_put_be32(bhs + 20, pct(90) ? 0xffffffff : (uint32_t)rnd64());
		rnd_fill(bhs + ISDM_BHS_LEN, dlen);
		consumes = 1;
	} else if (r < 895) {	/* Task Management */
		bhs = pdu_start(ISDM_OP_TMF_REQ | (pct(80) ? ISDM_BHS_IMMEDIATE : 0),
				ISDM_BHS_FINAL | (pct(95) ? 1 + rnd(8) : rnd(128)), 0);
		rnd_lun(bhs);
		itool_put_be32(bhs + 16, rnd_itt());
		itool_put_be32(bhs + 20, pct(60) ? RND_ITT_CMD + (uint32_t)idx - rnd(24) :
			       (uint32_t)rnd64());
		itool_put_be32(bhs + 32, cmd_sn - rnd(10));
		itool_put_be32(bhs + 36, rnd(4));
		consumes = 1;
	} else if (r < 955) {	/* Text */
		if (pct(60)) {
			s = rnd_texts[rnd(ARRAY_SIZE(rnd_texts))];
			dlen = strlen(s) + (pct(90) ? 1 : 0);
		} else {
			dlen = pct(20) ? 0 : rnd(512);
			s = NULL;
		}
		bhs = pdu_start(ISDM_OP_TEXT_REQ | (pct(30) ? ISDM_BHS_IMMEDIATE : 0),
				(pct(85) ? ISDM_BHS_FINAL : 0) | (pct(5) ? 0x40 : 0),
				dlen);
		itool_put_be32(bhs + 16, rnd_itt());
		itool_put_be32(bhs + 20, pct(92) ? 0xffffffff : (uint32_t)rnd64());
		if (s)
			memcpy(bhs + ISDM_BHS_LEN, s, dlen);
		else
			rnd_fill(bhs + ISDM_BHS_LEN, dlen);
		consumes = 1;
	} else if (r < 963) {	/* Logout */
		bhs = pdu_start(ISDM_OP_LOGOUT_REQ | (pct(80) ? ISDM_BHS_IMMEDIATE : 0),
				ISDM_BHS_FINAL | (pct(90) ? rnd(3) : rnd(128)), 0);
		itool_put_be32(bhs + 16, rnd_itt());
		if (pct(10))
			itool_put_be32(bhs + 20, rnd(65536) << 16);	/* CID */
		consumes = 1;
	} else if (r < 973) {	/* SNACK, forbidden with iSER */
		bhs = pdu_start(ISDM_OP_SNACK, ISDM_BHS_FINAL | rnd(4), 0);
		itool_put_be32(bhs + 16, rnd_itt());
		itool_put_be32(bhs + 20, (uint32_t)rnd64());
		itool_put_be32(bhs + 40, rnd(16));
		itool_put_be32(bhs + 44, rnd(16));
	} else if (r < 983) {	/* Login, in full feature phase */
		dlen = pct(50) ? 0 : rnd(256);
		bhs = pdu_start(ISDM_OP_LOGIN_REQ | ISDM_BHS_IMMEDIATE, rnd(256),
				dlen);
		itool_put_be32(bhs + 16, rnd_itt());
		rnd_fill(bhs + ISDM_BHS_LEN, dlen);
	} else if (r < 991) {	/* reserved, vendor or target opcodes */
		do
			op = rnd(64);
		while (op <= ISDM_OP_LOGOUT_REQ || op == ISDM_OP_SNACK);
		dlen = pct(50) ? 0 : rnd(256);
		bhs = pdu_start(op, rnd(256), dlen);
		itool_put_be32(bhs + 16, rnd_itt());
		rnd_fill(bhs + ISDM_BHS_LEN, dlen);
	} else if (r < 997) {	/* iSER Hello: first message only */
		memset(conn.tx_buf, 0, ISDM_HELLO_LEN);
		conn.tx_buf[0] = ISDM_OP_HELLO;
		conn.tx_buf[1] = pct(85) ? ISDM_ISER_VERSION << 4 | ISDM_ISER_VERSION :
			      rnd(256);
		conn.tx_buf[3] = rnd(256);
		*hello = 1;
		return ISDM_HELLO_LEN;
	}
	if (r >= 997) {		/* more data than the target receives */
		dlen = RND_MAX_DATA + 1 + rnd(4096);
		bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, dlen);
		itool_put_be32(bhs + 16, rnd_itt());
		itool_put_be32(bhs + 20, 0xffffffff);
		rnd_fill(bhs + ISDM_BHS_LEN, dlen);
	}
	if (r >= 695) {
		if (consumes || pct(50)) {
			itool_put_be32(bhs + 24, rnd_cmdsn(&exact));
			itool_put_be32(bhs + 28, rnd_expstatsn());
		}
		if (pct(1)) {	/* an AHS on a PDU that has none */
			words = 1 + rnd(2);
			memmove(bhs + ISDM_BHS_LEN + words * 4,
				bhs + ISDM_BHS_LEN, (dlen + 3) & ~3u);
			for (i = 0; i < words * 4; i++)
				bhs[ISDM_BHS_LEN + i] = rnd(256);
			bhs[4] = words;
		}
		len = HDR + words * 4 + ((dlen + 3) & ~3u);
	}
	/* reserved bits of the iSER header, STags no one asked for */
	if (pct(3))
		conn.tx_buf[0] |= rnd(4);
	if (pct(2))
		conn.tx_buf[1 + rnd(3)] = rnd(256);
	if (r >= 545 && pct(2))
		rnd_stag(pct(50), 4096);
	if (pct(1))		/* not a control-type iSER message */
		conn.tx_buf[0] = (conn.tx_buf[0] & 0x0f) | (rnd(16) << 4);
	if (consumes && exact && !(bhs[0] & ISDM_BHS_IMMEDIATE))
		cmd_sn++;
	return len;
}
