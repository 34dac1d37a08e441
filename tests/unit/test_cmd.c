// SPDX-License-Identifier: GPL-2.0
/*
 * SCSI Command STags against the command's direction, the RFC 5046 7
 * classification of all 64 iSCSI opcodes, which Send-type message
 * carries each outgoing PDU, and which request each target PDU answers.
 */
#include "unit.h"

#define R	ISDM_BHS_CMD_READ
#define W	ISDM_BHS_CMD_WRITE

/* a BHS with @op, byte 1 @flags and EDTL @edtl, exactly 48 bytes on the heap */
static __u8 *mk_bhs(__u8 op, __u8 flags, __u32 edtl)
{
	__u8 b[ISDM_BHS_LEN] = { op, flags };

	b[20] = edtl >> 24;
	b[21] = edtl >> 16;
	b[22] = edtl >> 8;
	b[23] = edtl;
	return unit_dup(b, sizeof(b));
}

struct stag_case {
	const char *what;
	__u8 op;
	__u8 flags;
	__u32 edtl;
	bool wsv, rsv;
	__u32 unsol;
	int want;
};

static void run_stag_cases(const struct stag_case *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct isdm_stags st = {
			.wsv = c[i].wsv, .rsv = c[i].rsv,
			.write_stag = c[i].wsv ? 0x100 : 0,
			.read_stag = c[i].rsv ? 0x200 : 0,
		};

		unit_eq(c[i].what,
			isdm_check_cmd_stags(mk_bhs(c[i].op, 0x80 | c[i].flags,
						    c[i].edtl), &st,
					     c[i].unsol),
			c[i].want);
	}
}

static void stags_read(void **state)
{
	static const struct stag_case c[] = {
		{ "read with RSV", 0x01, R, 4096, false, true, 0, 0 },
		{ "immediate read with RSV", 0x41, R, 4096, false, true, 0,
		  0 },
		{ "read without RSV", 0x01, R, 4096, false, false, 0,
		  -ENOKEY },
		{ "read, EDTL 0, no RSV", 0x01, R, 0, false, false, 0, 0 },
		{ "read with WSV", 0x01, R, 4096, true, true, 0, -EBADMSG },
		{ "read with only WSV", 0x01, R, 4096, true, false, 0,
		  -EBADMSG },
		/* seed 1 of iser_ffp -m random, PDU 4589 */
		{ "read with immediate data", 0x01, R, 4096, false, true, 512,
		  -EPROTO },
		{ "read with one byte of data", 0x01, R, 4096, false, true, 1,
		  -EPROTO },
		{ "stray STag judged before data", 0x01, R, 4096, true, true,
		  512, -EBADMSG },
	};

	run_stag_cases(c, ARRAY_SIZE(c));
}

static void stags_write(void **state)
{
	static const struct stag_case c[] = {
		{ "write, all solicited, WSV", 0x01, W, 8192, true, false, 0,
		  0 },
		{ "write, all solicited, no WSV", 0x01, W, 8192, false, false,
		  0, -ENOKEY },
		{ "write, part unsolicited, WSV", 0x01, W, 8192, true, false,
		  4096, 0 },
		{ "write, part unsolicited, no WSV", 0x01, W, 8192, false,
		  false, 4096, -ENOKEY },
		{ "write, all unsolicited, no WSV", 0x01, W, 8192, false,
		  false, 8192, 0 },
		{ "write, all unsolicited, WSV", 0x01, W, 8192, true, false,
		  8192, 0 },
		{ "write, EDTL 0", 0x01, W, 0, false, false, 0, 0 },
		{ "write with RSV", 0x01, W, 8192, true, true, 0, -EBADMSG },
		{ "write with only RSV", 0x01, W, 8192, false, true, 8192,
		  -EBADMSG },
		{ "unsolicited > EDTL", 0x01, W, 8192, true, false, 8193,
		  -EOVERFLOW },
		{ "unsolicited > EDTL 0", 0x01, W, 0, false, false, 1,
		  -EOVERFLOW },
		{ "bad STag judged first", 0x01, W, 8192, true, true, 8193,
		  -EBADMSG },
	};

	run_stag_cases(c, ARRAY_SIZE(c));
}

