// SPDX-License-Identifier: GPL-2.0
/*
 * iser_ffp: large transfers fetched and written by the target's RDMA
 * Reads and Writes (bigio, bigq), and STags that name less than the
 * command moves (shortw, shortr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffp.h"

#define BIG_DATA	(32u << 20)

static unsigned char *big_buf;
static struct ibv_mr *big_mr;
static struct ibv_mr *stag_mr;		/* the MR big_send()'s STags name */
int big_wait_sec = BIG_WAIT;

/*
 * Send one command of -m bigio or bigq: CDB @op (READ CAPACITY(10): 8
 * bytes in), @blocks blocks of @blen from @lba, the first @imm bytes of
 * big_buf as immediate data, its Read or Write STag on big_buf (an
 * absolute address: the first byte not sent as immediate data).
 */
static int big_send(unsigned char op, uint32_t itt, uint32_t lba,
		    uint32_t blocks, uint32_t blen, uint32_t imm)
{
	int write = op == 0x2a;
	uint32_t edtl = op == 0x25 ? 8 : blocks * blen;
	uint64_t va = (uintptr_t)big_buf + imm;
	unsigned char *bhs, *h = conn.tx_buf;

	bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_FINAL |
			(write ? ISDM_BHS_CMD_WRITE : ISDM_BHS_CMD_READ), imm);
	itool_put_be32(bhs + 16, itt);
	itool_put_be32(bhs + 20, edtl);
	itool_put_be32(bhs + 24, cmd_sn++);
	itool_put_be32(bhs + 28, exp_stat_sn);
	memset(bhs + 32, 0, 16);
	bhs[32] = op;
	if (op != 0x25) {
		itool_put_be32(bhs + 32 + 2, lba);
		bhs[32 + 7] = blocks >> 8;
		bhs[32 + 8] = blocks;
	}
	memcpy(bhs + ISDM_BHS_LEN, big_buf, imm);
	h[0] |= write ? ISDM_CTRL_WSV : ISDM_CTRL_RSV;
	itool_put_be32(h + (write ? 4 : 16), stag_mr->rkey);
	itool_put_be32(h + (write ? 8 : 20), va >> 32);
	itool_put_be32(h + (write ? 12 : 24), va);
	return send_buf(HDR + imm);
}

/*
 * The status of the next SCSI Response to an ITT in [@itt, @itt + @n): the
 * SCSI status, 0x100 | the iSCSI response where that is not 0, or -1 when
 * none came within big_wait_sec seconds.
 */
