// SPDX-License-Identifier: GPL-2.0
/*
 * iSER wire layer: the iSER header of every control-type PDU, and the
 * checks every PDU a peer sends passes before any other code reads it
 * (RFC 5046 section 9; IBTA Annex A12). The connection's negotiation, CM
 * private data and Hello, is in negotiate.c.
 *
 * Pure functions: no allocation, no locks, no kernel objects. Byte buffers
 * in, structs and errno out. The same file is compiled into iser_dm.ko and
 * into the userspace unit tests and fuzzers (with tests/unit/kshim.h).
 *
 * Documentation/wire-protocol.md gives the rule behind each check, with its
 * RFC 5046 section or IBTA Annex A12 compliance item.
 */
#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <asm/byteorder.h>
#endif

#include "isdm/iser_wire.h"

static inline __u32 isdm_rd_be24(const __u8 *p)
{
	return ((__u32)p[0] << 16) | ((__u32)p[1] << 8) | p[2];
}

static inline __u32 isdm_rd_be32(const __u8 *p)
{
	return ((__u32)p[0] << 24) | ((__u32)p[1] << 16) |
	       ((__u32)p[2] << 8) | p[3];
}

static inline __u64 isdm_va(__be32 hi, __be32 lo)
{
	return ((__u64)be32_to_cpu(hi) << 32) | be32_to_cpu(lo);
}

/* ------------------------------------------------------------------ */
/* Control-type PDUs (RFC 5046 9.1, 9.2; Annex A12 table 4)           */
/* ------------------------------------------------------------------ */

/**
 * isdm_hdr_build() - write the iSER header of a control-type PDU
 * @buf: where the header goes
 * @len: room at @buf
 * @mode: the connection's mode (header form)
 * @st: STags to advertise, or NULL for none
 *
 * A STag whose valid bit is clear is written as zero (RFC 5046 9.2). In
 * the 12-byte form no address is carried: with ZBVA the tagged offset is
 * the buffer offset.
 *
 * Return: the header length, -ENOBUFS when @len is too small, -EINVAL
 * when @mode has no header form or a ZBVA header is asked to carry an
 * address.
 */
int isdm_hdr_build(void *buf, size_t len, const struct isdm_mode *mode,
		   const struct isdm_stags *st)
{
	static const struct isdm_stags none;
	__u8 flags = ISDM_OP_CTRL;

	if (!st)
		st = &none;
	if (mode->hdr_len != ISDM_HDR_LEN_RFC &&
	    mode->hdr_len != ISDM_HDR_LEN_EXT)
		return -EINVAL;
	if (len < mode->hdr_len)
		return -ENOBUFS;
	if (st->wsv)
		flags |= ISDM_CTRL_WSV;
	if (st->rsv)
		flags |= ISDM_CTRL_RSV;

	if (mode->hdr_len == ISDM_HDR_LEN_RFC) {
		struct isdm_hdr_rfc h = { .flags = flags };

		if ((st->wsv && st->write_va) || (st->rsv && st->read_va))
			return -EINVAL;
		if (st->wsv)
			h.write_stag = cpu_to_be32(st->write_stag);
		if (st->rsv)
			h.read_stag = cpu_to_be32(st->read_stag);
		memcpy(buf, &h, sizeof(h));
	} else {
		struct isdm_hdr_ext h = { .flags = flags };

		if (st->wsv) {
			h.write_stag = cpu_to_be32(st->write_stag);
			h.write_va_hi = cpu_to_be32(st->write_va >> 32);
			h.write_va_lo = cpu_to_be32((__u32)st->write_va);
		}
		if (st->rsv) {
			h.read_stag = cpu_to_be32(st->read_stag);
			h.read_va_hi = cpu_to_be32(st->read_va >> 32);
			h.read_va_lo = cpu_to_be32((__u32)st->read_va);
		}
		memcpy(buf, &h, sizeof(h));
	}
	return mode->hdr_len;
}

/**
 * isdm_msg_kind() - what kind of iSER message a receive buffer holds
 * @buf: the received bytes
 * @len: how many
 *
 * Return: an &enum isdm_msg, -ENODATA for an empty message, -EPROTO for a
 * reserved iSER opcode (RFC 5046 9.1).
 */