static void stags_bidi(void **state)
{
	static const struct stag_case c[] = {
		{ "bidi, both", 0x01, R | W, 4096, true, true, 0, 0 },
		{ "bidi, no RSV", 0x01, R | W, 4096, true, false, 0,
		  -ENOKEY },
		{ "bidi, RSV, solicited, no WSV", 0x01, R | W, 4096, false,
		  true, 0, -ENOKEY },
		{ "bidi, RSV, all unsolicited", 0x01, R | W, 4096, false,
		  true, 4096, 0 },
		{ "bidi, neither", 0x01, R | W, 4096, false, false, 4096,
		  -ENOKEY },
		{ "bidi, unsolicited > EDTL", 0x01, R | W, 4096, true, true,
		  4097, -EOVERFLOW },
	};

	run_stag_cases(c, ARRAY_SIZE(c));
}

static void stags_no_data(void **state)
{
	static const struct stag_case c[] = {
		{ "TEST UNIT READY", 0x01, 0, 0, false, false, 0, 0 },
		{ "no direction with RSV", 0x01, 0, 0, false, true, 0,
		  -EBADMSG },
		{ "no direction with WSV", 0x01, 0, 0, true, false, 0,
		  -EBADMSG },
		{ "no direction with both", 0x41, 0, 512, true, true, 0,
		  -EBADMSG },
		{ "no direction with data", 0x01, 0, 0, false, false, 16,
		  -EPROTO },
		{ "no direction, EDTL set, with data", 0x01, 0, 512, false,
		  false, 512, -EPROTO },
	};

	run_stag_cases(c, ARRAY_SIZE(c));
}

static void stags_not_a_command(void **state)
{
	static const struct stag_case c[] = {
		{ "NOP-Out", 0x00, 0, 0, false, false, 0, -EINVAL },
		{ "TMF Request", 0x02, R, 4096, false, true, 0, -EINVAL },
		{ "Data-Out", 0x05, 0, 0, false, false, 0, -EINVAL },
		{ "SCSI Response", 0x21, R, 4096, false, true, 0, -EINVAL },
		{ "NOP-Out with bits 7, 6 set", 0xc0, R, 0, false, false, 0,
		  -EINVAL },
	};

	run_stag_cases(c, ARRAY_SIZE(c));
}

static int class_of(__u8 op)
{
	switch (op) {
	case 0x25: case 0x31:
		return ISDM_PDU_DATA;
	case 0x03: case 0x23:
		return ISDM_PDU_LOGIN;
	case 0x10:
		return ISDM_PDU_FORBIDDEN;
	case 0x00: case 0x01: case 0x02: case 0x04: case 0x05: case 0x06:
	case 0x20: case 0x21: case 0x22: case 0x24: case 0x26: case 0x32:
	case 0x3f:
		return ISDM_PDU_CONTROL;
	default:
		return -EOPNOTSUPP;
	}
}

static void classify_all_64(void **state)
{
	char what[32];
	unsigned int op;
	int counts[5] = { 0 };

	for (op = 0; op < 64; op++) {
		int want = class_of(op);

		snprintf(what, sizeof(what), "opcode 0x%02x", op);
		unit_eq(what, isdm_pdu_classify(op), want);
		counts[want < 0 ? 0 : want]++;
	}
	/* 13 control, 2 data, 2 login, 1 forbidden, 46 unknown */
	assert_int_equal(counts[ISDM_PDU_CONTROL], 13);
	assert_int_equal(counts[ISDM_PDU_DATA], 2);
	assert_int_equal(counts[ISDM_PDU_LOGIN], 2);
	assert_int_equal(counts[ISDM_PDU_FORBIDDEN], 1);
	assert_int_equal(counts[0], 46);
}

static const struct isdm_mode inv_on = { .send_inv = true,
					 .hdr_len = ISDM_HDR_LEN_EXT };
static const struct isdm_mode inv_off = { .hdr_len = ISDM_HDR_LEN_EXT };

static void send_check(const char *what, __u8 op, __u8 flags,
		       const struct isdm_stags *adv,
		       const struct isdm_mode *mode, int ret,
		       enum isdm_send_kind kind, __u32 inv)
{
	struct isdm_send_op o = { .kind = 0, .inv_stag = 0xdeadbeef };

	unit_eq(what, isdm_send_op(mk_bhs(op, flags, 0), adv, mode, &o), ret);
	if (ret)
		return;
	unit_eq(what, o.kind, kind);
	unit_eq(what, o.inv_stag, inv);
}

