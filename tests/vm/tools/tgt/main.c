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
 *   login-none  no answer to the Login Request (sent=yes: it was held);
 *               the initiator's login timer ends the connection
 *   login-drop  the tool disconnects on the Login Request (closed=self)
 *   connect-late  the connection request held 10 s without an answer,
 *               then rejected (login=no sent=yes closed=self): the
 *               initiator's connect outlasts its login timer
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
 *   [ late=...][ zbva=yes|no pre=landed|refused landed=N][ read32=N]
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
 * usage: iser_tgt [-c CASE,...] [-t LBA] [-w SECONDS] [-P]
 * [-I | -T TYPE [-G LBA] [-Q LBA]] ADDR PORT.  Exit status 0 when every case got a
 * connection, 1 on a local error or when no connection came within -w
 * seconds (default 240).
 *
 * -P serves a LUN of a pattern instead of zeros: every 8-byte word is
 * splitmix64 of its byte offset, so data from the wrong place or of no
 * command shows; READ past the end gets LOGICAL BLOCK ADDRESS OUT OF
 * RANGE. `iser_tgt [-P] -D` prints the LUN's 1 MiB on stdout and exits.
 *
 * -I formats the LUN with T10 protection information type 1 (INQUIRY's
 * PROTECT, READ CAPACITY (16)'s PROT_EN): a READ with RDPROTECT gets the
 * tuple of each block behind it in the data (pi.c). -T 2 formats it with
 * type 2 (P_TYPE 1): sd then reads it with READ (32), whose last 16 CDB
 * bytes come in an extended CDB AHS; the connection's line ends with
 * read32=N, the READ (32)s served. -G LBA gives block LBA a wrong guard,
 * -Q LBA a wrong reference tag; its data stays right. The LUN stays
 * write-protected.
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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tgt.h"

#define TARGET_IQN	"iqn.2003-01.org.linux-iscsi.iser-vm:hostile"
#define MAX_CASES	64

int pattern;
int rmode, rverbose;
uint64_t trigger_lba = NO_TRIGGER;

/*
 * The cases, as the head of this file describes them: each with what it
 * needs (TC_*, tgt.h) and the function that does its wrong thing, on the
 * first Login Request (@login, login.c), on the initiator's Hello (@hello,
 * case_hello.c) or on the trigger (@trigger, cases.c and the files of its
 * kind). The first row, good, is the default.
 */
static const struct tgt_case cases_table[] = {
	{ .name = "good", .flags = TC_GOOD },
	{ .name = "reserved", .flags = TC_RSVD | TC_DISCONNECT,
	  .trigger = fire_reserved },
	{ .name = "login-dlen", .login = login_dlen },
	{ .name = "login-op", .login = login_op },
	{ .name = "login-none", .login = login_none },
	{ .name = "login-drop", .login = login_drop },
	{ .name = "connect-late", .flags = TC_LATE },
	{ .name = "dlen", .trigger = fire_dlen },
	{ .name = "dlen-big", .trigger = fire_dlen_big },
	{ .name = "pad", .trigger = fire_pad },
	{ .name = "short", .trigger = fire_short },
	{ .name = "ahs", .trigger = fire_ahs },
	{ .name = "itt", .trigger = fire_itt },
	{ .name = "itt-bogus", .trigger = fire_itt_bogus },
	{ .name = "inv-rkey", .trigger = fire_inv_rkey },
	{ .name = "inv-other", .flags = TC_HOLD, .trigger = fire_inv_other },
	{ .name = "inv-nop", .trigger = fire_inv_nop },
	{ .name = "inv-unneg", .flags = TC_NO_SIE, .trigger = fire_inv_unneg },
	{ .name = "op-login", .trigger = fire_op_login },
	{ .name = "op-r2t", .trigger = fire_op_r2t },
	{ .name = "op-datain", .trigger = fire_op_datain },
	{ .name = "op-unknown", .trigger = fire_op_unknown },
	{ .name = "iser-op", .trigger = fire_iser_op },
	{ .name = "bigsend", .trigger = fire_bigsend },
	{ .name = "late-write", .trigger = fire_late_write },
	{ .name = "abort-late", .flags = TC_HOLD, .trigger = fire_abort_late },
	{ .name = "hello-unasked", .trigger = fire_hello_unasked },
	{ .name = "hello-rej", .hello = hello_rej },
	{ .name = "hello-ver", .hello = hello_ver },
	{ .name = "hello-len", .hello = hello_len },
	{ .name = "hello-none", .hello = hello_none },
	{ .name = "hello-pdu", .hello = hello_pdu },
	{ .name = "hello-drop", .hello = hello_drop },
	{ .name = "kind-tmf", .trigger = fire_kind_tmf },
	{ .name = "kind-text", .trigger = fire_kind_text },
	{ .name = "kind-logout", .trigger = fire_kind_logout },
	{ .name = "kind-nop", .trigger = fire_kind_nop },
	{ .name = "kind-reject", .trigger = fire_kind_reject },
	{ .name = "abort-zbva", .flags = TC_HOLD | TC_ZBVA | TC_STORM,
	  .trigger = fire_abort_zbva },
};

#define GOOD_CASE	(&cases_table[0])

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
		serve(ev, GOOD_CASE, itool_now() + 86400);
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
	const struct tgt_case *cases[MAX_CASES] = { GOOD_CASE };
	struct addrinfo *ai, hints = {
		.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE,
	};
	struct rdma_cm_id *listener;
	int opt, nr = 1, i, dump = 0;
	double wait_sec = 240;
	char *s, *tok;
	unsigned int k;

	while ((opt = getopt(argc, argv, "c:t:w:m:s:N:F:r:vPDIT:G:Q:")) != -1) {
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
		case 'I':
			pi_type = 1;
			break;
		case 'T':
			pi_type = atoi(optarg);
			if (pi_type != 1 && pi_type != 2) {
				fprintf(stderr, "iser_tgt: -T takes protection type 1 or 2\n");
				return 1;
			}
			break;
		case 'G':
			pi_bad_guard = strtoull(optarg, NULL, 0);
			break;
		case 'Q':
			pi_bad_ref = strtoull(optarg, NULL, 0);
			break;
		case 'c':
			nr = 0;
			for (s = optarg; (tok = strtok(s, ",")); s = NULL) {
				for (k = 0; k < ARRAY_SIZE(cases_table); k++)
					if (!strcmp(tok, cases_table[k].name))
						break;
				if (k == ARRAY_SIZE(cases_table) ||
				    nr == MAX_CASES) {
					fprintf(stderr, "iser_tgt: bad case %s\n",
						tok);
					return 1;
				}
				cases[nr++] = &cases_table[k];
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
			"                [-I | -T TYPE [-G LBA] [-Q LBA]] ADDR PORT\n"
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
			       cases[i]->name);
			return 1;
		}
		serve(ev, cases[i], itool_now() + wait_sec);
	}
	/*
	 * A last good case serves every further connection until the
	 * initiator logs out: a session that recovers once more (a slow
	 * login retried) still finds its target.
	 */
	while ((cases[nr - 1]->flags & TC_GOOD) && !logged_out) {
		struct rdma_cm_event *ev = next_request(wait_sec);

		if (!ev)
			break;
		serve(ev, GOOD_CASE, itool_now() + wait_sec);
	}
	rdma_destroy_id(listener);
	rdma_destroy_event_channel(t.ch);
	return 0;
}
