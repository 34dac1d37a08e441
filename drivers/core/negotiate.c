// SPDX-License-Identifier: GPL-2.0
/*
 * iSER connection negotiation: the CM private data of IBTA Annex A12 and
 * the iSER Hello and HelloReply of RFC 5046 (sections 5.1.3, 9.3, 9.4).
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

/* ------------------------------------------------------------------ */
/* CM private data and the Annex A12 negotiation                      */
/* ------------------------------------------------------------------ */

static __u8 isdm_caps_to_flags(bool zbva, bool send_inv)
{
	return (zbva ? 0 : ISDM_CM_ZBVA_EXC) | (send_inv ? 0 : ISDM_CM_SIE_EXC);
}

static void isdm_mode_set(struct isdm_mode *mode, bool zbva, bool send_inv)
{
	mode->zbva = zbva;
	mode->send_inv = send_inv;
	/* CA12-17: without ZBVA every control-type PDU has the 28-byte form */
	mode->hdr_len = zbva ? ISDM_HDR_LEN_RFC : ISDM_HDR_LEN_EXT;
	mode->peer_violation = false;
}

/**
 * isdm_cm_req_build() - build the initiator's CM REQ private data
 * @req: the private data to fill (%ISDM_CM_REQ_LEN bytes)
 * @ini: what this initiator supports
 *
 * CA12-4, CA12-12, CA12-15: an exception bit is set for each feature the
 * initiator lacks; every reserved bit and byte is zero.
 */
void isdm_cm_req_build(struct isdm_cm_req *req, const struct isdm_caps *ini)
{
	memset(req, 0, sizeof(*req));
	req->flags = isdm_caps_to_flags(ini->zbva, ini->send_inv);
}
EXPORT_SYMBOL_GPL(isdm_cm_req_build);

/**
 * isdm_cm_req_parse() - decode the CM REQ private data on the target
 * @buf: private data as rdma_cm delivers it (after the A11 header)
 * @len: its length
 * @ini: the initiator's capabilities, filled on success
 *
 * Reserved bits and bytes are ignored (CA12-4). The length is checked
 * against the four bytes that carry the flags; rdma_cm pads IB REQs with
 * zeros, so longer private data is normal.
 *
 * Return: 0, -ENODATA when there is no private data, -EMSGSIZE when it is
 * shorter than the flags word.
 */
int isdm_cm_req_parse(const void *buf, size_t len, struct isdm_caps *ini)
{
	__u8 flags;

	if (!buf || !len)
		return -ENODATA;
	if (len < ISDM_CM_MIN_LEN)
		return -EMSGSIZE;
	flags = *(const __u8 *)buf;
	ini->zbva = !(flags & ISDM_CM_ZBVA_EXC);
	ini->send_inv = !(flags & ISDM_CM_SIE_EXC);
	return 0;
}
EXPORT_SYMBOL_GPL(isdm_cm_req_parse);

/**
 * isdm_cm_negotiate_target() - the target's decision for a connection
 * @ini: the initiator's capabilities from its REQ
 * @tgt: the target's own capabilities
 * @mode: the connection's mode, filled
 * @rep: the CM REP private data, filled (%ISDM_CM_REP_LEN bytes)
 *
 * CA12-11, CA12-13: Send with Invalidate only if both sides support it.
 * CA12-14, CA12-16: ZBVA only if both sides support it. CA12-17 then fixes
 * the header form.
 */
void isdm_cm_negotiate_target(const struct isdm_caps *ini,
			      const struct isdm_caps *tgt,
			      struct isdm_mode *mode, struct isdm_cm_rep *rep)
{
	bool zbva = ini->zbva && tgt->zbva;
	bool send_inv = ini->send_inv && tgt->send_inv;

	isdm_mode_set(mode, zbva, send_inv);
	memset(rep, 0, sizeof(*rep));
	rep->flags = isdm_caps_to_flags(zbva, send_inv);
}
EXPORT_SYMBOL_GPL(isdm_cm_negotiate_target);

/**
 * isdm_cm_rep_parse() - the initiator's view of the target's CM REP
 * @buf: REP private data as rdma_cm delivers it, or NULL
 * @len: its length (0 when the target sent none, as on iWARP)
 * @ini: what this initiator offered in its REQ
 * @mode: the connection's mode, filled on success
 *
 * A feature is used only when the REP says so and the initiator offered it
 * (CA12-8, CA12-14). A REP that grants what the REQ declined breaks
 * CA12-13/CA12-16; the feature stays off and @mode->peer_violation is set
 * so the caller can log it. A target that sends no private data (all
 * zeros on IB) grants everything, and is handled the same way.
 *
 * Return: 0, or -EMSGSIZE when private data is present but shorter than
 * the flags word.
 */
int isdm_cm_rep_parse(const void *buf, size_t len,
		      const struct isdm_caps *ini, struct isdm_mode *mode)
{
	bool rep_zbva, rep_inv;
	__u8 flags = 0;

	if (buf && len) {
		if (len < ISDM_CM_MIN_LEN)
			return -EMSGSIZE;
		flags = *(const __u8 *)buf;
	}
	rep_zbva = !(flags & ISDM_CM_ZBVA_EXC);
	rep_inv = !(flags & ISDM_CM_SIE_EXC);
	isdm_mode_set(mode, rep_zbva && ini->zbva, rep_inv && ini->send_inv);
	mode->peer_violation = (rep_zbva && !ini->zbva) ||
			       (rep_inv && !ini->send_inv);
	return 0;
}
EXPORT_SYMBOL_GPL(isdm_cm_rep_parse);

