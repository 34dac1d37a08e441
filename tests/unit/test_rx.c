// SPDX-License-Identifier: GPL-2.0
/*
 * isdm_rx_parse(): every malformation with its own errno, for both roles
 * and both header forms; the padding rule; the AHS; STag decoding; and
 * PDUs laid out the way Linux ib_iser and ib_isert send them.
 */
#include "unit.h"

#define T	ISDM_ROLE_TARGET
#define I	ISDM_ROLE_INITIATOR
#define LOGIN	ISDM_PHASE_LOGIN
#define FFP	ISDM_PHASE_FFP

static const struct isdm_mode rfc = { .zbva = true,
				      .hdr_len = ISDM_HDR_LEN_RFC };
static const struct isdm_mode ext = { .hdr_len = ISDM_HDR_LEN_EXT };
static const struct isdm_mode *const forms[] = { &rfc, &ext };

/* room for the largest PDU a row describes */
static __u8 scratch[ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + 1020 + 65536];

struct rx_case {
	const char *what;
	enum isdm_role role;
	enum isdm_phase phase;
	__u8 iser;	/* byte 0 of the iSER header */
	__u8 op;	/* byte 0 of the BHS */
	__u8 ahs;	/* TotalAHSLength, in 4-byte words */
	__u32 dlen;	/* DataSegmentLength */
	long delta;	/* received length - (hdr + BHS + AHS + dlen) */
	__u32 max;	/* max_data_len */
	int want;
};

/* a PDU as @c describes it, in an exactly sized heap buffer */
static __u8 *mk_pdu(const struct isdm_mode *m, const struct rx_case *c,
		    size_t *len)
{
	size_t need = m->hdr_len + ISDM_BHS_LEN + c->ahs * 4 + c->dlen;
	__u8 *bhs = scratch + m->hdr_len;

	assert_true((long)need + c->delta >= 0);
	assert_true(need + c->delta <= sizeof(scratch));
	*len = need + c->delta;
	memset(scratch, 0, sizeof(scratch));
	scratch[0] = c->iser;
	bhs[0] = c->op;
	bhs[1] = ISDM_BHS_FINAL;
	bhs[4] = c->ahs;
	bhs[5] = c->dlen >> 16;
	bhs[6] = c->dlen >> 8;
	bhs[7] = c->dlen;
	/* a Data-Out is unsolicited with iSER: no Target Transfer Tag */
	if ((c->op & ISDM_BHS_OPCODE_MASK) == ISDM_OP_DATA_OUT)
		memset(bhs + 20, 0xff, 4);
	/* something recognisable in what arrives of the AHS and data */
	if (*len > (size_t)m->hdr_len + ISDM_BHS_LEN)
		memset(bhs + ISDM_BHS_LEN, 0x5a,
		       *len - m->hdr_len - ISDM_BHS_LEN);
	return unit_dup(scratch, *len);
}

static void run_cases(const struct rx_case *cases, size_t n)
{
	char what[160];
	size_t i, f;

	for (f = 0; f < ARRAY_SIZE(forms); f++) {
		for (i = 0; i < n; i++) {
			const struct rx_case *c = &cases[i];
			struct isdm_rx_pdu pdu;
			size_t len;
			__u8 *b = mk_pdu(forms[f], c, &len);

			snprintf(what, sizeof(what), "%s (%u-byte header)",
				 c->what, forms[f]->hdr_len);
			unit_eq(what, isdm_rx_parse(b, len, forms[f], c->role,
						    c->phase, c->max, &pdu),
				c->want);
		}
	}
}

static void rx_accepts(void **state)
{
	static const struct rx_case cases[] = {
		{ "SCSI Command", T, FFP, 0x10, 0x01, 0, 0, 0, 8192, 0 },
		{ "immediate SCSI Command + data", T, FFP, 0x10, 0x41, 0, 512,
		  0, 8192, 0 },
		{ "NOP-Out", T, FFP, 0x10, 0x40, 0, 0, 0, 8192, 0 },
		{ "TMF Request", T, FFP, 0x10, 0x42, 0, 0, 0, 8192, 0 },
		{ "Text Request", T, FFP, 0x10, 0x04, 0, 30, 2, 8192, 0 },
		{ "Data-Out at max", T, FFP, 0x10, 0x05, 0, 8192, 0, 8192, 0 },
		{ "Logout Request", T, FFP, 0x10, 0x46, 0, 0, 0, 8192, 0 },
		{ "NOP-In", I, FFP, 0x10, 0x20, 0, 0, 0, 8192, 0 },
		{ "SCSI Response + sense", I, FFP, 0x10, 0x21, 0, 20, 0, 8192,
		  0 },
		{ "TMF Response", I, FFP, 0x10, 0x22, 0, 0, 0, 8192, 0 },
		{ "Text Response", I, FFP, 0x10, 0x24, 0, 9, 3, 8192, 0 },
		{ "Logout Response", I, FFP, 0x10, 0x26, 0, 0, 0, 8192, 0 },
		{ "Async Message", I, FFP, 0x10, 0x32, 0, 0, 0, 8192, 0 },
		{ "Reject", I, FFP, 0x10, 0x3f, 0, 48, 0, 8192, 0 },
		{ "Login Request", T, LOGIN, 0x10, 0x43, 0, 100, 0, 8192, 0 },
		{ "Login Response", I, LOGIN, 0x10, 0x23, 0, 333, 3, 8192, 0 },
		{ "reserved header bits", T, FFP, 0x13, 0x01, 0, 0, 0, 8192,
		  0 },
		{ "max_data_len 0, no data", T, FFP, 0x10, 0x01, 0, 0, 0, 0,
		  0 },
	};

	run_cases(cases, ARRAY_SIZE(cases));
}

