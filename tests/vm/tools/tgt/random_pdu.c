// SPDX-License-Identifier: GPL-2.0
/*
 * iser_tgt -m random: PDU ridx of the sequence, drawn from its own PRNG
 * state and sent with the command at hand, and the table of the
 * connection's live commands and stale ITTs the PDUs name.
 */
#include <stdio.h>
#include <string.h>

#include "tgt.h"

#define RETRY_MAX	3		/* Sends of one random PDU */
#define RND_HOSTILE	30		/* percent of random PDUs: anything */
#define NO_SUCCESS	0x18		/* RESERVATION CONFLICT: never a success */

static void rnd_fill(unsigned char *p, uint32_t len)
{
	while (len--)
		*p++ = (unsigned char)rnd64();
}

/*
 * Whether a Linux initiator's SCSI layer may complete a command with
 * success on SCSI status @st (the response code 0): GOOD, CONDITION MET
 * and the obsolete INTERMEDIATE ones and COMMAND TERMINATED, bit 0
 * ignored (scsi_status_is_good()), and CHECK CONDITION, whose random
 * sense data may say RECOVERED ERROR, which the SCSI layer completes as a
 * success with whatever the buffer holds. Until 2026-11-27 the tool
 * treated only 0x00 as GOOD and sent the others without the data: a lie
 * of the tool's that the initiator cannot tell from a correct answer
 * (the first run of 10000 PDUs read wrong data twice).
 */
static int status_may_succeed(unsigned char st)
{
	switch (st & 0xfe) {
	case 0x00:
	case 0x02:
	case 0x04:
	case 0x10:
	case 0x14:
	case 0x22:
		return 1;
	}
	return 0;
}

int live_find(uint32_t itt)
{
	int i;

	for (i = 0; i < nr_live; i++)
		if (live[i].itt == itt)
			return i;
	return -1;
}

static void stale_add(uint32_t itt)
{
	stale[nr_stale++ % STALE_MAX] = itt;
}

/* the command @i is answered (or gone): its ITT is stale from now on */
void live_del(int i)
{
	stale_add(live[i].itt);
	live[i] = live[--nr_live];
}

/* a sequence number: mostly @exp, sometimes near it or anywhere */
static uint32_t rnd_sn(uint32_t exp)
{
	unsigned int r = rnd(100);

	if (r < 70)
		return exp;
	if (r < 85)
		return exp + rnd(17) - 8;
	return (uint32_t)rnd64();
}

/* ExpCmdSN and MaxCmdSN at @bhs + 28: open, closed, invalid or odd */
static void rnd_window(unsigned char *bhs)
{
	uint32_t exp = exp_cmd_sn, max = exp_cmd_sn + 63;
	unsigned int r = rnd(100);

	if (r < 70)
		;
	else if (r < 78)
		max = exp - 1;			/* closed */
	else if (r < 84)
		max = exp - 2 - rnd(100);	/* invalid: below ExpCmdSN - 1 */
	else if (r < 92) {
		exp += rnd(17) - 8;
		max = exp + rnd(128);
	} else {
		exp = (uint32_t)rnd64();
		max = (uint32_t)rnd64();
	}
	itool_put_be32(bhs + 28, exp);
	itool_put_be32(bhs + 32, max);
}

/* ITT of a random PDU: the command at hand, another issued one, stale, bogus */
static uint32_t rnd_itt(int cur)
{
	unsigned int r = rnd(100);

	if (r < 55 && cur >= 0)
		return live[cur].itt;
	if (r < 65 && nr_live)
		return live[rnd(nr_live)].itt;
	if (r < 80 && nr_stale)
		return stale[rnd(nr_stale < STALE_MAX ? nr_stale : STALE_MAX)];
	if (r < 88)
		return 0xffffffff;
	return (uint32_t)rnd64();
}

/* an STag to invalidate that is not the right one */
static uint32_t rnd_wrong_stag(int cur)
{
	unsigned int r = rnd(3);

	if (r == 0 && nr_live)
		return live[rnd(nr_live)].stag;
	if (r == 1 && cur >= 0)
		return (live[cur].stag & ~0xffu) | ((live[cur].stag + 1) & 0xff);
	return (uint32_t)rnd64();
}