int isdm_msg_kind(const void *buf, size_t len)
{
	if (!buf || !len)
		return -ENODATA;
	switch (*(const __u8 *)buf & ISDM_OP_MASK) {
	case ISDM_OP_CTRL:
		return ISDM_MSG_PDU;
	case ISDM_OP_HELLO:
		return ISDM_MSG_HELLO;
	case ISDM_OP_HELLO_REPLY:
		return ISDM_MSG_HELLO_REPLY;
	default:
		return -EPROTO;
	}
}
EXPORT_SYMBOL_GPL(isdm_msg_kind);

static void isdm_hdr_stags(const void *buf, const struct isdm_mode *mode,
			   struct isdm_stags *st)
{
	__u8 flags = *(const __u8 *)buf;

	memset(st, 0, sizeof(*st));
	st->wsv = flags & ISDM_CTRL_WSV;
	st->rsv = flags & ISDM_CTRL_RSV;
	/* a field whose valid bit is clear is ignored (RFC 5046 9.2) */
	if (mode->hdr_len == ISDM_HDR_LEN_RFC) {
		struct isdm_hdr_rfc h;

		memcpy(&h, buf, sizeof(h));
		if (st->wsv)
			st->write_stag = be32_to_cpu(h.write_stag);
		if (st->rsv)
			st->read_stag = be32_to_cpu(h.read_stag);
	} else {
		struct isdm_hdr_ext h;

		memcpy(&h, buf, sizeof(h));
		if (st->wsv) {
			st->write_stag = be32_to_cpu(h.write_stag);
			st->write_va = isdm_va(h.write_va_hi, h.write_va_lo);
		}
		if (st->rsv) {
			st->read_stag = be32_to_cpu(h.read_stag);
			st->read_va = isdm_va(h.read_va_hi, h.read_va_lo);
		}
	}
}

/* Is @opcode one the peer of @role may send at all? */
static bool isdm_opcode_from_peer(__u8 opcode, enum isdm_role role)
{
	if (role == ISDM_ROLE_TARGET)
		return opcode <= ISDM_OP_LOGOUT_REQ || opcode == ISDM_OP_SNACK;
	switch (opcode) {
	case ISDM_OP_NOP_IN ... ISDM_OP_LOGOUT_RSP:
	case ISDM_OP_R2T:
	case ISDM_OP_ASYNC:
	case ISDM_OP_REJECT:
		return true;
	default:
		return false;
	}
}

/**
 * isdm_rx_parse() - validate a received control-type PDU
 * @buf: the received bytes (iSER header first)
 * @len: how many bytes the receive completion reported
 * @mode: the connection's mode (header form)
 * @role: our side; the peer's opcodes are the other side's
 * @phase: Login Phase or Full Feature Phase
 * @max_data_len: the largest data segment we accept (our RecvDataSegmentLength)
 * @pdu: the decoded PDU, filled on success
 *
 * Checks, in order: the length covers the iSER header and the BHS; the
 * iSER opcode is control-type; the iSCSI opcode is one the peer sends; it
 * is not forbidden with iSER (SNACK; Data-In and R2T travel as RDMA
 * operations, never as Sends); it is allowed in @phase; the data segment
 * fits @max_data_len; the received length covers the AHS and the data
 * segment and exceeds them by no more than the padding to 4 bytes; a
 * Data-Out carries the reserved Target Transfer Tag 0xffffffff, since with
 * iSER every Data-Out is unsolicited (RFC 5046 7.3.4: solicited data moves
 * by RDMA Read, never by an R2T; RFC 7143 11.7.4: unsolicited data names
 * no transfer).
 *
 * Return: 0 or a distinct negative errno for each malformation:
 * -ENODATA empty, -EMSGSIZE shorter than iSER header + BHS, -EPROTO not a
 * control-type iSER message, -EOPNOTSUPP opcode the peer never sends,
 * -EPROTOTYPE PDU that iSER forbids in a Send, -EPERM PDU not allowed in
 * this phase, -E2BIG data segment above @max_data_len, -EOVERFLOW fewer
 * bytes than AHS and data segment need, -EBADMSG bytes past the padding,
 * -EBADE a Data-Out that names a Target Transfer Tag.
 */