static void rx_enodata(void **state)
{
	struct isdm_rx_pdu pdu;
	size_t f;

	for (f = 0; f < ARRAY_SIZE(forms); f++) {
		unit_eq("NULL, target",
			isdm_rx_parse(NULL, 100, forms[f], T, FFP, 8192, &pdu),
			-ENODATA);
		unit_eq("NULL, initiator",
			isdm_rx_parse(NULL, 100, forms[f], I, FFP, 8192, &pdu),
			-ENODATA);
		unit_eq("len 0, target",
			isdm_rx_parse(unit_dup(scratch, 0), 0, forms[f], T,
				      FFP, 8192, &pdu), -ENODATA);
		unit_eq("len 0, initiator",
			isdm_rx_parse(unit_dup(scratch, 0), 0, forms[f], I,
				      LOGIN, 8192, &pdu), -ENODATA);
	}
}

static void rx_emsgsize(void **state)
{
	static const struct rx_case cases[] = {
		{ "BHS 1 byte short, T", T, FFP, 0x10, 0x01, 0, 0, -1, 8192,
		  -EMSGSIZE },
		{ "BHS 1 byte short, I", I, FFP, 0x10, 0x21, 0, 0, -1, 8192,
		  -EMSGSIZE },
		{ "header only", T, FFP, 0x10, 0x01, 0, 0, -48, 8192,
		  -EMSGSIZE },
		{ "1 byte", I, FFP, 0x10, 0x21, 0, 0, -47, 8192, -EMSGSIZE },
		{ "short and not control", T, FFP, 0x20, 0x01, 0, 0, -1, 8192,
		  -EMSGSIZE },
	};
	struct isdm_rx_pdu pdu;
	__u8 *b;

	run_cases(cases, ARRAY_SIZE(cases));
	/* a 12-byte-header PDU on a connection that uses the 28-byte form */
	b = unit_dup(scratch, ISDM_HDR_LEN_RFC + ISDM_BHS_LEN);
	memset(b, 0, ISDM_HDR_LEN_RFC + ISDM_BHS_LEN);
	b[0] = 0x10;
	unit_eq("60 bytes on a 28-byte connection",
		isdm_rx_parse(b, ISDM_HDR_LEN_RFC + ISDM_BHS_LEN, &ext, T,
			      FFP, 8192, &pdu), -EMSGSIZE);
}

static void rx_eproto(void **state)
{
	static const struct rx_case cases[] = {
		{ "Hello", T, FFP, 0x20, 0x01, 0, 0, 0, 8192, -EPROTO },
		{ "HelloReply", I, FFP, 0x30, 0x21, 0, 0, 0, 8192, -EPROTO },
		{ "opcode 0", T, LOGIN, 0x00, 0x43, 0, 0, 0, 8192, -EPROTO },
		{ "opcode 4", I, FFP, 0x4c, 0x21, 0, 0, 0, 8192, -EPROTO },
		{ "opcode 15", T, FFP, 0xf0, 0x01, 0, 0, 0, 8192, -EPROTO },
	};

	run_cases(cases, ARRAY_SIZE(cases));
}

static void rx_eopnotsupp(void **state)
{
	static const struct rx_case cases[] = {
		{ "T gets SCSI Response", T, FFP, 0x10, 0x21, 0, 0, 0, 8192,
		  -EOPNOTSUPP },
		{ "T gets NOP-In", T, FFP, 0x10, 0x20, 0, 0, 0, 8192,
		  -EOPNOTSUPP },
		{ "T gets Data-In", T, FFP, 0x10, 0x25, 0, 0, 0, 8192,
		  -EOPNOTSUPP },
		{ "T gets Reject", T, FFP, 0x10, 0x3f, 0, 0, 0, 8192,
		  -EOPNOTSUPP },
		{ "T gets 0x07", T, FFP, 0x10, 0x07, 0, 0, 0, 8192,
		  -EOPNOTSUPP },
		{ "T gets vendor 0x1c", T, FFP, 0x10, 0x1c, 0, 0, 0, 8192,
		  -EOPNOTSUPP },
		{ "T gets Login Response", T, LOGIN, 0x10, 0x23, 0, 0, 0,
		  8192, -EOPNOTSUPP },
		{ "I gets SCSI Command", I, FFP, 0x10, 0x01, 0, 0, 0, 8192,
		  -EOPNOTSUPP },
		{ "I gets Data-Out", I, FFP, 0x10, 0x05, 0, 0, 0, 8192,
		  -EOPNOTSUPP },
		{ "I gets SNACK", I, FFP, 0x10, 0x10, 0, 0, 0, 8192,
		  -EOPNOTSUPP },
		{ "I gets Login Request", I, LOGIN, 0x10, 0x03, 0, 0, 0, 8192,
		  -EOPNOTSUPP },
		{ "I gets 0x27", I, FFP, 0x10, 0x27, 0, 0, 0, 8192,
		  -EOPNOTSUPP },
		{ "I gets 0x30", I, FFP, 0x10, 0x30, 0, 0, 0, 8192,
		  -EOPNOTSUPP },
		{ "I gets vendor 0x3c", I, FFP, 0x10, 0x3c, 0, 0, 0, 8192,
		  -EOPNOTSUPP },
	};

	run_cases(cases, ARRAY_SIZE(cases));
}

