// SPDX-License-Identifier: GPL-2.0
/*
 * iser_tgt: an iSER target in userspace that lets open-iscsi log in over
 * iSER (a normal session) and then sends, once per connection, what an
 * iSER initiator must refuse.
 *
 * It listens on ADDR PORT with rdma_cm and accepts one connection at a
 * time. The CM REP says what a Linux target says: no zero-based virtual
 * addressing (so both sides use the 28-byte expanded header and absolute
 * addresses; the abort-zbva case excepted), Send with Invalidate when the
 * initiator's REQ offers it. It
 * answers every login key iscsid offers (AuthMethod=None, digests None,
 * RDMAExtensions=Yes, the iSER data segment lengths, the numeric keys as a
 * real target would) for the target TARGET_IQN below, and then serves one
 * 1 MiB LUN of zeros: INQUIRY, REPORT LUNS, READ CAPACITY, MODE SENSE, TEST
 * UNIT READY, READ (data by RDMA Write to the command's read STag, the
 * SCSI Response by Send with Invalidate of that STag), NOP-Out, Task
 * Management, Text and Logout.
 *
 * Connection N gets the Nth case of -c. A login case acts on the first
 * Login Request; a full-feature case on the trigger: the first READ of
 * block -t LBA (every SCSI command before it is answered properly), or
 * the first SCSI command without -t:
 *
 *   good        nothing: serve until the initiator logs out or disconnects
 *   reserved    CM REP and iSER headers with every reserved bit set (the
 *               initiator must ignore them); the trigger is answered, then
 *               the tool disconnects
 *   login-dlen  a Login Response whose DataSegmentLength exceeds the Send
 *   login-op    a NOP-In in the login phase
 *   dlen        SCSI Response, DataSegmentLength 4096, the Send carries none
 *   dlen-big    SCSI Response, DataSegmentLength 2^24-1, none carried
 *   pad         SCSI Response with 8 bytes past its (empty) data segment
 *   short       a 40-byte Send: less than iSER header + BHS
 *   ahs         SCSI Response with a 4-byte AHS
 *   itt         the trigger answered, then a second SCSI Response for
 *               its ITT, whose task is gone
 *   itt-bogus   SCSI Response for ITT 0x0badf00d, which was never issued
 *   inv-rkey    data, then Send with Invalidate of the task's rkey + 1
 *   inv-other   the trigger held; the next command gets its data and a
 *               Send with Invalidate of the held command's STag
 *   inv-nop     the trigger held; an unsolicited NOP-In by Send with
 *               Invalidate of its STag (a PDU that must not carry one)
 *   inv-unneg   CM REP without Send with Invalidate; the trigger's
 *               response comes with Send with Invalidate all the same
 *   op-login    a Login Response in full feature phase
 *   op-r2t      an R2T (iSER targets use RDMA Read)
 *   op-datain   a SCSI Data-In PDU (iSER targets use RDMA Write)
 *   op-unknown  opcode 0x28, which RFC 3720 does not define
 *   iser-op     a SCSI Response behind iSER opcode 0x4 (reserved)
 *   bigsend     a 64 KiB Send, larger than the initiator's receive buffers
 *               when its MaxRecvDataSegmentLength is below that
 *   late-write  the trigger's data and its SCSI Response by plain Send
 *               (no invalidation), then, 1 s later, an RDMA Write of 512
 *               bytes of 0xa5 to the same read STag: the command has
 *               completed, so the STag must be invalid by then (RFC 5046
 *               7.3.2) and the write must fail
 *   abort-late  the trigger held without an answer; when the initiator's
 *               ABORT TASK for it comes, a TMF Response "function
 *               complete", then, 1 s later, an RDMA Write of 512 bytes
 *               of 0xa5 to the held command's read STag: the task ended
 *               without a response, so its STag must be invalid by then
 *               (RFC 5046 8.3.2) and the write must fail
 *   abort-zbva  as abort-late, but the CM REP accepts zero-based virtual
 *               addressing when the initiator offers it (so the 12-byte
 *               iSER header, and tagged offsets from 0); an RDMA Write of
 *               512 bytes to the trigger's read STag while it is held
 *               (it must land), and right behind the TMF Response in the
 *               send queue RDMA Writes of 512 bytes to that STag, 255 in
 *               flight, for up to 5 s, until one fails: the writes land
 *               until the initiator has invalidated the STag, and the
 *               memory behind it must stay the initiator's until then
 *               (with ZBVA our initiator reads a buffer that does not
 *               start on a page boundary through a bounce buffer of its
 *               own)
 *   hello-unasked  a HelloReply (12 bytes, accepting) where no Hello was
 *               sent: the wrong phase for it
 *   kind-tmf    the trigger gets no SCSI Response but a TMF Response
 *               "function complete" for its ITT: a response of another
 *               kind of request (libiscsi before Linux 6.12.11x took it
 *               and completed the READ as a success without its data)
 *   kind-text   the same with a Text Response (F=1, TTT 0xffffffff)
 *   kind-logout the same with a Logout Response "closed successfully"
 *   kind-nop    the same with a NOP-In (TTT 0xffffffff): an answer to a
 *               NOP-Out the initiator never sent
 *   kind-reject the same with a Reject "immediate command reject" whose
 *               rejected header is a NOP-Out with the READ's ITT (libiscsi
 *               takes that as the end of its ping, and 6.12.107's would
 *               complete the READ with it)
 *
 * A Hello from the initiator (ib_iser hello=on: its first iSER message
 * after the login) is answered with a proper HelloReply (version 1,
 * iSER-ORD = min(its iSER-IRD, 16)), except in these cases, which act on
 * it instead of on the trigger:
 *
 *   hello-rej   a HelloReply with the reject bit set
 *   hello-ver   a HelloReply that accepts iSER version 2
 *   hello-len   a HelloReply of 16 bytes (RFC 5046: a format error)
 *   hello-none  no answer at all
 *   hello-pdu   a NOP-In (ping) instead of the HelloReply
 *   hello-drop  the tool disconnects instead of answering (closed=self):
 *               the initiator must stop waiting for the HelloReply at
 *               once, not after its 5 s timeout
 *
 * It prints one line per connection, for the scenario to judge:
 *
 *   case=NAME login=ok|no sent=yes|no closed=yes|no|self[ hello=yes]
 *   [ late=...][ zbva=yes|no pre=landed|refused landed=N]
 *
 * login: full feature phase reached; sent: the case's PDU went out;
 * closed: the initiator disconnected within 20 s of it, on its own (the
 * tool answers its NOP-Out pings meanwhile, so no ping timeout ends the
 * connection for it; self: the tool did, for good and reserved when it
 * had to); late (late-write, abort-late and abort-zbva only):
 * written when the late RDMA Write succeeded (abort-zbva: every one of
 * them for 5 s), refused when it failed; zbva, pre and landed
 * (abort-zbva): whether ZBVA was agreed, what became of the write while
 * the task was live, how many writes landed after the abort;
 * hello=yes: the initiator sent a Hello on the connection.
 *
 * When the last case is good, further connections are served as good ones
 * (a line each) until the initiator logs out or none comes within -w
 * seconds.
 *
 * usage: iser_tgt [-c CASE,...] [-t LBA] [-w SECONDS] [-P] ADDR PORT.  Exit
 * status 0 when every case got a connection, 1 on a local error or when
 * no connection came within -w seconds (default 240).
 *
 * -P serves a LUN of a pattern instead of zeros: every 8-byte word is
 * splitmix64 of its byte offset, so data from the wrong place or of no
 * command shows; READ past the end gets LOGICAL BLOCK ADDRESS OUT OF
 * RANGE. `iser_tgt [-P] -D` prints the LUN's 1 MiB on stdout and exits.
 *
 * The randomized mode, iser_tgt -m random [-s SEED] [-N COUNT] [-F FIRST]
 * [-r SHARE] [-t LBA] [-v] [-w SECONDS] ADDR PORT, serves the pattern LUN
 * (-P) and, from the first READ of block -t LBA on (every command before
 * it, the scan, is answered properly; without -t from the first command),
 * puts a PDU of the sequence SEED (default 0) gives in front of the
 * answer of SHARE percent (default 50) of the SCSI Commands, and one more
 * after each second without a PDU from the initiator, until COUNT (-N,
 * default 10000) PDUs from PDU FIRST (-F, default 0) on are sent. PDU i
 * is drawn from its own PRNG state (xorshift64* seeded by splitmix64 of
 * SEED and i, as in iser_ffp's random mode), so a sequence replays from
 * any PDU; which commands and ITTs it meets depends on the initiator's
 * timing. Every PDU is well framed: an iSER header of control type, a
 * 48-byte BHS, an AHS as long as TotalAHSLength says, a data segment of
 * DataSegmentLength (padded), all within the initiator's declared
 * receive size (InitiatorRecvDataSegmentLength / MaxRecvDataSegmentLength,
 * at most 8192). 70 in 100 are plausible, what a correct initiator takes
 * (so that several fit on one connection): a SCSI Response for an issued
 * command (random status, response now and then, residual flags and
 * counts, sense data with a SenseLength mostly consistent), a NOP-In ping
 * (random TTT, no data), an Async Message of event 0, 4 or 255, a
 * Reject (of the command's header); the rest are hostile: every target
 * opcode (SCSI, TMF, Text, Logout and Login Response, NOP-In, R2T,
 * Data-In with and without status, Reject, Async Message of every event;
 * a Reject's rejected header may be a ping naming an issued, stale or
 * bogus ITT), reserved and vendor opcodes 0x27-0x30, 0x33-0x3e, and initiator
 * opcodes; random flags, ITTs (the command's, another issued one, stale
 * ones, 0xffffffff, bogus), LUN bytes, AHS, noise in the BHS, iSER header
 * reserved bits and Write/Read STags and VAs. For all: StatSN mostly the
 * expected one, sometimes near or anywhere; ExpCmdSN/MaxCmdSN an open,
 * closed, invalid (MaxCmdSN < ExpCmdSN - 1) or arbitrary window; 15 in
 * 100 come after an RDMA Write of random bytes to a live command's read
 * STag (inside the buffer for plausible PDUs, anywhere up to 16 KiB past
 * it for hostile ones); a SCSI Response for a command invalidates its
 * STag (Send with Invalidate, when negotiated) mostly, a wrong one now
 * and then (hostile); hostile PDUs invalidate a random or another
 * command's STag sometimes, also where Send with Invalidate was not
 * negotiated. Async Messages keep their Time2Wait and Time2Retain at 0-2
 * s, so iscsid's waits stay short. A command gets a PDU's SCSI Response
 * or, when its ITT stays live, its proper answer right after (or held
 * back until the next command, 20 in 100), the data always written in
 * full again. A SCSI Response whose status the initiator's SCSI layer
 * may complete as a success (GOOD, CONDITION MET, the INTERMEDIATE ones,
 * COMMAND TERMINATED, and CHECK CONDITION, whose random sense may say
 * RECOVERED ERROR) goes out only with the command's correct data written
 * just before it (when the command would not be GOOD, RESERVATION
 * CONFLICT instead), never for an ITT the tool holds no command of (it
 * may be a command on its way, which it would complete without data):
 * so wrong data that reaches the application is the initiator's doing,
 * and the scenario reading through the initiator verifies every read
 * against the pattern.
 *
 * When the connection goes (the initiator drops it, or a Send fails and
 * the tool drops it), the tool accepts the next one, answers its login
 * properly and goes on with the next PDU; a PDU whose Send was flushed
 * (the connection was already gone) is sent again, three times at most.
 * Task Management ends the tasks it names (they get no answer). SIGUSR1
 * stops the sequence where it is (the tool serves properly from then on,
 * and exits 1). The first
 * line names the seed and how to replay it; "random done sent=N
 * connections=C" when the COUNT PDUs are out, "random progress sent=N
 * connections=C" every 100 before (the tool serves properly
 * from then on, until the initiator logs out); -v prints each PDU and
 * connection; the last line, on the logout or when no connection came
 * within -w seconds, is
 *
 *   random seed=S sent=N connections=C good_dirty=0 closed=M
 *   self_closed=X unsent=U cmds=K responses=R writes=W invalidates=I
 *   repaired=P held=H hostile=Y itt_reused=Z seconds=T
 *
 * (one line): closed counts connections the initiator ended, self_closed
 * those the tool ended after a failed Send, unsent PDUs counted although
 * their Send failed (the connection broke under them or they were tried
 * three times), cmds SCSI Commands received, responses random SCSI
 * Responses for a live command, writes random RDMA Writes, repaired the
 * GOOD responses whose data went again in front of them, itt_reused new
 * commands with the ITT of one the tool still held (the initiator ended
 * it some other way: not a fault in itself). good_dirty, a GOOD sent for
 * a command whose buffer held random bytes, is the tool's own check and
 * must be 0. Exit status 0 when every PDU was sent.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "iser_tool.h"

#define TARGET_IQN	"iqn.2003-01.org.linux-iscsi.iser-vm:hostile"
#define NR_RX		16
#define DSL_MAX		8192
#define RX_SIZE		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + DSL_MAX)
#define BIG_LEN		65536
#define TX_SIZE		(ISDM_HDR_LEN_EXT + ISDM_BHS_LEN + BIG_LEN)
#define ZERO_SIZE	(1024 * 1024)
#define INFO_SIZE	4096
#define BLOCKS		2048		/* of 512 bytes: 1 MiB */
#define MAX_WRITES	8		/* RDMA Writes in front of a response */
#define CLOSE_SEC	20
#define MAX_CASES	64
#define NO_TRIGGER	(~0ULL)
#define JUNK_SIZE	65536		/* random bytes for random RDMA Writes */
#define LIVE_MAX	256		/* commands a connection holds */
#define STALE_MAX	64		/* ITTs answered or of earlier connections */
#define RETRY_MAX	3		/* Sends of one random PDU */
#define RND_HOSTILE	30		/* percent of random PDUs: anything */
#define NO_SUCCESS	0x18		/* RESERVATION CONFLICT: never a success */
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