static void send_scsi_response(void **state)
{
	static const struct isdm_stags rd = { .rsv = true, .read_stag = 0x11 };
	static const struct isdm_stags wr = { .wsv = true,
					      .write_stag = 0x22 };
	static const struct isdm_stags both = {
		.wsv = true, .rsv = true, .write_stag = 0x22, .read_stag = 0x11,
	};
	static const struct isdm_stags none = { .write_stag = 0x22,
						.read_stag = 0x11 };

	send_check("read, inv", 0x21, 0x80, &rd, &inv_on, 0,
		   ISDM_SEND_INV_SE, 0x11);
	send_check("write, inv", 0x21, 0x80, &wr, &inv_on, 0,
		   ISDM_SEND_INV_SE, 0x22);
	send_check("both: read wins", 0x21, 0x80, &both, &inv_on, 0,
		   ISDM_SEND_INV_SE, 0x11);
	send_check("none, inv", 0x21, 0x80, &none, &inv_on, 0,
		   ISDM_SEND_SE, 0);
	send_check("NULL adv, inv", 0x21, 0x80, NULL, &inv_on, 0,
		   ISDM_SEND_SE, 0);
	send_check("read, no inv", 0x21, 0x80, &rd, &inv_off, 0,
		   ISDM_SEND_SE, 0);
	send_check("write, no inv", 0x21, 0x80, &wr, &inv_off, 0,
		   ISDM_SEND_SE, 0);
	send_check("both, no inv", 0x21, 0x80, &both, &inv_off, 0,
		   ISDM_SEND_SE, 0);
	send_check("none, no inv", 0x21, 0x80, &none, &inv_off, 0,
		   ISDM_SEND_SE, 0);
}

static void send_data_out(void **state)
{
	send_check("Data-Out F=0", 0x05, 0x00, NULL, &inv_on, 0,
		   ISDM_SEND, 0);
	send_check("Data-Out F=1", 0x05, 0x80, NULL, &inv_on, 0,
		   ISDM_SEND_SE, 0);
	send_check("Data-Out F=0, no inv", 0x05, 0x00, NULL, &inv_off, 0,
		   ISDM_SEND, 0);
}

static void send_other_control(void **state)
{
	static const struct {
		const char *what;
		__u8 op;
	} ops[] = {
		{ "NOP-Out", 0x40 }, { "SCSI Command", 0x01 },
		{ "TMF Request", 0x42 }, { "Text Request", 0x04 },
		{ "Logout Request", 0x46 }, { "NOP-In", 0x20 },
		{ "TMF Response", 0x22 }, { "Text Response", 0x24 },
		{ "Logout Response", 0x26 }, { "Async Message", 0x32 },
		{ "Reject", 0x3f }, { "Login Request", 0x43 },
		{ "Login Response", 0x23 },
	};
	static const struct isdm_stags rd = { .rsv = true, .read_stag = 0x11 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		/* STags given to a PDU other than SCSI Response change nothing */
		send_check(ops[i].what, ops[i].op, 0x80, &rd, &inv_on, 0,
			   ISDM_SEND_SE, 0);
		send_check(ops[i].what, ops[i].op, 0x00, NULL, &inv_off, 0,
			   ISDM_SEND_SE, 0);
	}
}