static void rx_eprototype(void **state)
{
	static const struct rx_case cases[] = {
		{ "T gets SNACK", T, FFP, 0x10, 0x10, 0, 0, 0, 8192,
		  -EPROTOTYPE },
		{ "I gets Data-In", I, FFP, 0x10, 0x25, 0, 0, 0, 8192,
		  -EPROTOTYPE },
		{ "I gets R2T", I, FFP, 0x10, 0x31, 0, 0, 0, 8192,
		  -EPROTOTYPE },
		/* judged before the phase */
		{ "I gets Data-In in login", I, LOGIN, 0x10, 0x25, 0, 0, 0,
		  8192, -EPROTOTYPE },
		{ "T gets SNACK in login", T, LOGIN, 0x10, 0x10, 0, 0, 0,
		  8192, -EPROTOTYPE },
	};

	run_cases(cases, ARRAY_SIZE(cases));
}

static void rx_eperm(void **state)
{
	static const struct rx_case cases[] = {
		{ "T: SCSI Command in login", T, LOGIN, 0x10, 0x01, 0, 0, 0,
		  8192, -EPERM },
		{ "T: Data-Out in login", T, LOGIN, 0x10, 0x05, 0, 0, 0, 8192,
		  -EPERM },
		{ "T: Login Request in FFP", T, FFP, 0x10, 0x43, 0, 0, 0, 8192,
		  -EPERM },
		{ "I: Login Response in FFP", I, FFP, 0x10, 0x23, 0, 0, 0,
		  8192, -EPERM },
		{ "I: NOP-In in login", I, LOGIN, 0x10, 0x20, 0, 0, 0, 8192,
		  -EPERM },
		{ "I: Reject in login", I, LOGIN, 0x10, 0x3f, 0, 0, 0, 8192,
		  -EPERM },
	};

	run_cases(cases, ARRAY_SIZE(cases));
}

static void rx_e2big(void **state)
{
	static const struct rx_case cases[] = {
		{ "T: 8193 > 8192", T, FFP, 0x10, 0x01, 0, 8193, 0, 8192,
		  -E2BIG },
		{ "I: 8193 > 8192", I, FFP, 0x10, 0x21, 0, 8193, 3, 8192,
		  -E2BIG },
		{ "judged before the length", T, FFP, 0x10, 0x05, 0, 8193,
		  -8193, 8192, -E2BIG },
		{ "1 > 0", I, LOGIN, 0x10, 0x23, 0, 1, 3, 0, -E2BIG },
		{ "2^24-1 > 2^24-2", T, FFP, 0x10, 0x01, 0, 0xffffff,
		  -0xffffff, 0xfffffe, -E2BIG },
	};

	run_cases(cases, ARRAY_SIZE(cases));
}

static void rx_eoverflow(void **state)
{
	static const struct rx_case cases[] = {
		{ "data 1 byte short", T, FFP, 0x10, 0x01, 0, 5, -1, 8192,
		  -EOVERFLOW },
		{ "no data at all", I, FFP, 0x10, 0x21, 0, 5, -5, 8192,
		  -EOVERFLOW },
		{ "AHS missing", T, FFP, 0x10, 0x01, 1, 0, -4, 8192,
		  -EOVERFLOW },
		{ "AHS 1 byte short", I, FFP, 0x10, 0x21, 1, 0, -1, 8192,
		  -EOVERFLOW },
		{ "AHS 1020 missing", T, FFP, 0x10, 0x01, 255, 0, -1020, 8192,
		  -EOVERFLOW },
		{ "AHS there, data short", T, FFP, 0x10, 0x01, 2, 16, -1,
		  8192, -EOVERFLOW },
		{ "2^24-1 announced", T, FFP, 0x10, 0x05, 0, 0xffffff,
		  -0xffffff, 0xffffff, -EOVERFLOW },
		{ "login data short", T, LOGIN, 0x10, 0x43, 0, 100, -4, 8192,
		  -EOVERFLOW },
	};

	run_cases(cases, ARRAY_SIZE(cases));
}

