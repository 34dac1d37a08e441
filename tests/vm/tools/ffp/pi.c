// SPDX-License-Identifier: GPL-2.0
/*
 * iser_ffp -m piguard: protected commands whose T10 PI tuples the tool
 * makes itself, on a LUN formatted with protection type 1 and 512-byte
 * blocks (the wire layout of Documentation/wire-protocol.md, section 8:
 * an 8-byte tuple after each block, counted in the EDTL and in the RDMA
 * transfers).
 *
 *   good     WRITE(10) with WRPROTECT=1 of 8 blocks with correct tuples
 *   guard    the same blocks, other data, the guard of block 3 wrong
 *   ref      the same, the reference tag of block 5 wrong
 *   notuple  WRPROTECT=1 with an EDTL of the data alone
 *   read     READ(10) with RDPROTECT=1 of the blocks: the good WRITE's
 *            data and tuples must come back
 *
 * Each gets "STATUS/KEY/ASC/ASCQ" (the sense of a CHECK CONDITION, or
 * STATUS alone) in the summary: "pi good=0x00 guard=0x02/0b/10/01
 * ref=0x02/0b/10/03 notuple=0x02/05/24/00 read=0x00 readback=ok" is a
 * target that refuses the bad ones and kept the good data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffp.h"

#define PI_BLEN		512
#define PI_BLOCKS	8
#define PI_TUPLE	8
#define PI_WIRE		(PI_BLOCKS * (PI_BLEN + PI_TUPLE))
#define PI_LBA		64

static unsigned char *pi_buf;	/* the wire layout the target reads or writes */
static unsigned char pi_good[PI_WIRE];	/* what the good WRITE sent */
static struct ibv_mr *pi_mr;

/* CRC-16 T10-DIF: polynomial 0x8bb7, no reflection, initial value 0 */
static uint16_t pi_crc(const unsigned char *p, size_t n)
{
	uint16_t crc = 0;
	int i;

	while (n--) {
		crc ^= (uint16_t)*p++ << 8;
		for (i = 0; i < 8; i++)
			crc = crc & 0x8000 ? (crc << 1) ^ 0x8bb7 : crc << 1;
	}
	return crc;
}

/* blocks with data of @base, each followed by its correct type 1 tuple */
static void pi_fill(uint32_t base)
{
	unsigned char *b;
	uint32_t i, j;
	uint16_t crc;

	for (i = 0; i < PI_BLOCKS; i++) {
		b = pi_buf + i * (PI_BLEN + PI_TUPLE);
		for (j = 0; j < PI_BLEN; j += 4)
			itool_put_be32(b + j, (base + i * PI_BLEN + j) *
				       2654435761u);
		crc = pi_crc(b, PI_BLEN);
		b[PI_BLEN] = crc >> 8;
		b[PI_BLEN + 1] = crc;
		b[PI_BLEN + 2] = 0;		/* application tag */
		b[PI_BLEN + 3] = 0;
		itool_put_be32(b + PI_BLEN + 4, PI_LBA + i);
	}
}

/*
 * One protected READ(10) or WRITE(10) of the blocks with EDTL @edtl and
 * its STag on pi_buf; its status as "0xSS" or "0xSS/KK/AA/QQ", "none"
 * when nothing came, in @st.
 */
