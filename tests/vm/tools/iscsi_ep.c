// SPDX-License-Identifier: GPL-2.0
/*
 * iscsi_ep: the endpoint requests of the iSCSI netlink interface, as
 * iscsid sends them, one at a time, for a transport of
 * /sys/class/iscsi_transport:
 *
 *   iscsi_ep TRANSPORT connect ADDR PORT   prints the endpoint's handle
 *   iscsi_ep TRANSPORT poll HANDLE         prints the transport's answer
 *   iscsi_ep TRANSPORT disconnect HANDLE
 *
 * An endpoint outlives this process: it stays until a disconnect. The
 * exit status is 0 when the kernel answered 0 (poll: 0, 1 or -1 are
 * answers), 1 with a negative answer (printed), 2 on bad usage or a
 * netlink failure.
 *
 * struct iscsi_uevent (include/scsi/iscsi_if.h of the kernel, the same in
 * 6.1 and 6.12) is mirrored here with only the members these requests
 * use; the sizes are checked at compile time.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef NETLINK_ISCSI
#define NETLINK_ISCSI 8
#endif

#define EV_EP_CONNECT		22	/* ISCSI_UEVENT_TRANSPORT_EP_CONNECT */
#define EV_EP_POLL		23	/* ISCSI_UEVENT_TRANSPORT_EP_POLL */
#define EV_EP_DISCONNECT	24	/* ISCSI_UEVENT_TRANSPORT_EP_DISCONNECT */

struct ev {
	uint32_t type;
	uint32_t iferror;
	uint64_t transport_handle;
	union {
		struct {
			uint32_t non_blocking;
		} ep_connect;
		struct {
			uint64_t ep_handle;
			uint32_t timeout_ms;
		} ep_poll;
		struct {
			uint64_t ep_handle;
		} ep_disconnect;
		uint8_t size[24];
	} u;
	union {
		int32_t retcode;
		struct {
			uint64_t handle;
		} ep_connect_ret;
		uint8_t size[16];
	} r;
};

_Static_assert(sizeof(struct ev) == 56, "struct iscsi_uevent is 56 bytes");
_Static_assert(offsetof(struct ev, r) == 40, "iscsi_uevent.r at 40");

static uint64_t transport_handle(const char *name)
{
	char path[256];
	unsigned long long h = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/iscsi_transport/%s/handle",
		 name);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu", &h) != 1) {
		fprintf(stderr, "iscsi_ep: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	return h;
}

/* Send @len bytes of @req (an ev and what follows it); the answer in @ans. */
static void request(void *req, size_t len, struct ev *ans)
{
	struct sockaddr_nl me = { .nl_family = AF_NETLINK, .nl_pid = 0 };
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	uint64_t buf[NLMSG_SPACE(1024) / 8];
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct ev *ev = req;
	ssize_t n;
	int fd;

	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_ISCSI);
	if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof(me))) {
		fprintf(stderr, "iscsi_ep: netlink: %s\n", strerror(errno));
		exit(2);
	}
	memset(buf, 0, sizeof(buf));
	nlh->nlmsg_len = NLMSG_LENGTH(len);
	nlh->nlmsg_type = ev->type;
	nlh->nlmsg_pid = getpid();
	memcpy(NLMSG_DATA(nlh), req, len);
	if (sendto(fd, nlh, nlh->nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0) {
		fprintf(stderr, "iscsi_ep: send: %s\n", strerror(errno));
		exit(2);
	}
	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			fprintf(stderr, "iscsi_ep: recv: %s\n", strerror(errno));
			exit(2);
		}
		if ((size_t)n < NLMSG_LENGTH(sizeof(*ans)))
			continue;
		memcpy(ans, NLMSG_DATA(nlh), sizeof(*ans));
		/* the answer carries the request's type (ev.type: an error) */
		if (nlh->nlmsg_type == ev->type)
			break;
	}
	close(fd);
}

int main(int argc, char **argv)
{
	struct {
		struct ev ev;
		struct sockaddr_in sin;
	} req;
	struct ev ans;

	if (argc < 4) {
		fprintf(stderr, "usage: iscsi_ep TRANSPORT connect ADDR PORT\n"
			"       iscsi_ep TRANSPORT poll|disconnect HANDLE\n");
		return 2;
	}
	memset(&req, 0, sizeof(req));
	req.ev.transport_handle = transport_handle(argv[1]);
	if (!strcmp(argv[2], "connect") && argc == 5) {
		req.ev.type = EV_EP_CONNECT;
		req.ev.u.ep_connect.non_blocking = 0;
		req.sin.sin_family = AF_INET;
		req.sin.sin_port = htons(atoi(argv[4]));
		if (inet_pton(AF_INET, argv[3], &req.sin.sin_addr) != 1) {
			fprintf(stderr, "iscsi_ep: bad address %s\n", argv[3]);
			return 2;
		}
		request(&req, sizeof(req), &ans);
		if (ans.iferror) {
			printf("error %d\n", (int32_t)ans.iferror);
			return 1;
		}
		printf("%" PRIu64 "\n", ans.r.ep_connect_ret.handle);
		return 0;
	}
	if (!strcmp(argv[2], "poll")) {
		req.ev.type = EV_EP_POLL;
		req.ev.u.ep_poll.ep_handle = strtoull(argv[3], NULL, 0);
		req.ev.u.ep_poll.timeout_ms = 100;
	} else if (!strcmp(argv[2], "disconnect")) {
		req.ev.type = EV_EP_DISCONNECT;
		req.ev.u.ep_disconnect.ep_handle = strtoull(argv[3], NULL, 0);
	} else {
		fprintf(stderr, "iscsi_ep: unknown request %s\n", argv[2]);
		return 2;
	}
	request(&req, sizeof(req.ev), &ans);
	if (ans.iferror) {
		printf("error %d\n", (int32_t)ans.iferror);
		return 1;
	}
	printf("%d\n", ans.r.retcode);
	return ans.r.retcode < -1 ? 1 : 0;
}
