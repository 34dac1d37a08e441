/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iser_tgt's private header: the sizes, the cases, a received command, and
 * the state the files of tests/vm/tools/tgt share. The tool is
 * single-threaded and serves one connection at a time, so its state is a
 * set of globals: the LUN and the options (process-wide), this
 * connection's (reset by serve() for each one), and the random mode's.
 *
 * The files, each calling only into those listed after it:
 *   main.c        the cases and options (its head describes every case),
 *                 the random mode's summary, main()
 *   serve.c       accepting a connection, its receive loop, the
 *                 full-feature PDUs, the summary line of a connection
 *   login.c       the login phase: the keys and the login cases
 *   random.c      the random mode: its state, the SCSI Commands it meets
 *   random_pdu.c  the random mode's PDUs and its table of live commands
 *   cases.c       the full-feature cases that act on the trigger
 *   case_hello.c  the Hello of the initiator: its answer, the hello cases
 *   case_stag.c   late RDMA Writes to a read STag (late-write, abort-late,
 *                 abort-zbva)
 *   scsi.c        the LUN, commands parsed and answered, data by RDMA
 *                 Write, responses and their Sends
 */
#ifndef TGT_H
#define TGT_H

#include <signal.h>
#include <stdint.h>

#include "iser_tool.h"

#define DSL_MAX		8192		/* our receive size: data segment */
#define BIG_LEN		65536		/* bigsend: its data segment */
#define ZERO_SIZE	(1024 * 1024)	/* the LUN */
#define INFO_SIZE	4096		/* answers other than READ data */
#define BLOCKS		2048		/* of 512 bytes: 1 MiB */
#define MAX_WRITES	8		/* RDMA Writes in front of a response */
#define NO_TRIGGER	(~0ULL)
#define JUNK_SIZE	65536		/* random bytes for random RDMA Writes */
#define LIVE_MAX	256		/* commands a connection holds */
#define STALE_MAX	64		/* ITTs answered or of earlier connections */
/* the iSER header of this connection: 28 bytes, or 12 with ZBVA */
#define HDR_LEN		(t.hdr_len ? t.hdr_len : ISDM_HDR_LEN_EXT)
#define STORM_SEC	5		/* abort-zbva: RDMA Writes for so long, */
#define STORM_WRS	255		/* so many in flight, */
#define STORM_LEN	512		/* of so many bytes */
#define STORM_ID	0x5707		/* their work request IDs (and + 1) */

enum tcase {
	GOOD, RESERVED, LOGIN_DLEN, LOGIN_OP, DLEN, DLEN_BIG, PAD, SHORT, AHS,
	ITT, ITT_BOGUS, INV_RKEY, INV_OTHER, INV_NOP, INV_UNNEG, OP_LOGIN,
	OP_R2T, OP_DATAIN, OP_UNKNOWN, ISER_OP, BIGSEND, LATE_WRITE,
	ABORT_LATE, HELLO_UNASKED, HELLO_REJ, HELLO_VER, HELLO_LEN, HELLO_NONE,
	HELLO_PDU, HELLO_DROP, KIND_TMF, KIND_TEXT, KIND_LOGOUT, KIND_NOP,
	KIND_REJECT, ABORT_ZBVA,
};

extern const char *const case_names[];

/* a received SCSI Command */
struct cmd {
	uint32_t itt;
	uint32_t edtl;
	int rsv;
	uint32_t stag;
	uint64_t va;
	int lun0;
	unsigned char cdb[16];
	/* random mode */
	int dirty;			/* random bytes written to its buffer */
	int held;			/* answered later */
	unsigned char bhs[ISDM_BHS_LEN];
};

/* the LUN's answer to a command (emulate()) */
struct answer {
	const unsigned char *data;
	uint32_t len;
	unsigned char status;		/* 0 GOOD, 2 CHECK CONDITION */
	unsigned char sense[3];		/* key, ASC, ASCQ */
};

/* the LUN and the options (scsi.c, main.c) */
extern struct itool t;
extern struct ibv_mr *data_mr;
/*
 * ZERO_SIZE zeros (READ data; the pattern with -P), then INFO_SIZE bytes
 * for other answers, then JUNK_SIZE random bytes (random mode)
 */
