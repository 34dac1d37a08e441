// SPDX-License-Identifier: GPL-2.0
/*
 * iser_peer: a misbehaving iSER initiator for the guest scenarios.
 *
 * Opens connections to an iSER portal over rdma_cm and then does what no
 * well-behaved initiator does: stays silent, drops at once, sends garbage,
 * or offers no or short Annex A12 private data. It counts what the target
 * did with them and prints one summary line:
 *
 *   established=E rejected=R closed_by_target=C failed=F alive=A
 *
 * "alive" counts the connections that, at the end of the hold time, still
 * carry a Send to the target: each connection that never saw a disconnect
 * sends one message and waits for its completion. A target that released
 * the connection without a disconnect the peer noticed (for example one
 * whose CM handshake never completed on its side) fails the probe.
 *
 * usage: iser_peer [-n N] [-m MODE] [-t SECONDS] ADDR PORT
 *   -n N        connections (default 1)
 *   -m MODE     silent (default), drop, garbage, nopd, shortpd
 *   -t SECONDS  how long to hold the connections (default 30); a fraction
 *               such as 0.8 times the close against the target's timers;
 *               the tool ends sooner once every connection has ended
 *
 * Exit status: 0 when it ran, 1 on a local error (bad arguments, no RDMA
 * device), so the scenario judges the counts.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define MAX_CONNS	256
#define GARBAGE_LEN	76

enum mode { SILENT, DROP, GARBAGE, NOPD, SHORTPD };

struct peer {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char buf[GARBAGE_LEN];
	int state;	/* 0 connecting, 1 established, 2 done */
};

static struct peer peers[MAX_CONNS];
static int established, rejected, closed, failed;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct peer *peer_of(struct rdma_cm_id *id)
{
	return id->context;
}

static int setup_qp(struct peer *p)
{
	struct ibv_qp_init_attr qa = {};

	p->pd = ibv_alloc_pd(p->id->verbs);
	if (!p->pd)
		return -1;
	p->cq = ibv_create_cq(p->id->verbs, 4, NULL, NULL, 0);
	if (!p->cq)
		return -1;
	qa.send_cq = p->cq;
	qa.recv_cq = p->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 2;
	qa.cap.max_recv_wr = 2;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(p->id, p->pd, &qa))
		return -1;
	p->mr = ibv_reg_mr(p->pd, p->buf, sizeof(p->buf), IBV_ACCESS_LOCAL_WRITE);
	return p->mr ? 0 : -1;
}

static int do_connect(struct peer *p, enum mode mode)
{
	struct rdma_conn_param cp = {};
	unsigned char pd[4] = { 0x80, 0, 0, 0 };	/* like Linux: no ZBVA */

	if (setup_qp(p))
		return -1;
	cp.initiator_depth = 1;
	cp.responder_resources = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if (mode != NOPD) {
		cp.private_data = pd;
		cp.private_data_len = mode == SHORTPD ? 2 : sizeof(pd);
	}
	return rdma_connect(p->id, &cp);
}

static void send_garbage(struct peer *p)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)p->buf, .length = sizeof(p->buf),
		.lkey = p->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	/* an iSER header with a reserved opcode, then a BHS of 0xff */
	memset(p->buf, 0xff, sizeof(p->buf));
	p->buf[0] = 0x50;
	if (ibv_post_send(p->id->qp, &wr, &bad))
		failed++;
}

static void handle(struct rdma_cm_event *ev, enum mode mode)
{
	struct peer *p = peer_of(ev->id);

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(ev->id, 2000)) {
			failed++;
			p->state = 2;
		}
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (do_connect(p, mode)) {
			failed++;
			p->state = 2;
		}
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		established++;
		p->state = 1;
		if (mode == DROP) {
			rdma_disconnect(ev->id);
			p->state = 2;
		} else if (mode == GARBAGE) {
			send_garbage(p);
		}
		break;
	case RDMA_CM_EVENT_REJECTED:
		rejected++;
		p->state = 2;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (p->state == 1)
			closed++;
		p->state = 2;
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		failed++;
		p->state = 2;
		break;
	default:
		break;
	}
}

