// SPDX-License-Identifier: GPL-2.0
/*
 * CM private data: isdm_cm_req_parse() and isdm_cm_rep_parse() on any
 * bytes, checked against Annex A12 (CA12-4, -8, -13, -16, -17), and the
 * target's negotiation read back by the initiator.
 *
 * Input: byte 0 selects the initiator's offer (bits 0-1), the target's
 * caps (bits 2-3) and NULL instead of an empty buffer (bit 4); the rest is
 * the private data.
 */
#include "fuzz.h"

static void check_mode(const struct isdm_mode *m)
{
	fuzz_check(m->hdr_len == (m->zbva ? ISDM_HDR_LEN_RFC :
				  ISDM_HDR_LEN_EXT));
}

static void fuzz_req(const __u8 *pd, size_t len)
{
	struct isdm_caps ini, again;
	struct isdm_cm_req req;
	size_t i;
	int ret;

	ret = isdm_cm_req_parse(pd, len, &ini);
	if (!pd || !len) {
		fuzz_check(ret == -ENODATA);
		return;
	}
	if (len < ISDM_CM_MIN_LEN) {
		fuzz_check(ret == -EMSGSIZE);
		return;
	}
	fuzz_check(ret == 0);
	fuzz_check(ini.zbva == !(pd[0] & ISDM_CM_ZBVA_EXC));
	fuzz_check(ini.send_inv == !(pd[0] & ISDM_CM_SIE_EXC));

	/* what the initiator would have sent: same flags, rest zero */
	memset(&req, 0xa5, sizeof(req));
	isdm_cm_req_build(&req, &ini);
	fuzz_check(req.flags == (pd[0] & (ISDM_CM_ZBVA_EXC | ISDM_CM_SIE_EXC)));
	for (i = 0; i < sizeof(req.rsvd); i++)
		fuzz_check(!req.rsvd[i]);
	fuzz_check(!isdm_cm_req_parse(&req, sizeof(req), &again));
	fuzz_check(again.zbva == ini.zbva && again.send_inv == ini.send_inv);
}

static void fuzz_rep(const __u8 *pd, size_t len, const struct isdm_caps *ini)
{
	bool rep_zbva, rep_inv;
	struct isdm_mode m;
	__u8 flags = 0;
	int ret;

	ret = isdm_cm_rep_parse(pd, len, ini, &m);
	if (pd && len && len < ISDM_CM_MIN_LEN) {
		fuzz_check(ret == -EMSGSIZE);
		return;
	}
	fuzz_check(ret == 0);
	if (pd && len)
		flags = pd[0];
	rep_zbva = !(flags & ISDM_CM_ZBVA_EXC);
	rep_inv = !(flags & ISDM_CM_SIE_EXC);
	/* used only when granted and offered */
	fuzz_check(m.zbva == (rep_zbva && ini->zbva));
	fuzz_check(m.send_inv == (rep_inv && ini->send_inv));
	fuzz_check(m.peer_violation == ((rep_zbva && !ini->zbva) ||
					(rep_inv && !ini->send_inv)));
	check_mode(&m);
}

static void fuzz_negotiate(const struct isdm_caps *ini,
			   const struct isdm_caps *tgt)
{
	struct isdm_mode tm, im;
	struct isdm_cm_rep rep;

	memset(&rep, 0xa5, sizeof(rep));
	isdm_cm_negotiate_target(ini, tgt, &tm, &rep);
	fuzz_check(tm.zbva == (ini->zbva && tgt->zbva));
	fuzz_check(tm.send_inv == (ini->send_inv && tgt->send_inv));
	fuzz_check(!tm.peer_violation);
	check_mode(&tm);
	fuzz_check(!rep.rsvd[0] && !rep.rsvd[1] && !rep.rsvd[2]);
	fuzz_check(!!(rep.flags & ISDM_CM_ZBVA_EXC) == !tm.zbva);
	fuzz_check(!!(rep.flags & ISDM_CM_SIE_EXC) == !tm.send_inv);
	fuzz_check(!(rep.flags & ~(ISDM_CM_ZBVA_EXC | ISDM_CM_SIE_EXC)));

	fuzz_check(!isdm_cm_rep_parse(&rep, sizeof(rep), ini, &im));
	fuzz_check(im.zbva == tm.zbva && im.send_inv == tm.send_inv);
	fuzz_check(im.hdr_len == tm.hdr_len && !im.peer_violation);
}

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	struct isdm_caps offer, tgt;
	size_t len;
	__u8 *pd;

	if (size < 1)
		return 0;
	offer.zbva = data[0] & 0x01;
	offer.send_inv = data[0] & 0x02;
	tgt.zbva = data[0] & 0x04;
	tgt.send_inv = data[0] & 0x08;
	len = size - 1;
	pd = fuzz_dup(data + 1, len);

	if (!len && (data[0] & 0x10)) {
		fuzz_req(NULL, 0);
		fuzz_rep(NULL, 0, &offer);
	} else {
		fuzz_req(pd, len);
		fuzz_rep(pd, len, &offer);
	}
	fuzz_negotiate(&offer, &tgt);

	/* the target's view of this REQ, answered and read back */
	if (len >= ISDM_CM_MIN_LEN) {
		struct isdm_caps ini;

		fuzz_check(!isdm_cm_req_parse(pd, len, &ini));
		fuzz_negotiate(&ini, &tgt);
	}
	free(pd);
	return 0;
}