extern unsigned char data_buf[ZERO_SIZE + INFO_SIZE + JUNK_SIZE];
extern int pattern;
extern int rmode, rverbose;
extern uint64_t trigger_lba;

/* this connection (serve.c) */
extern enum tcase tcase;
extern int send_inv, rsvd_bits, logged_in, sent, fired;
extern uint32_t stat_sn, exp_cmd_sn;
/* the initiator's receive size: MaxRecvDataSegmentLength, at most ours */
extern uint32_t mrdsl;
/* inv-other: the trigger, held until the next command */
extern struct cmd held;
extern int have_held;
/* abort-late, abort-zbva: the trigger, held until its ABORT TASK */
extern struct cmd aborted;
extern int have_aborted;
/* the initiator sent a Logout Request (on any connection) */
extern int logged_out;
/* a Hello came on this connection */
extern int hello_seen;
/* late-write: what became of the late RDMA Write */
extern const char *late;
/* abort-zbva: how many of its RDMA Writes landed after the abort */
extern int storm;
/* abort-zbva: what became of a write while the task was live */
extern const char *pre;

/*
 * Random mode (-m random; random.c). PDU i of the sequence is drawn from
 * its own PRNG state, xorshift64* seeded by splitmix64 of the seed and i,
 * as iser_ffp's random mode does, so a sequence replays from any PDU.
 */
extern unsigned long long seed;
extern unsigned long rcount, rfirst, ridx, rend;
extern unsigned int rshare;
extern int rdone;
/* no random PDU before the first READ of block -t (the scan is done) */
extern int armed;
/*
 * SIGUSR1: no more random PDUs, serve properly from now on (read after
 * calls into libibverbs and poll(), never cached across them)
 */
extern sig_atomic_t rstop;
/* the commands of this connection the tool has not answered */
extern struct cmd live[LIVE_MAX];
extern int nr_live;
/* ITTs answered, or of earlier connections: stale ones */
extern uint32_t stale[STALE_MAX];
extern unsigned int nr_stale;
/* Sends of the current random PDU that were flushed */
extern int retries;

/* the counters of the random mode's summary line */
struct rnd_stats {
	unsigned long sent, connections, closed, self_closed, unsent, cmds;
	unsigned long responses, writes, invalidates, repaired, held;
	unsigned long good_dirty, itt_reused, hostile;
};

extern struct rnd_stats rs;

/* scsi.c */
unsigned char *rsp_start(unsigned char op, unsigned char flags,
			 uint32_t dlen, uint32_t itt, int advance);
int post_rsp(uint32_t len, struct ibv_send_wr *w, int nw, int use_inv,
	     uint32_t inv);
int data_writes(const struct cmd *c, const unsigned char *src,
		uint32_t len, struct ibv_send_wr *w, struct ibv_sge *sge);
int cdb_lba(const unsigned char *cdb, uint64_t *lba);
void emulate(const struct cmd *c, struct answer *a, uint64_t *lba);
int respond(const struct cmd *c, const struct answer *a, uint32_t itt,
	    int use_inv, uint32_t inv);
double wall_now(void);
int respond_ok(const struct cmd *c);
int nop_answer(uint32_t itt);
void nop_out_hdr(unsigned char *p, uint32_t itt);
void parse_cmd(const unsigned char *msg, struct cmd *c);
int is_trigger(const struct cmd *c);
void lun_pattern(void);

/* case_stag.c */
int late_write(const struct cmd *c);
int write_storm(const struct cmd *c, uint32_t rsp_len);

/* case_hello.c */
int hello_reply(unsigned char flags, unsigned char ver, uint16_t ord,
		uint32_t len);
int hello_step(const unsigned char *msg, int len);

/* cases.c */
int offend(const struct cmd *c);

/* random_pdu.c */
int live_find(uint32_t itt);
void live_del(int i);
int rnd_pdu(int cur);

/* random.c */
void rnd_stop(int sig);
int answer_live(int all);
int rnd_cmd(const unsigned char *msg);

/* login.c */
int login_step(const unsigned char *msg, int len);

/* serve.c */
struct rdma_cm_event *next_request(double secs);
void serve(struct rdma_cm_event *ev, enum tcase c, double deadline);

#endif /* TGT_H */