/* ------------------------------------------------------------------ */
/* Hello and HelloReply (RFC 5046 5.1.3, 9.3, 9.4, 10.1.3.2)           */
/* ------------------------------------------------------------------ */

/**
 * isdm_hello_build() - build an iSER Hello
 * @h: the message (%ISDM_HELLO_LEN bytes)
 * @ird: the initiator's iSER-IRD
 */
void isdm_hello_build(struct isdm_hello *h, __u16 ird)
{
	memset(h, 0, sizeof(*h));
	h->flags = ISDM_OP_HELLO;
	h->max_min_ver = (ISDM_ISER_VERSION << 4) | ISDM_ISER_VERSION;
	h->ird = cpu_to_be16(ird);
}
EXPORT_SYMBOL_GPL(isdm_hello_build);

static int isdm_hello_len_check(const void *buf, size_t len, __u8 op)
{
	if (!buf || !len)
		return -ENODATA;
	if (len < ISDM_HELLO_LEN)
		return -EMSGSIZE;
	/* RFC 5046 10.1.3.3: any other length is a format error */
	if (len > ISDM_HELLO_LEN)
		return -E2BIG;
	if ((*(const __u8 *)buf & ISDM_OP_MASK) != op)
		return -EPROTO;
	return 0;
}

/**
 * isdm_hello_parse() - decode a Hello received by the target
 * @buf: the received message
 * @len: its length
 * @max_ver: the initiator's MaxVer, filled
 * @min_ver: the initiator's MinVer, filled
 * @ird: the initiator's iSER-IRD, filled
 *
 * Return: 0; -ENODATA, -EMSGSIZE or -E2BIG when the length is not 12;
 * -EPROTO when the opcode is not Hello; -EBADMSG when MinVer > MaxVer.
 */
int isdm_hello_parse(const void *buf, size_t len, __u8 *max_ver,
		     __u8 *min_ver, __u16 *ird)
{
	struct isdm_hello h;
	int ret;

	ret = isdm_hello_len_check(buf, len, ISDM_OP_HELLO);
	if (ret)
		return ret;
	memcpy(&h, buf, sizeof(h));
	if ((h.max_min_ver & 0x0f) > (h.max_min_ver >> 4))
		return -EBADMSG;
	*max_ver = h.max_min_ver >> 4;
	*min_ver = h.max_min_ver & 0x0f;
	*ird = be16_to_cpu(h.ird);
	return 0;
}
EXPORT_SYMBOL_GPL(isdm_hello_parse);

/**
 * isdm_hello_answer() - the target's answer to a valid Hello
 * @max_ver: the initiator's MaxVer
 * @min_ver: the initiator's MinVer
 * @ird: the initiator's iSER-IRD
 * @target_ord: the target's ORD from the CM exchange
 * @res: the answer, filled
 *
 * RFC 5046 5.1.3: iSER-ORD = min(target ORD, iSER-IRD). The connection is
 * rejected when the versions do not overlap, or when the initiator offers
 * RDMA Read resources (iSER-IRD > 0) and the target has none (ORD = 0).
 */
void isdm_hello_answer(__u8 max_ver, __u8 min_ver, __u16 ird,
		       __u16 target_ord, struct isdm_hello_result *res)
{
	bool overlap = min_ver <= ISDM_ISER_VERSION &&
		       max_ver >= ISDM_ISER_VERSION;

	res->cur_ver = overlap ? ISDM_ISER_VERSION : 0;
	res->ord = min(target_ord, ird);
	res->reject = !overlap || (ird > 0 && target_ord == 0);
}
EXPORT_SYMBOL_GPL(isdm_hello_answer);

/**
 * isdm_hello_reply_build() - build a HelloReply
 * @r: the message (%ISDM_HELLO_LEN bytes)
 * @res: the answer from isdm_hello_answer()
 */
void isdm_hello_reply_build(struct isdm_hello_reply *r,
			    const struct isdm_hello_result *res)
{
	memset(r, 0, sizeof(*r));
	r->flags = ISDM_OP_HELLO_REPLY | (res->reject ? ISDM_HELLO_REPLY_REJ : 0);
	r->max_cur_ver = (ISDM_ISER_VERSION << 4) | (res->cur_ver & 0x0f);
	r->ord = cpu_to_be16(res->ord);
}
EXPORT_SYMBOL_GPL(isdm_hello_reply_build);

/**
 * isdm_hello_reply_parse() - decode a HelloReply received by the initiator
 * @buf: the received message
 * @len: its length
 * @res: the target's answer, filled on success
 *
 * Return: 0 (also for a reject: check @res->reject); -ENODATA, -EMSGSIZE or
 * -E2BIG when the length is not 12; -EPROTO when the opcode is not
 * HelloReply; -ERANGE when an accepting reply names a version other than 1.
 */
int isdm_hello_reply_parse(const void *buf, size_t len,
			   struct isdm_hello_result *res)
{
	struct isdm_hello_reply r;
	int ret;

	ret = isdm_hello_len_check(buf, len, ISDM_OP_HELLO_REPLY);
	if (ret)
		return ret;
	memcpy(&r, buf, sizeof(r));
	res->reject = r.flags & ISDM_HELLO_REPLY_REJ;
	res->cur_ver = r.max_cur_ver & 0x0f;
	res->ord = be16_to_cpu(r.ord);
	if (!res->reject && res->cur_ver != ISDM_ISER_VERSION)
		return -ERANGE;
	return 0;
}
EXPORT_SYMBOL_GPL(isdm_hello_reply_parse);
