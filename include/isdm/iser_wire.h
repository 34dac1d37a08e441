/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iSER wire format: the iSER headers, Hello/HelloReply, the IBTA Annex A12
 * CM private data, and the iSCSI constants the datamover looks at.
 *
 * This header builds in the kernel and in userspace (tests/unit, tests/fuzz)
 * and holds no logic; the pure functions that encode, decode and negotiate
 * live in drivers/core/wire.c and are declared at the end of this file.
 *
 * References: RFC 5046 and RFC 7145 section 9 (the iSER header, Hello and
 * HelloReply), IBTA Annex A12 sections A12.4 and A12.6 (tables 2-4: the CM
 * REQ and REP private data, the expanded header). Documentation/
 * wire-protocol.md explains every rule.
 */
#ifndef ISDM_ISER_WIRE_H
#define ISDM_ISER_WIRE_H

#include <linux/types.h>
#ifdef __KERNEL__
#include <linux/build_bug.h>
#else
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#endif

/*
 * Byte 0 of every iSER header: the iSER opcode in the high nibble
 * (RFC 5046 9.1), then flags.
 */
#define ISDM_OP_MASK		0xf0
#define ISDM_OP_CTRL		0x10	/* iSCSI control-type PDU */
#define ISDM_OP_HELLO		0x20	/* iSER Hello */
#define ISDM_OP_HELLO_REPLY	0x30	/* iSER HelloReply */
#define ISDM_CTRL_WSV		0x08	/* Write STag (and VA) valid */
#define ISDM_CTRL_RSV		0x04	/* Read STag (and VA) valid */
#define ISDM_HELLO_REPLY_REJ	0x01	/* HelloReply: target rejects */

/* The only iSER protocol version, RFC 5046 9.3/9.4. */
#define ISDM_ISER_VERSION	1

/* Header lengths: RFC 12-byte form, A12 28-byte expanded form. */
#define ISDM_HDR_LEN_RFC	12
#define ISDM_HDR_LEN_EXT	28
#define ISDM_HELLO_LEN		12

/* iSCSI Basic Header Segment, RFC 3720 10.2.1. */
#define ISDM_BHS_LEN		48
#define ISDM_BHS_OPCODE_MASK	0x3f
#define ISDM_BHS_IMMEDIATE	0x40
#define ISDM_BHS_FINAL		0x80	/* byte 1 */
#define ISDM_BHS_CMD_READ	0x40	/* byte 1 of a SCSI Command */
#define ISDM_BHS_CMD_WRITE	0x20	/* byte 1 of a SCSI Command */
#define ISDM_CDB_LEN		16	/* CDB bytes in the BHS (10.3.5) */

/*
 * Additional Header Segments, RFC 3720 10.2.2: each is AHSLength (2 bytes,
 * big-endian: the AHS-specific byte and the data, without the padding),
 * AHSType, an AHS-specific byte, then the data padded to 4 bytes.
 */
#define ISDM_AHS_HDR_LEN	4
#define ISDM_AHS_EXT_CDB	1	/* 10.2.2.3: AHSLength = CDB length - 15 */
#define ISDM_AHS_BIDI_READ	2	/* 10.2.2.4: AHSLength 5 */
#define ISDM_AHS_BIDI_READ_LEN	5
/* the longest CDB LIO takes (SCSI_MAX_VARLEN_CDB_SIZE) */
#define ISDM_CDB_MAX		260

/* iSCSI opcodes, RFC 3720 10.2.1.2. */
#define ISDM_OP_NOP_OUT		0x00
#define ISDM_OP_SCSI_CMD	0x01
#define ISDM_OP_TMF_REQ		0x02
#define ISDM_OP_LOGIN_REQ	0x03
#define ISDM_OP_TEXT_REQ	0x04
#define ISDM_OP_DATA_OUT	0x05
#define ISDM_OP_LOGOUT_REQ	0x06
#define ISDM_OP_SNACK		0x10
#define ISDM_OP_NOP_IN		0x20
#define ISDM_OP_SCSI_RSP	0x21
#define ISDM_OP_TMF_RSP		0x22
#define ISDM_OP_LOGIN_RSP	0x23
#define ISDM_OP_TEXT_RSP	0x24
#define ISDM_OP_DATA_IN		0x25

/* RFC 7143 11.7.4: the Target Transfer Tag of unsolicited data, no task */
#define ISDM_RESERVED_TAG	0xffffffffU
#define ISDM_OP_LOGOUT_RSP	0x26
#define ISDM_OP_R2T		0x31
#define ISDM_OP_ASYNC		0x32
#define ISDM_OP_REJECT		0x3f