/* RFC 3720 10.3.1, 12.11: what a command gets without the Write STag */
static void unsol_len_rules(void **state)
{
	static const struct {
		const char *what;
		__u8 flags;
		__u32 edtl, imm;
		bool r2t;
		__u32 fbl, want;
	} c[] = {
		{ "InitialR2T=Yes: immediate only", W, 8192, 4096, true,
		  65536, 4096 },
		{ "InitialR2T=Yes, F=1", 0x80 | W, 8192, 4096, true, 65536,
		  4096 },
		{ "InitialR2T=No, F=0: first burst", W, 8192, 4096, false,
		  65536, 8192 },
		{ "InitialR2T=No, F=0, FirstBurstLength below EDTL", W,
		  262144, 4096, false, 65536, 65536 },
		{ "InitialR2T=No, F=0, no immediate data", W, 8192, 0, false,
		  65536, 8192 },
		{ "InitialR2T=No, F=1: immediate only", 0x80 | W, 8192, 4096,
		  false, 65536, 4096 },
		{ "InitialR2T=No, F=1, no immediate data", 0x80 | W, 8192, 0,
		  false, 65536, 0 },
		{ "immediate data above FirstBurstLength", W, 8192, 8192,
		  false, 4096, 8192 },
		{ "read, InitialR2T=No, F=0: no first burst", R, 8192, 0,
		  false, 65536, 0 },
		{ "read, F=0, immediate data: only that", R, 8192, 512,
		  false, 65536, 512 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		unit_eq(c[i].what,
			isdm_cmd_unsol_len(mk_bhs(0x01, c[i].flags, c[i].edtl),
					   c[i].imm, c[i].r2t, c[i].fbl),
			c[i].want);
}

/*
 * Issue 10 item 2: a WRITE with part of its data immediate, F=1 and no
 * Write STag under InitialR2T=No is refused (nothing else would ever
 * bring the rest); with F=0 its first burst arrives unsolicited.
 */
static void unsol_len_f1_partial_write(void **state)
{
	struct isdm_stags none = {}, wsv = { .wsv = true, .write_stag = 7 };
	__u8 *f1 = mk_bhs(0x01, 0x80 | W, 8192);
	__u8 *f0 = mk_bhs(0x01, W, 8192);

	unit_eq("F=1, 4 KiB of 8 immediate, no WSV",
		isdm_check_cmd_stags(f1, &none,
				     isdm_cmd_unsol_len(f1, 4096, false,
							65536)),
		-ENOKEY);
	unit_eq("F=1, 4 KiB of 8 immediate, WSV",
		isdm_check_cmd_stags(f1, &wsv,
				     isdm_cmd_unsol_len(f1, 4096, false,
							65536)),
		0);
	unit_eq("F=1, all 8 KiB immediate, no WSV",
		isdm_check_cmd_stags(f1, &none,
				     isdm_cmd_unsol_len(f1, 8192, false,
							65536)),
		0);
	unit_eq("F=0, 4 KiB of 8 immediate, rest unsolicited, no WSV",
		isdm_check_cmd_stags(f0, &none,
				     isdm_cmd_unsol_len(f0, 4096, false,
							65536)),
		0);
}

static void send_not_a_send(void **state)
{
	send_check("Data-In", 0x25, 0x80, NULL, &inv_on, -EPROTOTYPE, 0, 0);
	send_check("R2T", 0x31, 0x80, NULL, &inv_on, -EPROTOTYPE, 0, 0);
	send_check("SNACK", 0x10, 0x80, NULL, &inv_on, -EPROTOTYPE, 0, 0);
	send_check("0x07", 0x07, 0x80, NULL, &inv_on, -EOPNOTSUPP, 0, 0);
	send_check("0x3c", 0x3c, 0x80, NULL, &inv_on, -EOPNOTSUPP, 0, 0);
}

/* which request each target PDU answers, over all 64 x 64 opcode pairs */
static void rsp_answers_all(void **state)
{
	static const struct { __u8 req, rsp; } pairs[] = {
		{ 0x00, 0x20 }, { 0x01, 0x21 }, { 0x01, 0x25 }, { 0x01, 0x31 },
		{ 0x02, 0x22 }, { 0x03, 0x23 }, { 0x04, 0x24 }, { 0x06, 0x26 },
	};
	unsigned int req, rsp, i, yes = 0;
	char what[48];

	(void)state;
	for (req = 0; req < 64; req++) {
		for (rsp = 0; rsp < 64; rsp++) {
			bool want = false;

			for (i = 0; i < ARRAY_SIZE(pairs); i++)
				if (pairs[i].req == req && pairs[i].rsp == rsp)
					want = true;
			snprintf(what, sizeof(what), "request 0x%02x, PDU 0x%02x",
				 req, rsp);
			unit_eq(what, isdm_rsp_answers(req, rsp), want);
			/* the immediate bit of the request and the top bits
			 * of either byte do not matter
			 */
			unit_eq(what, isdm_rsp_answers(req | 0x40, rsp | 0xc0),
				want);
			yes += want;
		}
	}
	assert_int_equal(yes, ARRAY_SIZE(pairs));
	/* a TMF, Text or Logout Response or NOP-In never answers a READ */
	assert_false(isdm_rsp_answers(0x01, 0x22));
	assert_false(isdm_rsp_answers(0x01, 0x24));
	assert_false(isdm_rsp_answers(0x01, 0x26));
	assert_false(isdm_rsp_answers(0x01, 0x20));
	/* nor a SCSI Response a NOP-Out or TMF */
	assert_false(isdm_rsp_answers(0x00, 0x21));
	assert_false(isdm_rsp_answers(0x02, 0x21));
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(stags_read),
		cmocka_unit_test(stags_write),
		cmocka_unit_test(stags_bidi),
		cmocka_unit_test(stags_no_data),
		cmocka_unit_test(stags_not_a_command),
		cmocka_unit_test(unsol_len_rules),
		cmocka_unit_test(unsol_len_f1_partial_write),
		cmocka_unit_test(classify_all_64),
		cmocka_unit_test(send_scsi_response),
		cmocka_unit_test(send_data_out),
		cmocka_unit_test(send_other_control),
		cmocka_unit_test(send_not_a_send),
		cmocka_unit_test(rsp_answers_all),
	};

	unit_plan(ARRAY_SIZE(tests));
	return unit_done(cmocka_run_group_tests_name("cmd", tests, NULL,
						     unit_free_all),
			 ARRAY_SIZE(tests));
}