static void rx_ebadmsg(void **state)
{
	static const struct rx_case cases[] = {
		{ "dlen 5 + 4", T, FFP, 0x10, 0x01, 0, 5, 4, 8192, -EBADMSG },
		{ "dlen 0 + 1", I, FFP, 0x10, 0x21, 0, 0, 1, 8192, -EBADMSG },
		{ "dlen 8 + 1", T, FFP, 0x10, 0x05, 0, 8, 1, 8192, -EBADMSG },
		{ "dlen 4 + 4", I, FFP, 0x10, 0x24, 0, 4, 4, 8192, -EBADMSG },
		{ "AHS, dlen 0 + 1", T, FFP, 0x10, 0x01, 1, 0, 1, 8192,
		  -EBADMSG },
		{ "dlen 1 + 100", I, LOGIN, 0x10, 0x23, 0, 1, 100, 8192,
		  -EBADMSG },
	};

	run_cases(cases, ARRAY_SIZE(cases));
}

/* RFC 5046 7.3.4: a Data-Out naming a Target Transfer Tag (an R2T's) */
static void rx_ebade(void **state)
{
	static const struct rx_case c = {
		"Data-Out, 8 bytes", T, FFP, 0x10, 0x05, 0, 8, 0, 8192, 0
	};
	static const __u32 tags[] = { 0, 0x1234, 0xfffffffe, 0x7fffffff };
	char what[160];
	size_t f, i;

	for (f = 0; f < ARRAY_SIZE(forms); f++) {
		for (i = 0; i <= ARRAY_SIZE(tags); i++) {
			struct isdm_rx_pdu pdu;
			size_t len;
			__u8 *b = mk_pdu(forms[f], &c, &len);
			__u8 *ttt = b + forms[f]->hdr_len + 20;
			__u32 tag = i < ARRAY_SIZE(tags) ? tags[i] :
				    ISDM_RESERVED_TAG;

			ttt[0] = tag >> 24;
			ttt[1] = tag >> 16;
			ttt[2] = tag >> 8;
			ttt[3] = tag;
			snprintf(what, sizeof(what),
				 "Data-Out TTT 0x%08x (%u-byte header)", tag,
				 forms[f]->hdr_len);
			unit_eq(what, isdm_rx_parse(b, len, forms[f],
						    ISDM_ROLE_TARGET,
						    ISDM_PHASE_FFP, 8192, &pdu),
				tag == ISDM_RESERVED_TAG ? 0 : -EBADE);
		}
	}
}

/* every errno of isdm_rx_parse() has its own words */
static void rx_strerror(void **state)
{
	static const int errs[] = { -ENODATA, -EMSGSIZE, -EPROTO, -EOPNOTSUPP,
				    -EPROTOTYPE, -EPERM, -E2BIG, -EOVERFLOW,
				    -EBADMSG, -EBADE };
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(errs); i++) {
		assert_string_not_equal(isdm_rx_strerror(errs[i]),
					"malformed");
		for (j = 0; j < i; j++)
			assert_string_not_equal(isdm_rx_strerror(errs[i]),
						isdm_rx_strerror(errs[j]));
	}
	assert_string_equal(isdm_rx_strerror(-EINVAL), "malformed");
	assert_string_equal(isdm_rx_strerror(0), "malformed");
}

/* a data segment of 5 bytes: received length need .. need+3 */
static void rx_padding(void **state)
{
	static const struct rx_case cases[] = {
		{ "dlen 5 + 0", T, FFP, 0x10, 0x01, 0, 5, 0, 8192, 0 },
		{ "dlen 5 + 1", T, FFP, 0x10, 0x01, 0, 5, 1, 8192, 0 },
		{ "dlen 5 + 2", I, FFP, 0x10, 0x21, 0, 5, 2, 8192, 0 },
		{ "dlen 5 + 3", I, FFP, 0x10, 0x21, 0, 5, 3, 8192, 0 },
		{ "dlen 5 + 4", I, FFP, 0x10, 0x21, 0, 5, 4, 8192, -EBADMSG },
		{ "dlen 5 - 1", I, FFP, 0x10, 0x21, 0, 5, -1, 8192,
		  -EOVERFLOW },
		{ "dlen 1 + 3", T, FFP, 0x10, 0x05, 0, 1, 3, 8192, 0 },
		{ "dlen 7 + 1", T, FFP, 0x10, 0x05, 0, 7, 1, 8192, 0 },
		{ "dlen 7 + 2", T, FFP, 0x10, 0x05, 0, 7, 2, 8192, -EBADMSG },
		{ "dlen 8 + 0", T, FFP, 0x10, 0x05, 0, 8, 0, 8192, 0 },
	};

	run_cases(cases, ARRAY_SIZE(cases));
}