/* Annex A12 CM private data flags (byte 0 of REQ and REP). */
#define ISDM_CM_ZBVA_EXC	0x80	/* CA12-4/8: ZBVA not supported/used */
#define ISDM_CM_SIE_EXC		0x40	/* CA12-4/8: no Send with Invalidate */

/*
 * Bytes a ULP hands to rdma_connect()/rdma_accept(). On IB and RoCE,
 * rdma_cm puts its own 36-byte header (Annex A11) in front and pads the
 * rest of the 92-byte REQ area with zeros.
 */
#define ISDM_CM_REQ_LEN		56
#define ISDM_CM_REP_LEN		4
#define ISDM_CM_MIN_LEN		4

/* iSER login keys, RFC 5046 section 6. */
#define ISDM_RDSL_MIN		512
#define ISDM_RDSL_MAX		16777215	/* 2^24 - 1 */
#define ISDM_RDSL_DEFAULT	8192

/**
 * struct isdm_hdr_rfc - iSER header of a control-type PDU, RFC form
 * @flags: %ISDM_OP_CTRL | %ISDM_CTRL_WSV | %ISDM_CTRL_RSV; low bits reserved
 * @rsvd: reserved, zero on send, ignored on receive
 * @write_stag: STag the target RDMA-Reads solicited write data from
 * @read_stag: STag the target RDMA-Writes read data to
 *
 * Used when zero-based virtual addressing (ZBVA) was negotiated: the
 * tagged offset of a transfer is its iSCSI buffer offset (RFC 5046 9.2).
 * A STag whose valid bit is clear is sent as zero and ignored.
 */
struct isdm_hdr_rfc {
	__u8	flags;
	__u8	rsvd[3];
	__be32	write_stag;
	__be32	read_stag;
};

/**
 * struct isdm_hdr_ext - iSER header of a control-type PDU, expanded form
 * @flags: %ISDM_OP_CTRL | %ISDM_CTRL_WSV | %ISDM_CTRL_RSV; low bits reserved
 * @rsvd: reserved, zero on send, ignored on receive
 * @write_stag: R_Key the target RDMA-Reads solicited write data from
 * @write_va_hi: bits 63..32 of the virtual address for @write_stag
 * @write_va_lo: bits 31..0 of the virtual address for @write_stag
 * @read_stag: R_Key the target RDMA-Writes read data to
 * @read_va_hi: bits 63..32 of the virtual address for @read_stag
 * @read_va_lo: bits 31..0 of the virtual address for @read_stag
 *
 * IBTA Annex A12 table 4 (CA12-17): used on every control-type PDU when
 * ZBVA is not used, which is always the case with Linux peers. The VAs are
 * split into 32-bit words so that the struct needs no packing.
 */
struct isdm_hdr_ext {
	__u8	flags;
	__u8	rsvd[3];
	__be32	write_stag;
	__be32	write_va_hi;
	__be32	write_va_lo;
	__be32	read_stag;
	__be32	read_va_hi;
	__be32	read_va_lo;
};

/**
 * struct isdm_hello - iSER Hello, initiator to target
 * @flags: %ISDM_OP_HELLO; low nibble reserved
 * @max_min_ver: MaxVer in the high nibble, MinVer in the low nibble
 * @ird: iSER-IRD, the RDMA Read resources the initiator offers
 * @rsvd: reserved, zero on send, ignored on receive
 *
 * RFC 5046 9.3. The message is exactly these 12 bytes.
 */
struct isdm_hello {
	__u8	flags;
	__u8	max_min_ver;
	__be16	ird;
	__u8	rsvd[8];
};

/**
 * struct isdm_hello_reply - iSER HelloReply, target to initiator
 * @flags: %ISDM_OP_HELLO_REPLY, and %ISDM_HELLO_REPLY_REJ to reject
 * @max_cur_ver: MaxVer in the high nibble, CurVer in the low nibble
 * @ord: iSER-ORD, the RDMA Reads the target will have outstanding
 * @rsvd: reserved, zero on send, ignored on receive
 *
 * RFC 5046 9.4. The message is exactly these 12 bytes.
 */
struct isdm_hello_reply {
	__u8	flags;
	__u8	max_cur_ver;
	__be16	ord;
	__u8	rsvd[8];
};

/**
 * struct isdm_cm_req - Annex A12 CM REQ private data after the A11 header
 * @flags: %ISDM_CM_ZBVA_EXC and %ISDM_CM_SIE_EXC; other bits reserved
 * @rsvd: reserved, zero on send, ignored on receive
 *
 * IBTA Annex A12 table 2 (CA12-4), bytes 36..91 of the REQ private data.
 */
