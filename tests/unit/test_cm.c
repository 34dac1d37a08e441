// SPDX-License-Identifier: GPL-2.0
/*
 * Annex A12 CM private data: the REQ the initiator builds, the target's
 * negotiation and REP, and the initiator's reading of the REP, including
 * what Linux ib_iser/ib_isert and tgt put on the wire.
 */
#include "unit.h"

/* Linux: ISER_ZBVA_NOT_SUP / ISERT_ZBVA_NOT_USED, *_SEND_W_INV_NOT_* */
#define LNX_ZBVA_NOT_SUP	0x80
#define LNX_SEND_W_INV_NOT_SUP	0x40

static const struct {
	bool zbva;
	bool send_inv;
	__u8 flags;
} caps_flags[] = {
	{ true, true, 0x00 },
	{ true, false, 0x40 },
	{ false, true, 0x80 },
	{ false, false, 0xc0 },
};

static void req_build_all_caps(void **state)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(caps_flags); i++) {
		struct isdm_caps ini = {
			.zbva = caps_flags[i].zbva,
			.send_inv = caps_flags[i].send_inv,
		};
		__u8 want[ISDM_CM_REQ_LEN] = { caps_flags[i].flags };
		struct isdm_cm_req req;

		memset(&req, 0xa5, sizeof(req));
		isdm_cm_req_build(&req, &ini);
		assert_int_equal(sizeof(req), 56);
		assert_memory_equal(&req, want, sizeof(want));
	}
}

static void req_parse_roundtrip(void **state)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(caps_flags); i++) {
		struct isdm_caps ini = {
			.zbva = caps_flags[i].zbva,
			.send_inv = caps_flags[i].send_inv,
		};
		struct isdm_caps got = { !ini.zbva, !ini.send_inv };
		struct isdm_cm_req req;
		void *b;

		isdm_cm_req_build(&req, &ini);
		b = unit_dup(&req, sizeof(req));
		unit_eq("parse", isdm_cm_req_parse(b, sizeof(req), &got), 0);
		assert_int_equal(got.zbva, ini.zbva);
		assert_int_equal(got.send_inv, ini.send_inv);
	}
}

/* ib_iser with always_register=Y: 4 bytes, ZBVA not supported */
static void req_parse_linux_4_bytes(void **state)
{
	static const __u8 r80[4] = { LNX_ZBVA_NOT_SUP };
	static const __u8 rc0[4] = {
		LNX_ZBVA_NOT_SUP | LNX_SEND_W_INV_NOT_SUP
	};
	struct isdm_caps c;

	unit_eq("0x80", isdm_cm_req_parse(unit_dup(r80, 4), 4, &c), 0);
	assert_false(c.zbva);
	assert_true(c.send_inv);
	unit_eq("0xc0", isdm_cm_req_parse(unit_dup(rc0, 4), 4, &c), 0);
	assert_false(c.zbva);
	assert_false(c.send_inv);
}

/* the same 4 bytes as rdma_cm delivers them on IB: zero-padded to 56 */
static void req_parse_linux_padded(void **state)
{
	__u8 r[ISDM_CM_REQ_LEN] = { LNX_ZBVA_NOT_SUP };
	struct isdm_caps c;

	unit_eq("56 bytes", isdm_cm_req_parse(unit_dup(r, sizeof(r)),
					      sizeof(r), &c), 0);
	assert_false(c.zbva);
	assert_true(c.send_inv);

	memset(r, 0, sizeof(r));
	unit_eq("all zero", isdm_cm_req_parse(unit_dup(r, sizeof(r)),
					      sizeof(r), &c), 0);
	assert_true(c.zbva);
	assert_true(c.send_inv);
}

/* CA12-4: reserved bits and bytes are ignored */
static void req_parse_reserved_ignored(void **state)
{
	__u8 r[ISDM_CM_REQ_LEN];
	struct isdm_caps c;

	memset(r, 0xff, sizeof(r));
	r[0] = 0x3f;
	unit_eq("rsvd", isdm_cm_req_parse(unit_dup(r, sizeof(r)),
					  sizeof(r), &c), 0);
	assert_true(c.zbva);
	assert_true(c.send_inv);
	r[0] = 0xbf;
	unit_eq("rsvd", isdm_cm_req_parse(unit_dup(r, sizeof(r)),
					  sizeof(r), &c), 0);
	assert_false(c.zbva);
	assert_true(c.send_inv);
}