/* the decoded offsets, with an AHS and padding */
static void rx_fields_ahs(void **state)
{
	static const struct rx_case c = {
		"AHS 8 bytes, data 6 + 2 padding", T, FFP, 0x10, 0x41, 2, 6,
		2, 8192, 0
	};
	size_t f;

	for (f = 0; f < ARRAY_SIZE(forms); f++) {
		const struct isdm_mode *m = forms[f];
		struct isdm_rx_pdu pdu;
		size_t len;
		__u8 *b = mk_pdu(m, &c, &len);

		memset(&pdu, 0xa5, sizeof(pdu));
		unit_eq(c.what, isdm_rx_parse(b, len, m, c.role, c.phase,
					      c.max, &pdu), 0);
		assert_int_equal(pdu.opcode, ISDM_OP_SCSI_CMD);
		assert_int_equal(pdu.bhs_off, m->hdr_len);
		assert_int_equal(pdu.ahs_len, 8);
		assert_int_equal(pdu.data_off, m->hdr_len + 48 + 8);
		assert_int_equal(pdu.data_len, 6);
		assert_int_equal(len, pdu.data_off + pdu.data_len + 2);
		assert_int_equal(b[pdu.data_off], 0x5a);
		assert_int_equal(b[pdu.data_off + 5], 0x5a);
		assert_false(pdu.stags.wsv);
		assert_false(pdu.stags.rsv);
	}
}

static void rx_fields_max_ahs(void **state)
{
	static const struct rx_case c = {
		"AHS 1020 bytes", I, FFP, 0x10, 0x21, 255, 0, 0, 8192, 0
	};
	struct isdm_rx_pdu pdu;
	size_t len;
	__u8 *b = mk_pdu(&ext, &c, &len);

	unit_eq(c.what, isdm_rx_parse(b, len, &ext, c.role, c.phase, c.max,
				      &pdu), 0);
	assert_int_equal(pdu.ahs_len, 1020);
	assert_int_equal(pdu.data_off, 28 + 48 + 1020);
	assert_int_equal(pdu.data_len, 0);
}

/*
 * isdm_check_ahs(): a BHS of opcode @op, byte 1 @flags, CDB bytes 0 and 7
 * @cdb0/@cdb7, followed by the @n bytes at @ahs, in one exactly sized heap
 * buffer (ASan sees any read past the AHS).
 */
static int ahs_check(__u8 op, __u8 flags, __u8 cdb0, __u8 cdb7,
		     const __u8 *ahs, __u32 n)
{
	__u8 *b = unit_dup(NULL, ISDM_BHS_LEN + n);

	memset(b, 0, ISDM_BHS_LEN);
	b[0] = op;
	b[1] = flags;
	b[4] = n / 4;
	b[32] = cdb0;
	b[39] = cdb7;
	if (n)
		memcpy(b + ISDM_BHS_LEN, ahs, n);
	return isdm_check_ahs(b, n ? b + ISDM_BHS_LEN : NULL, n);
}

#define CMD	ISDM_OP_SCSI_CMD
#define F	ISDM_BHS_FINAL
#define RW	(ISDM_BHS_CMD_READ | ISDM_BHS_CMD_WRITE)
#define VARLEN	0x7f

