/* SPDX-License-Identifier: GPL-2.0 */
/*
 * T10 protection information on the iSER wire: the layout of a data
 * stream that carries an 8-byte DIF tuple after each protection interval,
 * and the tuple checks the datamover makes itself.
 *
 * The layout is the one Linux's iSER pair produces with signature offload
 * (the tuple interleaved in the wire domain, the guard a CRC): a peer
 * with hardware offload sees the same bytes. The Expected Data Transfer
 * Length, the unsolicited data and every RDMA transfer count the tuples
 * (scsi_transfer_length()). Documentation/wire-protocol.md, section 8,
 * gives the rules with their SBC-4 sections.
 *
 * This header builds in the kernel and in userspace (tests/unit); the
 * pure functions are in drivers/core/pi.c.
 */
#ifndef ISDM_PI_H
#define ISDM_PI_H

#include <linux/types.h>
#ifndef __KERNEL__
#include <stdbool.h>
#endif

/**
 * struct isdm_pi_tuple - the protection information of one interval
 *	(SBC-4 4.22.2), big-endian on the wire and in the block layer
 * @guard: CRC of the interval's data (polynomial 0x8bb7, SBC-4 4.22.4)
 * @app: application tag; 0xffff disables the checks of this interval
 *	(types 1 and 2), with a reference tag of 0xffffffff also type 3's
 * @ref: reference tag: the low 32 bits of the interval's LBA for types 1
 *	and 2, owned by the application for type 3
 */
struct isdm_pi_tuple {
	__be16	guard;
	__be16	app;
	__be32	ref;
};

#define ISDM_PI_TUPLE_LEN	8
#define ISDM_PI_MIN_INTERVAL	512
#define ISDM_PI_MAX_INTERVAL	4096
#define ISDM_PI_APP_ESCAPE	0xffff
#define ISDM_PI_REF_ESCAPE	0xffffffffU

/* what isdm_pi_tuple_check() checks (SBC-4 4.22.3, Linux's prot_flags) */
#define ISDM_PI_CHECK_GUARD	0x1
#define ISDM_PI_CHECK_REF	0x2

/**
 * enum isdm_pi_err - the first check an interval failed
 * @ISDM_PI_OK: every check asked for passed, or the tuple is an escape
 * @ISDM_PI_GUARD: the guard does not match the data (ASC/ASCQ 10h/01h)
 * @ISDM_PI_REF: the reference tag is not the expected one (10h/03h)
 */
enum isdm_pi_err {
	ISDM_PI_OK = 0,
	ISDM_PI_GUARD,
	ISDM_PI_REF,
};

/**
 * struct isdm_pi_pos - where a byte of the wire stream lives
 * @is_pi: the byte belongs to a tuple, not to the data
 * @off: its offset in the data buffer, or in the protection buffer
 * @run: bytes from here to the end of that data interval or tuple
 */
struct isdm_pi_pos {
	bool	is_pi;
	__u32	off;
	__u32	run;
};

bool isdm_pi_interval_ok(__u32 interval);
int isdm_pi_wire_len(__u32 data_len, __u32 interval, __u32 *wire_len);
int isdm_pi_data_len(__u32 wire_len, __u32 interval, __u32 *data_len);
void isdm_pi_locate(__u32 wire_off, __u32 interval, struct isdm_pi_pos *pos);
__u16 isdm_pi_guard(const void *data, __u32 len);
__u16 isdm_pi_guard_update(__u16 crc, const void *data, __u32 len);
void isdm_pi_tuple_make(__u16 guard, __u8 type, __u32 ref,
			struct isdm_pi_tuple *t);
enum isdm_pi_err isdm_pi_tuple_check(__u16 guard, __u8 type, __u32 ref,
				     unsigned int checks,
				     const struct isdm_pi_tuple *t);

#endif /* ISDM_PI_H */