static void req_parse_short(void **state)
{
	static const __u8 r[4] = { 0x80 };
	struct isdm_caps c;
	size_t len;

	unit_eq("NULL", isdm_cm_req_parse(NULL, 0, &c), -ENODATA);
	unit_eq("NULL, 4", isdm_cm_req_parse(NULL, 4, &c), -ENODATA);
	unit_eq("len 0", isdm_cm_req_parse(unit_dup(r, 0), 0, &c), -ENODATA);
	for (len = 1; len < 4; len++)
		unit_eq("len 1..3",
			isdm_cm_req_parse(unit_dup(r, len), len, &c),
			-EMSGSIZE);
}

/* every row of initiator caps x target caps (CA12-11, -13, -14, -16, -17) */
static void negotiate_table(void **state)
{
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(caps_flags); i++) {
		for (j = 0; j < ARRAY_SIZE(caps_flags); j++) {
			struct isdm_caps ini = {
				caps_flags[i].zbva, caps_flags[i].send_inv
			};
			struct isdm_caps tgt = {
				caps_flags[j].zbva, caps_flags[j].send_inv
			};
			bool zbva = ini.zbva && tgt.zbva;
			bool inv = ini.send_inv && tgt.send_inv;
			__u8 want[4] = {
				(zbva ? 0 : 0x80) | (inv ? 0 : 0x40)
			};
			struct isdm_mode mode;
			struct isdm_cm_rep rep;

			memset(&mode, 0xa5, sizeof(mode));
			memset(&rep, 0xa5, sizeof(rep));
			isdm_cm_negotiate_target(&ini, &tgt, &mode, &rep);
			assert_int_equal(mode.zbva, zbva);
			assert_int_equal(mode.send_inv, inv);
			assert_int_equal(mode.hdr_len, zbva ? 12 : 28);
			assert_false(mode.peer_violation);
			assert_int_equal(sizeof(rep), 4);
			assert_memory_equal(&rep, want, sizeof(want));
		}
	}
}

/* what the target sends, the initiator reads back the same way */
static void negotiate_rep_roundtrip(void **state)
{
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(caps_flags); i++) {
		for (j = 0; j < ARRAY_SIZE(caps_flags); j++) {
			struct isdm_caps ini = {
				caps_flags[i].zbva, caps_flags[i].send_inv
			};
			struct isdm_caps tgt = {
				caps_flags[j].zbva, caps_flags[j].send_inv
			};
			struct isdm_mode tm, im;
			struct isdm_cm_rep rep;

			isdm_cm_negotiate_target(&ini, &tgt, &tm, &rep);
			unit_eq("rep", isdm_cm_rep_parse(unit_dup(&rep, 4), 4,
							 &ini, &im), 0);
			assert_int_equal(im.zbva, tm.zbva);
			assert_int_equal(im.send_inv, tm.send_inv);
			assert_int_equal(im.hdr_len, tm.hdr_len);
			assert_false(im.peer_violation);
		}
	}
}

static void rep_check(const __u8 *rep, size_t len, bool ini_zbva,
		      bool ini_inv, bool zbva, bool inv, bool violation)
{
	struct isdm_caps ini = { ini_zbva, ini_inv };
	struct isdm_mode m;

	memset(&m, 0xa5, sizeof(m));
	unit_eq("rep_parse", isdm_cm_rep_parse(rep, len, &ini, &m), 0);
	assert_int_equal(m.zbva, zbva);
	assert_int_equal(m.send_inv, inv);
	assert_int_equal(m.hdr_len, zbva ? ISDM_HDR_LEN_RFC : ISDM_HDR_LEN_EXT);
	assert_int_equal(m.peer_violation, violation);
}