/* RFC 3720 10.2.2: what the target passes to LIO and what it refuses */
static void ahs_cases(void **state)
{
	/* extended CDB, AHSLength 17: the last 16 bytes of a 32-byte CDB */
	static const __u8 ecdb32[20] = { 0, 17, 1, 0 };
	static const __u8 bidi[8] = { 0, 5, 2, 0, 0, 0, 0x10, 0 };
	static const __u8 ecdb_bidi[28] = { 0, 17, 1, 0, [20] = 0, 5, 2, 0 };
	static const __u8 bidi_ecdb[28] = { 0, 5, 2, 0, [8] = 0, 17, 1, 0 };
	static const __u8 two_bidi[16] = { 0, 5, 2, 0, [8] = 0, 5, 2, 0 };
	static const __u8 two_ecdb[12] = { 0, 2, 1, 0, 0, 0, 0, 0,
					   0, 1, 1, 0 };
	static const __u8 ecdb0[4] = { 0, 0, 1, 0 };
	static const __u8 ecdb1[4] = { 0, 1, 1, 0 };
	static const __u8 ecdb2[8] = { 0, 2, 1, 0 };
	static const __u8 over[4] = { 0, 5, 1, 0 };
	static const __u8 over2[12] = { 0, 5, 1, 0, [8] = 0, 5, 2, 0 };
	static const __u8 huge[4] = { 0xff, 0xff, 1, 0 };
	static const __u8 trailing[24] = { 0, 17, 1, 0 };
	static const __u8 type0[8] = { 0, 5, 0, 0 };
	static const __u8 type3[8] = { 0, 5, 3, 0 };
	static const __u8 vendor[8] = { 0, 5, 0x40, 0 };
	static const __u8 bidi4[8] = { 0, 4, 2, 0 };
	static const __u8 bidi6[12] = { 0, 6, 2, 0 };

	unit_eq("no AHS, TEST UNIT READY",
		ahs_check(CMD, F, 0x00, 0, NULL, 0), 0);
	unit_eq("no AHS, READ(16)", ahs_check(CMD, F, 0x88, 0, NULL, 0), 0);
	unit_eq("no AHS, 16-byte variable-length CDB",
		ahs_check(CMD, F, VARLEN, 8, NULL, 0), 0);
	unit_eq("no AHS, 32-byte variable-length CDB",
		ahs_check(CMD, F, VARLEN, 24, NULL, 0), -EBADMSG);
	unit_eq("no AHS, NOP-Out", ahs_check(0x00, F, 0, 0, NULL, 0), 0);
	unit_eq("no AHS, Text", ahs_check(0x04, F, 0, 0, NULL, 0), 0);

	unit_eq("AHS on a NOP-Out", ahs_check(0x00, F, 0, 0, ecdb2, 8),
		-EPROTO);
	unit_eq("AHS on an immediate NOP-Out",
		ahs_check(0x40, F, 0, 0, ecdb2, 8), -EPROTO);
	unit_eq("AHS on a Text Request", ahs_check(0x04, F, 0, 0, ecdb2, 8),
		-EPROTO);
	unit_eq("AHS on a Task Management Request",
		ahs_check(0x02, F, 0, 0, bidi, 8), -EPROTO);
	unit_eq("AHS on a Data-Out", ahs_check(0x05, F, 0, 0, bidi, 8),
		-EPROTO);

	unit_eq("extended CDB, AHSLength 17, 32-byte CDB",
		ahs_check(CMD, F, VARLEN, 24, ecdb32, 20), 0);
	unit_eq("extended CDB, AHSLength 17, shorter CDB",
		ahs_check(CMD, F, VARLEN, 16, ecdb32, 20), 0);
	unit_eq("extended CDB, AHSLength 17, 40-byte CDB",
		ahs_check(CMD, F, VARLEN, 32, ecdb32, 20), -EBADMSG);
	unit_eq("extended CDB, AHSLength 2, 32-byte CDB",
		ahs_check(CMD, F, VARLEN, 24, ecdb2, 8), -EBADMSG);
	unit_eq("extended CDB, AHSLength 2, 17-byte CDB",
		ahs_check(CMD, F, VARLEN, 9, ecdb2, 8), 0);
	unit_eq("extended CDB, AHSLength 0 (issue 10: LIO copied -1 bytes)",
		ahs_check(CMD, F, 0x00, 0, ecdb0, 4), -EINVAL);
	unit_eq("extended CDB, AHSLength 1 (CDB of 16)",
		ahs_check(CMD, F, 0x00, 0, ecdb1, 4), -EINVAL);
	unit_eq("extended CDB, AHSLength 5 in 4 bytes",
		ahs_check(CMD, F, 0x00, 0, over, 4), -EMSGSIZE);
	unit_eq("second segment overruns",
		ahs_check(CMD, F | RW, VARLEN, 12, over2, 12), -EMSGSIZE);
	unit_eq("AHSLength 65535 in 4 bytes",
		ahs_check(CMD, F, 0x00, 0, huge, 4), -EMSGSIZE);
	unit_eq("a zero word after the extended CDB (type 0)",
		ahs_check(CMD, F, VARLEN, 24, trailing, 24), -EOPNOTSUPP);
	unit_eq("type 0", ahs_check(CMD, F, 0x00, 0, type0, 8), -EOPNOTSUPP);
	unit_eq("reserved type 3", ahs_check(CMD, F, 0x00, 0, type3, 8),
		-EOPNOTSUPP);
	unit_eq("vendor type 0x40", ahs_check(CMD, F, 0x00, 0, vendor, 8),
		-EOPNOTSUPP);
	unit_eq("two extended CDBs",
		ahs_check(CMD, F, VARLEN, 9, two_ecdb, 12), -EINVAL);

	unit_eq("bidi read length, R and W",
		ahs_check(CMD, F | RW, 0x53, 0, bidi, 8), 0);
	unit_eq("bidi read length, R only",
		ahs_check(CMD, F | ISDM_BHS_CMD_READ, 0x28, 0, bidi, 8),
		-EINVAL);
	unit_eq("bidi read length, W only",
		ahs_check(CMD, F | ISDM_BHS_CMD_WRITE, 0x2a, 0, bidi, 8),
		-EINVAL);
	unit_eq("bidi read length, AHSLength 4",
		ahs_check(CMD, F | RW, 0x53, 0, bidi4, 8), -EINVAL);
	unit_eq("bidi read length, AHSLength 6",
		ahs_check(CMD, F | RW, 0x53, 0, bidi6, 12), -EINVAL);
	unit_eq("extended CDB, then bidi read length",
		ahs_check(CMD, F | RW, VARLEN, 24, ecdb_bidi, 28), 0);
	unit_eq("bidi read length, then extended CDB (LIO reads the first)",
		ahs_check(CMD, F | RW, VARLEN, 24, bidi_ecdb, 28), -EINVAL);
	unit_eq("two bidi read lengths",
		ahs_check(CMD, F | RW, 0x53, 0, two_bidi, 16), -EINVAL);
}

