/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iser_tgt's private header: the sizes, the cases, a received command, and
 * the state the files of tests/vm/tools/tgt share. The tool is
 * single-threaded and serves one connection at a time, so its state is a
 * set of globals: the LUN and the options (process-wide), this
 * connection's (reset by serve() for each one), and the random mode's.
 *
 * The files, each calling only into those listed after it:
 *   main.c        the case table (its head describes every case), the
 *                 options, the random mode's summary, main()
 *   serve.c       accepting a connection, its receive loop, the
 *                 full-feature PDUs, the summary line of a connection
 *   login.c       the login phase: the keys and the login cases
 *   random.c      the random mode: its state, the SCSI Commands it meets
 *   random_pdu.c  the random mode's PDUs and its table of live commands
 *   cases.c       the full-feature cases that send a wrong PDU on the
 *                 trigger
 *   case_hello.c  the Hello of the initiator: its answer, the hello cases,
 *                 hello-unasked
 *   case_stag.c   late RDMA Writes to a read STag (late-write, abort-late,
 *                 abort-zbva)
 *   pi.c          -I: the tuples of a protected READ, bad ones on request
 *   scsi.c        the LUN, commands parsed and answered, data by RDMA
 *                 Write, responses and their Sends
 *
 * A new hostile case: its function in cases.c (or case_hello.c,
 * case_stag.c, login.c for its kind), the prototype below, its row in
 * main.c's case table and its description at the head of main.c.
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
#define PI_TUPLE	8		/* -I: T10 PI bytes after each block */
/* -I: where a protected READ's wire layout is built, and its size */
#define PI_AREA		(ZERO_SIZE + INFO_SIZE + JUNK_SIZE)
#define PI_SIZE		(BLOCKS * (512 + PI_TUPLE))
#define LIVE_MAX	256		/* commands a connection holds */
#define STALE_MAX	64		/* ITTs answered or of earlier connections */
/* the iSER header of this connection: 28 bytes, or 12 with ZBVA */
#define HDR_LEN		(t.hdr_len ? t.hdr_len : ISDM_HDR_LEN_EXT)
#define STORM_SEC	5		/* abort-zbva: RDMA Writes for so long, */
#define STORM_WRS	255		/* so many in flight, */
#define STORM_LEN	512		/* of so many bytes */
#define STORM_ID	0x5707		/* their work request IDs (and + 1) */

struct cmd;

/*
 * What a case needs besides its functions (struct tgt_case's @flags):
 *
 * TC_GOOD        nothing hostile: every command is answered properly, and
 *                a last good case serves further connections
 * TC_HOLD        the trigger function holds the trigger when it returns 0,
 *                and the case goes on (inv-other: until the next command;
 *                abort-*: until its ABORT TASK)
 * TC_DISCONNECT  the tool disconnects once the trigger is served
 * TC_RSVD        reserved bits set in the CM REP and in the iSER headers
 * TC_NO_SIE      the CM REP declines Send with Invalidate even if offered
 * TC_ZBVA        the CM REP accepts ZBVA when offered (the 12-byte iSER
 *                header); the summary line says zbva=, pre= and landed=
 * TC_STORM       the ABORT TASK of the held trigger gets the storm of
 *                RDMA Writes behind its TMF Response (write_storm()),
 *                and the send queue is deep enough for it
 * TC_LATE        the connection request is held LATE_SEC without an
 *                answer, then rejected (hold_request())
 */
#define TC_GOOD		0x01
#define TC_HOLD		0x02
#define TC_DISCONNECT	0x04
#define TC_RSVD		0x08
#define TC_NO_SIE	0x10
#define TC_ZBVA		0x20
#define TC_STORM	0x40
#define TC_LATE		0x80