static const unsigned char rnd_reasons[] = {
	0x02, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c,
};

/* A hostile PDU's opcode for @k in [0, 100): every one a target sends, and more */
static unsigned char rnd_hostile_op(unsigned int k)
{
	static const struct { unsigned int below; unsigned char op; } ops[] = {
		{ 40, ISDM_OP_SCSI_RSP }, { 50, ISDM_OP_NOP_IN },
		{ 55, ISDM_OP_TMF_RSP }, { 60, ISDM_OP_TEXT_RSP },
		{ 64, ISDM_OP_LOGOUT_RSP }, { 68, ISDM_OP_R2T },
		{ 75, ISDM_OP_DATA_IN }, { 82, ISDM_OP_REJECT },
		{ 90, ISDM_OP_ASYNC }, { 94, ISDM_OP_LOGIN_RSP },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		if (k < ops[i].below)
			return ops[i].op;
	if (k < 97)
		return 0x27 + rnd(10);		/* reserved: 0x27..0x30 */
	if (k < 99)
		return 0x33 + rnd(12);		/* reserved, vendor: 0x33..0x3e */
	return rnd(0x20);			/* an initiator opcode */
}

/*
 * Send PDU ridx of the sequence, with the command live[@cur] (or none: -1)
 * at hand. 0 when it went out, -1 when its Send failed (the connection is
 * gone).
 */
int rnd_pdu(int cur)
{
	struct ibv_send_wr w[MAX_WRITES + 1];
	struct ibv_sge sge[MAX_WRITES + 1];
	uint32_t hl = HDR_LEN + ISDM_BHS_LEN, room = mrdsl;
	uint32_t itt, dlen = 0, ahs = 0, inv = 0, woff = 0, wlen = 0, len;
	unsigned char *bhs, *data, op, flags;
	unsigned int k;
	int tc, nw = 0, use_inv = 0, wc = -1, ret, good = 0, hostile;

	itool_rng = itool_rnd_mix(seed ^ itool_rnd_mix(ridx));
	/*
	 * Most PDUs are plausible ones a correct initiator takes (SCSI
	 * Responses for issued commands, pings, Async Messages, Rejects):
	 * many fit on one connection. The hostile rest, anything framed
	 * right, ends it most of the time.
	 */
	hostile = pct(RND_HOSTILE);
	k = rnd(100);
	if (!hostile) {
		if (k < 60 && nr_live)
			op = ISDM_OP_SCSI_RSP;
		else if (k < 80)
			op = ISDM_OP_NOP_IN;
		else if (k < 92)
			op = ISDM_OP_ASYNC;
		else
			op = ISDM_OP_REJECT;
	} else {
		op = rnd_hostile_op(k);
	}
	flags = !hostile || pct(70) ? ISDM_BHS_FINAL : (unsigned char)rnd64();
	if (!hostile)
		itt = op != ISDM_OP_SCSI_RSP ? 0xffffffff :
		      cur >= 0 && pct(80) ? live[cur].itt :
		      live[rnd(nr_live)].itt;
	else
		itt = (op == ISDM_OP_NOP_IN || op == ISDM_OP_ASYNC ||
		       op == ISDM_OP_REJECT) && pct(60) ? 0xffffffff :
		      rnd_itt(cur);
	tc = live_find(itt);

	/* an RDMA Write of random bytes to a command's read buffer */
	if (pct(15)) {
		wc = cur >= 0 && pct(70) ? cur : nr_live ? (int)rnd(nr_live) : -1;
		if (wc >= 0 && live[wc].rsv) {
			uint32_t edtl = live[wc].edtl ? live[wc].edtl : 512;

			woff = !hostile || pct(70) ? rnd(edtl) :
			       rnd(edtl + 16384);
			wlen = 1 + rnd(hostile ? 16384 : edtl - woff);
			memset(&w[0], 0, sizeof(w[0]));
			sge[0].addr = (uintptr_t)(data_buf + ZERO_SIZE +
						  INFO_SIZE);
			sge[0].length = wlen;
			sge[0].lkey = data_mr->lkey;
			w[0].sg_list = &sge[0];
			w[0].num_sge = 1;
			w[0].opcode = IBV_WR_RDMA_WRITE;
			w[0].wr.rdma.remote_addr = live[wc].va + woff;
			w[0].wr.rdma.rkey = live[wc].stag;
			nw = 1;
			live[wc].dirty = 1;
			rs.writes++;
		} else {
			wc = -1;
		}
	}

	/* the data segment, AHS first, within the initiator's receive size */
	if (hostile && pct(25)) {
		ahs = 1 + rnd(4);
		room -= ahs * 4;
	}
	switch (op) {
	case ISDM_OP_SCSI_RSP:
	case ISDM_OP_ASYNC:
		if (pct(50))
			dlen = pct(90) ? 2 + rnd(room < 300 ? room - 1 : 299) :
			       rnd(room + 1);
		break;
	case ISDM_OP_REJECT:
		dlen = !hostile || pct(70) ? ISDM_BHS_LEN : rnd(room + 1);
		break;
	case ISDM_OP_NOP_IN:
		/* an unsolicited NOP-In carries no ping data (RFC 3720 10.19) */
		dlen = hostile && pct(25) ? rnd(room + 1) : 0;
		break;
	case ISDM_OP_DATA_IN:
	case ISDM_OP_LOGIN_RSP:
		dlen = pct(50) ? rnd(room + 1) : 0;
		break;
	default:
		dlen = pct(25) ? rnd(room + 1) : 0;
		break;
	}
	bhs = itool_pdu_start(&t, op, flags, dlen);
	bhs[4] = ahs;
	data = bhs + ISDM_BHS_LEN;
	rnd_fill(data, ahs * 4 + ((dlen + 3) & ~3u));
	data += ahs * 4;
	itool_put_be32(bhs + 16, itt);
	if (pct(hostile ? 30 : 5))
		rnd_fill(bhs + 8, 8);		/* LUN or reserved */
	itool_put_be32(bhs + 24, rnd_sn(stat_sn));
	if (op != ISDM_OP_DATA_IN && op != ISDM_OP_R2T &&
	    !(op == ISDM_OP_NOP_IN && itt == 0xffffffff))
		stat_sn++;
	rnd_window(bhs);

	switch (op) {
	case ISDM_OP_SCSI_RSP: {
		unsigned char st[] = { 0, 0, 0, 0, 0, 0, 2, 2, 2, 8, 0x18,
				       0x28, 0x30 };
		struct answer a;
		uint64_t lba;

		bhs[2] = pct(hostile ? 80 : 95) ? 0 : (unsigned char)rnd64();
		bhs[3] = pct(90) ? st[rnd(sizeof(st))] : (unsigned char)rnd64();
		if (tc >= 0 && pct(60)) {
			uint32_t got = live[tc].rsv ? live[tc].edtl : 0;

			bhs[1] = ISDM_BHS_FINAL | (got < live[tc].edtl ? 0x02 : 0);
			itool_put_be32(bhs + 44, live[tc].edtl - got);
		} else {
			/* o, u bits (plausible), or any */
			bhs[1] = ISDM_BHS_FINAL | (pct(50) ? 0 : hostile ?
				 rnd(0x80) : rnd(0x20) & 0x1e);
			itool_put_be32(bhs + 44, pct(50) ? 0 : (uint32_t)rnd64());
			if (pct(20))
				itool_put_be32(bhs + 40, (uint32_t)rnd64());
		}
		itool_put_be32(bhs + 36, pct(80) ? 0 : rnd(16));
		if (dlen >= 2) {		/* SenseLength */
			uint32_t sl = pct(60) ? dlen - 2 : rnd(65536);

			data[0] = sl >> 8;
			data[1] = sl;
			if (dlen >= 4)
				data[2] = pct(70) ? 0x70 : data[2];
		}
		if (tc >= 0 && !bhs[2] && status_may_succeed(bhs[3])) {
			/*
			 * A status the initiator's SCSI layer may complete
			 * the command with as a success, for a live
			 * command: its data must be what it would be, so
			 * that the status is no lie of the tool's: deliver
			 * it (again), or make it RESERVATION CONFLICT when
			 * the command would not be GOOD.
			 */
			emulate(&live[tc], &a, &lba);
			if (a.status) {
				bhs[3] = NO_SUCCESS;
			} else {
				uint32_t n = a.len < live[tc].edtl ? a.len :
					     live[tc].edtl;

				if (n && live[tc].rsv) {
					nw += data_writes(&live[tc], a.data, n,
							  w + nw, sge + nw);
					rs.repaired++;
				}
				live[tc].dirty = 0;
				good = 1;
			}
		} else if (tc < 0 && !bhs[2] && status_may_succeed(bhs[3])) {
			/*
			 * Such a status for an ITT the tool holds no command
			 * of: it may be a command on its way to the tool,
			 * which this would complete without its data. The
			 * initiator cannot tell; so none.
			 */
			bhs[3] = NO_SUCCESS;
		}
		if (tc >= 0 && send_inv && live[tc].rsv && pct(80)) {
			use_inv = 1;
			inv = !hostile || pct(70) ? live[tc].stag :
			      rnd_wrong_stag(cur);
		}
		if (good && live[tc].dirty)
			rs.good_dirty++;
		rs.responses++;
		break;
	}
	case ISDM_OP_NOP_IN:
		itool_put_be32(bhs + 20, pct(60) ? 0xffffffff :
			       (uint32_t)rnd64());
		break;
	case ISDM_OP_TMF_RSP:
		bhs[2] = pct(80) ? rnd(7) : (unsigned char)rnd64();
		break;
	case ISDM_OP_TEXT_RSP:
		itool_put_be32(bhs + 20, pct(60) ? 0xffffffff :
			       (uint32_t)rnd64());
		break;
	case ISDM_OP_LOGOUT_RSP:
		bhs[2] = pct(80) ? rnd(4) : (unsigned char)rnd64();
		bhs[40] = 0;
		bhs[41] = rnd(3);		/* Time2Wait */
		bhs[42] = 0;
		bhs[43] = rnd(3);		/* Time2Retain */
		break;
	case ISDM_OP_R2T:
	case ISDM_OP_DATA_IN:
		itool_put_be32(bhs + 20, pct(50) ? 0xffffffff :
			       (uint32_t)rnd64());
		itool_put_be32(bhs + 36, rnd(4));	/* DataSN, R2TSN */
		itool_put_be32(bhs + 40, pct(50) ? 0 : rnd(1 << 20));
		itool_put_be32(bhs + 44, pct(50) ? 4096 : (uint32_t)rnd64());
		if (op == ISDM_OP_DATA_IN && pct(50)) {
			bhs[1] |= 0x81;			/* F, S: status */
			bhs[3] = pct(60) ? 0 : (unsigned char)rnd64();
		}
		break;
	case ISDM_OP_REJECT:
		bhs[2] = pct(85) ? rnd_reasons[rnd(sizeof(rnd_reasons))] :
			 (unsigned char)rnd64();
		/*
		 * the rejected header: the command at hand's, or (hostile)
		 * a ping naming a command, which libiscsi would take as
		 * the end of its ping, or noise
		 */
		if (dlen >= ISDM_BHS_LEN && cur >= 0 && pct(60)) {
			memcpy(data, live[cur].bhs, ISDM_BHS_LEN);
		} else if (dlen >= ISDM_BHS_LEN && hostile && pct(40)) {
			bhs[2] = 0x06;	/* immediate command reject */
			nop_out_hdr(data, rnd_itt(cur));
		}
		break;
	case ISDM_OP_ASYNC: {
		/* plausible: those that do not end the connection */
		static const unsigned char ev[] = { 0, 4, 255 };

		/* every event; parameters small: Time2Wait is honoured */
		if (!hostile)
			bhs[36] = ev[rnd(sizeof(ev))];
		else
			bhs[36] = pct(85) ? rnd(6) : pct(50) ? 255 :
				  (unsigned char)rnd64();
		if (dlen >= 2) {		/* SenseLength */
			uint32_t sl = pct(80) ? dlen - 2 : rnd(65536);

			data[0] = sl >> 8;
			data[1] = sl;
		}
		bhs[37] = (unsigned char)rnd64();
		memset(bhs + 38, 0, 6);
		bhs[39] = pct(70) ? 0 : (unsigned char)rnd64();
		bhs[41] = rnd(3);
		bhs[43] = rnd(3);
		break;
	}
	case ISDM_OP_LOGIN_RSP:
		bhs[2] = pct(70) ? 0 : (unsigned char)rnd64();
		bhs[3] = pct(70) ? 0 : (unsigned char)rnd64();
		rnd_fill(bhs + 8, 8);			/* ISID, TSIH */
		bhs[36] = pct(50) ? 0 : rnd(4);		/* status class */
		bhs[37] = pct(50) ? 0 : (unsigned char)rnd64();
		break;
	default:
		rnd_fill(bhs + 20, 4);
		rnd_fill(bhs + 36, 12);
		break;
	}
	/* now and then one more word of noise anywhere past the ITT */
	if (hostile && pct(30))
		rnd_fill(bhs + 20 + 4 * rnd(7), 4);

	/*
	 * The iSER header: always control type; reserved bits (to be
	 * ignored), or Write/Read STag valid with random STags and VAs,
	 * which a target's control PDU does not carry
	 */
	if (!hostile && pct(10)) {
		t.tx_buf[0] |= rnd(4);
	} else if (hostile && pct(30)) {
		t.tx_buf[0] |= rnd(16);
		rnd_fill(t.tx_buf + 1, 3);
		rnd_fill(t.tx_buf + 4, HDR_LEN - 4);
	}
	/* Send with Invalidate where the PDU has no business with one */
	if (hostile && !use_inv && pct(send_inv ? 20 : 5)) {
		use_inv = 1;
		inv = pct(30) && tc >= 0 ? live[tc].stag : rnd_wrong_stag(cur);
	}
	if (use_inv)
		rs.invalidates++;
	len = hl + ahs * 4 + ((dlen + 3) & ~3u);
	if (rverbose) {
		printf("pdu %lu t=%.6f ", ridx, wall_now());
		printf("%s op=0x%02x flags=0x%02x itt=0x%08x%s dlen=%u ahs=%u iser=0x%02x",
		       hostile ? "hostile" : "plausible", op, bhs[1],
		       itt, tc >= 0 ? "(live)" : "", dlen, bhs[4],
		       t.tx_buf[0]);
		if (op == ISDM_OP_SCSI_RSP)
			printf(" rsp=0x%02x status=0x%02x", bhs[2], bhs[3]);
		if (use_inv)
			printf(" inv=0x%08x", inv);
		if (wc >= 0)
			printf(" write=0x%08x+%u,%u", live[wc].stag, woff,
			       wlen);
		printf("\n");
		fflush(stdout);
	}
	ret = post_rsp(len, w, nw, use_inv, inv);
	/*
	 * A Send flushed because the connection was already gone is sent
	 * again on the next one, a few times at most; one that reached
	 * the wire counts, whatever became of it.
	 */
	if (ret && !nw && (t.send_status < 0 ||
			   t.send_status == IBV_WC_WR_FLUSH_ERR) &&
	    ++retries < RETRY_MAX) {
		return -1;
	}
	if (ret)
		rs.unsent++;
	rs.hostile += hostile;
	retries = 0;
	rs.sent++;
	ridx++;
	if (!(rs.sent % 100) && !rverbose) {
		printf("random progress sent=%lu connections=%lu\n", rs.sent,
		       rs.connections);
		fflush(stdout);
	}
	if (ridx >= rend && !rdone) {
		rdone = 1;
		printf("random done sent=%lu connections=%lu\n", rs.sent,
		       rs.connections);
		fflush(stdout);
	}
	/* a SCSI Response answers its command, whatever the initiator makes of it */
	if (op == ISDM_OP_SCSI_RSP && tc >= 0)
		live_del(tc);
	return ret ? -1 : 0;
}
