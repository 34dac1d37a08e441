/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the wire-layer unit tests. Each test_*.c is one cmocka
 * group and one binary; its main() reports "unit-plan: N" before the run
 * and "unit-result: N F" after it, which tests/unit/run.sh adds up.
 */
#ifndef ISDM_TESTS_UNIT_H
#define ISDM_TESTS_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "isdm/iser_wire.h"

/* most cmocka test functions have no use for their state */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define UNIT_MAX_BUFS	4096

static void *unit_bufs[UNIT_MAX_BUFS];
static unsigned int unit_nbufs;

/*
 * A heap copy of exactly @len bytes, so that ASan reports any access past
 * the end. Freed by unit_free_all() after the group, which also covers
 * tests that fail half-way.
 */
static inline void *unit_dup(const void *src, size_t len)
{
	void *p = malloc(len);

	if (!p || unit_nbufs == UNIT_MAX_BUFS)
		fail_msg("out of test buffers");
	if (src && len)
		memcpy(p, src, len);
	unit_bufs[unit_nbufs++] = p;
	return p;
}

/* @len bytes of @byte, exactly sized on the heap like unit_dup() */
static inline void *unit_fill(int byte, size_t len)
{
	void *p = unit_dup(NULL, len);

	memset(p, byte, len);
	return p;
}

static inline int unit_free_all(void **state)
{
	while (unit_nbufs)
		free(unit_bufs[--unit_nbufs]);
	return 0;
}

#define UNIT_ERRNO(e)	{ e, "-" #e }

static const struct {
	int err;
	const char *name;
} unit_errnos[] = {
	{ 0, "0" },
	UNIT_ERRNO(ENODATA), UNIT_ERRNO(EMSGSIZE), UNIT_ERRNO(EPROTO),
	UNIT_ERRNO(EOPNOTSUPP), UNIT_ERRNO(EPROTOTYPE), UNIT_ERRNO(EPERM),
	UNIT_ERRNO(E2BIG), UNIT_ERRNO(EOVERFLOW), UNIT_ERRNO(EBADMSG),
	UNIT_ERRNO(ERANGE), UNIT_ERRNO(EINVAL), UNIT_ERRNO(ENOKEY),
	UNIT_ERRNO(ENOBUFS), UNIT_ERRNO(ENOENT), UNIT_ERRNO(ENOMSG),
	UNIT_ERRNO(EILSEQ), UNIT_ERRNO(ENAMETOOLONG),
};

static inline const char *unit_errname(long v)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(unit_errnos); i++)
		if (unit_errnos[i].err == -v)
			return unit_errnos[i].name;
	return "?";
}

/* Compare a return value, naming the case and the errnos on failure. */
#define unit_eq(what, got, want) do {					\
	long __ue_got = (got);						\
	long __ue_want = (want);					\
	if (__ue_got != __ue_want)					\
		fail_msg("%s: got %ld (%s), want %ld (%s)", (what),	\
			 __ue_got, unit_errname(__ue_got),		\
			 __ue_want, unit_errname(__ue_want));		\
} while (0)

static inline void unit_plan(size_t n)
{
	printf("unit-plan: %zu\n", n);
	fflush(stdout);
}

static inline int unit_done(int failed, size_t n)
{
	printf("unit-result: %zu %d\n", n, failed);
	fflush(stdout);
	return failed ? 1 : 0;
}

#endif /* ISDM_TESTS_UNIT_H */
