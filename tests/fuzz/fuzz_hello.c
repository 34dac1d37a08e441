// SPDX-License-Identifier: GPL-2.0
/*
 * Hello and HelloReply: both parsers on any bytes, checked against RFC
 * 5046 9.3, 9.4 and 10.1.3.3; the target's answer (5.1.3) checked
 * against its rules; and build + parse round trips of both messages.
 *
 * Input: bytes 0-1 are the target's ORD (big-endian), the rest is the
 * message.
 */
#include "fuzz.h"

/* the length and opcode errors both parsers share */
static int expect_len_op(const __u8 *m, size_t len, __u8 op)
{
	if (!len)
		return -ENODATA;
	if (len < ISDM_HELLO_LEN)
		return -EMSGSIZE;
	if (len > ISDM_HELLO_LEN)
		return -E2BIG;
	if ((m[0] & ISDM_OP_MASK) != op)
		return -EPROTO;
	return 0;
}

static void check_reply_bytes(const struct isdm_hello_reply *r,
			      const struct isdm_hello_result *res)
{
	const __u8 *b = (const __u8 *)r;
	size_t i;

	fuzz_check(b[0] == (ISDM_OP_HELLO_REPLY |
			    (res->reject ? ISDM_HELLO_REPLY_REJ : 0)));
	fuzz_check(b[1] == ((ISDM_ISER_VERSION << 4) | (res->cur_ver & 15)));
	fuzz_check(b[2] == res->ord >> 8 && b[3] == (res->ord & 0xff));
	for (i = 4; i < ISDM_HELLO_LEN; i++)
		fuzz_check(!b[i]);
}

/* what the target answers, sent and read back by the initiator */
static void answer(__u8 max, __u8 min, __u16 ird, __u16 tord)
{
	bool overlap = min <= ISDM_ISER_VERSION && max >= ISDM_ISER_VERSION;
	struct isdm_hello_result res, back;
	struct isdm_hello_reply r;
	__u8 *b;

	isdm_hello_answer(max, min, ird, tord, &res);
	fuzz_check(res.ord == (ird < tord ? ird : tord));
	fuzz_check(res.reject == (!overlap || (ird > 0 && !tord)));
	fuzz_check(res.cur_ver == (overlap ? ISDM_ISER_VERSION : 0));

	memset(&r, 0xa5, sizeof(r));
	isdm_hello_reply_build(&r, &res);
	check_reply_bytes(&r, &res);
	b = fuzz_dup((const __u8 *)&r, sizeof(r));
	fuzz_check(isdm_msg_kind(b, sizeof(r)) == ISDM_MSG_HELLO_REPLY);
	fuzz_check(!isdm_hello_reply_parse(b, sizeof(r), &back));
	fuzz_check(back.reject == res.reject && back.cur_ver == res.cur_ver &&
		   back.ord == res.ord);
	free(b);
}

static void fuzz_hello(const __u8 *m, size_t len, __u16 tord)
{
	int want = expect_len_op(m, len, ISDM_OP_HELLO);
	__u8 max = 0xee, min = 0xee;
	__u16 ird = 0xeeee;
	int ret;

	ret = isdm_hello_parse(len ? m : NULL, len, &max, &min, &ird);
	if (!want && (m[1] & 15) > (m[1] >> 4))
		want = -EBADMSG;
	fuzz_check(ret == want);
	if (ret)
		return;
	fuzz_check(isdm_msg_kind(m, len) == ISDM_MSG_HELLO);
	fuzz_check(max == m[1] >> 4 && min == (m[1] & 15) && min <= max);
	fuzz_check(ird == ((m[2] << 8) | m[3]));
	answer(max, min, ird, tord);
}

static void fuzz_reply(const __u8 *m, size_t len)
{
	int want = expect_len_op(m, len, ISDM_OP_HELLO_REPLY);
	struct isdm_hello_result res, back;
	struct isdm_hello_reply r;
	int ret;

	ret = isdm_hello_reply_parse(len ? m : NULL, len, &res);
	if (!want && !(m[0] & ISDM_HELLO_REPLY_REJ) &&
	    (m[1] & 15) != ISDM_ISER_VERSION)
		want = -ERANGE;
	fuzz_check(ret == want);
	if (ret)
		return;
	fuzz_check(res.reject == !!(m[0] & ISDM_HELLO_REPLY_REJ));
	fuzz_check(res.cur_ver == (m[1] & 15));
	fuzz_check(res.ord == ((m[2] << 8) | m[3]));
	fuzz_check(res.reject || res.cur_ver == ISDM_ISER_VERSION);

	/* the same answer rebuilt reads back the same */
	isdm_hello_reply_build(&r, &res);
	check_reply_bytes(&r, &res);
	fuzz_check(!isdm_hello_reply_parse(&r, sizeof(r), &back));
	fuzz_check(back.reject == res.reject && back.cur_ver == res.cur_ver &&
		   back.ord == res.ord);
}

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	struct isdm_hello h;
	__u8 max, min;
	__u16 tord, ird;
	size_t len;
	__u8 *m;

	if (size < 2)
		return 0;
	tord = (data[0] << 8) | data[1];
	len = size - 2;
	m = fuzz_dup(data + 2, len);
	fuzz_hello(m, len, tord);
	fuzz_reply(m, len);
	free(m);

	/* a Hello built for this IRD parses back, and gets an answer */
	isdm_hello_build(&h, tord);
	fuzz_check(!isdm_hello_parse(&h, sizeof(h), &max, &min, &ird));
	fuzz_check(max == ISDM_ISER_VERSION && min == ISDM_ISER_VERSION);
	fuzz_check(ird == tord);
	answer(max, min, ird, data[1]);
	return 0;
}