struct isdm_cm_req {
	__u8	flags;
	__u8	rsvd[ISDM_CM_REQ_LEN - 1];
};

/**
 * struct isdm_cm_rep - Annex A12 CM REP private data
 * @flags: %ISDM_CM_ZBVA_EXC and %ISDM_CM_SIE_EXC; other bits reserved
 * @rsvd: reserved, zero on send, ignored on receive
 *
 * IBTA Annex A12 table 3 (CA12-8). A set bit means the feature is not used
 * on this connection.
 */
struct isdm_cm_rep {
	__u8	flags;
	__u8	rsvd[ISDM_CM_REP_LEN - 1];
};

static_assert(sizeof(struct isdm_hdr_rfc) == ISDM_HDR_LEN_RFC, "rfc hdr");
static_assert(sizeof(struct isdm_hdr_ext) == ISDM_HDR_LEN_EXT, "ext hdr");
static_assert(sizeof(struct isdm_hello) == ISDM_HELLO_LEN, "hello");
static_assert(sizeof(struct isdm_hello_reply) == ISDM_HELLO_LEN, "reply");
static_assert(sizeof(struct isdm_cm_req) == ISDM_CM_REQ_LEN, "cm req");
static_assert(sizeof(struct isdm_cm_rep) == ISDM_CM_REP_LEN, "cm rep");

/* ---- decoded forms and the pure functions of drivers/core/wire.c ---- */

/**
 * struct isdm_caps - what one side supports (Annex A12)
 * @zbva: zero-based virtual addressing
 * @send_inv: Send with Invalidate (remote invalidation of an STag)
 */
struct isdm_caps {
	bool	zbva;
	bool	send_inv;
};

/**
 * struct isdm_mode - what a connection uses, fixed by the CM exchange
 * @zbva: tagged offsets are zero-based (12-byte header) or absolute VAs
 * @send_inv: the target sends SCSI Responses with Send with Invalidate
 * @hdr_len: %ISDM_HDR_LEN_RFC or %ISDM_HDR_LEN_EXT (CA12-17)
 * @peer_violation: the peer's REP contradicts our REQ (recorded, not fatal)
 */
struct isdm_mode {
	bool	zbva;
	bool	send_inv;
	__u8	hdr_len;
	bool	peer_violation;
};

/**
 * struct isdm_stags - STags and addresses carried in a control header
 * @wsv: @write_stag and @write_va are valid
 * @rsv: @read_stag and @read_va are valid
 * @write_stag: source STag of the target's RDMA Reads
 * @read_stag: sink STag of the target's RDMA Writes
 * @write_va: base address (0 with ZBVA) for @write_stag
 * @read_va: base address (0 with ZBVA) for @read_stag
 */
struct isdm_stags {
	bool	wsv;
	bool	rsv;
	__u32	write_stag;
	__u32	read_stag;
	__u64	write_va;
	__u64	read_va;
};

/**
 * enum isdm_msg - kind of a received iSER message
 * @ISDM_MSG_PDU: iSCSI control-type PDU
 * @ISDM_MSG_HELLO: iSER Hello
 * @ISDM_MSG_HELLO_REPLY: iSER HelloReply
 */
enum isdm_msg {
	ISDM_MSG_PDU = 1,
	ISDM_MSG_HELLO,
	ISDM_MSG_HELLO_REPLY,
};

/**
 * enum isdm_role - which side of the connection we are
 * @ISDM_ROLE_INITIATOR: we receive target PDUs
 * @ISDM_ROLE_TARGET: we receive initiator PDUs
 */
enum isdm_role {
	ISDM_ROLE_INITIATOR = 1,
	ISDM_ROLE_TARGET,
};

/**
 * enum isdm_phase - connection phase, for opcode checks
 * @ISDM_PHASE_LOGIN: Login Phase: only Login PDUs
 * @ISDM_PHASE_FFP: Full Feature Phase
 */
enum isdm_phase {
	ISDM_PHASE_LOGIN = 1,
	ISDM_PHASE_FFP,
};

/**
 * struct isdm_rx_pdu - a received control-type PDU, validated
 * @stags: STags from the iSER header
 * @opcode: iSCSI opcode (BHS byte 0, low 6 bits)
 * @bhs_off: offset of the BHS in the buffer
 * @ahs_len: length of the AHS in bytes
 * @data_off: offset of the data segment in the buffer
 * @data_len: DataSegmentLength of the BHS
 */