int isdm_rx_parse(const void *buf, size_t len, const struct isdm_mode *mode,
		  enum isdm_role role, enum isdm_phase phase,
		  __u32 max_data_len, struct isdm_rx_pdu *pdu)
{
	const __u8 *p = buf;
	const __u8 *bhs;
	size_t need, padded;
	bool login, in_login;
	__u8 opcode;
	int cls;

	if (!buf || !len)
		return -ENODATA;
	if (len < (size_t)mode->hdr_len + ISDM_BHS_LEN)
		return -EMSGSIZE;
	if ((p[0] & ISDM_OP_MASK) != ISDM_OP_CTRL)
		return -EPROTO;

	bhs = p + mode->hdr_len;
	opcode = bhs[0] & ISDM_BHS_OPCODE_MASK;
	if (!isdm_opcode_from_peer(opcode, role))
		return -EOPNOTSUPP;
	cls = isdm_pdu_classify(opcode);
	if (cls == ISDM_PDU_FORBIDDEN || cls == ISDM_PDU_DATA)
		return -EPROTOTYPE;
	login = cls == ISDM_PDU_LOGIN;
	in_login = phase == ISDM_PHASE_LOGIN;
	if (login != in_login)
		return -EPERM;

	pdu->opcode = opcode;
	pdu->bhs_off = mode->hdr_len;
	pdu->ahs_len = (__u32)bhs[4] * 4;
	pdu->data_len = isdm_rd_be24(bhs + 5);
	pdu->data_off = pdu->bhs_off + ISDM_BHS_LEN + pdu->ahs_len;
	if (pdu->data_len > max_data_len)
		return -E2BIG;
	need = (size_t)pdu->data_off + pdu->data_len;
	padded = (size_t)pdu->data_off + ((pdu->data_len + 3) & ~3u);
	if (len < need)
		return -EOVERFLOW;
	if (len > padded)
		return -EBADMSG;
	if (opcode == ISDM_OP_DATA_OUT &&
	    isdm_rd_be32(bhs + 20) != ISDM_RESERVED_TAG)
		return -EBADE;
	isdm_hdr_stags(buf, mode, &pdu->stags);
	return 0;
}

/**
 * isdm_rx_strerror() - what isdm_rx_parse() found wrong, in words
 * @err: its return value
 *
 * For the one log line a side writes about a refused PDU.
 *
 * Return: a constant string; "malformed" for an errno it does not return.
 */
const char *isdm_rx_strerror(int err)
{
	switch (err) {
	case -ENODATA:
		return "empty message";
	case -EMSGSIZE:
		return "shorter than iSER header and BHS";
	case -EPROTO:
		return "not an iSCSI control-type iSER message";
	case -EOPNOTSUPP:
		return "opcode the peer never sends";
	case -EPROTOTYPE:
		return "PDU iSER never carries in a Send";
	case -EPERM:
		return "opcode not allowed in this phase";
	case -E2BIG:
		return "DataSegmentLength above our receive length";
	case -EOVERFLOW:
		return "DataSegmentLength beyond the bytes received";
	case -EBADMSG:
		return "bytes past the padded data segment";
	case -EBADE:
		return "Data-Out with a Target Transfer Tag (iSER has no R2T)";
	default:
		return "malformed";
	}
}

/**
 * isdm_check_cmd_stags() - check a SCSI Command's STags against its direction
 * @bhs: the command's BHS (%ISDM_BHS_LEN bytes)
 * @st: the STags from its iSER header
 * @unsol_len: bytes of the write data that arrive unsolicited (immediate
 *	data plus unsolicited Data-Out), as the session's keys allow
 *
 * RFC 5046 7.3.1, 9.2: a read needs a Read STag, a write whose data is not
 * all unsolicited needs a Write STag, and a command advertises no STag for
 * a direction it does not have. RFC 3720 10.3.1: only a write (W=1)
 * carries data from the initiator; a data segment on any other command is
 * refused before the target core sees it (LIO would take it as immediate
 * data and, for a READ, execute the command before its CmdSN is due).
 *
 * Return: 0; -EINVAL when @bhs is not a SCSI Command; -EBADMSG when a STag
 * is advertised for a direction the command lacks; -EPROTO when a command
 * without the W bit carries data; -ENOKEY when a STag the transfer needs
 * is missing; -EOVERFLOW when @unsol_len exceeds the expected data
 * transfer length.
 */
