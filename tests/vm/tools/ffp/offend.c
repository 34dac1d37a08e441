// SPDX-License-Identifier: GPL-2.0
/*
 * iser_ffp: single PDUs in full feature phase that a target must refuse,
 * and the iSER Hellos (RFC 5046 5.1.3, 10.1.3).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ffp.h"

int text_parts, text_final;
int rbuf_written;
static unsigned char rbuf[4096];	/* readimm's Read STag names it */

/* a variable-length CDB of 32 bytes (SPC-4 4.2.3) for an unsupported
 * service action
 */
static void varlen_cdb(unsigned char *cdb)
{
	memset(cdb, 0, 32);
	cdb[0] = 0x7f;			/* VARIABLE LENGTH */
	cdb[7] = 32 - 8;		/* ADDITIONAL CDB LENGTH */
	cdb[8] = 0xff;			/* SERVICE ACTION 0xfff0 */
	cdb[9] = 0xf0;
}

/* RFC 3720 10.10: SendTargets=All, then empty continuations */
static void text_exchange(void)
{
	static const char st[] = "SendTargets=All";
	unsigned char *bhs;
	uint32_t ttt = 0xffffffff, dlen = sizeof(st);

	for (text_parts = 0; text_parts < 16; ) {
		bhs = pdu_start(ISDM_OP_TEXT_REQ, ISDM_BHS_FINAL, dlen);
		itool_put_be32(bhs + 16, 0x6000);
		itool_put_be32(bhs + 20, ttt);
		itool_put_be32(bhs + 24, cmd_sn++);
		itool_put_be32(bhs + 28, exp_stat_sn);
		if (dlen)
			memcpy(bhs + ISDM_BHS_LEN, st, dlen);
		if (send_buf(HDR + ((dlen + 3) & ~3u)))
			return;
		bhs = answer();
		if (!bhs || (bhs[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_TEXT_RSP) {
			note_answer(bhs);
			return;
		}
		text_parts++;
		if (bhs[1] & ISDM_BHS_FINAL) {
			text_final = 1;
			return;
		}
		if (!(bhs[1] & 0x40))	/* neither F nor C */
			return;
		ttt = itool_get_be32(bhs + 20);
		dlen = 0;	/* the empty continuation */
	}
}

/* A SCSI Command PDU for @mode, with its AHS; the bytes to send. */
static uint32_t scsi_pdu(enum mode mode)
{
	unsigned char *bhs, *ahs, cdb[32];
	unsigned char flags = ISDM_BHS_FINAL;
	uint32_t edtl = 0, dlen = 0, words = 0;

	varlen_cdb(cdb);
	if (mode == BIDI) {
		flags |= ISDM_BHS_CMD_READ | ISDM_BHS_CMD_WRITE;
		edtl = 4096;
	} else if (mode == IMMF1) {
		flags |= ISDM_BHS_CMD_WRITE;
		edtl = 8192;
		dlen = 4096;
	}
	bhs = pdu_start(ISDM_OP_SCSI_CMD, flags, dlen);
	ahs = bhs + ISDM_BHS_LEN;
	/* the buffer still holds the login keys there */
	memset(ahs, 0, 64);
	itool_put_be32(bhs + 16, 0x7000 + mode);
	itool_put_be32(bhs + 20, edtl);
	itool_put_be32(bhs + 24, cmd_sn++);
	itool_put_be32(bhs + 28, exp_stat_sn);
	/* TEST UNIT READY unless said otherwise */
	switch (mode) {
	case AHS0:	/* AHSLength 0, type 1 (extended CDB) */
		words = 1;
		ahs[2] = 1;
		break;
	case AHSOVER:	/* AHSLength 5: 8 bytes, in 4 */
		words = 1;
		ahs[1] = 5;
		ahs[2] = 1;
		break;
	case AHSTYPE:	/* reserved type 3 */
		words = 2;
		ahs[1] = 5;
		ahs[2] = 3;
		break;
	case AHSSHORT:	/* 17 of the 32 CDB bytes: AHSLength 2 */
		memcpy(bhs + 32, cdb, 16);
		words = 2;
		ahs[1] = 2;
		ahs[2] = 1;
		ahs[4] = cdb[16];
		break;
	case CDBLONG:
		memcpy(bhs + 32, cdb, 16);
		break;
	case ECDB:	/* RFC 3720 10.2.2.3: AHSLength = 32 - 15 */
		memcpy(bhs + 32, cdb, 16);
		words = 5;
		ahs[1] = 17;
		ahs[2] = 1;
		memcpy(ahs + 4, cdb + 16, 16);
		break;
	case BIDI:	/* RFC 3720 10.2.2.4: AHSLength 5, type 2 */
		bhs[32] = 0x53;		/* XDWRITEREAD(10) */
		bhs[40] = 8;		/* 8 blocks */
		words = 2;
		ahs[1] = 5;
		ahs[2] = 2;
		itool_put_be32(ahs + 4, 4096);
		/* fake STags: LIO refuses the command before any transfer */
		conn.tx_buf[0] |= ISDM_CTRL_WSV | ISDM_CTRL_RSV;
		itool_put_be32(conn.tx_buf + 4, 0x1234);
		itool_put_be32(conn.tx_buf + 16, 0x5678);
		break;
	case IMMF1:	/* WRITE(10), LBA 0, 16 blocks of 512 */
		bhs[32] = 0x2a;
		bhs[40] = 16;
		memset(ahs, 0x5a, dlen);
		break;
	default:
		break;
	}
	bhs[4] = words;
	return HDR + words * 4 + dlen;
}

/* Send the PDU of @mode and note what came back. */
void offend(enum mode mode)
{
	unsigned char *bhs, *msg;
	uint32_t len;
	int n;

	switch (mode) {
	case SNACK:
		bhs = pdu_start(ISDM_OP_SNACK, ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0xffffffff);
		break;
	case NOPTTT:
		/* a ping (an ITT) that also answers a NOP-In (a TTT) */
		bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x5700);
		itool_put_be32(bhs + 20, 0x12345678);
		break;
	case LOGIN:
		bhs = pdu_start(ISDM_OP_LOGIN_REQ | ISDM_BHS_IMMEDIATE, 0x87, 0);
		itool_put_be32(bhs + 16, 0x2000);
		break;
	case SCSI:
		/* TEST UNIT READY, immediate, no data */
		bhs = pdu_start(ISDM_OP_SCSI_CMD | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x3000);
		break;
	case BADDLEN:
		bhs = pdu_start(ISDM_OP_TEXT_REQ | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 4096);
		itool_put_be32(bhs + 16, 0x4000);
		break;
	case TEXTBAD:
		/* 3000 bytes: LIO's copy of it is a 4 KiB kmalloc object */
		bhs = pdu_start(ISDM_OP_TEXT_REQ | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 3000);
		itool_put_be32(bhs + 16, 0x4100);
		itool_put_be32(bhs + 20, 0xffffffff);
		msg = bhs + ISDM_BHS_LEN;
		n = snprintf((char *)msg, 3000, "HeaderDigest=None");
		memset(msg + n + 1, 0, 3000 - n - 1);
		memcpy(msg + n + 1, "X-org.debian.pad=", 17);
		memset(msg + n + 1 + 17, 'a', 3000 - n - 1 - 17 - 1);
		itool_put_be32(bhs + 24, cmd_sn);
		itool_put_be32(bhs + 28, exp_stat_sn);
		if (send_buf(HDR + 3000))
			return;
		note_answer(answer());
		return;
	case BIGSEND:
		bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 65536);
		itool_put_be32(bhs + 16, 0x5000);
		itool_put_be32(bhs + 20, 0xffffffff);
		memset(bhs + ISDM_BHS_LEN, 0x5a, 65536);
		send_buf(TX_SIZE);
		return;
	case TEXTCONT:
		text_exchange();
		return;
	case GAP:
		/* TEST UNIT READY one CmdSN ahead: LIO defers it for ever */
		bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x5200);
		itool_put_be32(bhs + 24, cmd_sn + 1);
		itool_put_be32(bhs + 28, exp_stat_sn);
		send_buf(HDR);
		return;
	case TMFSEQ:
		/* a TARGET WARM RESET in CmdSN order: LIO refuses it itself */
		bhs = pdu_start(ISDM_OP_TMF_REQ, ISDM_BHS_FINAL | 6, 0);
		itool_put_be32(bhs + 16, 0x5400);
		itool_put_be32(bhs + 20, 0xffffffff);
		itool_put_be32(bhs + 24, cmd_sn++);
		itool_put_be32(bhs + 28, exp_stat_sn);
		send_buf(HDR);	/* the ping after it reads the answer */
		return;
	case OVERRUN:
		/* F=0, W, nothing sent yet, CmdSN out of the window */
		bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_CMD_WRITE, 0);
		itool_put_be32(bhs + 16, 0x5500);
		itool_put_be32(bhs + 20, 4096);
		itool_put_be32(bhs + 24, cmd_sn + 0x10000000);
		itool_put_be32(bhs + 28, exp_stat_sn);
		bhs[32] = 0x2a;
		bhs[32 + 8] = 4096 / 512;
		if (send_buf(HDR))
			return;
		bhs = pdu_start(0x0f, ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x5501);
		send_buf(HDR);
		return;
	case DOBIG:
		/*
		 * 512 bytes announced, F=0: Data-Out follows; to an LBA
		 * beyond the LUN, so LIO has dropped one reference already
		 */
		bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_CMD_WRITE, 0);
		itool_put_be32(bhs + 16, 0x5600);
		itool_put_be32(bhs + 20, 512);
		itool_put_be32(bhs + 24, cmd_sn++);
		itool_put_be32(bhs + 28, exp_stat_sn);
		bhs[32] = 0x2a;
		itool_put_be32(bhs + 32 + 2, 0xfffffff0);
		bhs[32 + 8] = 1;
		if (send_buf(HDR))
			return;
		/* ... and 1024 bytes of it at offset 0, F=1 */
		bhs = pdu_start(ISDM_OP_DATA_OUT, ISDM_BHS_FINAL, 1024);
		itool_put_be32(bhs + 16, 0x5600);
		itool_put_be32(bhs + 20, 0xffffffff);
		itool_put_be32(bhs + 28, exp_stat_sn);
		memset(bhs + ISDM_BHS_LEN, 0x5a, 1024);
		send_buf(HDR + 1024);
		return;
	case DOSENSE:
	case DOGAP:
		/*
		 * F=0: Data-Out follows. dosense: 8 blocks but an EDTL of
		 * 2048, refused by LIO before its data; dogap: one block, one
		 * CmdSN ahead, deferred by LIO
		 */
		len = mode == DOSENSE ? 2048 : 512;
		bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_CMD_WRITE, 0);
		itool_put_be32(bhs + 16, 0x5800);
		itool_put_be32(bhs + 20, len);
		itool_put_be32(bhs + 24, mode == DOSENSE ? cmd_sn++ : cmd_sn + 1);
		itool_put_be32(bhs + 28, exp_stat_sn);
		bhs[32] = 0x2a;
		bhs[32 + 8] = mode == DOSENSE ? 8 : 1;
		if (send_buf(HDR))
			return;
		bhs = pdu_start(ISDM_OP_DATA_OUT, ISDM_BHS_FINAL, len);
		itool_put_be32(bhs + 16, 0x5800);
		itool_put_be32(bhs + 20, 0xffffffff);
		itool_put_be32(bhs + 28, exp_stat_sn);
		memset(bhs + ISDM_BHS_LEN, 0x5a, len);
		if (send_buf(HDR + len))
			return;
		if (mode == DOSENSE)
			note_answer(answer());
		return;
	case LOGOUTBAD:
	case LOGOUTCONN:
		/*
		 * a Logout Request (close the session, or only this
		 * connection, CID 0), immediate, and right behind it a
		 * reserved opcode, which closes the connection, most likely
		 * before the Logout Response has gone out
		 */
		bhs = pdu_start(ISDM_OP_LOGOUT_REQ | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL | (mode == LOGOUTCONN), 0);
		itool_put_be32(bhs + 16, 0x5900);
		itool_put_be32(bhs + 24, cmd_sn);
		itool_put_be32(bhs + 28, exp_stat_sn);
		if (send_buf(HDR))
			return;
		bhs = pdu_start(0x0f, ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x5901);
		send_buf(HDR);
		return;
	case DOSHORT:
		bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_CMD_WRITE, 0);
		itool_put_be32(bhs + 16, 0x5b00);
		itool_put_be32(bhs + 20, 51 * 512);
		itool_put_be32(bhs + 24, cmd_sn++);
		itool_put_be32(bhs + 28, exp_stat_sn);
		bhs[32] = 0x2a;
		bhs[32 + 8] = 51;
		if (send_buf(HDR))
			return;
		bhs = pdu_start(ISDM_OP_DATA_OUT, ISDM_BHS_FINAL, 640);
		itool_put_be32(bhs + 16, 0x5b00);
		itool_put_be32(bhs + 20, 0xffffffff);
		itool_put_be32(bhs + 28, exp_stat_sn);
		memset(bhs + ISDM_BHS_LEN, 0x5a, 640);
		if (send_buf(HDR + 640))
			return;
		note_answer(answer());
		return;
	case GAPRESET:
		/* WRITE(10), 16 blocks, 512 bytes immediate, F=1, one ahead */
		bhs = pdu_start(ISDM_OP_SCSI_CMD,
				ISDM_BHS_FINAL | ISDM_BHS_CMD_WRITE, 512);
		/* a Write STag that is never read: the command is aborted */
		conn.tx_buf[0] |= ISDM_CTRL_WSV;
		itool_put_be32(conn.tx_buf + 4, 0x1234);
		itool_put_be32(bhs + 16, 0x5a00);
		itool_put_be32(bhs + 20, 8192);
		itool_put_be32(bhs + 24, cmd_sn + 1);
		itool_put_be32(bhs + 28, exp_stat_sn);
		bhs[32] = 0x2a;
		bhs[32 + 8] = 16;
		memset(bhs + ISDM_BHS_LEN, 0x5a, 512);
		if (send_buf(HDR + 512))
			return;
		/* LOGICAL UNIT RESET of LUN 0, immediate */
		bhs = pdu_start(ISDM_OP_TMF_REQ | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL | 5, 0);
		itool_put_be32(bhs + 16, 0x5a01);
		itool_put_be32(bhs + 20, 0xffffffff);
		itool_put_be32(bhs + 24, cmd_sn);
		itool_put_be32(bhs + 28, exp_stat_sn);
		if (send_buf(HDR))
			return;
		/* LIO's TMR work aborts the WRITE meanwhile */
		sleep(1);
		return;
	case READIMM: {
		struct ibv_mr *mr;
		uint64_t va = (uintptr_t)rbuf;
		unsigned int i;

		/* a target that executes the READ overwrites this */
		memset(rbuf, 0xa5, sizeof(rbuf));
		mr = ibv_reg_mr(conn.pd, rbuf, sizeof(rbuf),
				IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE);
		if (!mr)
			return;
		bhs = pdu_start(ISDM_OP_SCSI_CMD,
				ISDM_BHS_FINAL | ISDM_BHS_CMD_READ, 512);
		conn.tx_buf[0] |= ISDM_CTRL_RSV;
		itool_put_be32(conn.tx_buf + 16, mr->rkey);
		itool_put_be32(conn.tx_buf + 20, va >> 32);
		itool_put_be32(conn.tx_buf + 24, va);
		itool_put_be32(bhs + 16, 0x5c00);
		itool_put_be32(bhs + 20, sizeof(rbuf));
		itool_put_be32(bhs + 24, cmd_sn + 1);
		itool_put_be32(bhs + 28, exp_stat_sn);
		bhs[32] = 0x28;
		bhs[32 + 8] = 8;
		memset(bhs + ISDM_BHS_LEN, 0x5a, 512);
		if (!send_buf(HDR + 512))
			note_answer(answer());
		/* the MR stays: the target may still write into it */
		for (i = 0; i < sizeof(rbuf); i++)
			if (rbuf[i] != 0xa5)
				rbuf_written = 1;
		return;
	}
	case ORDABORT:
		ordabort();
		return;
	case AFTERFAIL:
		/* a reserved opcode, and right behind it a command to LUN 5 */
		bhs = pdu_start(0x0f, ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x5300);
		if (send_buf(HDR))
			return;
		bhs = pdu_start(ISDM_OP_SCSI_CMD, ISDM_BHS_FINAL, 0);
		bhs[9] = 5;
		itool_put_be32(bhs + 16, 0x5301);
		itool_put_be32(bhs + 24, cmd_sn);
		itool_put_be32(bhs + 28, exp_stat_sn);
		send_buf(HDR);
		return;
	case AHSNOP:
		/* a ping with a well-formed extended-CDB AHS of 4 + 4 bytes */
		bhs = pdu_start(ISDM_OP_NOP_OUT | ISDM_BHS_IMMEDIATE,
				ISDM_BHS_FINAL, 0);
		itool_put_be32(bhs + 16, 0x5100);
		itool_put_be32(bhs + 20, 0xffffffff);
		itool_put_be32(bhs + 24, cmd_sn);
		itool_put_be32(bhs + 28, exp_stat_sn);
		bhs[4] = 2;
		memset(bhs + ISDM_BHS_LEN, 0, 8);
		bhs[ISDM_BHS_LEN + 1] = 5;
		bhs[ISDM_BHS_LEN + 2] = 1;
		if (send_buf(HDR + 8))
			return;
		for (;;) {
			n = recv_msg(&msg);
			if (n < HDR)
				return;
			bhs = msg + ISDM_HDR_LEN_EXT;
			if ((bhs[0] & ISDM_BHS_OPCODE_MASK) == ISDM_OP_NOP_IN) {
				scsi_status = -2;	/* answered */
				return;
			}
		}
	case AHS0:
	case AHSOVER:
	case AHSTYPE:
	case AHSSHORT:
	case CDBLONG:
	case ECDB:
	case BIDI:
	case IMMF1:
		len = scsi_pdu(mode);
		if (send_buf(len))
			return;
		note_answer(answer());
		return;
	default:
		return;
	}
	itool_put_be32(bhs + 24, cmd_sn);
	itool_put_be32(bhs + 28, exp_stat_sn);
	if (send_buf(HDR))
		return;
	if (mode == BADDLEN)
		return;
	note_answer(answer());
}

