// SPDX-License-Identifier: GPL-2.0
/*
 * iser_tgt: the LUN (1 MiB of zeros, or of the -P pattern) and the
 * answers to SCSI Commands: a command parsed from its PDU, emulated, its
 * data by RDMA Write to its read STag and its SCSI Response by Send (with
 * Invalidate), and the other responses' headers and Sends.
 */
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "tgt.h"

struct itool t;
struct ibv_mr *data_mr;
unsigned char data_buf[PI_AREA + PI_SIZE];

/* Response header: iSER header + BHS with ITT, StatSN, ExpCmdSN, MaxCmdSN. */
unsigned char *rsp_start(unsigned char op, unsigned char flags,
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
int post_rsp(uint32_t len, struct ibv_send_wr *w, int nw, int use_inv,
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
 * and SGEs in @w and @sge. The number of WRs. Each WR carries at most
 * ZERO_SIZE bytes: of the zeros again and again, or, from the PI area,
 * the next ones.
 */
int data_writes(const struct cmd *c, const unsigned char *src,
		uint32_t len, struct ibv_send_wr *w,
		struct ibv_sge *sge)
{
	int step = src >= data_buf + PI_AREA;
	uint32_t off = 0, n;
	int nw = 0;

	while (off < len && nw < MAX_WRITES) {
		n = len - off < ZERO_SIZE ? len - off : ZERO_SIZE;
		memset(&w[nw], 0, sizeof(w[nw]));
		sge[nw].addr = (uintptr_t)src + (step ? off : 0);
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

/* READ (32): VARIABLE LENGTH, service action 0009h (SBC-3 5.15) */
static int is_read32(const unsigned char *cdb)
{
	return cdb[0] == 0x7f && cdb[7] == 0x18 && cdb[8] == 0 && cdb[9] == 9;
}

/*
 * The LBA of a READ or WRITE (6), (10) or (16) CDB, or of a READ (32), in
 * @lba: 1, else 0
 */
int cdb_lba(const unsigned char *cdb, uint64_t *lba)
{
	if (is_read32(cdb)) {
		*lba = (uint64_t)itool_get_be32(cdb + 12) << 32 |
		       itool_get_be32(cdb + 16);
		return 1;
	}
	switch (cdb[0]) {
	case 0x08:
	case 0x0a:
		*lba = (uint32_t)(cdb[1] & 0x1f) << 16 | cdb[2] << 8 | cdb[3];
		return 1;
	case 0x28:
	case 0x2a:
		*lba = itool_get_be32(cdb + 2);
		return 1;
	case 0x88:
	case 0x8a:
		*lba = (uint64_t)itool_get_be32(cdb + 2) << 32 |
		       itool_get_be32(cdb + 6);
		return 1;
	default:
		return 0;
	}
}

/*
 * The LUN: a 1 MiB disk of zeros (of the pattern with -P). Sets @lba for
 * READs, else leaves it.
 */
void emulate(const struct cmd *c, struct answer *a, uint64_t *lba)
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
		info[5] = pi_type ? 1 : 0;	/* PROTECT */
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
		if (pi_type)		/* P_TYPE, PROT_EN */
			info[12] = (pi_type - 1) << 1 | 1;
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
	case 0x08:			/* READ (6): what sd falls back to */
		cdb_lba(cdb, lba);
		a->len = (cdb[4] ? cdb[4] : 256) * 512;
		a->data = data_buf;
		break;
	case 0x28:			/* READ (10) */
		cdb_lba(cdb, lba);
		a->len = (uint32_t)(cdb[7] << 8 | cdb[8]) * 512;
		a->data = data_buf;
		break;
	case 0x88:			/* READ (16) */
		cdb_lba(cdb, lba);
		a->len = itool_get_be32(cdb + 10) * 512;
		a->data = data_buf;
		break;
	case 0x7f:			/* READ (32), -T 2 only */
		if (pi_type != 2 || !is_read32(cdb)) {
			check(a, 0x05, 0x20);
			break;
		}
		cdb_lba(cdb, lba);
		a->len = itool_get_be32(cdb + 28) * 512;
		a->data = data_buf;
		pi_read32++;
		break;
	case 0x0a:			/* WRITE: write protected */
	case 0x2a:
	case 0x8a:
		check(a, 0x07, 0x27);
		break;
	default:
		check(a, 0x05, 0x20);	/* INVALID COMMAND OPERATION CODE */
		break;
	}
	if (a->data == data_buf && a->len > (uint32_t)MAX_WRITES * ZERO_SIZE)
		check(a, 0x05, 0x24);
	/* -P: the LUN's own blocks, and none past its end */
	if (pattern && a->data == data_buf && !a->status) {
		if (*lba >= BLOCKS || a->len / 512 > BLOCKS - *lba)
			check(a, 0x05, 0x21);	/* LBA OUT OF RANGE */
		else
			a->data = data_buf + *lba * 512;
	}
	/*
	 * -I: a protected READ (RDPROTECT: READ (10) and (16), and READ (32)
	 * of type 2) gets each block's tuple behind it; an unprotected one
	 * the data alone
	 */
	if (pi_type && !a->status &&
	    (((cdb[0] == 0x28 || cdb[0] == 0x88) && cdb[1] >> 5) ||
	     (is_read32(cdb) && cdb[10] >> 5))) {
		if (*lba >= BLOCKS || a->len / 512 > BLOCKS - *lba) {
			check(a, 0x05, 0x21);	/* LBA OUT OF RANGE */
		} else {
			a->data = pi_wire(a->data, *lba, a->len / 512);
			a->len += a->len / 512 * PI_TUPLE;
		}
	}
}

/*
 * Answer @c with @a: data by RDMA Write, then the SCSI Response, by Send
 * with Invalidate of @inv when @use_inv, for ITT @itt.
 */
int respond(const struct cmd *c, const struct answer *a, uint32_t itt,
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
	return post_rsp(HDR_LEN + ISDM_BHS_LEN + dlen, w, nw, use_inv,
			inv);
}

/* wall-clock seconds, to line the -v trace up with the guest's other logs */
double wall_now(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return tv.tv_sec + tv.tv_usec / 1e6;
}

int respond_ok(const struct cmd *c)
{
	struct answer a;
	uint64_t lba;

	emulate(c, &a, &lba);
	if (rmode && rverbose) {
		printf("answer t=%.6f itt=0x%08x status=0x%02x len=%u inv=%d\n",
		       wall_now(), c->itt, a.status, a.len,
		       send_inv && c->rsv);
		fflush(stdout);
	}
	return respond(c, &a, c->itt, send_inv && c->rsv, c->stag);
}

/* the NOP-In that answers the initiator's NOP-Out (a ping) of ITT @itt */
int nop_answer(uint32_t itt)
{
	unsigned char *r = rsp_start(ISDM_OP_NOP_IN, ISDM_BHS_FINAL, 0, itt, 1);

	itool_put_be32(r + 20, 0xffffffff);
	return post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
}

/* the BHS of an immediate NOP-Out (a ping) of ITT @itt, at @p */
void nop_out_hdr(unsigned char *p, uint32_t itt)
{
	memset(p, 0, ISDM_BHS_LEN);
	p[0] = 0x40 | ISDM_OP_NOP_OUT;
	p[1] = ISDM_BHS_FINAL;
	itool_put_be32(p + 16, itt);
	itool_put_be32(p + 20, 0xffffffff);	/* TTT */
}

void parse_cmd(const unsigned char *msg, struct cmd *c)
{
	const unsigned char *bhs = msg + HDR_LEN;
	int i;

	c->itt = itool_get_be32(bhs + 16);
	c->edtl = itool_get_be32(bhs + 20);
	c->rsv = msg[0] & ISDM_CTRL_RSV;
	if (HDR_LEN == ISDM_HDR_LEN_RFC) {
		/* ZBVA: the 12-byte header, the buffer starts at offset 0 */
		c->stag = itool_get_be32(msg + 8);
		c->va = 0;
	} else {
		c->stag = itool_get_be32(msg + 16);
		c->va = (uint64_t)itool_get_be32(msg + 20) << 32 |
			itool_get_be32(msg + 24);
	}
	c->lun0 = 1;
	for (i = 8; i < 16; i++)
		if (bhs[i])
			c->lun0 = 0;
	memset(c->cdb, 0, sizeof(c->cdb));
	memcpy(c->cdb, bhs + 32, 16);
	/*
	 * An extended CDB AHS (RFC 7143 11.2.1.2, 11.3.8) right behind the
	 * BHS: AHSLength (the CDB bytes past 16, plus the reserved byte),
	 * AHSType 1, then the bytes; the tool takes CDBs of up to 32 bytes
	 */
	if (bhs[4] == 5 && bhs[ISDM_BHS_LEN + 2] == 1 &&
	    bhs[ISDM_BHS_LEN] == 0 && bhs[ISDM_BHS_LEN + 1] == 17)
		memcpy(c->cdb + 16, bhs + ISDM_BHS_LEN + 4, 16);
}

int is_trigger(const struct cmd *c)
{
	struct answer a;
	uint64_t lba = NO_TRIGGER;

	if (trigger_lba == NO_TRIGGER)
		return 1;
	emulate(c, &a, &lba);
	return lba == trigger_lba;
}

/* -P: the LUN's bytes; every 8-byte word names its own offset */
void lun_pattern(void)
{
	uint64_t v;
	size_t i;

	for (i = 0; i < ZERO_SIZE; i += 8) {
		v = itool_rnd_mix(0x15e7ULL << 32 | i);
		memcpy(data_buf + i, &v, 8);
	}
}