static const char *const case_names[] = {
	"good", "reserved", "login-dlen", "login-op", "dlen", "dlen-big", "pad",
	"short", "ahs", "itt", "itt-bogus", "inv-rkey", "inv-other", "inv-nop",
	"inv-unneg", "op-login", "op-r2t", "op-datain", "op-unknown", "iser-op",
	"bigsend", "late-write", "abort-late", "hello-unasked", "hello-rej",
	"hello-ver", "hello-len", "hello-none", "hello-pdu", "hello-drop",
	"kind-tmf", "kind-text", "kind-logout", "kind-nop", "kind-reject",
	"abort-zbva",
};

#define NR_CASE_NAMES	ARRAY_SIZE(case_names)

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

static struct itool t;
static struct ibv_mr *data_mr;
/*
 * ZERO_SIZE zeros (READ data; the pattern with -P), then INFO_SIZE bytes
 * for other answers, then JUNK_SIZE random bytes (random mode)
 */
static unsigned char data_buf[ZERO_SIZE + INFO_SIZE + JUNK_SIZE];
static int pattern;
static int rmode, rverbose;
static uint32_t mrdsl = DSL_MAX;
static uint64_t trigger_lba = NO_TRIGGER;
static uint16_t next_tsih = 1;

/* this connection */
static enum tcase tcase;
static int send_inv, rsvd_bits, logged_in, sent, fired;
static uint32_t stat_sn, exp_cmd_sn;
static struct cmd held;
static int have_held;
/* abort-late, abort-zbva: the trigger, held until its ABORT TASK */
static struct cmd aborted;
static int have_aborted;
/* the initiator sent a Logout Request (on any connection) */
static int logged_out;
/* a Hello came on this connection */
static int hello_seen;
/* late-write: what became of the late RDMA Write */
static const char *late;
/* abort-zbva: how many of its RDMA Writes landed after the abort */
static int storm;
/* abort-zbva: what became of a write while the task was live */
static const char *pre;

/* Response header: iSER header + BHS with ITT, StatSN, ExpCmdSN, MaxCmdSN. */
static unsigned char *rsp_start(unsigned char op, unsigned char flags,
				uint32_t dlen, uint32_t itt, int advance)
{
	unsigned char *bhs = itool_pdu_start(&t, op, flags, dlen);

	t.tx_buf[0] |= rsvd_bits;
	itool_put_be32(bhs + 16, itt);
	itool_put_be32(bhs + 24, advance ? stat_sn++ : stat_sn);
	itool_put_be32(bhs + 28, exp_cmd_sn);
	itool_put_be32(bhs + 32, exp_cmd_sn + 63);
	return bhs;
}

/*
 * Send @len bytes of t.tx_buf, after @nw RDMA Writes in @w; with
 * Send with Invalidate of @inv when @use_inv. 0 when the Send completed.
 */
static int post_rsp(uint32_t len, struct ibv_send_wr *w, int nw, int use_inv,
		    uint32_t inv)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)t.tx_buf, .length = len,
		.lkey = t.tx_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = use_inv ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
		.send_flags = IBV_SEND_SOLICITED,
	};
	int i;

	if (use_inv)
		wr.invalidate_rkey = inv;
	for (i = 0; i < nw; i++)
		w[i].next = i + 1 < nw ? &w[i + 1] : &wr;
	return itool_send_wr(&t, nw ? w : &wr, &wr, 10);
}

/*
 * RDMA Writes of @len bytes at @src to the read buffer of @c; their WRs
 * and SGEs in @w and @sge. The number of WRs.
 */
static int data_writes(const struct cmd *c, const unsigned char *src,
		       uint32_t len, struct ibv_send_wr *w,
		       struct ibv_sge *sge)
{
	uint32_t off = 0, n;
	int nw = 0;

	while (off < len && nw < MAX_WRITES) {
		n = len - off < ZERO_SIZE ? len - off : ZERO_SIZE;
		memset(&w[nw], 0, sizeof(w[nw]));
		sge[nw].addr = (uintptr_t)src;
		sge[nw].length = n;
		sge[nw].lkey = data_mr->lkey;
		w[nw].sg_list = &sge[nw];
		w[nw].num_sge = 1;
		w[nw].opcode = IBV_WR_RDMA_WRITE;
		w[nw].wr.rdma.remote_addr = c->va + off;
		w[nw].wr.rdma.rkey = c->stag;
		nw++;
		off += n;
	}
	return nw;
}

struct answer {
	const unsigned char *data;
	uint32_t len;
	unsigned char status;		/* 0 GOOD, 2 CHECK CONDITION */
	unsigned char sense[3];		/* key, ASC, ASCQ */
};

static void check(struct answer *a, unsigned char key, unsigned char asc)
{
	a->status = 2;
	a->sense[0] = key;
	a->sense[1] = asc;
	a->sense[2] = 0;
}

static void put_be64(unsigned char *p, uint64_t v)
{
	itool_put_be32(p, v >> 32);
	itool_put_be32(p + 4, (uint32_t)v);
}

/* the LBA of a READ or WRITE (6), (10) or (16) CDB, in @lba: 1, else 0 */
static int cdb_lba(const unsigned char *cdb, uint64_t *lba)
{
	switch (cdb[0]) {
	case 0x08:
	case 0x0a:
		*lba = (uint32_t)(cdb[1] & 0x1f) << 16 | cdb[2] << 8 | cdb[3];
		return 1;
	case 0x28:
	case 0x2a:
		*lba = itool_get_be32(cdb + 2);
		return 1;
	case 0x88:
	case 0x8a:
		*lba = (uint64_t)itool_get_be32(cdb + 2) << 32 |
		       itool_get_be32(cdb + 6);
		return 1;
	default:
		return 0;
	}
}

/*
 * The LUN: a 1 MiB disk of zeros (of the pattern with -P). Sets @lba for
 * READs, else leaves it.
 */