/* the largest CDB LIO takes is 260 bytes: AHSLength 245 */
static void ahs_cdb_limits(void **state)
{
	static __u8 ahs[1020];

	memset(ahs, 0, sizeof(ahs));
	ahs[1] = 245;		/* 3 + 245 = 248 bytes */
	ahs[2] = 1;
	unit_eq("extended CDB, AHSLength 245, 260-byte CDB",
		ahs_check(CMD, F, VARLEN, 252, ahs, 248), 0);
	unit_eq("extended CDB, AHSLength 245, in 252 bytes",
		ahs_check(CMD, F, VARLEN, 252, ahs, 252), -EOPNOTSUPP);
	ahs[1] = 246;		/* 249, padded to 252 */
	unit_eq("extended CDB, AHSLength 246",
		ahs_check(CMD, F, VARLEN, 252, ahs, 252), -EINVAL);
	unit_eq("extended CDB, AHSLength 246 in 248 bytes",
		ahs_check(CMD, F, VARLEN, 252, ahs, 248), -EMSGSIZE);
	ahs[0] = 1017 >> 8;	/* the whole 1020 bytes */
	ahs[1] = 1017 & 0xff;
	unit_eq("extended CDB filling TotalAHSLength 255",
		ahs_check(CMD, F, VARLEN, 252, ahs, 1020), -EINVAL);
}

static int parse_raw(const __u8 *msg, size_t len, const struct isdm_mode *m,
		     enum isdm_role role, struct isdm_rx_pdu *pdu)
{
	memset(pdu, 0xa5, sizeof(*pdu));
	return isdm_rx_parse(unit_dup(msg, len), len, m, role, FFP, 8192,
			     pdu);
}

static void rx_stags_rfc(void **state)
{
	__u8 msg[60] = {
		0x1c, 0xff, 0xff, 0xff, 0x11, 0x22, 0x33, 0x44,
		0x55, 0x66, 0x77, 0x88, ISDM_OP_SCSI_CMD, 0xe0,
	};
	struct isdm_rx_pdu p;

	unit_eq("WSV+RSV", parse_raw(msg, 60, &rfc, T, &p), 0);
	assert_true(p.stags.wsv);
	assert_true(p.stags.rsv);
	assert_int_equal(p.stags.write_stag, 0x11223344);
	assert_int_equal(p.stags.read_stag, 0x55667788);
	assert_int_equal(p.stags.write_va, 0);
	assert_int_equal(p.stags.read_va, 0);

	msg[0] = 0x18;
	unit_eq("WSV", parse_raw(msg, 60, &rfc, T, &p), 0);
	assert_true(p.stags.wsv);
	assert_false(p.stags.rsv);
	assert_int_equal(p.stags.write_stag, 0x11223344);
	assert_int_equal(p.stags.read_stag, 0);

	msg[0] = 0x14;
	unit_eq("RSV", parse_raw(msg, 60, &rfc, T, &p), 0);
	assert_false(p.stags.wsv);
	assert_true(p.stags.rsv);
	assert_int_equal(p.stags.write_stag, 0);
	assert_int_equal(p.stags.read_stag, 0x55667788);

	/* valid bits clear: fields ignored (RFC 5046 9.2) */
	msg[0] = 0x13;
	unit_eq("none", parse_raw(msg, 60, &rfc, T, &p), 0);
	assert_false(p.stags.wsv);
	assert_false(p.stags.rsv);
	assert_int_equal(p.stags.write_stag, 0);
	assert_int_equal(p.stags.read_stag, 0);
}

static void rx_stags_ext(void **state)
{
	__u8 msg[76] = {
		0x1c, 0, 0, 0,
		0x11, 0x22, 0x33, 0x44,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0x55, 0x66, 0x77, 0x88,
		0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
		ISDM_OP_SCSI_CMD, 0xe0,
	};
	struct isdm_rx_pdu p;

	unit_eq("WSV+RSV", parse_raw(msg, 76, &ext, T, &p), 0);
	assert_true(p.stags.wsv);
	assert_true(p.stags.rsv);
	assert_int_equal(p.stags.write_stag, 0x11223344);
	assert_int_equal(p.stags.write_va, 0x0102030405060708ULL);
	assert_int_equal(p.stags.read_stag, 0x55667788);
	assert_int_equal(p.stags.read_va, 0xf1f2f3f4f5f6f7f8ULL);

	msg[0] = 0x18;
	unit_eq("WSV", parse_raw(msg, 76, &ext, T, &p), 0);
	assert_int_equal(p.stags.write_stag, 0x11223344);
	assert_int_equal(p.stags.write_va, 0x0102030405060708ULL);
	assert_int_equal(p.stags.read_stag, 0);
	assert_int_equal(p.stags.read_va, 0);

	msg[0] = 0x14;
	unit_eq("RSV", parse_raw(msg, 76, &ext, T, &p), 0);
	assert_int_equal(p.stags.write_stag, 0);
	assert_int_equal(p.stags.write_va, 0);
	assert_int_equal(p.stags.read_stag, 0x55667788);
	assert_int_equal(p.stags.read_va, 0xf1f2f3f4f5f6f7f8ULL);

	msg[0] = 0x10;
	unit_eq("none", parse_raw(msg, 76, &ext, T, &p), 0);
	assert_false(p.stags.wsv);
	assert_false(p.stags.rsv);
	assert_int_equal(p.stags.write_stag, 0);
	assert_int_equal(p.stags.write_va, 0);
	assert_int_equal(p.stags.read_stag, 0);
	assert_int_equal(p.stags.read_va, 0);
}