/* Send one message on every connection still open; count the delivered. */
static int probe_alive(int n)
{
	double end = now() + 10;
	int i, alive = 0, pending = 0;

	for (i = 0; i < n; i++) {
		struct ibv_wc old;

		if (peers[i].state != 1)
			continue;
		/* completions of earlier sends are not the probe's */
		while (ibv_poll_cq(peers[i].cq, 1, &old) == 1)
			;
		send_garbage(&peers[i]);
		peers[i].state = 3;
		pending++;
	}
	while (pending && now() < end) {
		for (i = 0; i < n; i++) {
			struct ibv_wc wc;

			if (peers[i].state != 3 ||
			    ibv_poll_cq(peers[i].cq, 1, &wc) != 1)
				continue;
			if (wc.status == IBV_WC_SUCCESS)
				alive++;
			peers[i].state = 2;
			pending--;
		}
		usleep(1000);
	}
	return alive;
}

static int parse_mode(const char *s, enum mode *m)
{
	static const char *const names[] = {
		"silent", "drop", "garbage", "nopd", "shortpd",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (!strcmp(s, names[i])) {
			*m = i;
			return 0;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct rdma_event_channel *ch;
	struct addrinfo *ai, hints = { .ai_socktype = SOCK_STREAM };
	enum mode mode = SILENT;
	int n = 1, opt, i;
	double hold = 30, end;

	while ((opt = getopt(argc, argv, "n:m:t:")) != -1) {
		switch (opt) {
		case 'n':
			n = atoi(optarg);
			break;
		case 'm':
			if (parse_mode(optarg, &mode)) {
				fprintf(stderr, "iser_peer: unknown mode %s\n", optarg);
				return 1;
			}
			break;
		case 't':
			hold = atof(optarg);
			break;
		default:
			return 1;
		}
	}
	if (argc - optind != 2 || n < 1 || n > MAX_CONNS || hold < 0) {
		fprintf(stderr,
			"usage: iser_peer [-n 1..%d] [-m silent|drop|garbage|nopd|shortpd]\n"
			"                 [-t SECONDS] ADDR PORT\n", MAX_CONNS);
		return 1;
	}
	if (getaddrinfo(argv[optind], argv[optind + 1], &hints, &ai)) {
		fprintf(stderr, "iser_peer: cannot resolve %s:%s\n",
			argv[optind], argv[optind + 1]);
		return 1;
	}
	ch = rdma_create_event_channel();
	if (!ch) {
		perror("iser_peer: rdma_create_event_channel");
		return 1;
	}
	/*
	 * librdmacm swallows some events (a REJECTED or DISCONNECTED after
	 * a failed connect response) and then reads the next one: with a
	 * blocking channel rdma_get_cm_event() would wait past the hold time,
	 * forever if no event comes.
	 */
	if (fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK)) {
		perror("iser_peer: fcntl");
		return 1;
	}

	for (i = 0; i < n; i++) {
		if (rdma_create_id(ch, &peers[i].id, &peers[i], RDMA_PS_TCP)) {
			perror("iser_peer: rdma_create_id");
			return 1;
		}
		if (rdma_resolve_addr(peers[i].id, NULL, ai->ai_addr, 2000)) {
			failed++;
			peers[i].state = 2;
		}
	}

	end = now() + hold;
	while (now() < end) {
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		struct rdma_cm_event *ev;
		int ms = (int)((end - now()) * 1000);

		if (poll(&pfd, 1, ms > 0 ? ms : 0) <= 0)
			continue;
		if (rdma_get_cm_event(ch, &ev)) {
			if (errno == EAGAIN)
				continue;
			break;
		}
		handle(ev, mode);
		rdma_ack_cm_event(ev);
		/* every connection has ended: nothing more can happen */
		for (i = 0; i < n && peers[i].state == 2; i++)
			;
		if (i == n)
			break;
	}

	printf("established=%d rejected=%d closed_by_target=%d failed=%d alive=%d\n",
	       established, rejected, closed, failed, probe_alive(n));
	fflush(stdout);
	/* process exit releases the ids, QPs and the channel */
	freeaddrinfo(ai);
	return 0;
}
