// SPDX-License-Identifier: GPL-2.0
/*
 * T10 protection information on the iSER wire: the interleaved layout
 * (an 8-byte tuple after each protection interval) and the tuple checks
 * (SBC-4 4.22). Documentation/wire-protocol.md, section 8.
 *
 * Pure functions: no allocation, no locks, no kernel objects. The same
 * file is compiled into iser_dm.ko and into the userspace unit tests
 * (with tests/unit/kshim.h, which supplies crc_t10dif()).
 */
#ifdef __KERNEL__
#include <linux/crc-t10dif.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/kernel.h>
#include <asm/byteorder.h>
#endif

#include "isdm/pi.h"

/**
 * isdm_pi_interval_ok() - whether the datamover carries this interval
 * @interval: protection interval in bytes: the LUN's logical block size
 *
 * Return: true for a power of two from 512 to 4096 bytes.
 */
bool isdm_pi_interval_ok(__u32 interval)
{
	return interval >= ISDM_PI_MIN_INTERVAL &&
	       interval <= ISDM_PI_MAX_INTERVAL &&
	       !(interval & (interval - 1));
}

/**
 * isdm_pi_wire_len() - the length of a transfer on the wire
 * @data_len: bytes of data, without protection information
 * @interval: protection interval (isdm_pi_interval_ok())
 * @wire_len: set to @data_len plus one tuple per interval
 *
 * Return: 0, or -EINVAL when @interval is not carried, @data_len is not a
 * whole number of intervals, or the result does not fit in 32 bits.
 */
int isdm_pi_wire_len(__u32 data_len, __u32 interval, __u32 *wire_len)
{
	__u64 len;

	if (!isdm_pi_interval_ok(interval) || data_len % interval)
		return -EINVAL;
	len = (__u64)data_len + (__u64)(data_len / interval) * ISDM_PI_TUPLE_LEN;
	if (len > 0xffffffffULL)
		return -EINVAL;
	*wire_len = (__u32)len;
	return 0;
}

/**
 * isdm_pi_data_len() - the data a protected transfer carries
 * @wire_len: bytes on the wire, tuples included (a peer's Expected Data
 *	Transfer Length, or a burst's length)
 * @interval: protection interval (isdm_pi_interval_ok())
 * @data_len: set to @wire_len without its tuples
 *
 * Return: 0; -EINVAL when @interval is not carried; -EBADMSG when
 * @wire_len is not a whole number of intervals each followed by its tuple,
 * that is, when the tuple count does not match the transfer length.
 */
int isdm_pi_data_len(__u32 wire_len, __u32 interval, __u32 *data_len)
{
	__u32 unit = interval + ISDM_PI_TUPLE_LEN;

	if (!isdm_pi_interval_ok(interval))
		return -EINVAL;
	if (wire_len % unit)
		return -EBADMSG;
	*data_len = wire_len / unit * interval;
	return 0;
}
EXPORT_SYMBOL_GPL(isdm_pi_data_len);

/**
 * isdm_pi_locate() - map an offset of the wire stream to its buffer
 * @wire_off: offset in the interleaved stream
 * @interval: protection interval (isdm_pi_interval_ok(); not checked here)
 * @pos: set to the buffer (data or protection), the offset in it and the
 *	bytes left in that interval or tuple
 *
 * A copy between the wire layout and the separate data and protection
 * buffers of the block layer and LIO walks the stream with this, one run
 * at a time.
 */
void isdm_pi_locate(__u32 wire_off, __u32 interval, struct isdm_pi_pos *pos)
{
	__u32 unit = interval + ISDM_PI_TUPLE_LEN;
	__u32 n = wire_off / unit, in = wire_off % unit;

	pos->is_pi = in >= interval;
	if (pos->is_pi) {
		pos->off = n * ISDM_PI_TUPLE_LEN + (in - interval);
		pos->run = unit - in;
	} else {
		pos->off = n * interval + in;
		pos->run = interval - in;
	}
}

/**
 * isdm_pi_guard() - the guard of an interval's data
 * @data: the data
 * @len: its length
 *
 * Return: the CRC of SBC-4 4.22.4 (polynomial 0x8bb7, initial value 0).
 */
__u16 isdm_pi_guard(const void *data, __u32 len)
{
	return crc_t10dif(data, len);
}

/**
 * isdm_pi_guard_update() - go on with a guard over the next piece of data
 * @crc: the guard of the interval's bytes before @data (0 at its start)
 * @data: the next bytes
 * @len: their number
 *
 * Return: the guard of the bytes so far.
 */
__u16 isdm_pi_guard_update(__u16 crc, const void *data, __u32 len)
{
	return crc_t10dif_update(crc, data, len);
}

/**
 * isdm_pi_tuple_make() - the tuple of one interval
 * @guard: the interval's guard (isdm_pi_guard())
 * @type: protection type, 1 to 3
 * @ref: the reference tag: the interval's LBA for types 1 and 2; type 3
 *	keeps its reference tag at the escape value
 * @t: set to the guard, an application tag of 0 and the reference tag
 */
void isdm_pi_tuple_make(__u16 guard, __u8 type, __u32 ref,
			struct isdm_pi_tuple *t)
{
	t->guard = cpu_to_be16(guard);
	t->app = 0;
	t->ref = cpu_to_be32(type == 3 ? ISDM_PI_REF_ESCAPE : ref);
}

/**
 * isdm_pi_tuple_check() - check a received tuple against its interval
 * @guard: the guard computed over the interval's data
 * @type: protection type, 1 to 3
 * @ref: the expected reference tag (types 1 and 2)
 * @checks: ISDM_PI_CHECK_GUARD and ISDM_PI_CHECK_REF, as the block layer
 *	or the CDB's protect field asks
 * @t: the tuple received
 *
 * An application tag of 0xffff turns off the checks of a type 1 or 2
 * interval; type 3 needs the reference tag at 0xffffffff as well (SBC-4
 * 4.22.3). Type 3 has no reference tag check.
 *
 * Return: ISDM_PI_OK, or the first check that failed.
 */
enum isdm_pi_err isdm_pi_tuple_check(__u16 guard, __u8 type, __u32 ref,
				     unsigned int checks,
				     const struct isdm_pi_tuple *t)
{
	if (be16_to_cpu(t->app) == ISDM_PI_APP_ESCAPE &&
	    (type != 3 || be32_to_cpu(t->ref) == ISDM_PI_REF_ESCAPE))
		return ISDM_PI_OK;
	if ((checks & ISDM_PI_CHECK_GUARD) && be16_to_cpu(t->guard) != guard)
		return ISDM_PI_GUARD;
	if ((checks & ISDM_PI_CHECK_REF) && type != 3 &&
	    be32_to_cpu(t->ref) != ref)
		return ISDM_PI_REF;
	return ISDM_PI_OK;
}