static void emulate(const struct cmd *c, struct answer *a, uint64_t *lba)
{
	const unsigned char *cdb = c->cdb;
	unsigned char *info = data_buf + ZERO_SIZE;

	memset(a, 0, sizeof(*a));
	memset(info, 0, INFO_SIZE);
	a->data = info;
	if (!c->lun0 && cdb[0] != 0x12 && cdb[0] != 0xa0) {
		check(a, 0x05, 0x25);	/* LOGICAL UNIT NOT SUPPORTED */
		return;
	}
	switch (cdb[0]) {
	case 0x00:			/* TEST UNIT READY */
	case 0x35:			/* SYNCHRONIZE CACHE */
		break;
	case 0x12:			/* INQUIRY */
		if (cdb[1] & 1) {
			if (cdb[2] != 0) {
				check(a, 0x05, 0x24);
				break;
			}
			a->len = 5;	/* supported pages: 0 only */
			info[3] = 1;
			break;
		}
		info[0] = c->lun0 ? 0x00 : 0x7f;
		info[2] = 5;
		info[3] = 2;
		info[4] = 31;
		memcpy(info + 8, "ISERTOOLhostile peer    0001", 28);
		a->len = 36;
		break;
	case 0xa0:			/* REPORT LUNS: LUN 0 */
		info[3] = 8;
		a->len = 16;
		break;
	case 0x25:			/* READ CAPACITY (10) */
		itool_put_be32(info, BLOCKS - 1);
		itool_put_be32(info + 4, 512);
		a->len = 8;
		break;
	case 0x9e:			/* READ CAPACITY (16) */
		if ((cdb[1] & 0x1f) != 0x10) {
			check(a, 0x05, 0x20);
			break;
		}
		put_be64(info, BLOCKS - 1);
		itool_put_be32(info + 8, 512);
		a->len = 32;
		break;
	case 0x1a:			/* MODE SENSE (6): header only */
		info[0] = 3;
		a->len = 4;
		break;
	case 0x5a:			/* MODE SENSE (10) */
		info[1] = 6;
		a->len = 8;
		break;
	case 0x08:			/* READ (6): what sd falls back to */
		cdb_lba(cdb, lba);
		a->len = (cdb[4] ? cdb[4] : 256) * 512;
		a->data = data_buf;
		break;
	case 0x28:			/* READ (10) */
		cdb_lba(cdb, lba);
		a->len = (uint32_t)(cdb[7] << 8 | cdb[8]) * 512;
		a->data = data_buf;
		break;
	case 0x88:			/* READ (16) */
		cdb_lba(cdb, lba);
		a->len = itool_get_be32(cdb + 10) * 512;
		a->data = data_buf;
		break;
	case 0x0a:			/* WRITE: write protected */
	case 0x2a:
	case 0x8a:
		check(a, 0x07, 0x27);
		break;
	default:
		check(a, 0x05, 0x20);	/* INVALID COMMAND OPERATION CODE */
		break;
	}
	if (a->data == data_buf && a->len > (uint32_t)MAX_WRITES * ZERO_SIZE)
		check(a, 0x05, 0x24);
	/* -P: the LUN's own blocks, and none past its end */
	if (pattern && a->data == data_buf && !a->status) {
		if (*lba >= BLOCKS || a->len / 512 > BLOCKS - *lba)
			check(a, 0x05, 0x21);	/* LBA OUT OF RANGE */
		else
			a->data = data_buf + *lba * 512;
	}
}

/*
 * Answer @c with @a: data by RDMA Write, then the SCSI Response, by Send
 * with Invalidate of @inv when @use_inv, for ITT @itt.
 */
static int respond(const struct cmd *c, const struct answer *a, uint32_t itt,
		   int use_inv, uint32_t inv)
{
	struct ibv_send_wr w[MAX_WRITES];
	struct ibv_sge sge[MAX_WRITES];
	uint32_t len = a->status ? 0 : a->len, dlen = a->status ? 20 : 0;
	unsigned char *bhs, flags = ISDM_BHS_FINAL;
	int nw = 0;

	if (len > c->edtl)
		len = c->edtl;
	if (len && c->rsv)
		nw = data_writes(c, a->data, len, w, sge);
	if (!c->rsv)
		len = 0;
	if (len < c->edtl)
		flags |= 0x02;		/* underflow */
	bhs = rsp_start(ISDM_OP_SCSI_RSP, flags, dlen, itt, 1);
	bhs[3] = a->status;
	itool_put_be32(bhs + 44, c->edtl - len);
	if (dlen) {
		unsigned char *s = bhs + ISDM_BHS_LEN;

		memset(s, 0, dlen);
		s[1] = 18;		/* SenseLength, then fixed sense */
		s[2] = 0x70;
		s[4] = a->sense[0];
		s[9] = 10;
		s[14] = a->sense[1];
		s[15] = a->sense[2];
	}
	return post_rsp(HDR_LEN + ISDM_BHS_LEN + dlen, w, nw, use_inv,
			inv);
}

/* wall-clock seconds, to line the -v trace up with the guest's other logs */
static double wall_now(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return tv.tv_sec + tv.tv_usec / 1e6;
}

static int respond_ok(const struct cmd *c)
{
	struct answer a;
	uint64_t lba;

	emulate(c, &a, &lba);
	if (rmode && rverbose) {
		printf("answer t=%.6f itt=0x%08x status=0x%02x len=%u inv=%d\n",
		       wall_now(), c->itt, a.status, a.len,
		       send_inv && c->rsv);
		fflush(stdout);
	}
	return respond(c, &a, c->itt, send_inv && c->rsv, c->stag);
}

/*
 * late-write: 512 bytes of 0xa5 by RDMA Write to the read buffer of @c,
 * whose command has completed. 0 when the write succeeded.
 */
static int late_write(const struct cmd *c)
{
	unsigned char *src = data_buf + ZERO_SIZE;
	struct ibv_sge sge = {
		.addr = (uintptr_t)src, .length = 512, .lkey = data_mr->lkey,
	};
	struct ibv_send_wr w = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
	};

	memset(src, 0xa5, 512);
	w.wr.rdma.remote_addr = c->va;
	w.wr.rdma.rkey = c->stag;
	return itool_send_wr(&t, &w, &w, 10);
}

/*
 * abort-zbva: the TMF Response (@rsp_len bytes in t.tx_buf) for @c, whose
 * task the initiator aborted, with STORM_WRS RDMA Writes of STORM_LEN bytes
 * to its read buffer right behind it in the send queue, and a new one for
 * each that completes, so that the queue never runs dry, until one fails or
 * STORM_SEC seconds passed. The initiator's error handler ends the task and
 * invalidates its STag while they arrive (soft-RoCE on a debug kernel
 * takes them at about 1 MiB/s): they land until the invalidation, and the
 * memory behind the STag must stay the initiator's until then (KASAN
 * reports a write into freed pages). -1 when the TMF Response failed, else
 * 1: the case is done.
 */
static int write_storm(const struct cmd *c, uint32_t rsp_len)
{
	struct ibv_sge rsge = {
		.addr = (uintptr_t)t.tx_buf, .length = rsp_len,
		.lkey = t.tx_mr->lkey,
	};
	struct ibv_sge sge = {
		.addr = (uintptr_t)(data_buf + ZERO_SIZE), .length = STORM_LEN,
		.lkey = data_mr->lkey,
	};
	struct ibv_send_wr w[STORM_WRS + 1], *bad;
	double end = itool_now() + STORM_SEC;
	int i, out, failed = 0;
	struct ibv_wc wc;

	memset(data_buf + ZERO_SIZE, 0xa5, STORM_LEN);
	memset(w, 0, sizeof(w));
	/* the TMF Response, then the writes */
	w[0].sg_list = &rsge;
	w[0].num_sge = 1;
	w[0].opcode = IBV_WR_SEND;
	w[0].send_flags = IBV_SEND_SOLICITED | IBV_SEND_SIGNALED;
	w[0].wr_id = STORM_ID;
	for (i = 1; i <= STORM_WRS; i++) {
		w[i].sg_list = &sge;
		w[i].num_sge = 1;
		w[i].opcode = IBV_WR_RDMA_WRITE;
		w[i].send_flags = IBV_SEND_SIGNALED;
		w[i].wr_id = STORM_ID + 1;
		w[i].wr.rdma.remote_addr = c->va;
		w[i].wr.rdma.rkey = c->stag;
		w[i - 1].next = &w[i];
	}
	storm = 0;
	if (ibv_post_send(t.id->qp, w, &bad))
		return -1;
	w[STORM_WRS].next = NULL;
	out = STORM_WRS + 1;
	while (out) {
		/* busy: the next write goes out as soon as a slot is free */
		int n = ibv_poll_cq(t.cq, 1, &wc);

		if (n < 0 || itool_now() > end + 10)
			break;
		if (!n)
			continue;
		if (wc.wr_id != STORM_ID && wc.wr_id != STORM_ID + 1) {
			/* a receive: the initiator's next PDU */
			if (t.nr_stashed < ITOOL_MAX_RX)
				t.stashed[t.nr_stashed++] = wc;
			continue;
		}
		out--;
		if (wc.wr_id == STORM_ID) {
			if (wc.status != IBV_WC_SUCCESS)
				return -1;
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			/* the rest is flushed */
			failed = 1;
			break;
		}
		storm++;
		/* the next write in the slot this one left */
		if (itool_now() < end &&
		    !ibv_post_send(t.id->qp, &w[STORM_WRS], &bad))
			out++;
	}
	late = failed ? "refused" : "written";
	return 1;
}

/* A HelloReply of @len bytes in t.tx_buf: @flags, CurVer @ver, @ord. */
static int hello_reply(unsigned char flags, unsigned char ver, uint16_t ord,
		       uint32_t len)
{
	memset(t.tx_buf, 0, len);
	t.tx_buf[0] = ISDM_OP_HELLO_REPLY | flags;
	t.tx_buf[1] = (ISDM_ISER_VERSION << 4) | ver;
	t.tx_buf[2] = ord >> 8;
	t.tx_buf[3] = ord & 0xff;
	return post_rsp(len, NULL, 0, 0, 0);
}

/*
 * Mark the kernel log with what a connection does (its case, the Hello it
 * received), so that a scenario can show the initiator's lines of one case
 * or act at a point of the exchange. Best effort: without /dev/kmsg the
 * cases are served all the same.
 */
static void kmsg_mark(const char *what, const char *name)
{
	FILE *f = fopen("/dev/kmsg", "w");

	if (!f)
		return;
	fprintf(f, "iser_tgt: %s %s\n", what, name);
	fclose(f);
}

/*
 * A Hello from the initiator: answer it, or do the case's wrong thing. 0 to
 * go on, 1 when the case was done (the initiator must close), -1 on a local
 * error.
 */
static int hello_step(const unsigned char *msg, int len)
{
	uint16_t ird = len >= 4 ? (msg[2] << 8) | msg[3] : 0;
	uint16_t ord = ird < 16 ? ird : 16;

	hello_seen = 1;
	kmsg_mark("hello", case_names[tcase]);
	switch (tcase) {
	case HELLO_REJ:
		hello_reply(ISDM_HELLO_REPLY_REJ, ISDM_ISER_VERSION, ord,
			    ISDM_HELLO_LEN);
		break;
	case HELLO_VER:
		hello_reply(0, 2, ord, ISDM_HELLO_LEN);
		break;
	case HELLO_LEN:
		hello_reply(0, ISDM_ISER_VERSION, ord, ISDM_HELLO_LEN + 4);
		break;
	case HELLO_NONE:
		break;
	case HELLO_PDU:
		rsp_start(ISDM_OP_NOP_IN, ISDM_BHS_FINAL, 0, 0xffffffff, 0);
		post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
		break;
	case HELLO_DROP:
		rdma_disconnect(t.id);
		fired = 1;
		return 2;
	default:
		return hello_reply(0, ISDM_ISER_VERSION, ord, ISDM_HELLO_LEN) ?
		       -1 : 0;
	}
	/* a Send the initiator refuses may fail here: it went out */
	fired = 1;
	sent = 1;
	return 1;
}