/*
 * Send a Hello of @len bytes with MaxVer/MinVer @ver; the HelloReply's
 * verdict: ok, rejected, or none (no HelloReply of 12 bytes came).
 */
static const char *hello_send(unsigned char ver, uint32_t len)
{
	struct isdm_hello h = {
		.flags = ISDM_OP_HELLO,
		.max_min_ver = ver,
		.ird = htons(1),
	};
	unsigned char *msg;

	memset(conn.tx_buf, 0, len);
	memcpy(conn.tx_buf, &h, sizeof(h));
	if (send_buf(len))
		return "none";
	len = recv_msg(&msg);
	if (len != ISDM_HELLO_LEN ||
	    (msg[0] & ISDM_OP_MASK) != ISDM_OP_HELLO_REPLY)
		return "none";
	return msg[0] & ISDM_HELLO_REPLY_REJ ? "rejected" : "ok";
}

const char *hello(enum mode mode)
{
	const unsigned char v1 = ISDM_ISER_VERSION << 4 | ISDM_ISER_VERSION;
	const char *res;

	switch (mode) {
	case HELLOVER:
		return hello_send(0x22, ISDM_HELLO_LEN);
	case HELLOBAD:
		return hello_send(0x12, ISDM_HELLO_LEN);
	case HELLOLEN:
		return hello_send(v1, ISDM_HELLO_LEN + 4);
	case HELLO2:
		res = hello_send(v1, ISDM_HELLO_LEN);
		/* the second one: no answer expected, the target closes */
		hello_send(v1, ISDM_HELLO_LEN);
		return res;
	default:
		return hello_send(v1, ISDM_HELLO_LEN);
	}
}