/* ib_isert: ZBVA never used; SendInv not used unless snd_w_inv */
static void rep_parse_linux_isert(void **state)
{
	static const __u8 r80[4] = { 0x80 };
	static const __u8 rc0[4] = { 0xc0 };
	__u8 ib[196] = { 0x80 };

	/* a Linux-like initiator, and one that offers everything */
	rep_check(unit_dup(r80, 4), 4, false, true, false, true, false);
	rep_check(unit_dup(r80, 4), 4, true, true, false, true, false);
	rep_check(unit_dup(rc0, 4), 4, false, true, false, false, false);
	rep_check(unit_dup(rc0, 4), 4, true, true, false, false, false);
	rep_check(unit_dup(rc0, 4), 4, false, false, false, false, false);
	/* IB delivers the whole zero-filled 196-byte REP area */
	rep_check(unit_dup(ib, sizeof(ib)), sizeof(ib), true, true,
		  false, true, false);
}

/* tgt sends no private data: IB delivers zeros, which grant everything */
static void rep_parse_all_zero(void **state)
{
	__u8 z[196] = { 0 };

	/* the initiator declined ZBVA: stays off, violation recorded */
	rep_check(unit_dup(z, 4), 4, false, true, false, true, true);
	rep_check(unit_dup(z, sizeof(z)), sizeof(z), false, true,
		  false, true, true);
	/* declined Send with Invalidate */
	rep_check(unit_dup(z, 4), 4, true, false, true, false, true);
	rep_check(unit_dup(z, 4), 4, false, false, false, false, true);
	/* offered both: both granted, no violation */
	rep_check(unit_dup(z, 4), 4, true, true, true, true, false);
}

/* iWARP: no private data at all, treated as flags 0 */
static void rep_parse_empty(void **state)
{
	static const __u8 r[4] = { 0xc0 };

	rep_check(NULL, 0, true, true, true, true, false);
	rep_check(unit_dup(r, 0), 0, true, true, true, true, false);
	rep_check(NULL, 0, false, true, false, true, true);
	rep_check(NULL, 0, true, false, true, false, true);
}

static void rep_parse_violation_flags(void **state)
{
	static const __u8 r40[4] = { 0x40 };
	static const __u8 r80[4] = { 0x80 };
	static const __u8 rff[4] = { 0xff, 0xff, 0xff, 0xff };
	static const __u8 r3f[4] = { 0x3f, 0xff, 0xff, 0xff };

	/* REP grants ZBVA the REQ declined */
	rep_check(unit_dup(r40, 4), 4, false, true, false, false, true);
	/* REP grants SendInv the REQ declined */
	rep_check(unit_dup(r80, 4), 4, true, false, false, false, true);
	/* reserved bits ignored */
	rep_check(unit_dup(rff, 4), 4, true, true, false, false, false);
	rep_check(unit_dup(r3f, 4), 4, true, true, true, true, false);
}

static void rep_parse_short(void **state)
{
	static const __u8 r[4] = { 0x80 };
	struct isdm_caps ini = { false, true };
	struct isdm_mode m;
	size_t len;

	for (len = 1; len < 4; len++)
		unit_eq("len 1..3",
			isdm_cm_rep_parse(unit_dup(r, len), len, &ini, &m),
			-EMSGSIZE);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(req_build_all_caps),
		cmocka_unit_test(req_parse_roundtrip),
		cmocka_unit_test(req_parse_linux_4_bytes),
		cmocka_unit_test(req_parse_linux_padded),
		cmocka_unit_test(req_parse_reserved_ignored),
		cmocka_unit_test(req_parse_short),
		cmocka_unit_test(negotiate_table),
		cmocka_unit_test(negotiate_rep_roundtrip),
		cmocka_unit_test(rep_parse_linux_isert),
		cmocka_unit_test(rep_parse_all_zero),
		cmocka_unit_test(rep_parse_empty),
		cmocka_unit_test(rep_parse_violation_flags),
		cmocka_unit_test(rep_parse_short),
	};

	unit_plan(ARRAY_SIZE(tests));
	return unit_done(cmocka_run_group_tests_name("cm", tests, NULL,
						     unit_free_all),
			 ARRAY_SIZE(tests));
}
