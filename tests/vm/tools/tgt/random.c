// SPDX-License-Identifier: GPL-2.0
/*
 * iser_tgt -m random: the mode's state, and the SCSI Commands it meets:
 * each kept live until answered, some with a random PDU in front of the
 * answer, some held back.
 */
#include <stdio.h>
#include <string.h>

#include "tgt.h"

unsigned long long seed;
unsigned long rcount = 10000, rfirst, ridx, rend;
unsigned int rshare = 50;
int rdone;
int armed;
sig_atomic_t rstop;
struct cmd live[LIVE_MAX];
int nr_live;
uint32_t stale[STALE_MAX];
unsigned int nr_stale;
int retries;
struct rnd_stats rs;

void rnd_stop(int sig)
{
	(void)sig;
	rstop = 1;
}

/* -v: a command as it arrives (the LBA of READ/WRITE 6, 10 and 16) */
static void trace_cmd(const struct cmd *c)
{
	uint64_t lba = 0;

	cdb_lba(c->cdb, &lba);
	printf("cmd t=%.6f itt=0x%08x cdb=0x%02x lba=%llu edtl=%u rsv=%d stag=0x%08x va=0x%llx\n",
	       wall_now(), c->itt, c->cdb[0], (unsigned long long)lba, c->edtl,
	       !!c->rsv, c->stag, (unsigned long long)c->va);
	fflush(stdout);
}

/*
 * Answer every live command not held back (all with @all); -1 when a
 * Send failed.
 */
int answer_live(int all)
{
	int i = 0;

	while (i < nr_live) {
		if (!all && live[i].held) {
			i++;
			continue;
		}
		if (respond_ok(&live[i]))
			return -1;
		live_del(i);
	}
	return 0;
}

/* A SCSI Command in random mode. 0 to go on, -1 when a Send failed. */
int rnd_cmd(const unsigned char *msg)
{
	struct cmd c;
	int i;

	memset(&c, 0, sizeof(c));
	parse_cmd(msg, &c);
	memcpy(c.bhs, msg + HDR_LEN, ISDM_BHS_LEN);
	rs.cmds++;
	if (rverbose)
		trace_cmd(&c);
	if (answer_live(1))
		return -1;
	i = live_find(c.itt);
	if (i >= 0) {
		rs.itt_reused++;
		live_del(i);
	}
	if (nr_live == LIVE_MAX)
		return respond_ok(&c);
	i = nr_live++;
	live[i] = c;
	if (!armed && is_trigger(&c))
		armed = 1;
	if (rstop)
		armed = 0;
	if (armed && ridx < rend &&
	    itool_rnd_mix(seed ^ itool_rnd_mix(~rs.cmds)) % 100 < rshare) {
		if (rnd_pdu(i))
			return -1;
		/* the PDU's own stream: hold the command back, sometimes */
		i = live_find(c.itt);
		if (i >= 0 && pct(20)) {
			live[i].held = 1;
			rs.held++;
		}
	}
	return answer_live(0);
}