static int big_wait(uint32_t itt, uint32_t n)
{
	double end = itool_now() + big_wait_sec;
	unsigned char *bhs, *msg;
	int len;

	while (itool_now() < end) {
		len = itool_recv(&conn, &msg, end - itool_now());
		if (len < HDR)
			return -1;
		bhs = msg + ISDM_HDR_LEN_EXT;
		if ((bhs[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_SCSI_RSP ||
		    itool_get_be32(bhs + 16) - itt >= n)
			continue;	/* e.g. a NOP-In ping of the target */
		exp_stat_sn = itool_get_be32(bhs + 24) + 1;
		return bhs[2] ? 0x100 | bhs[2] : bhs[3];
	}
	return -1;
}

static int big_cmd(unsigned char op, uint32_t blocks, uint32_t blen)
{
	if (big_send(op, 0x6000 + op, 0, blocks, blen, 0))
		return -1;
	return big_wait(0x6000 + op, 1);
}

static uint32_t big_pattern(uint32_t i)
{
	return i * 2654435761u ^ 0x1badcafe;
}

static void big_fill(uint32_t bytes)
{
	uint32_t i;

	for (i = 0; i < bytes; i += 4)
		itool_put_be32(big_buf + i, big_pattern(i));
}

/* read @blocks from LBA 0 back into the zeroed buffer: "ok" or "bad" */
static const char *big_verify(uint32_t blocks, uint32_t blen, char *st,
			      size_t size)
{
	uint32_t i, bytes = blocks * blen;
	int ret;

	memset(big_buf, 0, bytes);
	ret = big_cmd(0x28, blocks, blen);
	status_str(st, size, ret);
	if (ret)
		return "bad";
	for (i = 0; i < bytes; i += 4)
		if (itool_get_be32(big_buf + i) != big_pattern(i))
			return "bad";
	return "ok";
}

/* register big_buf and read the capacity: blocks, or 0 */
static uint64_t big_setup(uint32_t *blen)
{
	int st, tries = 0;

	/*
	 * One page more than the data: 6.1's soft-RoCE reads one pointer past
	 * its page map when an RDMA access ends exactly at the end of an MR
	 * whose pages are a multiple of 256 (rxe_mr_copy() steps to the next
	 * map before it checks that nothing is left; KASAN reports it); the
	 * accesses of these cases end at BIG_DATA at most.
	 */
	big_buf = aligned_alloc(4096, BIG_DATA + 4096);
	if (!big_buf)
		return 0;
	memset(big_buf, 0, BIG_DATA + 4096);
	big_mr = ibv_reg_mr(conn.pd, big_buf, BIG_DATA + 4096,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_WRITE);
	stag_mr = big_mr;
	if (!big_mr)
		return 0;
	/*
	 * A CHECK CONDITION here is a unit attention that an earlier case
	 * left for this initiator (gapreset's LOGICAL UNIT RESET): reported
	 * once per I_T nexus and cleared by reporting it, as initiators
	 * retry it
	 */
	do
		st = big_cmd(0x25, 0, 0);
	while (st == 0x02 && ++tries < 3);
	if (st)
		return 0;
	*blen = itool_get_be32(big_buf + 4);
	if (!*blen || *blen > BIG_DATA)
		return 0;
	return (uint64_t)itool_get_be32(big_buf) + 1;
}

/* -m bigio: the line it appends to the summary */
void big_io(char *out, size_t size)
{
	uint32_t blocks = 0, blen = 0, bytes = 0;
	char ws[16] = "none", rs_[16] = "none";
	const char *verify = "bad";
	uint64_t cap;
	int st;

	cap = big_setup(&blen);
	if (!cap)
		goto out;
	blocks = BIG_DATA / blen;
	if (blocks > 0xffff)
		blocks = 0xffff;
	if (blocks > cap)
		blocks = cap;
	bytes = blocks * blen;
	big_fill(bytes);
	st = big_cmd(0x2a, blocks, blen);
	status_str(ws, sizeof(ws), st);
	if (!st)
		verify = big_verify(blocks, blen, rs_, sizeof(rs_));
out:
	snprintf(out, size, " bigio bytes=%u write=%s read=%s verify=%s",
		 bytes, ws, rs_, verify);
}

/*
 * -m bigq: BIGQ_CMDS WRITE(10)s of BIGQ_BYTES each at once, each with 4 KiB
 * of immediate data and F=1, the rest fetched by RDMA Reads: together
 * more RDMA Read work requests than the target's send queue holds. Each
 * must end with GOOD; then the first region reads back.
 */
#define BIGQ_CMDS	24
#define BIGQ_BYTES	(16u << 20)
#define BIGQ_IMM	4096

void big_queue(char *out, size_t size)
{
	uint32_t blocks = 0, blen = 0, regions, i, good = 0, bad = 0;
	char rs_[16] = "none", first_bad[16] = "none";
	const char *verify = "bad";
	uint64_t cap;
	int st;

	cap = big_setup(&blen);
	if (!cap || BIGQ_BYTES % blen || BIGQ_BYTES / blen > 0xffff)
		goto out;
	blocks = BIGQ_BYTES / blen;
	regions = cap / blocks;
	if (!regions)
		goto out;
	big_fill(BIGQ_BYTES);
	for (i = 0; i < BIGQ_CMDS; i++)
		if (big_send(0x2a, 0x6100 + i, (i % regions) * blocks, blocks,
			     blen, BIGQ_IMM))
			goto out;
	for (i = 0; i < BIGQ_CMDS; i++) {
		st = big_wait(0x6100, BIGQ_CMDS);
		if (st < 0)
			break;
		if (st) {
			if (!bad++)
				status_str(first_bad, sizeof(first_bad), st);
			continue;
		}
		good++;
	}
	if (good == BIGQ_CMDS)
		verify = big_verify(blocks, blen, rs_, sizeof(rs_));
out:
	snprintf(out, size, " bigq cmds=%u bytes=%u good=%u bad=%u(%s) read=%s verify=%s",
		 BIGQ_CMDS, BIGQ_BYTES, good, bad, first_bad, rs_, verify);
}

/*
 * -m shortw, shortr: a WRITE(10) or READ(10) of SHORT_IO bytes whose STag
 * names an MR of only the first SHORT_MR bytes of the buffer. The RDMA
 * Read or Write that goes beyond it fails with a remote access error: a
 * work request the target does not ask to see complete (only the last of
 * a chain is signaled), after which its queue pair flushes the rest.
 */
#define SHORT_MR	(64u << 10)
#define SHORT_IO	(1024u * 1024)
#define SHORT_WAIT	10

void short_stag(enum mode mode, char *out, size_t size)
{
	char st[16] = "none";
	uint32_t blen = 0;
	uint64_t cap;

	cap = big_setup(&blen);
	if (!cap || SHORT_IO % blen || SHORT_IO / blen > cap)
		goto out;
	stag_mr = ibv_reg_mr(conn.pd, big_buf, SHORT_MR,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			     IBV_ACCESS_REMOTE_WRITE);
	if (!stag_mr)
		goto out;
	big_fill(SHORT_IO);
	big_wait_sec = SHORT_WAIT;
	if (!big_send(mode == SHORTW ? 0x2a : 0x28, 0x6200, 0, SHORT_IO / blen,
		      blen, 0))
		status_str(st, sizeof(st), big_wait(0x6200, 1));
out:
	snprintf(out, size, " short status=%s", st);
}