/* The trigger of a full-feature case: send what the initiator must refuse. */
/* the NOP-In that answers the initiator's NOP-Out (a ping) of ITT @itt */
static int nop_answer(uint32_t itt)
{
	unsigned char *r = rsp_start(ISDM_OP_NOP_IN, ISDM_BHS_FINAL, 0, itt, 1);

	itool_put_be32(r + 20, 0xffffffff);
	return post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
}

/* the BHS of an immediate NOP-Out (a ping) of ITT @itt, at @p */
static void nop_out_hdr(unsigned char *p, uint32_t itt)
{
	memset(p, 0, ISDM_BHS_LEN);
	p[0] = 0x40 | ISDM_OP_NOP_OUT;
	p[1] = ISDM_BHS_FINAL;
	itool_put_be32(p + 16, itt);
	itool_put_be32(p + 20, 0xffffffff);	/* TTT */
}

static int offend(const struct cmd *c)
{
	struct answer a;
	struct cmd dup;
	unsigned char *bhs;
	uint64_t lba;
	uint32_t hl = HDR_LEN + ISDM_BHS_LEN;

	emulate(c, &a, &lba);
	switch (tcase) {
	case DLEN:
	case DLEN_BIG:
		rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL,
			  tcase == DLEN ? 4096 : 0xffffff, c->itt, 1);
		return post_rsp(hl, NULL, 0, 0, 0);
	case PAD:
		rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
		memset(t.tx_buf + hl, 0, 8);
		return post_rsp(hl + 8, NULL, 0, 0, 0);
	case SHORT:
		rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
		return post_rsp(40, NULL, 0, 0, 0);
	case AHS:
		bhs = rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
		bhs[4] = 1;
		memset(t.tx_buf + hl, 0, 4);
		return post_rsp(hl + 4, NULL, 0, 0, 0);
	case ITT:
		if (respond_ok(c))
			return -1;
		dup = *c;
		dup.rsv = 0;
		memset(&a, 0, sizeof(a));
		return respond(&dup, &a, c->itt, 0, 0);
	case ITT_BOGUS:
		return respond(c, &a, 0x0badf00d, 0, 0);
	case INV_RKEY:
		return respond(c, &a, c->itt, 1,
			       (c->stag & ~0xffu) | ((c->stag + 1) & 0xff));
	case INV_UNNEG:
		return respond(c, &a, c->itt, 1, c->stag);
	case INV_OTHER:
		held = *c;
		have_held = 1;
		return 0;		/* acts on the next command */
	case INV_NOP:
		/* an unsolicited NOP-In (a ping) carries no StatSN advance */
		bhs = rsp_start(ISDM_OP_NOP_IN, ISDM_BHS_FINAL, 0, 0xffffffff, 0);
		itool_put_be32(bhs + 20, 0x1234);
		return post_rsp(hl, NULL, 0, 1, c->stag);
	case OP_LOGIN:
		bhs = rsp_start(ISDM_OP_LOGIN_RSP, 0x87, 0, c->itt, 1);
		return post_rsp(hl, NULL, 0, 0, 0);
	case OP_R2T:
		bhs = rsp_start(ISDM_OP_R2T, ISDM_BHS_FINAL, 0, c->itt, 0);
		itool_put_be32(bhs + 20, 1);		/* TTT */
		itool_put_be32(bhs + 44, c->edtl);	/* desired length */
		return post_rsp(hl, NULL, 0, 0, 0);
	case OP_DATAIN:
		rsp_start(ISDM_OP_DATA_IN, ISDM_BHS_FINAL, 0, c->itt, 0);
		return post_rsp(hl, NULL, 0, 0, 0);
	case OP_UNKNOWN:
		rsp_start(0x28, ISDM_BHS_FINAL, 0, c->itt, 1);
		return post_rsp(hl, NULL, 0, 0, 0);
	case ISER_OP:
		rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
		t.tx_buf[0] = 0x40;
		return post_rsp(hl, NULL, 0, 0, 0);
	case BIGSEND:
		rsp_start(ISDM_OP_SCSI_RSP, ISDM_BHS_FINAL, BIG_LEN, c->itt, 1);
		memset(t.tx_buf + hl, 0, BIG_LEN);
		return post_rsp(hl + BIG_LEN, NULL, 0, 0, 0);
	case ABORT_LATE:
	case ABORT_ZBVA:
		if (!c->rsv)
			return -1;
		/* abort-zbva: the task is live, the write must land */
		if (tcase == ABORT_ZBVA)
			pre = late_write(c) ? "refused" : "landed";
		aborted = *c;
		have_aborted = 1;
		return 0;		/* acts on the ABORT TASK */
	case LATE_WRITE:
		if (!c->rsv)
			return -1;
		if (respond(c, &a, c->itt, 0, 0))
			return -1;
		sleep(1);
		late = late_write(c) ? "refused" : "written";
		return 0;
	case RESERVED:
		return respond_ok(c);
	case HELLO_UNASKED:
		return hello_reply(0, ISDM_ISER_VERSION, 1, ISDM_HELLO_LEN);
	case KIND_NOP:
		return nop_answer(c->itt);
	case KIND_TMF:
	case KIND_TEXT:
	case KIND_LOGOUT:
		bhs = rsp_start(tcase == KIND_TMF ? ISDM_OP_TMF_RSP :
				tcase == KIND_TEXT ? ISDM_OP_TEXT_RSP :
				ISDM_OP_LOGOUT_RSP, ISDM_BHS_FINAL, 0, c->itt, 1);
		if (tcase == KIND_TEXT)
			itool_put_be32(bhs + 20, 0xffffffff);	/* TTT */
		return post_rsp(hl, NULL, 0, 0, 0);
	case KIND_REJECT:
		bhs = rsp_start(ISDM_OP_REJECT, ISDM_BHS_FINAL, ISDM_BHS_LEN,
				0xffffffff, 1);
		bhs[2] = 0x06;		/* immediate command reject */
		nop_out_hdr(t.tx_buf + hl, c->itt);
		return post_rsp(hl + ISDM_BHS_LEN, NULL, 0, 0, 0);
	default:
		return -1;
	}
}

/* Login: the answer to one key=value offer, appended at @out. */
static size_t login_key(const char *kv, char *out, size_t room)
{
	static const char *const fixed[][2] = {
		{ "AuthMethod", "None" }, { "HeaderDigest", "None" },
		{ "DataDigest", "None" }, { "RDMAExtensions", "Yes" },
		{ "IFMarker", "No" }, { "OFMarker", "No" },
		{ "InitialR2T", "Yes" }, { "DataPDUInOrder", "Yes" },
		{ "DataSequenceInOrder", "Yes" }, { "ErrorRecoveryLevel", "0" },
		{ "MaxConnections", "1" }, { "MaxOutstandingR2T", "1" },
		{ "MaxOutstandingUnexpectedPDUs", "0" },
	};
	/* numeric, result function minimum: the offer up to our limit */
	static const struct { const char *key; unsigned long max; } mins[] = {
		{ "MaxBurstLength", 262144 }, { "FirstBurstLength", 65536 },
		{ "DefaultTime2Retain", 0 },
		{ "TargetRecvDataSegmentLength", DSL_MAX },
		{ "InitiatorRecvDataSegmentLength", 16777215 },
	};
	/* declarations we take note of and do not answer */
	static const char *const quiet[] = {
		"InitiatorName", "InitiatorAlias", "SessionType", "TargetName",
		"MaxRecvDataSegmentLength",
	};
	const char *eq = strchr(kv, '=');
	size_t klen, i;
	int n;

	if (!eq)
		return 0;
	klen = eq - kv;
	for (i = 0; i < ARRAY_SIZE(quiet); i++)
		if (strlen(quiet[i]) == klen && !strncmp(kv, quiet[i], klen))
			return 0;
	for (i = 0; i < ARRAY_SIZE(fixed); i++)
		if (strlen(fixed[i][0]) == klen &&
		    !strncmp(kv, fixed[i][0], klen)) {
			n = snprintf(out, room, "%s=%s", fixed[i][0],
				     fixed[i][1]);
			return n < 0 || (size_t)n >= room ? 0 : n + 1;
		}
	for (i = 0; i < ARRAY_SIZE(mins); i++)
		if (strlen(mins[i].key) == klen &&
		    !strncmp(kv, mins[i].key, klen)) {
			unsigned long v = strtoul(eq + 1, NULL, 10);

			n = snprintf(out, room, "%s=%lu", mins[i].key,
				     v < mins[i].max ? v : mins[i].max);
			return n < 0 || (size_t)n >= room ? 0 : n + 1;
		}
	if (!strncmp(kv, "DefaultTime2Wait", klen) ||
	    !strncmp(kv, "ImmediateData", klen)) {
		/* maximum / AND with Yes: the offer itself */
		n = snprintf(out, room, "%s", kv);
	} else {
		n = snprintf(out, room, "%.*s=NotUnderstood", (int)klen, kv);
	}
	return n < 0 || (size_t)n >= room ? 0 : n + 1;
}

