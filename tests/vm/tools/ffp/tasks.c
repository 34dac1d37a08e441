// SPDX-License-Identifier: GPL-2.0
/*
 * iser_ffp: commands in flight. Task attributes and ABORT TASK (ordabort),
 * Data-Out with a wrong Target Transfer Tag (badttt), two commands of one
 * ITT (dupitt, dupittw), pings whose answers never find a receive buffer
 * (norepost).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ffp.h"

static unsigned char obuf[3 * 4096];	/* ordabort's Read STags name it */
static struct ibv_mr *obuf_mr;
int ord_first = -1, ord_abort = -1, ord_second = -1;

/* a READ(10) of 8 blocks of LUN 1 into obuf + @off, task attribute @attr */
static int ord_read(uint32_t itt, unsigned char attr, uint32_t off)
{
	uint64_t va = (uintptr_t)obuf + off;
	unsigned char *bhs;

	bhs = pdu_start(ISDM_OP_SCSI_CMD,
			ISDM_BHS_FINAL | ISDM_BHS_CMD_READ | attr, 0);
	conn.tx_buf[0] |= ISDM_CTRL_RSV;
	itool_put_be32(conn.tx_buf + 16, obuf_mr->rkey);
	itool_put_be32(conn.tx_buf + 20, va >> 32);
	itool_put_be32(conn.tx_buf + 24, va);
	bhs[9] = 1;				/* LUN 1 */
	itool_put_be32(bhs + 16, itt);
	itool_put_be32(bhs + 20, 4096);
	itool_put_be32(bhs + 24, cmd_sn++);
	itool_put_be32(bhs + 28, exp_stat_sn);
	bhs[32] = 0x28;
	itool_put_be32(bhs + 32 + 2, 8 * (itt & 0xff));
	bhs[32 + 8] = 8;
	return send_buf(HDR);
}

/*
 * Wait up to @sec seconds until each of @want (ITTs, 0 = done) has its
 * answer: a SCSI Response's status or a TMF Response's response into the
 * matching slot of @res.
 */