static void pi_cmd(int write, uint32_t itt, uint32_t edtl, char *st,
		   size_t size)
{
	uint64_t va = (uintptr_t)pi_buf;
	unsigned char *bhs, *msg, *s;
	double end;
	uint32_t dlen, slen;
	int len;

	snprintf(st, size, "none");
	bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_FINAL | 1 |
			(write ? ISDM_BHS_CMD_WRITE : ISDM_BHS_CMD_READ), 0);
	itool_put_be32(bhs + 16, itt);
	itool_put_be32(bhs + 20, edtl);
	itool_put_be32(bhs + 24, cmd_sn++);
	itool_put_be32(bhs + 28, exp_stat_sn);
	memset(bhs + 32, 0, 16);
	bhs[32] = write ? 0x2a : 0x28;
	bhs[33] = 0x20;			/* WRPROTECT or RDPROTECT 1 */
	itool_put_be32(bhs + 34, PI_LBA);
	bhs[40] = PI_BLOCKS;
	conn.tx_buf[0] |= write ? ISDM_CTRL_WSV : ISDM_CTRL_RSV;
	itool_put_be32(conn.tx_buf + (write ? 4 : 16), pi_mr->rkey);
	itool_put_be32(conn.tx_buf + (write ? 8 : 20), va >> 32);
	itool_put_be32(conn.tx_buf + (write ? 12 : 24), va);
	if (send_buf(HDR))
		return;
	end = itool_now() + big_wait_sec;
	while (itool_now() < end) {
		len = itool_recv(&conn, &msg, end - itool_now());
		if (len < HDR)
			return;
		bhs = msg + ISDM_HDR_LEN_EXT;
		if ((bhs[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_SCSI_RSP ||
		    itool_get_be32(bhs + 16) != itt)
			continue;
		exp_stat_sn = itool_get_be32(bhs + 24) + 1;
		if (bhs[2]) {
			snprintf(st, size, "response_0x%02x", bhs[2]);
			return;
		}
		snprintf(st, size, "0x%02x", bhs[3]);
		dlen = itool_get_be24(bhs + 5);
		if (bhs[3] != 0x02 || dlen < 2 + 14 ||
		    (uint32_t)len < HDR + dlen)
			return;
		s = bhs + ISDM_BHS_LEN;
		slen = (uint32_t)s[0] << 8 | s[1];
		s += 2;
		if (slen < 14 || slen > dlen - 2)
			return;
		if ((s[0] & 0x7f) == 0x72 || (s[0] & 0x7f) == 0x73)
			snprintf(st, size, "0x02/%02x/%02x/%02x", s[1] & 0xf,
				 s[2], s[3]);
		else
			snprintf(st, size, "0x02/%02x/%02x/%02x", s[2] & 0xf,
				 s[12], s[13]);
		return;
	}
}

/* -m piguard: the five commands; the summary words into @out */
void pi_guard(char *out, size_t size)
{
	char good[24], guard[24], ref[24], notuple[24], rd[24];
	unsigned char *b;
	const char *back;

	pi_buf = aligned_alloc(4096, 4096 * 3);
	if (!pi_buf)
		return;
	memset(pi_buf, 0, 4096 * 3);
	pi_mr = ibv_reg_mr(conn.pd, pi_buf, 4096 * 3,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_WRITE);
	if (!pi_mr)
		return;
	pi_fill(1);
	memcpy(pi_good, pi_buf, PI_WIRE);
	pi_cmd(1, 0x7100, PI_WIRE, good, sizeof(good));

	pi_fill(2);
	b = pi_buf + 3 * (PI_BLEN + PI_TUPLE) + PI_BLEN;
	b[0] ^= 0x5a;
	pi_cmd(1, 0x7101, PI_WIRE, guard, sizeof(guard));

	pi_fill(3);
	b = pi_buf + 5 * (PI_BLEN + PI_TUPLE) + PI_BLEN + 4;
	itool_put_be32(b, itool_get_be32(b) + 1);
	pi_cmd(1, 0x7102, PI_WIRE, ref, sizeof(ref));

	pi_fill(4);
	pi_cmd(1, 0x7103, PI_BLOCKS * PI_BLEN, notuple, sizeof(notuple));

	memset(pi_buf, 0, PI_WIRE);
	pi_cmd(0, 0x7104, PI_WIRE, rd, sizeof(rd));
	back = memcmp(pi_buf, pi_good, PI_WIRE) ? "bad" : "ok";
	snprintf(out, size, " pi good=%s guard=%s ref=%s notuple=%s read=%s readback=%s",
		 good, guard, ref, notuple, rd, back);
}