/**
 * struct tgt_case - one case of -c: a row of main.c's case table
 * @name: its name in -c, in the summary line and in the kernel log mark
 * @flags: TC_* above
 * @login: a login case: the answer to the first Login Request @req (its
 *	BHS); 1 when the case was done (the initiator must close), 2 when
 *	the tool closed the connection
 * @hello: a hello case: what the initiator's Hello gets instead of a
 *	proper HelloReply, @ord the iSER-ORD a proper one would give; 1, or
 *	2 when the tool closed the connection
 * @trigger: a full-feature case: what the trigger @c gets instead of its
 *	proper answer; 0 when it went out (or, with TC_HOLD, the trigger is
 *	held), -1 when a Send failed or the trigger does not fit the case
 *
 * A case has one of @login, @hello and @trigger, or none (good).
 */
struct tgt_case {
	const char *name;
	unsigned int flags;
	int (*login)(const unsigned char *req);
	int (*hello)(uint16_t ord);
	int (*trigger)(const struct cmd *c);
};

/* a received SCSI Command */
struct cmd {
	uint32_t itt;
	uint32_t edtl;
	int rsv;
	uint32_t stag;
	uint64_t va;
	int lun0;
	unsigned char cdb[32];		/* 16 bytes, or 32 with an ECDB AHS */
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
 * for other answers, then JUNK_SIZE random bytes (random mode), then
 * PI_SIZE bytes for a protected READ's wire layout (-I)
 */
extern unsigned char data_buf[PI_AREA + PI_SIZE];
extern int pattern;
extern int rmode, rverbose;
extern uint64_t trigger_lba;

/* this connection (serve.c) */
/* the case of this connection */
extern const struct tgt_case *tcase;
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

/* pi.c: -I (the protection type, 1), -G and -Q (LBAs with bad tuples) */
extern int pi_type;
extern unsigned long pi_read32;
extern uint64_t pi_bad_guard, pi_bad_ref;
const unsigned char *pi_wire(const unsigned char *data, uint64_t lba,
			     uint32_t blocks);

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
int fire_late_write(const struct cmd *c);
int fire_abort_late(const struct cmd *c);
int fire_abort_zbva(const struct cmd *c);

/* case_hello.c */
int hello_rej(uint16_t ord);
int hello_ver(uint16_t ord);
int hello_len(uint16_t ord);
int hello_none(uint16_t ord);
int hello_pdu(uint16_t ord);
int hello_drop(uint16_t ord);
int hello_step(const unsigned char *msg, int len);
int fire_hello_unasked(const struct cmd *c);

/* cases.c: the trigger functions of the full-feature cases */
int fire_reserved(const struct cmd *c);
int fire_dlen(const struct cmd *c);
int fire_dlen_big(const struct cmd *c);
int fire_pad(const struct cmd *c);
int fire_short(const struct cmd *c);
int fire_ahs(const struct cmd *c);
int fire_itt(const struct cmd *c);
int fire_itt_bogus(const struct cmd *c);
int fire_inv_rkey(const struct cmd *c);
int fire_inv_other(const struct cmd *c);
int fire_inv_nop(const struct cmd *c);
int fire_inv_unneg(const struct cmd *c);
int fire_op_login(const struct cmd *c);
int fire_op_r2t(const struct cmd *c);
int fire_op_datain(const struct cmd *c);
int fire_op_unknown(const struct cmd *c);
int fire_iser_op(const struct cmd *c);
int fire_bigsend(const struct cmd *c);
int fire_kind_tmf(const struct cmd *c);
int fire_kind_text(const struct cmd *c);
int fire_kind_logout(const struct cmd *c);
int fire_kind_nop(const struct cmd *c);
int fire_kind_reject(const struct cmd *c);

/* random_pdu.c */
int live_find(uint32_t itt);
void live_del(int i);
int rnd_pdu(int cur);

/* random.c */
void rnd_stop(int sig);
int answer_live(int all);
int rnd_cmd(const unsigned char *msg);

/* login.c */
int login_dlen(const unsigned char *req);
int login_op(const unsigned char *req);
int login_none(const unsigned char *req);
int login_drop(const unsigned char *req);
int login_step(const unsigned char *msg, int len);

/* serve.c */
struct rdma_cm_event *next_request(double secs);
void serve(struct rdma_cm_event *ev, const struct tgt_case *c,
	   double deadline);

#endif /* TGT_H */
