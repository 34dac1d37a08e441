// SPDX-License-Identifier: GPL-2.0
/*
 * iscsi_ep: drive an iSCSI transport's endpoint calls over the iSCSI
 * netlink interface, the way iscsid does, without iscsid.
 *
 * The scenarios use it to hold an endpoint as a dead iscsid would: the
 * kernel keeps an endpoint until ep_disconnect, and an iscsid that died
 * never sends it. The tool opens an endpoint and exits; the endpoint stays
 * until "iscsi_ep disconnect".
 *
 * usage:
 *   iscsi_ep connect TRANSPORT ADDR PORT    prints the endpoint's handle
 *   iscsi_ep poll TRANSPORT HANDLE MS       prints 1 up, 0 pending, -1 failed
 *   iscsi_ep disconnect TRANSPORT HANDLE
 *
 * TRANSPORT is a name in /sys/class/iscsi_transport (iser, tcp). ADDR is an
 * IPv4 or IPv6 address. Exit status 0 on success; 1 with a message on
 * stderr when the kernel refused the call or a local step failed.
 *
 * The message layout is the kernel's ABI with iscsid (struct iscsi_uevent,
 * include/scsi/iscsi_if.h): type, iferror, the transport's handle, a
 * 24-byte union of requests and a 16-byte union of results, 56 bytes in
 * all and 8-byte aligned; ep_connect's address follows the struct.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define NETLINK_ISCSI_PROTO		8
#define UEV_BASE			10
#define UEV_EP_CONNECT			(UEV_BASE + 12)
#define UEV_EP_POLL			(UEV_BASE + 13)
#define UEV_EP_DISCONNECT		(UEV_BASE + 14)
#define KEV_BASE			100
#define KEV_IF_ERROR			(KEV_BASE + 3)

/*
 * struct iscsi_uevent, with the members this tool uses; its u64 member
 * gives it the 8-byte alignment of the kernel's
 */
struct uev {
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

_Static_assert(sizeof(struct uev) == 56 && _Alignof(struct uev) == 8,
	       "struct iscsi_uevent is 56 bytes, 8-byte aligned");

struct msg {
	struct nlmsghdr nlh;
	struct uev ev;
	struct sockaddr_storage addr;
};

static int die(const char *what)
{
	fprintf(stderr, "iscsi_ep: %s: %s\n", what, strerror(errno));
	return 1;
}

static int transport_handle(const char *name, uint64_t *handle)
{
	char path[256];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/class/iscsi_transport/%s/handle",
		 name);
	f = fopen(path, "r");
	if (!f)
		return die(path);
	ok = fscanf(f, "%" SCNu64, handle) == 1;
	fclose(f);
	if (!ok) {
		fprintf(stderr, "iscsi_ep: %s: no handle\n", path);
		return 1;
	}
	return 0;
}

/* send @m (its ev.type set) and read the kernel's reply into @reply */
static int nl_request(struct msg *m, size_t payload, struct uev *reply)
{
	struct sockaddr_nl local = { .nl_family = AF_NETLINK };
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	char buf[4096];
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	ssize_t n;
	int fd;

	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_ISCSI_PROTO);
	if (fd < 0)
		return die("netlink socket");
	if (bind(fd, (struct sockaddr *)&local, sizeof(local))) {
		close(fd);
		return die("bind");
	}
	m->nlh.nlmsg_len = NLMSG_LENGTH(payload);
	m->nlh.nlmsg_type = m->ev.type;
	m->nlh.nlmsg_flags = NLM_F_REQUEST;
	if (sendto(fd, m, m->nlh.nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0) {
		close(fd);
		return die("sendto");
	}
	n = recv(fd, buf, sizeof(buf), 0);
	close(fd);
	if (n < 0)
		return die("recv");
	if ((size_t)n < NLMSG_LENGTH(sizeof(*reply)) ||
	    nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*reply))) {
		fprintf(stderr, "iscsi_ep: short reply (%zd bytes)\n", n);
		return 1;
	}
	memcpy(reply, NLMSG_DATA(nlh), sizeof(*reply));
	if (reply->type == KEV_IF_ERROR) {
		fprintf(stderr, "iscsi_ep: the kernel refused the request: %s\n",
			strerror(-(int32_t)reply->iferror));
		return 1;
	}
	return 0;
}

static int ep_connect(uint64_t th, const char *addr, const char *port)
{
	struct sockaddr_in6 *a6;
	struct sockaddr_in *a4;
	struct msg m = { 0 };
	struct uev reply;
	int p = atoi(port);

	if (p <= 0 || p > 65535) {
		fprintf(stderr, "iscsi_ep: bad port %s\n", port);
		return 1;
	}
	a4 = (struct sockaddr_in *)&m.addr;
	a6 = (struct sockaddr_in6 *)&m.addr;
	if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(p);
	} else if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(p);
	} else {
		fprintf(stderr, "iscsi_ep: bad address %s\n", addr);
		return 1;
	}
	m.ev.type = UEV_EP_CONNECT;
	m.ev.transport_handle = th;
	m.ev.u.ep_connect.non_blocking = 1;
	if (nl_request(&m, sizeof(m.ev) + sizeof(m.addr), &reply))
		return 1;
	printf("%" PRIu64 "\n", reply.r.ep_connect_ret.handle);
	return 0;
}

static int ep_poll(uint64_t th, uint64_t ep, uint32_t ms)
{
	struct msg m = { 0 };
	struct uev reply;

	m.ev.type = UEV_EP_POLL;
	m.ev.transport_handle = th;
	m.ev.u.ep_poll.ep_handle = ep;
	m.ev.u.ep_poll.timeout_ms = ms;
	if (nl_request(&m, sizeof(m.ev), &reply))
		return 1;
	printf("%d\n", reply.r.retcode);
	return 0;
}

static int ep_disconnect(uint64_t th, uint64_t ep)
{
	struct msg m = { 0 };
	struct uev reply;

	m.ev.type = UEV_EP_DISCONNECT;
	m.ev.transport_handle = th;
	m.ev.u.ep_disconnect.ep_handle = ep;
	return nl_request(&m, sizeof(m.ev), &reply);
}

static int print_usage(void)
{
	fprintf(stderr,
		"usage: iscsi_ep connect TRANSPORT ADDR PORT\n"
		"       iscsi_ep poll TRANSPORT HANDLE MS\n"
		"       iscsi_ep disconnect TRANSPORT HANDLE\n");
	return 1;
}

int main(int argc, char **argv)
{
	uint64_t th;

	if (argc < 3)
		return print_usage();
	if (transport_handle(argv[2], &th))
		return 1;
	if (!strcmp(argv[1], "connect") && argc == 5)
		return ep_connect(th, argv[3], argv[4]);
	if (!strcmp(argv[1], "poll") && argc == 5)
		return ep_poll(th, strtoull(argv[3], NULL, 0),
			       (uint32_t)strtoul(argv[4], NULL, 0));
	if (!strcmp(argv[1], "disconnect") && argc == 4)
		return ep_disconnect(th, strtoull(argv[3], NULL, 0));
	return print_usage();
}
