// SPDX-License-Identifier: GPL-2.0
/*
 * memfrag: leave the guest's free memory in single pages, so that a
 * higher-order allocation the kernel cannot sleep for (GFP_ATOMIC) fails.
 *
 *   memfrag STOP_KB ORDER
 *
 * Touches anonymous 4 KiB pages (no transparent huge pages) until the DMA32
 * and Normal zones have no free block of ORDER or more (/proc/buddyinfo),
 * or their free memory (/proc/zoneinfo) drops below STOP_KB. The page
 * allocator hands out the smallest free block first, so the larger blocks
 * are split last.
 * Then every page with an odd frame number is given back (MADV_DONTNEED;
 * the frames from /proc/self/pagemap, which shows them to root): each
 * freed page has its buddy, the even frame next to it, still in use, so
 * none of them can merge into a block of order 1 or more. The pages kept
 * are locked (mlock2 MLOCK_ONFAULT), which keeps compaction from moving
 * them while /proc/sys/vm/compact_unevictable_allowed is 0 (the caller
 * sets it).
 * Prints "ready KEPT_KB FREED_KB" and waits for SIGTERM or SIGINT.
 *
 * The caller lowers /proc/sys/vm/min_free_kbytes first, so that the pages
 * never handed out stay few, and drops the page cache.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 0x01
#endif

#define CHUNK	(64UL << 20)
#define MAX_CHUNKS 1024
#define PG	4096UL

/*
 * Free KiB of the zones a process's pages come from: DMA32 and Normal
 * (/proc/zoneinfo). The DMA zone's free pages count in MemFree too, but
 * its lowmem reserve keeps them from user allocations, so MemFree never
 * gets low before the OOM killer runs.
 */
static long zones_free_kb(void)
{
	char line[256], zone[32] = "";
	long pages, sum = 0;
	FILE *f = fopen("/proc/zoneinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %*d, zone %31s", zone) == 1)
			continue;
		if ((!strcmp(zone, "DMA32") || !strcmp(zone, "Normal")) &&
		    sscanf(line, " pages free %ld", &pages) == 1)
			sum += pages;
	}
	fclose(f);
	return sum * (long)(PG / 1024);
}

/* Free blocks of @order or more in the DMA32 and Normal zones. */
static long big_blocks(int order)
{
	char line[512], zone[32];
	long sum = 0;
	FILE *f = fopen("/proc/buddyinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line;
		int n, i;

		if (sscanf(line, "Node %*d, zone %31s%n", zone, &n) != 1)
			continue;
		if (strcmp(zone, "DMA32") && strcmp(zone, "Normal"))
			continue;
		p += n;
		for (i = 0; ; i++) {
			long count;
			int used;

			if (sscanf(p, "%ld%n", &count, &used) != 1)
				break;
			if (i >= order)
				sum += count;
			p += used;
		}
	}
	fclose(f);
	return sum;
}

static sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
}

int main(int argc, char **argv)
{
	static char *chunk[MAX_CHUNKS];
	static size_t used[MAX_CHUNKS];
	static uint64_t map[CHUNK / PG];
	unsigned long kept = 0, freed = 0;
	long stop_kb, order;
	size_t n = 0, i, off;
	int done = 0, pm;

	stop_kb = argc == 3 ? strtol(argv[1], NULL, 10) : 0;
	order = argc == 3 ? strtol(argv[2], NULL, 10) : 0;
	if (stop_kb <= 0 || order <= 0) {
		fprintf(stderr, "usage: memfrag STOP_KB ORDER\n");
		return 2;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	while (!done && n < MAX_CHUNKS) {
		chunk[n] = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				-1, 0);
		if (chunk[n] == MAP_FAILED) {
			fprintf(stderr, "memfrag: mmap: %s\n", strerror(errno));
			return 1;
		}
		madvise(chunk[n], CHUNK, MADV_NOHUGEPAGE);
		for (off = 0; off < CHUNK; off += PG) {
			/*
			 * every 256 KiB: stop once no free block of @order
			 * or more is left, or free memory is down to @stop_kb
			 */
			if (!(off & ((256UL << 10) - 1)) &&
			    (big_blocks(order) == 0 ||
			     zones_free_kb() < stop_kb)) {
				done = 1;
				break;
			}
			chunk[n][off] = 1;
		}
		used[n++] = off;
	}
	pm = open("/proc/self/pagemap", O_RDONLY);
	if (pm < 0) {
		fprintf(stderr, "memfrag: pagemap: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < n; i++) {
		size_t pages = used[i] / PG, p;
		off_t at = (off_t)((uintptr_t)chunk[i] / PG) * 8;

		if (pread(pm, map, pages * 8, at) != (ssize_t)(pages * 8)) {
			fprintf(stderr, "memfrag: pagemap read: %s\n",
				strerror(errno));
			return 1;
		}
		for (p = 0; p < pages; p++) {
			/* bit 63: present; bits 0-54: the page frame */
			if (!(map[p] >> 63) || !(map[p] & 1))
				continue;
			if (madvise(chunk[i] + p * PG, PG, MADV_DONTNEED)) {
				fprintf(stderr, "memfrag: madvise: %s\n",
					strerror(errno));
				return 1;
			}
			freed += PG / 1024;
		}
		kept += used[i] / 1024;
		if (syscall(SYS_mlock2, chunk[i], used[i], MLOCK_ONFAULT))
			fprintf(stderr, "memfrag: mlock2: %s (pages stay movable)\n",
				strerror(errno));
	}
	close(pm);
	kept -= freed;
	printf("ready %lu %lu\n", kept, freed);
	fflush(stdout);
	while (!__atomic_load_n(&stop, __ATOMIC_SEQ_CST))
		pause();
	return 0;
}