static void ord_wait(const uint32_t *want, int *const *res, int n, int sec)
{
	double end = itool_now() + sec;
	unsigned char *msg, *bhs;
	int len, i, left = n;

	while (left && itool_now() < end) {
		len = itool_recv(&conn, &msg, end - itool_now());
		if (len < HDR)
			return;
		bhs = msg + ISDM_HDR_LEN_EXT;
		if ((bhs[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_SCSI_RSP &&
		    (bhs[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_TMF_RSP)
			continue;
		exp_stat_sn = itool_get_be32(bhs + 24) + 1;
		for (i = 0; i < n; i++) {
			if (*res[i] >= 0 || itool_get_be32(bhs + 16) != want[i])
				continue;
			*res[i] = (bhs[0] & ISDM_BHS_OPCODE_MASK) ==
				  ISDM_OP_SCSI_RSP ? bhs[3] : bhs[2];
			left--;
		}
	}
}

void ordabort(void)
{
	static const uint32_t w1[] = { 0x5d00, 0x5d02 }, w2[] = { 0x5d03 };
	int *const r1[] = { &ord_first, &ord_abort }, *const r2[] = {
		&ord_second };
	uint32_t ref_sn;
	unsigned char *bhs;

	obuf_mr = ibv_reg_mr(conn.pd, obuf, sizeof(obuf),
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!obuf_mr)
		return;
	/* SIMPLE (attribute 1), then ORDERED (2) behind it */
	if (ord_read(0x5d00, 1, 0))
		return;
	usleep(200000);
	ref_sn = cmd_sn;
	if (ord_read(0x5d01, 2, 4096))
		return;
	usleep(200000);
	/* ABORT TASK for the ORDERED READ, immediate */
	bhs = pdu_start(ISDM_OP_TMF_REQ | ISDM_BHS_IMMEDIATE,
			ISDM_BHS_FINAL | 1, 0);
	bhs[9] = 1;
	itool_put_be32(bhs + 16, 0x5d02);
	itool_put_be32(bhs + 20, 0x5d01);
	itool_put_be32(bhs + 24, cmd_sn);
	itool_put_be32(bhs + 28, exp_stat_sn);
	itool_put_be32(bhs + 32, ref_sn);
	if (send_buf(HDR))
		return;
	ord_wait(w1, r1, 2, 20);
	/* a second ORDERED READ: it must run */
	if (ord_read(0x5d03, 2, 8192))
		return;
	ord_wait(w2, r2, 1, 20);
}

/* badttt: a WRITE with F=0 and immediate data, its Data-Outs misnamed */
void bad_ttt(void)
{
	unsigned char *bhs;
	uint32_t off;

	bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_CMD_WRITE, 4096);
	itool_put_be32(bhs + 16, 0x5e00);
	itool_put_be32(bhs + 20, 16384);
	itool_put_be32(bhs + 24, cmd_sn++);
	itool_put_be32(bhs + 28, exp_stat_sn);
	bhs[32] = 0x2a;				/* WRITE(10), LBA 0 */
	bhs[32 + 8] = 16384 / 512;
	memset(bhs + ISDM_BHS_LEN, 0x5a, 4096);
	if (send_buf(HDR + 4096))
		return;
	for (off = 4096; off < 16384; off += 4096) {
		bhs = pdu_start(ISDM_OP_DATA_OUT,
				off + 4096 == 16384 ? ISDM_BHS_FINAL : 0, 4096);
		itool_put_be32(bhs + 16, 0x5e00);
		itool_put_be32(bhs + 20, 0x1234);	/* not 0xffffffff */
		itool_put_be32(bhs + 28, exp_stat_sn);
		itool_put_be32(bhs + 36, off / 4096 - 1);	/* DataSN */
		itool_put_be32(bhs + 40, off);		/* Buffer Offset */
		memset(bhs + ISDM_BHS_LEN, 0x5a, 4096);
		if (send_buf(HDR + 4096))
			return;
	}
	note_answer(answer());
}

unsigned int norepost_sent;
double norepost_held;

/* norepost: immediate pings while our receive buffers fill, unposted */
void no_repost(unsigned long n, int hold)
{
	unsigned char *bhs;
	double start;
	unsigned long i;

	start = itool_now();
	for (i = 0; i < n && !conn.closed; i++) {
		bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x6100 + i);
		itool_put_be32(bhs + 20, 0xffffffff);	/* TTT */
		itool_put_be32(bhs + 24, cmd_sn);
		itool_put_be32(bhs + 28, exp_stat_sn);
		if (send_buf(HDR))
			break;
		norepost_sent++;
	}
	while (!conn.closed && itool_now() < start + hold)
		itool_cm_wait(&conn, RDMA_CM_EVENT_DISCONNECTED, 1);
	norepost_held = itool_now() - start;
}

int dup_answers, dup_good;

/* dupitt, dupittw: two commands with one ITT, then what came back */
void dup_itt(enum mode mode)
{
	unsigned char *bhs, *msg;
	uint64_t va = (uintptr_t)obuf;
	double end;
	int i, len;

	if (mode == DUPITT) {
		obuf_mr = ibv_reg_mr(conn.pd, obuf, sizeof(obuf),
				     IBV_ACCESS_LOCAL_WRITE |
				     IBV_ACCESS_REMOTE_WRITE);
		if (!obuf_mr)
			return;
	}
	/* the first stays outstanding: deferred (READ), or waiting for data */
	for (i = 0; i < 2; i++) {
		if (mode == DUPITT) {
			bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_FINAL |
					ISDM_BHS_CMD_READ | 1, 0);
			conn.tx_buf[0] |= ISDM_CTRL_RSV;
			itool_put_be32(conn.tx_buf + 16, obuf_mr->rkey);
			itool_put_be32(conn.tx_buf + 20, (va + i * 4096) >> 32);
			itool_put_be32(conn.tx_buf + 24, va + i * 4096);
			bhs[32] = 0x28;			/* READ(10) */
			itool_put_be32(bhs + 24, cmd_sn + 1 - i);
		} else {
			bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_CMD_WRITE |
					(i ? ISDM_BHS_FINAL : 0) | 1,
					i ? 4096 : 0);
			memset(bhs + ISDM_BHS_LEN, 0x5a, i ? 4096 : 0);
			bhs[32] = 0x2a;			/* WRITE(10) */
			itool_put_be32(bhs + 24, cmd_sn + i);
		}
		itool_put_be32(bhs + 16, 0x5f00);
		itool_put_be32(bhs + 20, 4096);
		itool_put_be32(bhs + 28, exp_stat_sn);
		itool_put_be32(bhs + 32 + 2, 8 * i);	/* LBA */
		bhs[32 + 8] = 8;
		if (send_buf(HDR + (mode == DUPITTW && i ? 4096 : 0)))
			return;
	}
	cmd_sn += 2;
	/* every SCSI Response with that ITT within 5 s, or the close */
	end = itool_now() + 5;
	while (itool_now() < end) {
		len = itool_recv(&conn, &msg, end - itool_now());
		if (len < HDR)
			break;
		bhs = msg + ISDM_HDR_LEN_EXT;
		if ((bhs[0] & ISDM_BHS_OPCODE_MASK) == ISDM_OP_REJECT) {
			note_answer(bhs);
			continue;
		}
		if ((bhs[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_SCSI_RSP ||
		    itool_get_be32(bhs + 16) != 0x5f00)
			continue;
		exp_stat_sn = itool_get_be32(bhs + 24) + 1;
		note_answer(bhs);
		dup_answers++;
		dup_good += bhs[3] == 0;
	}
}
