/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the wire-layer libFuzzer targets. A violated
 * invariant prints what failed and aborts, which libFuzzer reports as a
 * crash and saves the input for.
 */
#ifndef ISDM_TESTS_FUZZ_H
#define ISDM_TESTS_FUZZ_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isdm/iser_wire.h"

/* the entry point libFuzzer calls; each target defines it */
int LLVMFuzzerTestOneInput(const __u8 *data, size_t size);

static inline void fuzz_fail(const char *cond, const char *file, int line)
{
	fprintf(stderr, "invariant failed: %s (%s:%d)\n", cond, file, line);
	abort();
}

#define fuzz_check(cond) do {						\
	if (!(cond))							\
		fuzz_fail(#cond, __FILE__, __LINE__);			\
} while (0)

/* an exactly sized heap copy, so that ASan sees every overread */
static inline __u8 *fuzz_dup(const __u8 *src, size_t len)
{
	__u8 *p = malloc(len);

	if (!p && len)
		abort();
	if (len)
		memcpy(p, src, len);
	return p;
}

static inline __u32 fuzz_be32(const __u8 *p)
{
	return ((__u32)p[0] << 24) | ((__u32)p[1] << 16) |
	       ((__u32)p[2] << 8) | p[3];
}

static inline __u64 fuzz_be64(const __u8 *p)
{
	return ((__u64)fuzz_be32(p) << 32) | fuzz_be32(p + 4);
}

static inline void fuzz_put_be32(__u8 *p, __u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

#endif /* ISDM_TESTS_FUZZ_H */