int isdm_check_cmd_stags(const void *bhs, const struct isdm_stags *st,
			 __u32 unsol_len)
{
	const __u8 *b = bhs;
	bool rd, wr;
	__u32 edtl;

	if ((b[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_SCSI_CMD)
		return -EINVAL;
	rd = b[1] & ISDM_BHS_CMD_READ;
	wr = b[1] & ISDM_BHS_CMD_WRITE;
	edtl = isdm_rd_be32(b + 20);

	if ((st->rsv && !rd) || (st->wsv && !wr))
		return -EBADMSG;
	if (!wr && unsol_len)
		return -EPROTO;
	if (wr && unsol_len > edtl)
		return -EOVERFLOW;
	if (rd && !wr && edtl && !st->rsv)
		return -ENOKEY;
	if (rd && wr && !st->rsv)
		return -ENOKEY;
	if (wr && edtl > unsol_len && !st->wsv)
		return -ENOKEY;
	return 0;
}
EXPORT_SYMBOL_GPL(isdm_check_cmd_stags);

/**
 * isdm_cmd_unsol_len() - write data of a SCSI Command that arrives unsolicited
 * @bhs: the command's BHS (%ISDM_BHS_LEN bytes)
 * @imm_len: its immediate data (the DataSegmentLength)
 * @initial_r2t: the session's InitialR2T
 * @first_burst: the session's FirstBurstLength
 *
 * RFC 3720 10.3.1, 12.11: unsolicited Data-Out PDUs may follow a command
 * only under InitialR2T=No and only when its F bit is 0; with F=1 the
 * immediate data is all the initiator sends unasked. Otherwise the
 * unsolicited part is FirstBurstLength or the expected data transfer
 * length, whichever is smaller (and never less than the immediate data).
 * A command without the W bit has no unsolicited Data-Out: only its
 * immediate data counts (any is illegal, see isdm_check_cmd_stags()).
 * The result is what isdm_check_cmd_stags() takes as @unsol_len.
 *
 * Return: the number of bytes that arrive without a Write STag being used.
 */
__u32 isdm_cmd_unsol_len(const void *bhs, __u32 imm_len, bool initial_r2t,
			 __u32 first_burst)
{
	const __u8 *b = bhs;
	__u32 edtl = isdm_rd_be32(b + 20);
	__u32 burst = first_burst < edtl ? first_burst : edtl;

	if (initial_r2t || (b[1] & ISDM_BHS_FINAL) ||
	    !(b[1] & ISDM_BHS_CMD_WRITE))
		return imm_len;
	return imm_len > burst ? imm_len : burst;
}
EXPORT_SYMBOL_GPL(isdm_cmd_unsol_len);

/* SPC-4 4.2.5.1: a CDB's length from its operation code (group code) */
static __u32 isdm_cdb_len(const __u8 *cdb)
{
	static const __u8 group_len[8] = { 6, 10, 10, 12, 16, 12, 10, 10 };

	if (cdb[0] == 0x7f)	/* variable length: ADDITIONAL CDB LENGTH + 8 */
		return (__u32)cdb[7] + 8;
	return group_len[cdb[0] >> 5];
}

/**
 * isdm_check_ahs() - check the AHS and the CDB length of a received PDU
 * @bhs: the PDU's BHS (%ISDM_BHS_LEN bytes)
 * @ahs: the AHS, the @ahs_len bytes right after the BHS
 * @ahs_len: TotalAHSLength * 4, as isdm_rx_parse() decoded it
 *
 * RFC 3720 10.2.2 defines AHS only for the SCSI Command, and LIO
 * (iscsit_setup_scsi_cmd()) trusts what it is given: it reads the first
 * AHS only, copies AHSLength - 1 bytes of an extended CDB after the 16 of
 * the BHS, then copies as many CDB bytes as the operation code says. So a
 * PDU passes only when:
 *
 * - it has no AHS, or it is a SCSI Command;
 * - each segment's 4-byte header and its data padded to 4 bytes
 *   (round_up(3 + AHSLength, 4) bytes in all) lie inside @ahs_len, so
 *   the segments fill it exactly;
 * - each segment is of a type the receiver handles, with its length:
 *   an extended CDB (type 1) first of all, at most once, with AHSLength
 *   2 to 245 (a CDB of 17 to 260 bytes); an Expected Bidirectional
 *   Read-Data Length (type 2) at most once, with AHSLength 5, on a
 *   command with both R and W set (LIO then rejects the command itself:
 *   it has no bidirectional commands);
 * - the CDB length its operation code implies (variable length: byte 7
 *   plus 8) fits in the CDB bytes given: 16, plus AHSLength - 1 with an
 *   extended CDB.
 *
 * Padding bytes are not looked at. @ahs may be NULL when @ahs_len is 0.
 *
 * Return: 0 or a distinct negative errno: -EPROTO an AHS on a PDU other
 * than a SCSI Command, -EMSGSIZE a segment overruns TotalAHSLength,
 * -EOPNOTSUPP a type not handled, -EINVAL a handled type with a wrong
 * AHSLength, out of place or repeated, -EBADMSG a CDB longer than the
 * bytes given.
 */
int isdm_check_ahs(const void *bhs, const void *ahs, __u32 ahs_len)
{
	const __u8 *b = bhs, *a = ahs;
	__u32 off = 0, cdb_len = ISDM_CDB_LEN;
	bool bidi = false;

	if ((b[0] & ISDM_BHS_OPCODE_MASK) != ISDM_OP_SCSI_CMD)
		return ahs_len ? -EPROTO : 0;

	while (off < ahs_len) {
		__u32 len, seg;
		__u8 type;

		if (ahs_len - off < ISDM_AHS_HDR_LEN)
			return -EMSGSIZE;
		len = (__u32)a[off] << 8 | a[off + 1];
		type = a[off + 2];
		seg = (3 + len + 3) & ~3u;
		if (seg > ahs_len - off)
			return -EMSGSIZE;
		switch (type) {
		case ISDM_AHS_EXT_CDB:
			if (off || len < 2 ||
			    len > ISDM_CDB_MAX - ISDM_CDB_LEN + 1)
				return -EINVAL;
			cdb_len += len - 1;
			break;
		case ISDM_AHS_BIDI_READ:
			if (bidi || len != ISDM_AHS_BIDI_READ_LEN ||
			    (b[1] & (ISDM_BHS_CMD_READ | ISDM_BHS_CMD_WRITE)) !=
			    (ISDM_BHS_CMD_READ | ISDM_BHS_CMD_WRITE))
				return -EINVAL;
			bidi = true;
			break;
		default:
			return -EOPNOTSUPP;
		}
		off += seg;
	}

	/* the operation code and byte 7 are in the BHS (CDB at 32) */
	if (isdm_cdb_len(b + 32) > cdb_len)
		return -EBADMSG;
	return 0;
}

/**
 * isdm_pdu_classify() - RFC 5046 7.1/7.2 type of an iSCSI PDU
 * @opcode: iSCSI opcode (BHS byte 0, low 6 bits)
 *
 * Return: an &enum isdm_pdu_class, or -EOPNOTSUPP for an unknown opcode.
 */
int isdm_pdu_classify(__u8 opcode)
{
	switch (opcode) {
	case ISDM_OP_DATA_IN:
	case ISDM_OP_R2T:
		return ISDM_PDU_DATA;
	case ISDM_OP_LOGIN_REQ:
	case ISDM_OP_LOGIN_RSP:
		return ISDM_PDU_LOGIN;
	case ISDM_OP_SNACK:
		return ISDM_PDU_FORBIDDEN;
	case ISDM_OP_NOP_OUT:
	case ISDM_OP_SCSI_CMD:
	case ISDM_OP_TMF_REQ:
	case ISDM_OP_TEXT_REQ:
	case ISDM_OP_DATA_OUT:
	case ISDM_OP_LOGOUT_REQ:
	case ISDM_OP_NOP_IN:
	case ISDM_OP_SCSI_RSP:
	case ISDM_OP_TMF_RSP:
	case ISDM_OP_TEXT_RSP:
	case ISDM_OP_LOGOUT_RSP:
	case ISDM_OP_ASYNC:
	case ISDM_OP_REJECT:
		return ISDM_PDU_CONTROL;
	default:
		return -EOPNOTSUPP;
	}
}

/**
 * isdm_rsp_answers() - whether a target PDU can answer a given request
 * @req_opcode: opcode of the request whose task the PDU's ITT names (BHS
 *	byte 0 as sent; the immediate bit is ignored)
 * @rsp_opcode: opcode of the received PDU (BHS byte 0)
 *
 * RFC 3720 section 10 (10.4, 10.6 to 10.8, 10.11, 10.13, 10.15, 10.19):
 * the ITT of a NOP-In names a NOP-Out, that of a SCSI Response, Data-In
 * or R2T a SCSI Command, and a TMF, Login, Text or Logout Response names
 * a request of its own kind. An initiator must not let a PDU complete a task of another
 * kind (libiscsi of some kernels looks such an ITT up without checking,
 * and would complete a READ as a success without its data).
 *
 * Return: true when a PDU of @rsp_opcode may answer a request of
 * @req_opcode.
 */
bool isdm_rsp_answers(__u8 req_opcode, __u8 rsp_opcode)
{
	__u8 req = req_opcode & ISDM_BHS_OPCODE_MASK;

	switch (rsp_opcode & ISDM_BHS_OPCODE_MASK) {
	case ISDM_OP_NOP_IN:
		return req == ISDM_OP_NOP_OUT;
	case ISDM_OP_SCSI_RSP:
	case ISDM_OP_DATA_IN:
	case ISDM_OP_R2T:
		return req == ISDM_OP_SCSI_CMD;
	case ISDM_OP_TMF_RSP:
		return req == ISDM_OP_TMF_REQ;
	case ISDM_OP_LOGIN_RSP:
		return req == ISDM_OP_LOGIN_REQ;
	case ISDM_OP_TEXT_RSP:
		return req == ISDM_OP_TEXT_REQ;
	case ISDM_OP_LOGOUT_RSP:
		return req == ISDM_OP_LOGOUT_REQ;
	default:
		return false;
	}
}
EXPORT_SYMBOL_GPL(isdm_rsp_answers);

/**
 * isdm_send_op() - which Send-type message carries an outgoing PDU
 * @bhs: the PDU's BHS (%ISDM_BHS_LEN bytes)
 * @adv: for a SCSI Response, the STags its command advertised; else NULL
 * @mode: the connection's mode
 * @op: the answer, filled on success
 *
 * RFC 5046 7.3: SCSI Response with SendInvSE of the Read STag, else of the
 * Write STag, else SendSE; unsolicited Data-Out with Send (F=0) or SendSE
 * (F=1); every other control-type PDU with SendSE. Annex A12 CA12-11: when
 * Send with Invalidate was not negotiated, SendSE replaces SendInvSE (the
 * initiator then invalidates locally). Login PDUs, which RFC 5046 4.1
 * leaves to the transport, go as SendSE as well.
 *
 * Return: 0, -EPROTOTYPE for a data-type or forbidden PDU (never a Send),
 * -EOPNOTSUPP for an unknown opcode.
 */
int isdm_send_op(const void *bhs, const struct isdm_stags *adv,
		 const struct isdm_mode *mode, struct isdm_send_op *op)
{
	const __u8 *b = bhs;
	__u8 opcode = b[0] & ISDM_BHS_OPCODE_MASK;
	int cls = isdm_pdu_classify(opcode);

	if (cls < 0)
		return cls;
	if (cls == ISDM_PDU_DATA || cls == ISDM_PDU_FORBIDDEN)
		return -EPROTOTYPE;

	op->kind = ISDM_SEND_SE;
	op->inv_stag = 0;
	if (opcode == ISDM_OP_DATA_OUT && !(b[1] & ISDM_BHS_FINAL)) {
		op->kind = ISDM_SEND;
	} else if (opcode == ISDM_OP_SCSI_RSP && adv && mode->send_inv &&
		   (adv->rsv || adv->wsv)) {
		op->kind = ISDM_SEND_INV_SE;
		op->inv_stag = adv->rsv ? adv->read_stag : adv->write_stag;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(isdm_send_op);