/* One Login Request: answer it, or do the login case. */
static int login_step(const unsigned char *msg, int len)
{
	const unsigned char *req = msg + HDR_LEN;
	uint32_t dlen = itool_get_be24(req + 5), hl, off = 0, n = 0;
	unsigned char *bhs, csg = (req[1] >> 2) & 3, nsg = req[1] & 3;
	int transit = req[1] & 0x80;
	char *out, *keys;

	if ((uint32_t)len < HDR_LEN + ISDM_BHS_LEN + dlen)
		return -1;
	if (!stat_sn && !exp_cmd_sn)
		stat_sn = itool_get_be32(req + 28);
	exp_cmd_sn = itool_get_be32(req + 24);
	hl = HDR_LEN + ISDM_BHS_LEN;
	if (tcase == LOGIN_DLEN || tcase == LOGIN_OP) {
		bhs = rsp_start(tcase == LOGIN_OP ? ISDM_OP_NOP_IN :
				ISDM_OP_LOGIN_RSP, 0x81, 1000,
				itool_get_be32(req + 16), 1);
		memcpy(bhs + 8, req + 8, 6);
		if (tcase == LOGIN_OP)
			memset(bhs + 5, 0, 3);
		sent = 1;
		fired = 1;
		post_rsp(hl, NULL, 0, 0, 0);
		return 1;
	}
	/* copy the keys: the receive buffer is reused */
	keys = calloc(1, dlen + 1);
	if (!keys)
		return -1;
	memcpy(keys, req + ISDM_BHS_LEN, dlen);
	out = (char *)t.tx_buf + hl;
	/* RFC 3720 12.9: in the first response of a normal session */
	if (csg == 0)
		n = snprintf(out, DSL_MAX, "TargetPortalGroupTag=1") + 1;
	while (off < dlen) {
		const char *kv = keys + off;

		n += login_key(kv, out + n, DSL_MAX - n);
		if (!strncmp(kv, "InitiatorRecvDataSegmentLength=", 31) ||
		    !strncmp(kv, "MaxRecvDataSegmentLength=", 25)) {
			unsigned long v = strtoul(strchr(kv, '=') + 1, NULL, 10);

			if (v >= 512 && v < mrdsl)
				mrdsl = v & ~3ul;
		}
		off += strlen(kv) + 1;
	}
	free(keys);
	bhs = rsp_start(ISDM_OP_LOGIN_RSP, 0, n, itool_get_be32(req + 16), 1);
	bhs[1] = (transit ? 0x80 : 0) | csg << 2 | (transit ? nsg : 0);
	memcpy(bhs + 8, req + 8, 6);
	if (transit && nsg == 3) {
		uint16_t tsih = req[14] << 8 | req[15];

		if (!tsih)
			tsih = next_tsih++;
		bhs[14] = tsih >> 8;
		bhs[15] = tsih;
	}
	memset(out + n, 0, ((n + 3) & ~3u) - n);
	if (post_rsp(hl + ((n + 3) & ~3u), NULL, 0, 0, 0))
		return -1;
	if (transit && nsg == 3)
		logged_in = 1;
	return 0;
}

static void parse_cmd(const unsigned char *msg, struct cmd *c)
{
	const unsigned char *bhs = msg + HDR_LEN;
	int i;

	c->itt = itool_get_be32(bhs + 16);
	c->edtl = itool_get_be32(bhs + 20);
	c->rsv = msg[0] & ISDM_CTRL_RSV;
	if (HDR_LEN == ISDM_HDR_LEN_RFC) {
		/* ZBVA: the 12-byte header, the buffer starts at offset 0 */
		c->stag = itool_get_be32(msg + 8);
		c->va = 0;
	} else {
		c->stag = itool_get_be32(msg + 16);
		c->va = (uint64_t)itool_get_be32(msg + 20) << 32 |
			itool_get_be32(msg + 24);
	}
	c->lun0 = 1;
	for (i = 8; i < 16; i++)
		if (bhs[i])
			c->lun0 = 0;
	memcpy(c->cdb, bhs + 32, 16);
}

static int is_trigger(const struct cmd *c)
{
	struct answer a;
	uint64_t lba = NO_TRIGGER;

	if (trigger_lba == NO_TRIGGER)
		return 1;
	emulate(c, &a, &lba);
	return lba == trigger_lba;
}

/*
 * Random mode (-m random). PDU i of the sequence is drawn from its own
 * PRNG state, xorshift64* seeded by splitmix64 of the seed and i, as
 * iser_ffp's random mode does, so a sequence replays from any PDU.
 */
static unsigned long long seed;
static unsigned long rcount = 10000, rfirst, ridx, rend;
static unsigned int rshare = 50;
static int rdone;
/* no random PDU before the first READ of block -t (the scan is done) */
static int armed;
/*
 * SIGUSR1: no more random PDUs, serve properly from now on (read after
 * calls into libibverbs and poll(), never cached across them)
 */
static sig_atomic_t rstop;

static void rnd_stop(int sig)
{
	(void)sig;
	rstop = 1;
}

/* the commands of this connection the tool has not answered */
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

static struct cmd live[LIVE_MAX];
static int nr_live;
/* ITTs answered, or of earlier connections: stale ones */
static uint32_t stale[STALE_MAX];
static unsigned int nr_stale;
static int retries;

static struct {
	unsigned long sent, connections, closed, self_closed, unsent, cmds;
	unsigned long responses, writes, invalidates, repaired, held;
	unsigned long good_dirty, itt_reused, hostile;
} rs;

static void rnd_fill(unsigned char *p, uint32_t len)
{
	while (len--)
		*p++ = (unsigned char)rnd64();
}

/* -P: the LUN's bytes; every 8-byte word names its own offset */
static void lun_pattern(void)
{
	uint64_t v;
	size_t i;

	for (i = 0; i < ZERO_SIZE; i += 8) {
		v = itool_rnd_mix(0x15e7ULL << 32 | i);
		memcpy(data_buf + i, &v, 8);
	}
}

/*
 * Whether a Linux initiator's SCSI layer may complete a command with
 * success on SCSI status @st (the response code 0): GOOD, CONDITION MET
 * and the obsolete INTERMEDIATE ones and COMMAND TERMINATED, bit 0
 * ignored (scsi_status_is_good()), and CHECK CONDITION, whose random
 * sense data may say RECOVERED ERROR, which the SCSI layer completes as a
 * success with whatever the buffer holds. Until 2026-11-27 the tool
 * treated only 0x00 as GOOD and sent the others without the data: a lie
 * of the tool's that the initiator cannot tell from a correct answer
 * (the first run of 10000 PDUs read wrong data twice).
 */
static int status_may_succeed(unsigned char st)
{
	switch (st & 0xfe) {
	case 0x00:
	case 0x02:
	case 0x04:
	case 0x10:
	case 0x14:
	case 0x22:
		return 1;
	}
	return 0;
}

static int live_find(uint32_t itt)
{
	int i;

	for (i = 0; i < nr_live; i++)
		if (live[i].itt == itt)
			return i;
	return -1;
}

static void stale_add(uint32_t itt)
{
	stale[nr_stale++ % STALE_MAX] = itt;
}

/* the command @i is answered (or gone): its ITT is stale from now on */
static void live_del(int i)
{
	stale_add(live[i].itt);
	live[i] = live[--nr_live];
}

/* a sequence number: mostly @exp, sometimes near it or anywhere */
static uint32_t rnd_sn(uint32_t exp)
{
	unsigned int r = rnd(100);

	if (r < 70)
		return exp;
	if (r < 85)
		return exp + rnd(17) - 8;
	return (uint32_t)rnd64();
}

/* ExpCmdSN and MaxCmdSN at @bhs + 28: open, closed, invalid or odd */
static void rnd_window(unsigned char *bhs)
{
	uint32_t exp = exp_cmd_sn, max = exp_cmd_sn + 63;
	unsigned int r = rnd(100);

	if (r < 70)
		;
	else if (r < 78)
		max = exp - 1;			/* closed */
	else if (r < 84)
		max = exp - 2 - rnd(100);	/* invalid: below ExpCmdSN - 1 */
	else if (r < 92) {
		exp += rnd(17) - 8;
		max = exp + rnd(128);
	} else {
		exp = (uint32_t)rnd64();
		max = (uint32_t)rnd64();
	}
	itool_put_be32(bhs + 28, exp);
	itool_put_be32(bhs + 32, max);
}

/* ITT of a random PDU: the command at hand, another issued one, stale, bogus */
static uint32_t rnd_itt(int cur)
{
	unsigned int r = rnd(100);

	if (r < 55 && cur >= 0)
		return live[cur].itt;
	if (r < 65 && nr_live)
		return live[rnd(nr_live)].itt;
	if (r < 80 && nr_stale)
		return stale[rnd(nr_stale < STALE_MAX ? nr_stale : STALE_MAX)];
	if (r < 88)
		return 0xffffffff;
	return (uint32_t)rnd64();
}

/* an STag to invalidate that is not the right one */
static uint32_t rnd_wrong_stag(int cur)
{
	unsigned int r = rnd(3);

	if (r == 0 && nr_live)
		return live[rnd(nr_live)].stag;
	if (r == 1 && cur >= 0)
		return (live[cur].stag & ~0xffu) | ((live[cur].stag + 1) & 0xff);
	return (uint32_t)rnd64();
}

static const unsigned char rnd_reasons[] = {
	0x02, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c,
};