struct isdm_rx_pdu {
	struct isdm_stags stags;
	__u8	opcode;
	__u32	bhs_off;
	__u32	ahs_len;
	__u32	data_off;
	__u32	data_len;
};

/**
 * enum isdm_send_kind - RDMA message type for an outgoing message
 * @ISDM_SEND: Send
 * @ISDM_SEND_SE: Send with Solicited Event
 * @ISDM_SEND_INV_SE: Send with Invalidate and Solicited Event
 */
enum isdm_send_kind {
	ISDM_SEND = 1,
	ISDM_SEND_SE,
	ISDM_SEND_INV_SE,
};

/**
 * struct isdm_send_op - how to send one outgoing PDU
 * @kind: Send, SendSE or SendInvSE
 * @inv_stag: STag to invalidate with %ISDM_SEND_INV_SE, otherwise 0
 */
struct isdm_send_op {
	enum isdm_send_kind kind;
	__u32	inv_stag;
};

/**
 * enum isdm_pdu_class - RFC 5046 7 classification of an iSCSI PDU
 * @ISDM_PDU_CONTROL: control-type: carried by a Send-type message
 * @ISDM_PDU_DATA: data-type (Data-In, R2T): RDMA Write / RDMA Read
 * @ISDM_PDU_LOGIN: Login PDU: Send in the Login Phase only
 * @ISDM_PDU_FORBIDDEN: never used with iSER (SNACK)
 */
enum isdm_pdu_class {
	ISDM_PDU_CONTROL = 1,
	ISDM_PDU_DATA,
	ISDM_PDU_LOGIN,
	ISDM_PDU_FORBIDDEN,
};

/**
 * struct isdm_hello_result - the target's answer to a Hello
 * @reject: send HelloReply with REJ and terminate (RFC 5046 10.1.3.2)
 * @cur_ver: version in use (0 when rejected for no overlap)
 * @ord: iSER-ORD = min(target ORD, initiator iSER-IRD)
 */
struct isdm_hello_result {
	bool	reject;
	__u8	cur_ver;
	__u16	ord;
};

/* CM private data and the A12 negotiation */
void isdm_cm_req_build(struct isdm_cm_req *req, const struct isdm_caps *ini);
int isdm_cm_req_parse(const void *buf, size_t len, struct isdm_caps *ini);
void isdm_cm_negotiate_target(const struct isdm_caps *ini,
			      const struct isdm_caps *tgt,
			      struct isdm_mode *mode, struct isdm_cm_rep *rep);
int isdm_cm_rep_parse(const void *buf, size_t len,
		      const struct isdm_caps *ini, struct isdm_mode *mode);

/* Hello and HelloReply */
void isdm_hello_build(struct isdm_hello *h, __u16 ird);
int isdm_hello_parse(const void *buf, size_t len, __u8 *max_ver,
		     __u8 *min_ver, __u16 *ird);
void isdm_hello_answer(__u8 max_ver, __u8 min_ver, __u16 ird,
		       __u16 target_ord, struct isdm_hello_result *res);
void isdm_hello_reply_build(struct isdm_hello_reply *r,
			    const struct isdm_hello_result *res);
int isdm_hello_reply_parse(const void *buf, size_t len,
			   struct isdm_hello_result *res);

/* control-type PDU headers */
int isdm_hdr_build(void *buf, size_t len, const struct isdm_mode *mode,
		   const struct isdm_stags *st);
int isdm_msg_kind(const void *buf, size_t len);
const char *isdm_rx_strerror(int err);
int isdm_rx_parse(const void *buf, size_t len, const struct isdm_mode *mode,
		  enum isdm_role role, enum isdm_phase phase,
		  __u32 max_data_len, struct isdm_rx_pdu *pdu);
int isdm_check_cmd_stags(const void *bhs, const struct isdm_stags *st,
			 __u32 unsol_len);
__u32 isdm_cmd_unsol_len(const void *bhs, __u32 imm_len, bool initial_r2t,
			 __u32 first_burst);
int isdm_check_ahs(const void *bhs, const void *ahs, __u32 ahs_len);

/* PDU classification and the Send-type rules */
int isdm_pdu_classify(__u8 opcode);
bool isdm_rsp_answers(__u8 req_opcode, __u8 rsp_opcode);
int isdm_send_op(const void *bhs, const struct isdm_stags *adv,
		 const struct isdm_mode *mode, struct isdm_send_op *op);

#endif /* ISDM_ISER_WIRE_H */
