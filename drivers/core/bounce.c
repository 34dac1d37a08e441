// SPDX-License-Identifier: GPL-2.0
/*
 * iser_dm: bounce buffers, for data that cannot go to the wire from where
 * it is. A bounce buffer is a list of single pages, so that it never needs
 * a high-order allocation and an FRWR maps it whole.
 *
 * Both sides bounce a protected transfer (T10 PI): on the wire an 8-byte
 * tuple follows each protection interval (Documentation/wire-protocol.md,
 * section 8), while the block layer and LIO keep data and protection in
 * separate scatterlists. isdm_pi_copy() merges them into the wire layout
 * or splits it. The initiator also bounces a buffer that ZBVA cannot
 * register where it is.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/export.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/minmax.h>
#include <linux/scatterlist.h>

#include "isdm/isdm.h"
#include "isdm/pi.h"

/**
 * isdm_bounce_alloc() - allocate a bounce buffer
 * @t: the table to fill: one entry per page, every one but the last full
 * @len: bytes, at least 1
 * @gfp: allocation flags (GFP_ATOMIC where the caller cannot sleep)
 *
 * Return: 0, or -ENOMEM with @t->sgl NULL.
 */
int isdm_bounce_alloc(struct sg_table *t, u32 len, gfp_t gfp)
{
	unsigned int i, n = DIV_ROUND_UP(len, PAGE_SIZE);
	struct scatterlist *sg;

	if (sg_alloc_table(t, n, gfp | __GFP_NOWARN)) {
		t->sgl = NULL;
		return -ENOMEM;
	}
	for_each_sg(t->sgl, sg, n, i) {
		struct page *page = alloc_page(gfp | __GFP_NOWARN);

		if (!page) {
			isdm_bounce_free(t);
			return -ENOMEM;
		}
		sg_set_page(sg, page, min_t(u32, len, PAGE_SIZE), 0);
		len -= sg->length;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(isdm_bounce_alloc);

/**
 * isdm_bounce_free() - free a bounce buffer and its pages
 * @t: the buffer; nothing is done when @t->sgl is NULL
 */
void isdm_bounce_free(struct sg_table *t)
{
	struct scatterlist *sg;
	unsigned int i;

	if (!t->sgl)
		return;
	for_each_sg(t->sgl, sg, t->orig_nents, i)
		if (sg_page(sg))
			__free_page(sg_page(sg));
	sg_free_table(t);
	t->sgl = NULL;
}
EXPORT_SYMBOL_GPL(isdm_bounce_free);

/* a position in a scatterlist */
struct isdm_sg_pos {
	struct scatterlist	*sg;
	u32			off;
};

/*
 * The page under @p and the bytes of it from there, at most @len; NULL
 * when the list ended.
 */
static struct page *isdm_sg_pos_page(struct isdm_sg_pos *p, u32 len,
				     u32 *in_page, u32 *n)
{
	u32 at;

	while (p->sg && p->off == p->sg->length) {
		p->sg = sg_next(p->sg);
		p->off = 0;
	}
	if (!p->sg)
		return NULL;
	at = p->sg->offset + p->off;
	*in_page = offset_in_page(at);
	*n = min3(len, p->sg->length - p->off, (u32)PAGE_SIZE - *in_page);
	return nth_page(sg_page(p->sg), at >> PAGE_SHIFT);
}

/*
 * Copy @len bytes between @wire and @buf, in the direction of @to_wire;
 * with @crc, go on with the guard over them.
 */
static int isdm_sg_move(struct isdm_sg_pos *wire, struct isdm_sg_pos *buf,
			u32 len, bool to_wire, u16 *crc)
{
	while (len) {
		u32 wo, wn, bo, bn, n;
		struct page *wp, *bp;
		u8 *w, *b;

		wp = isdm_sg_pos_page(wire, len, &wo, &wn);
		bp = isdm_sg_pos_page(buf, len, &bo, &bn);
		if (!wp || !bp)
			return -EINVAL;
		n = min(wn, bn);
		w = kmap_local_page(wp);
		b = kmap_local_page(bp);
		if (to_wire)
			memcpy(w + wo, b + bo, n);
		else
			memcpy(b + bo, w + wo, n);
		if (crc)
			*crc = isdm_pi_guard_update(*crc, b + bo, n);
		kunmap_local(b);
		kunmap_local(w);
		wire->off += n;
		buf->off += n;
		len -= n;
	}
	return 0;
}

/* Copy @len bytes between @p and @buf, into @p with @to_sg. */
static int isdm_sg_linear(struct isdm_sg_pos *p, void *buf, u32 len,
			  bool to_sg)
{
	while (len) {
		struct page *page;
		u32 o, n;
		u8 *v;

		page = isdm_sg_pos_page(p, len, &o, &n);
		if (!page)
			return -EINVAL;
		v = kmap_local_page(page);
		if (to_sg)
			memcpy(v + o, buf, n);
		else
			memcpy(buf, v + o, n);
		kunmap_local(v);
		p->off += n;
		buf = (u8 *)buf + n;
		len -= n;
	}
	return 0;
}

/**
 * isdm_bounce_copy() - copy between a bounce buffer and the buffer it
 *	stands for
 * @bounce: the bounce buffer (isdm_bounce_alloc())
 * @sgl: the other buffer
 * @len: bytes to copy, from the start of both
 * @to_bounce: true to copy from @sgl into @bounce (before a WRITE goes
 *	out), false from @bounce into @sgl (after a READ came in)
 *
 * Both lists are walked once, whatever their pieces. Context: any; no
 * allocation, no sleep.
 *
 * Return: 0, or -EINVAL when a list ends before @len bytes.
 */
int isdm_bounce_copy(struct sg_table *bounce, struct scatterlist *sgl,
		     u32 len, bool to_bounce)
{
	struct isdm_sg_pos b = { bounce->sgl, 0 }, s = { sgl, 0 };

	return isdm_sg_move(&b, &s, len, to_bounce, NULL);
}
EXPORT_SYMBOL_GPL(isdm_bounce_copy);

/*
 * The tuple of interval @n without a protection list: made from @crc into
 * @wire, or read from @wire and checked.
 */
static int isdm_pi_tuple_io(struct isdm_sg_pos *wire, struct isdm_pi_xfer *x,
			    u32 n, u16 crc, bool to_wire)
{
	struct isdm_pi_tuple t;
	enum isdm_pi_err err;
	int ret;

	if (to_wire) {
		isdm_pi_tuple_make(crc, x->type, x->ref + n, &t);
		return isdm_sg_linear(wire, &t, sizeof(t), true);
	}
	ret = isdm_sg_linear(wire, &t, sizeof(t), false);
	if (ret)
		return ret;
	err = isdm_pi_tuple_check(crc, x->type, x->ref + n, x->checks, &t);
	if (err)
		x->bad = n;
	return err;
}

/**
 * isdm_pi_copy() - merge data and protection information into the wire
 *	layout, or split the wire layout into them
 * @wire: the buffer in the wire layout, at least @wire_len bytes
 * @data: the data, one interval after another
 * @prot: the protection information, one tuple per interval; or NULL:
 *	then the tuples are made from the data while merging (the
 *	initiator's WRITE_INSERT), and checked and dropped while splitting
 *	(its READ_STRIP)
 * @wire_len: bytes of the wire layout to fill or to split: whole
 *	intervals, each with its tuple (isdm_pi_wire_len())
 * @to_wire: true to merge @data and @prot into @wire, false to split
 * @x: the interval; without @prot also the protection type, the first
 *	interval's reference tag (one more for each next one) and the
 *	checks; @x->bad is set to the interval that failed a check
 *
 * The lists are walked once each, whatever their pieces. Context: any;
 * no allocation, no sleep.
 *
 * Return: 0; -EINVAL when the interval or @wire_len is not one the wire
 * carries or a list ends before @wire_len is covered; or, splitting
 * without @prot, the positive &enum isdm_pi_err of the first check that
 * failed.
 */
int isdm_pi_copy(struct scatterlist *wire, struct scatterlist *data,
		 struct scatterlist *prot, u32 wire_len, bool to_wire,
		 struct isdm_pi_xfer *x)
{
	struct isdm_sg_pos w = { wire, 0 }, d = { data, 0 }, p = { prot, 0 };
	u32 off = 0, data_len, n = 0;
	u16 crc = 0;
	int ret;

	if (isdm_pi_data_len(wire_len, x->interval, &data_len))
		return -EINVAL;
	while (off < wire_len) {
		struct isdm_pi_pos pos;

		isdm_pi_locate(off, x->interval, &pos);
		if (!pos.is_pi) {
			ret = isdm_sg_move(&w, &d, pos.run, to_wire,
					   prot ? NULL : &crc);
		} else if (prot) {
			ret = isdm_sg_move(&w, &p, pos.run, to_wire, NULL);
		} else {
			ret = isdm_pi_tuple_io(&w, x, n, crc, to_wire);
			crc = 0;
		}
		if (ret)
			return ret;
		n += pos.is_pi;
		off += pos.run;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(isdm_pi_copy);