/* A hostile PDU's opcode for @k in [0, 100): every one a target sends, and more */
static unsigned char rnd_hostile_op(unsigned int k)
{
	static const struct { unsigned int below; unsigned char op; } ops[] = {
		{ 40, ISDM_OP_SCSI_RSP }, { 50, ISDM_OP_NOP_IN },
		{ 55, ISDM_OP_TMF_RSP }, { 60, ISDM_OP_TEXT_RSP },
		{ 64, ISDM_OP_LOGOUT_RSP }, { 68, ISDM_OP_R2T },
		{ 75, ISDM_OP_DATA_IN }, { 82, ISDM_OP_REJECT },
		{ 90, ISDM_OP_ASYNC }, { 94, ISDM_OP_LOGIN_RSP },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		if (k < ops[i].below)
			return ops[i].op;
	if (k < 97)
		return 0x27 + rnd(10);		/* reserved: 0x27..0x30 */
	if (k < 99)
		return 0x33 + rnd(12);		/* reserved, vendor: 0x33..0x3e */
	return rnd(0x20);			/* an initiator opcode */
}

/*
 * Send PDU ridx of the sequence, with the command live[@cur] (or none: -1)
 * at hand. 0 when it went out, -1 when its Send failed (the connection is
 * gone).
 */
static int rnd_pdu(int cur)
{
	struct ibv_send_wr w[MAX_WRITES + 1];
	struct ibv_sge sge[MAX_WRITES + 1];
	uint32_t hl = HDR_LEN + ISDM_BHS_LEN, room = mrdsl;
	uint32_t itt, dlen = 0, ahs = 0, inv = 0, woff = 0, wlen = 0, len;
	unsigned char *bhs, *data, op, flags;
	unsigned int k;
	int tc, nw = 0, use_inv = 0, wc = -1, ret, good = 0, hostile;

	itool_rng = itool_rnd_mix(seed ^ itool_rnd_mix(ridx));
	/*
	 * Most PDUs are plausible ones a correct initiator takes (SCSI
	 * Responses for issued commands, pings, Async Messages, Rejects):
	 * many fit on one connection. The hostile rest, anything framed
	 * right, ends it most of the time.
	 */
	hostile = pct(RND_HOSTILE);
	k = rnd(100);
	if (!hostile) {
		if (k < 60 && nr_live)
			op = ISDM_OP_SCSI_RSP;
		else if (k < 80)
			op = ISDM_OP_NOP_IN;
		else if (k < 92)
			op = ISDM_OP_ASYNC;
		else
			op = ISDM_OP_REJECT;
	} else {
		op = rnd_hostile_op(k);
	}
	flags = !hostile || pct(70) ? ISDM_BHS_FINAL : (unsigned char)rnd64();
	if (!hostile)
		itt = op != ISDM_OP_SCSI_RSP ? 0xffffffff :
		      cur >= 0 && pct(80) ? live[cur].itt :
		      live[rnd(nr_live)].itt;
	else
		itt = (op == ISDM_OP_NOP_IN || op == ISDM_OP_ASYNC ||
		       op == ISDM_OP_REJECT) && pct(60) ? 0xffffffff :
		      rnd_itt(cur);
	tc = live_find(itt);

	/* an RDMA Write of random bytes to a command's read buffer */
	if (pct(15)) {
		wc = cur >= 0 && pct(70) ? cur : nr_live ? (int)rnd(nr_live) : -1;
		if (wc >= 0 && live[wc].rsv) {
			uint32_t edtl = live[wc].edtl ? live[wc].edtl : 512;

			woff = !hostile || pct(70) ? rnd(edtl) :
			       rnd(edtl + 16384);
			wlen = 1 + rnd(hostile ? 16384 : edtl - woff);
			memset(&w[0], 0, sizeof(w[0]));
			sge[0].addr = (uintptr_t)(data_buf + ZERO_SIZE +
						  INFO_SIZE);
			sge[0].length = wlen;
			sge[0].lkey = data_mr->lkey;
			w[0].sg_list = &sge[0];
			w[0].num_sge = 1;
			w[0].opcode = IBV_WR_RDMA_WRITE;
			w[0].wr.rdma.remote_addr = live[wc].va + woff;
			w[0].wr.rdma.rkey = live[wc].stag;
			nw = 1;
			live[wc].dirty = 1;
			rs.writes++;
		} else {
			wc = -1;
		}
	}

	/* the data segment, AHS first, within the initiator's receive size */
	if (hostile && pct(25)) {
		ahs = 1 + rnd(4);
		room -= ahs * 4;
	}
	switch (op) {
	case ISDM_OP_SCSI_RSP:
	case ISDM_OP_ASYNC:
		if (pct(50))
			dlen = pct(90) ? 2 + rnd(room < 300 ? room - 1 : 299) :
			       rnd(room + 1);
		break;
	case ISDM_OP_REJECT:
		dlen = !hostile || pct(70) ? ISDM_BHS_LEN : rnd(room + 1);
		break;
	case ISDM_OP_NOP_IN:
		/* an unsolicited NOP-In carries no ping data (RFC 3720 10.19) */
		dlen = hostile && pct(25) ? rnd(room + 1) : 0;
		break;
	case ISDM_OP_DATA_IN:
	case ISDM_OP_LOGIN_RSP:
		dlen = pct(50) ? rnd(room + 1) : 0;
		break;
	default:
		dlen = pct(25) ? rnd(room + 1) : 0;
		break;
	}
	bhs = itool_pdu_start(&t, op, flags, dlen);
	bhs[4] = ahs;
	data = bhs + ISDM_BHS_LEN;
	rnd_fill(data, ahs * 4 + ((dlen + 3) & ~3u));
	data += ahs * 4;
	itool_put_be32(bhs + 16, itt);
	if (pct(hostile ? 30 : 5))
		rnd_fill(bhs + 8, 8);		/* LUN or reserved */
	itool_put_be32(bhs + 24, rnd_sn(stat_sn));
	if (op != ISDM_OP_DATA_IN && op != ISDM_OP_R2T &&
	    !(op == ISDM_OP_NOP_IN && itt == 0xffffffff))
		stat_sn++;
	rnd_window(bhs);

	switch (op) {
	case ISDM_OP_SCSI_RSP: {
		unsigned char st[] = { 0, 0, 0, 0, 0, 0, 2, 2, 2, 8, 0x18,
				       0x28, 0x30 };
		struct answer a;
		uint64_t lba;

		bhs[2] = pct(hostile ? 80 : 95) ? 0 : (unsigned char)rnd64();
		bhs[3] = pct(90) ? st[rnd(sizeof(st))] : (unsigned char)rnd64();
		if (tc >= 0 && pct(60)) {
			uint32_t got = live[tc].rsv ? live[tc].edtl : 0;

			bhs[1] = ISDM_BHS_FINAL | (got < live[tc].edtl ? 0x02 : 0);
			itool_put_be32(bhs + 44, live[tc].edtl - got);
		} else {
			/* o, u bits (plausible), or any */
			bhs[1] = ISDM_BHS_FINAL | (pct(50) ? 0 : hostile ?
				 rnd(0x80) : rnd(0x20) & 0x1e);
			itool_put_be32(bhs + 44, pct(50) ? 0 : (uint32_t)rnd64());
			if (pct(20))
				itool_put_be32(bhs + 40, (uint32_t)rnd64());
		}
		itool_put_be32(bhs + 36, pct(80) ? 0 : rnd(16));
		if (dlen >= 2) {		/* SenseLength */
			uint32_t sl = pct(60) ? dlen - 2 : rnd(65536);

			data[0] = sl >> 8;
			data[1] = sl;
			if (dlen >= 4)
				data[2] = pct(70) ? 0x70 : data[2];
		}
		if (tc >= 0 && !bhs[2] && status_may_succeed(bhs[3])) {
			/*
			 * A status the initiator's SCSI layer may complete
			 * the command with as a success, for a live
			 * command: its data must be what it would be, so
			 * that the status is no lie of the tool's: deliver
			 * it (again), or make it RESERVATION CONFLICT when
			 * the command would not be GOOD.
			 */
			emulate(&live[tc], &a, &lba);
			if (a.status) {
				bhs[3] = NO_SUCCESS;
			} else {
				uint32_t n = a.len < live[tc].edtl ? a.len :
					     live[tc].edtl;

				if (n && live[tc].rsv) {
					nw += data_writes(&live[tc], a.data, n,
							  w + nw, sge + nw);
					rs.repaired++;
				}
				live[tc].dirty = 0;
				good = 1;
			}
		} else if (tc < 0 && !bhs[2] && status_may_succeed(bhs[3])) {
			/*
			 * Such a status for an ITT the tool holds no command
			 * of: it may be a command on its way to the tool,
			 * which this would complete without its data. The
			 * initiator cannot tell; so none.
			 */
			bhs[3] = NO_SUCCESS;
		}
		if (tc >= 0 && send_inv && live[tc].rsv && pct(80)) {
			use_inv = 1;
			inv = !hostile || pct(70) ? live[tc].stag :
			      rnd_wrong_stag(cur);
		}
		if (good && live[tc].dirty)
			rs.good_dirty++;
		rs.responses++;
		break;
	}
	case ISDM_OP_NOP_IN:
		itool_put_be32(bhs + 20, pct(60) ? 0xffffffff :
			       (uint32_t)rnd64());
		break;
	case ISDM_OP_TMF_RSP:
		bhs[2] = pct(80) ? rnd(7) : (unsigned char)rnd64();
		break;
	case ISDM_OP_TEXT_RSP:
		itool_put_be32(bhs + 20, pct(60) ? 0xffffffff :
			       (uint32_t)rnd64());
		break;
	case ISDM_OP_LOGOUT_RSP:
		bhs[2] = pct(80) ? rnd(4) : (unsigned char)rnd64();
		bhs[40] = 0;
		bhs[41] = rnd(3);		/* Time2Wait */
		bhs[42] = 0;
		bhs[43] = rnd(3);		/* Time2Retain */
		break;
	case ISDM_OP_R2T:
	case ISDM_OP_DATA_IN:
		itool_put_be32(bhs + 20, pct(50) ? 0xffffffff :
			       (uint32_t)rnd64());
		itool_put_be32(bhs + 36, rnd(4));	/* DataSN, R2TSN */
		itool_put_be32(bhs + 40, pct(50) ? 0 : rnd(1 << 20));
		itool_put_be32(bhs + 44, pct(50) ? 4096 : (uint32_t)rnd64());
		if (op == ISDM_OP_DATA_IN && pct(50)) {
			bhs[1] |= 0x81;			/* F, S: status */
			bhs[3] = pct(60) ? 0 : (unsigned char)rnd64();
		}
		break;
	case ISDM_OP_REJECT:
		bhs[2] = pct(85) ? rnd_reasons[rnd(sizeof(rnd_reasons))] :
			 (unsigned char)rnd64();
		/*
		 * the rejected header: the command at hand's, or (hostile)
		 * a ping naming a command, which libiscsi would take as
		 * the end of its ping, or noise
		 */
		if (dlen >= ISDM_BHS_LEN && cur >= 0 && pct(60)) {
			memcpy(data, live[cur].bhs, ISDM_BHS_LEN);
		} else if (dlen >= ISDM_BHS_LEN && hostile && pct(40)) {
			bhs[2] = 0x06;	/* immediate command reject */
			nop_out_hdr(data, rnd_itt(cur));
		}
		break;
	case ISDM_OP_ASYNC: {
		/* plausible: those that do not end the connection */
		static const unsigned char ev[] = { 0, 4, 255 };

		/* every event; parameters small: Time2Wait is honoured */
		if (!hostile)
			bhs[36] = ev[rnd(sizeof(ev))];
		else
			bhs[36] = pct(85) ? rnd(6) : pct(50) ? 255 :
				  (unsigned char)rnd64();
		if (dlen >= 2) {		/* SenseLength */
			uint32_t sl = pct(80) ? dlen - 2 : rnd(65536);

			data[0] = sl >> 8;
			data[1] = sl;
		}
		bhs[37] = (unsigned char)rnd64();
		memset(bhs + 38, 0, 6);
		bhs[39] = pct(70) ? 0 : (unsigned char)rnd64();
		bhs[41] = rnd(3);
		bhs[43] = rnd(3);
		break;
	}
	case ISDM_OP_LOGIN_RSP:
		bhs[2] = pct(70) ? 0 : (unsigned char)rnd64();
		bhs[3] = pct(70) ? 0 : (unsigned char)rnd64();
		rnd_fill(bhs + 8, 8);			/* ISID, TSIH */
		bhs[36] = pct(50) ? 0 : rnd(4);		/* status class */
		bhs[37] = pct(50) ? 0 : (unsigned char)rnd64();
		break;
	default:
		rnd_fill(bhs + 20, 4);
		rnd_fill(bhs + 36, 12);
		break;
	}
	/* now and then one more word of noise anywhere past the ITT */
	if (hostile && pct(30))
		rnd_fill(bhs + 20 + 4 * rnd(7), 4);

	/*
	 * The iSER header: always control type; reserved bits (to be
	 * ignored), or Write/Read STag valid with random STags and VAs,
	 * which a target's control PDU does not carry
	 */
	if (!hostile && pct(10)) {
		t.tx_buf[0] |= rnd(4);
	} else if (hostile && pct(30)) {
		t.tx_buf[0] |= rnd(16);
		rnd_fill(t.tx_buf + 1, 3);
		rnd_fill(t.tx_buf + 4, HDR_LEN - 4);
	}
	/* Send with Invalidate where the PDU has no business with one */
	if (hostile && !use_inv && pct(send_inv ? 20 : 5)) {
		use_inv = 1;
		inv = pct(30) && tc >= 0 ? live[tc].stag : rnd_wrong_stag(cur);
	}
	if (use_inv)
		rs.invalidates++;
	len = hl + ahs * 4 + ((dlen + 3) & ~3u);
	if (rverbose) {
		printf("pdu %lu t=%.6f ", ridx, wall_now());
		printf("%s op=0x%02x flags=0x%02x itt=0x%08x%s dlen=%u ahs=%u iser=0x%02x",
		       hostile ? "hostile" : "plausible", op, bhs[1],
		       itt, tc >= 0 ? "(live)" : "", dlen, bhs[4],
		       t.tx_buf[0]);
		if (op == ISDM_OP_SCSI_RSP)
			printf(" rsp=0x%02x status=0x%02x", bhs[2], bhs[3]);
		if (use_inv)
			printf(" inv=0x%08x", inv);
		if (wc >= 0)
			printf(" write=0x%08x+%u,%u", live[wc].stag, woff,
			       wlen);
		printf("\n");
		fflush(stdout);
	}
	ret = post_rsp(len, w, nw, use_inv, inv);
	/*
	 * A Send flushed because the connection was already gone is sent
	 * again on the next one, a few times at most; one that reached
	 * the wire counts, whatever became of it.
	 */
	if (ret && !nw && (t.send_status < 0 ||
			   t.send_status == IBV_WC_WR_FLUSH_ERR) &&
	    ++retries < RETRY_MAX) {
		return -1;
	}
	if (ret)
		rs.unsent++;
	rs.hostile += hostile;
	retries = 0;
	rs.sent++;
	ridx++;
	if (!(rs.sent % 100) && !rverbose) {
		printf("random progress sent=%lu connections=%lu\n", rs.sent,
		       rs.connections);
		fflush(stdout);
	}
	if (ridx >= rend && !rdone) {
		rdone = 1;
		printf("random done sent=%lu connections=%lu\n", rs.sent,
		       rs.connections);
		fflush(stdout);
	}
	/* a SCSI Response answers its command, whatever the initiator makes of it */
	if (op == ISDM_OP_SCSI_RSP && tc >= 0)
		live_del(tc);
	return ret ? -1 : 0;
}

/*
 * Answer every live command not held back (all with @all); -1 when a
 * Send failed.
 */
static int answer_live(int all)
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
static int rnd_cmd(const unsigned char *msg)
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

/*
 * One full-feature PDU. 0 to go on, 1 when the case was done (wait for
 * the initiator to close), -1 on a local error.
 */
static int ffp_step(const unsigned char *msg)
{
	const unsigned char *bhs = msg + HDR_LEN;
	unsigned char op = bhs[0] & ISDM_BHS_OPCODE_MASK;
	uint32_t itt = itool_get_be32(bhs + 16);
	unsigned char *r;
	struct answer a;
	struct cmd c;
	uint64_t lba;
	int ret;

	if (!(bhs[0] & ISDM_BHS_IMMEDIATE) &&
	    itool_get_be32(bhs + 24) == exp_cmd_sn &&
	    op != ISDM_OP_DATA_OUT && op != ISDM_OP_SNACK)
		exp_cmd_sn++;
	switch (op) {
	case ISDM_OP_NOP_OUT:
		if (itt == 0xffffffff)
			return 0;	/* the answer to our ping */
		if (rmode && answer_live(1))
			return -1;
		return nop_answer(itt);
	case ISDM_OP_SCSI_CMD:
		if (rmode)
			return rnd_cmd(msg);
		parse_cmd(msg, &c);
		if (have_held) {
			/* inv-other: the held command's STag, not this one's */
			emulate(&c, &a, &lba);
			sent = 1;
			respond(&c, &a, c.itt, 1, held.stag);
			return 1;
		}
		if (tcase == GOOD || fired || !is_trigger(&c))
			return respond_ok(&c);
		fired = 1;
		/* a Send the initiator refuses may fail here: it went out */
		ret = offend(&c);
		if ((tcase == INV_OTHER || tcase == ABORT_LATE ||
		     tcase == ABORT_ZBVA) && !ret)
			return 0;
		sent = 1;
		if (tcase == RESERVED) {
			rdma_disconnect(t.id);
			return 2;
		}
		return 1;
	case ISDM_OP_TMF_REQ:
		if (rmode) {
			/* the tasks it ends are gone: no answer for them */
			unsigned char f = bhs[1] & 0x7f;
			int i = live_find(itool_get_be32(bhs + 20));

			if (f == 1 && i >= 0)
				live_del(i);
			else if (f == 2 || f == 3 || (f >= 5 && f <= 7))
				while (nr_live)
					live_del(0);
		}
		rsp_start(ISDM_OP_TMF_RSP, ISDM_BHS_FINAL, 0, itt, 1);
		/* abort-late: ABORT TASK (function 1) of the held trigger */
		if (have_aborted && (bhs[1] & 0x7f) == 1 &&
		    itool_get_be32(bhs + 20) == aborted.itt &&
		    tcase == ABORT_ZBVA) {
			have_aborted = 0;
			sent = 1;
			return write_storm(&aborted, HDR_LEN + ISDM_BHS_LEN);
		}
		ret = post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
		if (ret || !have_aborted || (bhs[1] & 0x7f) != 1 ||
		    itool_get_be32(bhs + 20) != aborted.itt)
			return ret;
		have_aborted = 0;
		sent = 1;
		sleep(1);
		late = late_write(&aborted) ? "refused" : "written";
		return 1;
	case ISDM_OP_TEXT_REQ:
		r = rsp_start(ISDM_OP_TEXT_RSP, ISDM_BHS_FINAL, 0, itt, 1);
		itool_put_be32(r + 20, 0xffffffff);
		return post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
	case ISDM_OP_LOGOUT_REQ:
		/* random mode: iscsid may log out on an Async Message */
		if (!rmode || ridx >= rend || rstop)
			logged_out = 1;
		rsp_start(ISDM_OP_LOGOUT_RSP, ISDM_BHS_FINAL, 0, itt, 1);
		post_rsp(HDR_LEN + ISDM_BHS_LEN, NULL, 0, 0, 0);
		return 1;
	default:
		return 0;		/* Data-Out, SNACK: not expected here */
	}
}

/* Accept the connection of @ev with the REP private data of the case. */
static int accept_conn(struct rdma_cm_event *ev)
{
	struct isdm_cm_req req = { .flags = ISDM_CM_ZBVA_EXC | ISDM_CM_SIE_EXC };
	struct isdm_cm_rep rep = {};
	struct rdma_conn_param cp = {};
	size_t n = ev->param.conn.private_data_len;
	int ret;

	if (n > sizeof(req))
		n = sizeof(req);
	if (ev->param.conn.private_data && n)
		memcpy(&req, ev->param.conn.private_data, n);
	/*
	 * what a Linux target answers: no ZBVA, Send with Invalidate if
	 * offered; abort-zbva takes ZBVA when offered (the 12-byte header)
	 */
	send_inv = !(req.flags & ISDM_CM_SIE_EXC) && tcase != INV_UNNEG;
	rep.flags = ISDM_CM_ZBVA_EXC | (send_inv ? 0 : ISDM_CM_SIE_EXC);
	t.hdr_len = 0;
	if (tcase == ABORT_ZBVA && !(req.flags & ISDM_CM_ZBVA_EXC)) {
		rep.flags &= ~ISDM_CM_ZBVA_EXC;
		t.hdr_len = ISDM_HDR_LEN_RFC;
	}
	if (tcase == RESERVED) {
		rep.flags |= 0x3f;
		memset(rep.rsvd, 0xff, sizeof(rep.rsvd));
		rsvd_bits = 0x03;
	}
	t.id = ev->id;
	/* abort-zbva keeps STORM_WRS RDMA Writes and a Send in flight */
	t.sq_depth = tcase == ABORT_ZBVA ? STORM_WRS + 1 : 0;
	ret = itool_verbs_init(&t, NR_RX, RX_SIZE, TX_SIZE);
	if (!ret) {
		data_mr = ibv_reg_mr(t.pd, data_buf, sizeof(data_buf), 0);
		ret = data_mr ? 0 : -1;
	}
	cp.responder_resources = ev->param.conn.initiator_depth ? 1 : 0;
	cp.initiator_depth = ev->param.conn.responder_resources ? 1 : 0;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	cp.private_data = &rep;
	cp.private_data_len = sizeof(rep);
	if (!ret)
		ret = rdma_accept(t.id, &cp);
	else
		rdma_reject(t.id, NULL, 0);
	rdma_ack_cm_event(ev);
	if (ret)
		return -1;
	return itool_cm_wait(&t, RDMA_CM_EVENT_ESTABLISHED, 10);
}

/* The next connection request within @secs, or NULL. */
static struct rdma_cm_event *next_request(double secs)
{
	double end = itool_now() + secs;
	struct rdma_cm_event *ev;

	if (t.pending) {
		ev = t.pending;
		t.pending = NULL;
		return ev;
	}
	while (itool_now() < end) {
		struct pollfd pfd = { .fd = t.ch->fd, .events = POLLIN };

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (rdma_get_cm_event(t.ch, &ev))
			return NULL;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			return ev;
		rdma_ack_cm_event(ev);
	}
	return NULL;
}

/* Serve one connection with case @c; print its summary line. */
static void serve(struct rdma_cm_event *ev, enum tcase c, double deadline)
{
	const char *closed = "no";
	unsigned char *msg;
	double until = 0;
	int len, ret = 0;

	tcase = c;
	if (!rmode)
		kmsg_mark("case", case_names[c]);
	send_inv = 0;
	rsvd_bits = 0;
	logged_in = 0;
	sent = 0;
	fired = 0;
	have_held = 0;
	have_aborted = 0;
	hello_seen = 0;
	late = NULL;
	storm = 0;
	pre = NULL;
	stat_sn = 0;
	exp_cmd_sn = 0;
	t.closed = 0;
	mrdsl = DSL_MAX;
	while (nr_live)
		live_del(0);		/* the last connection's: stale */
	if (rmode)
		rs.connections++;
	if (accept_conn(ev)) {
		fprintf(stderr, "iser_tgt: accepting the connection failed\n");
		goto out;
	}
	while (!t.closed && !t.pending && itool_now() < deadline) {
		if (until && itool_now() > until)
			break;
		len = itool_recv(&t, &msg, 1);
		if (rmode && len < 0 && logged_in && !until && !t.closed &&
		    !t.pending) {
			/* a second without a PDU: answer, and one more */
			ret = answer_live(1);
			if (!ret && armed && !rstop && ridx < rend)
				ret = rnd_pdu(-1);
			if (ret) {
				rdma_disconnect(t.id);
				closed = "self";
				break;
			}
			continue;
		}
		if (len < 0)
			continue;
		if (until) {
			/*
			 * The case is done: wait for the initiator to end
			 * the connection on its own. Its pings are answered,
			 * so that no ping timeout ends it for it (a PDU it
			 * took would pass for one it refused).
			 */
			if (len >= HDR_LEN + ISDM_BHS_LEN &&
			    (msg[HDR_LEN] & ISDM_BHS_OPCODE_MASK) ==
			    ISDM_OP_NOP_OUT &&
			    itool_get_be32(msg + HDR_LEN + 16) !=
			    0xffffffff)
				nop_answer(itool_get_be32(msg +
							  HDR_LEN + 16));
			continue;
		}
		if (logged_in && len > 0 && !hello_seen &&
		    (msg[0] & ISDM_OP_MASK) == ISDM_OP_HELLO) {
			ret = hello_step(msg, len);
			if (ret < 0)
				break;
			if (ret == 2) {
				closed = "self";
				break;
			}
			if (ret == 1)
				until = itool_now() + CLOSE_SEC;
			continue;
		}
		if (len < HDR_LEN + ISDM_BHS_LEN)
			continue;
		if (!logged_in) {
			if ((msg[HDR_LEN] & ISDM_BHS_OPCODE_MASK) ==
			    ISDM_OP_LOGIN_REQ)
				ret = login_step(msg, len);
		} else {
			ret = ffp_step(msg);
		}
		if (ret < 0 && rmode && logged_in) {
			/* a Send failed: the connection is gone */
			rdma_disconnect(t.id);
			closed = "self";
			break;
		}
		if (ret < 0)
			break;
		if (ret == 2) {
			closed = "self";
			break;
		}
		if (ret == 1)
			until = itool_now() + CLOSE_SEC;
	}
	if (t.closed)
		closed = "yes";
	else if (t.pending && fired && strcmp(closed, "self"))
		closed = "yes";		/* the initiator came back: it dropped us */
out:
	if (t.id && !t.closed)
		rdma_disconnect(t.id);
	if (data_mr)
		ibv_dereg_mr(data_mr);
	data_mr = NULL;
	itool_verbs_destroy(&t);
	if (rmode) {
		if (!strcmp(closed, "self"))
			rs.self_closed++;
		else if (t.closed || t.pending)
			rs.closed++;
		if (!rverbose)
			return;
		printf("connection %lu login=%s closed=%s next=%lu\n",
		       rs.connections, itool_yes_no(logged_in, "ok"),
		       t.closed || t.pending ? "yes" : closed, ridx);
		fflush(stdout);
		return;
	}
	printf("case=%s login=%s sent=%s closed=%s", case_names[c],
	       itool_yes_no(logged_in, "ok"), itool_yes_no(sent, "yes"), closed);
	if (hello_seen)
		printf(" hello=yes");
	if (late)
		printf(" late=%s", late);
	if (c == ABORT_ZBVA)
		printf(" zbva=%s pre=%s landed=%d",
		       itool_yes_no(t.hdr_len, "yes"), pre ? pre : "none",
		       storm);
	printf("\n");
	fflush(stdout);
}

/*
 * Random mode: serve connections until the sequence is sent and the
 * initiator logged out (or none came within @wait_sec); the summary line.
 */
static int random_main(double wait_sec, struct rdma_cm_id *listener)
{
	struct rdma_cm_event *ev;
	double start = itool_now();

	ridx = rfirst;
	rend = rfirst + rcount;
	rdone = rcount == 0;
	rshare = rshare > 100 ? 100 : rshare;
	printf("random seed=%llu first=%lu count=%lu ", seed, rfirst, rcount);
	printf("(replay: iser_tgt -m random -s %llu -F %lu -N %lu)\n",
	       seed, rfirst, rcount);
	fflush(stdout);
	signal(SIGUSR1, rnd_stop);
	while (!((ridx >= rend || rstop) && logged_out)) {
		ev = next_request(wait_sec);
		if (!ev)
			break;
		serve(ev, GOOD, itool_now() + 86400);
	}
	printf("random seed=%llu sent=%lu connections=%lu good_dirty=%lu ",
	       seed, rs.sent, rs.connections, rs.good_dirty);
	printf("closed=%lu self_closed=%lu unsent=%lu cmds=%lu responses=%lu ",
	       rs.closed, rs.self_closed, rs.unsent, rs.cmds, rs.responses);
	printf("writes=%lu invalidates=%lu repaired=%lu held=%lu ",
	       rs.writes, rs.invalidates, rs.repaired, rs.held);
	printf("hostile=%lu itt_reused=%lu seconds=%.0f\n", rs.hostile,
	       rs.itt_reused,
	       itool_now() - start);
	fflush(stdout);
	rdma_destroy_id(listener);
	rdma_destroy_event_channel(t.ch);
	return ridx >= rend ? 0 : 1;
}

int main(int argc, char **argv)
{
	enum tcase cases[MAX_CASES] = { GOOD };
	struct addrinfo *ai, hints = {
		.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE,
	};
	struct rdma_cm_id *listener;
	int opt, nr = 1, i, dump = 0;
	double wait_sec = 240;
	char *s, *tok;
	unsigned int k;

	while ((opt = getopt(argc, argv, "c:t:w:m:s:N:F:r:vPD")) != -1) {
		switch (opt) {
		case 'm':
			if (strcmp(optarg, "random")) {
				fprintf(stderr, "iser_tgt: bad mode %s\n",
					optarg);
				return 1;
			}
			rmode = 1;
			pattern = 1;
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'N':
			rcount = strtoul(optarg, NULL, 0);
			break;
		case 'F':
			rfirst = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			rshare = strtoul(optarg, NULL, 0);
			break;
		case 'v':
			rverbose = 1;
			break;
		case 'P':
			pattern = 1;
			break;
		case 'D':
			dump = 1;
			break;
		case 'c':
			nr = 0;
			for (s = optarg; (tok = strtok(s, ",")); s = NULL) {
				for (k = 0; k < NR_CASE_NAMES; k++)
					if (!strcmp(tok, case_names[k]))
						break;
				if (k == NR_CASE_NAMES || nr == MAX_CASES) {
					fprintf(stderr, "iser_tgt: bad case %s\n",
						tok);
					return 1;
				}
				cases[nr++] = k;
			}
			break;
		case 't':
			trigger_lba = strtoull(optarg, NULL, 0);
			break;
		case 'w':
			wait_sec = atof(optarg);
			break;
		default:
			return 1;
		}
	}
	if (pattern)
		lun_pattern();
	if (dump) {
		/* -D: the LUN's content on stdout, for the scenario to compare */
		return fwrite(data_buf, 1, ZERO_SIZE, stdout) == ZERO_SIZE ?
		       0 : 1;
	}
	if (argc - optind != 2 || !nr) {
		fprintf(stderr, "usage: iser_tgt [-c CASE,...] [-t LBA] [-w SECONDS] [-P]\n"
			"                ADDR PORT\n"
			"       iser_tgt -m random [-s SEED] [-N COUNT] [-F FIRST] [-r SHARE] [-v] [-w SECONDS] ADDR PORT\n"
			"       iser_tgt [-P] -D\n");
		return 1;
	}
	if (getaddrinfo(argv[optind], argv[optind + 1], &hints, &ai)) {
		fprintf(stderr, "iser_tgt: bad address %s:%s\n", argv[optind],
			argv[optind + 1]);
		return 1;
	}
	t.ch = rdma_create_event_channel();
	if (!t.ch || rdma_create_id(t.ch, &listener, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listener, ai->ai_addr) || rdma_listen(listener, 4)) {
		fprintf(stderr, "iser_tgt: cannot listen on %s:%s (%s)\n",
			argv[optind], argv[optind + 1], strerror(errno));
		return 1;
	}
	freeaddrinfo(ai);
	fprintf(stderr, "iser_tgt: %s listening on %s:%s, %d cases\n",
		TARGET_IQN, argv[optind], argv[optind + 1], nr);
	if (rmode)
		return random_main(wait_sec, listener);
	for (i = 0; i < nr; i++) {
		struct rdma_cm_event *ev = next_request(wait_sec);

		if (!ev) {
			printf("case=%s login=no sent=no closed=no conn=none\n",
			       case_names[cases[i]]);
			return 1;
		}
		serve(ev, cases[i], itool_now() + wait_sec);
	}
	/*
	 * A last good case serves every further connection until the
	 * initiator logs out: a session that recovers once more (a slow
	 * login retried) still finds its target.
	 */
	while (cases[nr - 1] == GOOD && !logged_out) {
		struct rdma_cm_event *ev = next_request(wait_sec);

		if (!ev)
			break;
		serve(ev, GOOD, itool_now() + wait_sec);
	}
	rdma_destroy_id(listener);
	rdma_destroy_event_channel(t.ch);
	return 0;
}