/*
 * ib_iser's SCSI READ(10) of 4 KiB: flags 0x14 (RSV), read_stag and an
 * absolute read_va, BHS with F|R, EDTL 4096, no data segment.
 */
static void rx_linux_read_command(void **state)
{
	static const __u8 msg[76] = {
		0x14, 0, 0, 0,
		0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0,
		0x00, 0x00, 0x12, 0x34,
		0xff, 0xff, 0x88, 0x81, 0x0a, 0xbc, 0xd0, 0x00,
		/* BHS */
		0x01, 0xc1, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0,
		0x00, 0x00, 0x00, 0x2a, 0x00, 0x00, 0x10, 0x00,
		0, 0, 0, 1, 0, 0, 0, 1,
		0x28, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0,
	};
	struct isdm_rx_pdu p;

	unit_eq("read cmd", parse_raw(msg, 76, &ext, T, &p), 0);
	assert_int_equal(p.opcode, ISDM_OP_SCSI_CMD);
	assert_int_equal(p.bhs_off, 28);
	assert_int_equal(p.data_off, 76);
	assert_int_equal(p.data_len, 0);
	assert_false(p.stags.wsv);
	assert_true(p.stags.rsv);
	assert_int_equal(p.stags.read_stag, 0x1234);
	assert_int_equal(p.stags.read_va, 0xffff88810abcd000ULL);
}

/* ib_isert's SCSI Response: flags 0x10 (ISCSI_CTRL), nothing else */
static void rx_linux_scsi_response(void **state)
{
	__u8 msg[76 + 20] = { 0x10 };
	struct isdm_rx_pdu p;

	msg[28] = ISDM_OP_SCSI_RSP;
	msg[29] = 0x80;
	msg[28 + 7] = 20;	/* sense data */
	unit_eq("rsp", parse_raw(msg, sizeof(msg), &ext, I, &p), 0);
	assert_int_equal(p.opcode, ISDM_OP_SCSI_RSP);
	assert_int_equal(p.data_off, 76);
	assert_int_equal(p.data_len, 20);
	assert_false(p.stags.wsv);
	assert_false(p.stags.rsv);
}

/* ib_iser's first Login Request: flags ISER_VER (0x10), text data */
static void rx_linux_login(void **state)
{
	static const char text[] = "InitiatorName=iqn.2004-10.com.ubuntu:01:x";
	__u8 msg[76 + 44] = { 0x10 };
	struct isdm_rx_pdu p;

	msg[28] = ISDM_BHS_IMMEDIATE | ISDM_OP_LOGIN_REQ;
	msg[29] = 0x87;	/* T, CSG 1, NSG 3 */
	msg[28 + 7] = sizeof(text);
	memcpy(msg + 76, text, sizeof(text));
	memset(&p, 0, sizeof(p));
	unit_eq("login", isdm_rx_parse(unit_dup(msg, sizeof(msg)),
				       sizeof(msg), &ext, T, LOGIN, 8192, &p),
		0);
	assert_int_equal(p.opcode, ISDM_OP_LOGIN_REQ);
	assert_int_equal(p.data_len, sizeof(text));
	unit_eq("login in FFP", parse_raw(msg, sizeof(msg), &ext, T, &p),
		-EPERM);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(rx_accepts),
		cmocka_unit_test(rx_enodata),
		cmocka_unit_test(rx_emsgsize),
		cmocka_unit_test(rx_eproto),
		cmocka_unit_test(rx_eopnotsupp),
		cmocka_unit_test(rx_eprototype),
		cmocka_unit_test(rx_eperm),
		cmocka_unit_test(rx_e2big),
		cmocka_unit_test(rx_eoverflow),
		cmocka_unit_test(rx_ebadmsg),
		cmocka_unit_test(rx_ebade),
		cmocka_unit_test(rx_strerror),
		cmocka_unit_test(rx_padding),
		cmocka_unit_test(rx_fields_ahs),
		cmocka_unit_test(rx_fields_max_ahs),
		cmocka_unit_test(ahs_cases),
		cmocka_unit_test(ahs_cdb_limits),
		cmocka_unit_test(rx_stags_rfc),
		cmocka_unit_test(rx_stags_ext),
		cmocka_unit_test(rx_linux_read_command),
		cmocka_unit_test(rx_linux_scsi_response),
		cmocka_unit_test(rx_linux_login),
	};

	unit_plan(ARRAY_SIZE(tests));
	return unit_done(cmocka_run_group_tests_name("rx", tests, NULL,
						     unit_free_all),
			 ARRAY_SIZE(tests));
}
