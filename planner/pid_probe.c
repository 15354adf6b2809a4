/* pid_probe.c - a running deployment's segment, processes and page tables,
 * read from /proc. See pid_probe.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "pid_probe.h"
#include "units.h"

#define FMT(b) units_format_bytes((b), (char[32]){ 0 }, 32)
#define CANDIDATE_MIN_BYTES MIB
#define PAGEMAP_BATCH 65536 /* entries read at once: 512 KiB */

/* One mapping as /proc/P/smaps describes it. */
struct vma {
	uint64_t start, end;
	char perms[5];
	char dev_inode[64];
	char name[256];
	uint64_t kernel_page_bytes;
	uint64_t pmd_mapped_bytes;
	bool hugetlb;
};

struct vma_list {
	struct vma *v;
	size_t count, cap;
};

/* Parse /proc/P/smaps. 0, or -1 with errno (e.g. ENOENT: the process is gone). */
static int read_vmas(pid_t pid, struct vma_list *l)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	struct vma *cur = NULL;

	l->v = NULL;
	l->count = l->cap = 0;
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long s, e, off, ino, v;
		char perms[8], dev[32];
		int name_at = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %31s %llu %n", &s, &e, perms, &off, dev, &ino, &name_at) >= 6 &&
		    strlen(perms) == 4) {
			if (l->count == l->cap) {
				size_t nc = l->cap ? l->cap * 2 : 64;
				struct vma *n = realloc(l->v, nc * sizeof(*n));

				if (!n) {
					free(line);
					fclose(f);
					errno = ENOMEM;
					return -1;
				}
				l->v = n;
				l->cap = nc;
			}
			cur = &l->v[l->count++];
			memset(cur, 0, sizeof(*cur));
			cur->start = s;
			cur->end = e;
			memcpy(cur->perms, perms, 5);
			snprintf(cur->dev_inode, sizeof(cur->dev_inode), "%s %llu", dev, ino);
			snprintf(cur->name, sizeof(cur->name), "%s", name_at ? line + name_at : "");
			cur->kernel_page_bytes = 4096;
			continue;
		}
		if (!cur)
			continue;
		if (sscanf(line, "KernelPageSize: %llu kB", &v) == 1)
			cur->kernel_page_bytes = v * 1024;
		else if (sscanf(line, "AnonHugePages: %llu kB", &v) == 1 ||
			 sscanf(line, "ShmemPmdMapped: %llu kB", &v) == 1 ||
			 sscanf(line, "FilePmdMapped: %llu kB", &v) == 1)
			cur->pmd_mapped_bytes += v * 1024;
		else if (strncmp(line, "VmFlags:", 8) == 0)
			cur->hugetlb = strstr(line, " ht") != NULL;
	}
	free(line);
	fclose(f);
	return 0;
}

static bool read_comm_ppid(pid_t pid, char *comm, size_t len, pid_t *ppid)
{
	char path[64], buf[512], *open_p, *close_p;
	FILE *f;
	size_t n;
	int pp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	open_p = strchr(buf, '(');
	close_p = strrchr(buf, ')');
	if (!open_p || !close_p || close_p < open_p || sscanf(close_p + 1, " %*c %d", &pp) != 1)
		return false;
	*close_p = '\0';
	snprintf(comm, len, "%s", open_p + 1);
	/* A process names itself: no control characters in a table. */
	for (char *c = comm; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	*ppid = pp;
	return true;
}

static int64_t read_vmpte(pid_t pid)
{
	char path[64], line[256];
	FILE *f;
	long long kb = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPTE: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/* PID's descendants, depth first, from one scan of /proc. */
static pid_t *descendants(pid_t root, size_t *count)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t *pids = NULL, *ppids = NULL, *out = NULL;
	size_t n = 0, cap = 0, nout = 0;

	*count = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		char comm[32];
		pid_t pp;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (!read_comm_ppid((pid_t)atoi(e->d_name), comm, sizeof(comm), &pp))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 1024;
			pid_t *a = realloc(pids, nc * sizeof(*a)), *b;

			if (!a)
				break;
			pids = a;
			if (!(b = realloc(ppids, nc * sizeof(*b))))
				break;
			ppids = b;
			cap = nc;
		}
		pids[n] = (pid_t)atoi(e->d_name);
		ppids[n++] = pp;
	}
	closedir(d);
	out = malloc((n + 1) * sizeof(*out));
	if (out) {
		/* Breadth-first over the parent links: out[] is the queue. */
		size_t head = 0;
		pid_t cur = root;

		for (;;) {
			for (size_t i = 0; i < n; i++)
				if (ppids[i] == cur && pids[i] != root)
					out[nout++] = pids[i];
			if (head >= nout)
				break;
			cur = out[head++];
		}
	}
	free(pids);
	free(ppids);
	*count = nout;
	return out;
}

static int add_range(struct pt_range **r, size_t *count, size_t *cap, uint64_t s, uint64_t e, const char *name)
{
	if (*count && (*r)[*count - 1].end == s && (*r)[*count - 1].name == name) {
		(*r)[*count - 1].end = e;
		return 0;
	}
	if (*count == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct pt_range *n = realloc(*r, nc * sizeof(*n));

		if (!n)
			return -1;
		*r = n;
		*cap = nc;
	}
	(*r)[(*count)++] = (struct pt_range){ s, e, name };
	return 0;
}

/* Present runs of [start, end) in pagemap, added to *r as ranges
 * [addr - base, ...). -1 with errno on a read error. */
static int present_runs(int fd, uint64_t *buf, uint64_t start, uint64_t end, uint64_t base, const char *name,
			struct pt_range **r, size_t *count, size_t *cap, uint64_t *bytes)
{
	for (uint64_t a = start; a < end;) {
		uint64_t pages = (end - a) / 4096, run_s = 0;
		bool in_run = false;
		ssize_t got;

		if (pages > PAGEMAP_BATCH)
			pages = PAGEMAP_BATCH;
		got = pread(fd, buf, pages * 8, (off_t)(a / 4096 * 8));
		if (got < 0)
			return -1;
		if (got == 0)
			break;
		pages = (uint64_t)got / 8;
		for (uint64_t i = 0; i < pages; i++) {
			bool present = (buf[i] >> 62) & 3; /* present or swapped */
			uint64_t at = a + i * 4096;

			if (present && !in_run) {
				run_s = at;
				in_run = true;
			} else if (!present && in_run) {
				if (add_range(r, count, cap, run_s - base, at - base, name) < 0)
					return -1;
				*bytes += at - run_s;
				in_run = false;
			}
		}
		a += pages * 4096;
		if (in_run) {
			if (add_range(r, count, cap, run_s - base, a - base, name) < 0)
				return -1;
			*bytes += a - run_s;
		}
	}
	return 0;
}

/* Distinct spans per level over address-ordered runs, by leaf size. */
struct span_count {
	uint64_t pages[3];
	uint64_t last[3];
	bool have[3];
};

static void count_run(struct span_count *sc, uint64_t s, uint64_t e, uint64_t leaf)
{
	static const uint64_t span[3] = { PT_PTE_SPAN, PT_PMD_SPAN, PT_PUD_SPAN };

	for (int l = 0; l < 3; l++) {
		uint64_t first = s / span[l], last = (e - 1) / span[l];

		/* A 2 MiB leaf needs no PTE page, a 1 GiB leaf no PMD page. */
		if ((l == 0 && leaf >= PT_PTE_SPAN) || (l == 1 && leaf >= PT_PMD_SPAN))
			continue;
		if (sc->have[l] && first <= sc->last[l])
			first = sc->last[l] + 1;
		if (last >= first)
			sc->pages[l] += last - first + 1;
		if (!sc->have[l] || last > sc->last[l])
			sc->last[l] = last;
		sc->have[l] = true;
	}
}

static enum pt_mode mode_of(const struct pid_probe *p)
{
	if (strncmp(p->seg_name, "/dev/dax", 8) == 0)
		return p->seg_page_bytes >= GIB ? PT_MODE_DAX_1G : PT_MODE_DAX_2M;
	if (p->seg_hugetlb)
		return p->seg_page_bytes >= GIB ? PT_MODE_HUGETLB_1G : PT_MODE_HUGETLB_2M;
	if (p->seg_pmd_mapped_bytes)
		return PT_MODE_DAX_2M;
	return PT_MODE_4K;
}

/* One process: VmPTE, presence, reconstruction. 1 if it does not map the
 * segment, 0 done, -1 unreadable (reason in err). */
static int probe_one(struct pid_probe *p, pid_t pid, struct probe_proc *out, uint64_t *buf, char *err, size_t len)
{
	struct vma_list l;
	struct vma *seg = NULL;
	char path[64];
	int fd, rc = 0;
	size_t cap_t = 0, cap_a = 0;
	uint64_t other_bytes = 0;
	struct span_count own = { 0 }, all = { 0 };
	struct pt_range *scratch = NULL;
	size_t scratch_count = 0, cap_s = 0;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	if (!read_comm_ppid(pid, out->comm, sizeof(out->comm), &out->ppid) || read_vmas(pid, &l) < 0) {
		snprintf(err, len, "pid %d: %s", (int)pid, strerror(errno));
		return -1;
	}
	/* The segment by what it is (device and inode), not by address:
	 * processes may map it elsewhere. Of several mappings of it, the one
	 * at the reference address, else the largest. */
	for (size_t i = 0; i < l.count; i++) {
		struct vma *v = &l.v[i];

		if (strcmp(v->dev_inode, p->seg_dev_inode) != 0 || v->start >= PT_USER_VA_END)
			continue;
		out->vmas++;
		if (!seg || (v->start == p->seg_start && seg->start != p->seg_start) ||
		    (seg->start != p->seg_start && v->end - v->start > seg->end - seg->start))
			seg = v;
	}
	if (!seg) {
		free(l.v);
		return 1;
	}
	out->seg_start = seg->start;
	out->seg_end = seg->end;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(err, len, "pid %d (%s): %s: %s", (int)pid, out->comm, path, strerror(errno));
		free(l.v);
		return -1;
	}
	out->vmpte_bytes = read_vmpte(pid);
	for (size_t i = 0; i < l.count && rc == 0; i++) {
		struct vma *v = &l.v[i];
		size_t before = out->touch_count;
		uint64_t leaf = v->hugetlb ? v->kernel_page_bytes : 4096;
		const char *name;

		if (v->start >= PT_USER_VA_END)
			continue; /* [vsyscall]: not in the process's page tables */
		/* PROT_NONE (guards, reservations, sanitizer shadows of
		 * terabytes): no page is mapped there; not read. */
		if (v != seg && strncmp(v->perms, "---", 3) == 0)
			continue;
		if (v == seg) {
			rc = present_runs(fd, buf, v->start, v->end, v->start, NULL, &out->touch, &out->touch_count,
					  &cap_t, &out->touched_bytes);
			if (p->seg_mode == PT_MODE_HUGETLB_2M || p->seg_mode == PT_MODE_HUGETLB_1G)
				leaf = p->seg_page_bytes;
			for (size_t k = before; rc == 0 && k < out->touch_count; k++)
				count_run(&all, v->start + out->touch[k].start, v->start + out->touch[k].end, leaf);
			continue;
		}
		/* Pages present now: the page-table pages they need. */
		scratch_count = 0;
		rc = present_runs(fd, buf, v->start, v->end, 0, NULL, &scratch, &scratch_count, &cap_s, &other_bytes);
		for (size_t k = 0; rc == 0 && k < scratch_count; k++) {
			static const uint64_t span[3] = { PT_PTE_SPAN, PT_PMD_SPAN, PT_PUD_SPAN };

			count_run(&own, scratch[k].start, scratch[k].end, leaf);
			count_run(&all, scratch[k].start, scratch[k].end, leaf);
			for (int lv = 0; lv < 3; lv++) {
				uint64_t lo = units_align_down(p->seg_start, span[lv]);
				uint64_t hi = units_align_down(p->seg_end - 1, span[lv]) + span[lv];

				if (scratch[k].start < p->seg_start && scratch[k].end > lo)
					out->own_at_edges[lv] |= 1;
				if (scratch[k].end > p->seg_end && scratch[k].start < hi)
					out->own_at_edges[lv] |= 2;
			}
		}
		/* What lies around the segment: every mapping with access
		 * rights. Its page-table pages are taken to exist: pages in it
		 * were touched at some time, and a page-table page stays when
		 * its pages are freed or evicted (presence alone would miss
		 * those). PROT_NONE mappings (guards, reservations) have none. */
		if (rc == 0 && strncmp(v->perms, "---", 3) != 0) {
			char **names = realloc(out->names, (out->name_count + 1) * sizeof(*names));

			if (!names || !(names[out->name_count] = strdup(v->name[0] ? v->name : "[anonymous]"))) {
				if (names)
					out->names = names;
				errno = ENOMEM;
				rc = -1;
				break;
			}
			out->names = names;
			name = names[out->name_count++];
			if (add_range(&out->around, &out->around_count, &cap_a, v->start, v->end, name) < 0)
				rc = -1;
		}
		if (v->pmd_mapped_bytes && !v->hugetlb)
			out->other_pmd_mapped_bytes += v->pmd_mapped_bytes;
	}
	if (rc < 0)
		snprintf(err, len, "pid %d (%s): reading %s: %s", (int)pid, out->comm, path, strerror(errno));
	close(fd);
	free(l.v);
	free(scratch);
	memcpy(out->own_pages, own.pages, sizeof(own.pages));
	memcpy(out->all_pages, all.pages, sizeof(all.pages));
	if (rc == 0 && out->vmpte_bytes < 0) {
		snprintf(err, len, "pid %d (%s): no VmPTE in /proc/%d/status (gone, or a kernel thread)", (int)pid,
			 out->comm, (int)pid);
		rc = -1;
	}
	return rc;
}

static void free_proc(struct probe_proc *q)
{
	for (size_t k = 0; k < q->name_count; k++)
		free(q->names[k]);
	free(q->names);
	free(q->around);
	free(q->touch);
}

/* Choose the segment among pid's mappings. 0, or -1 with err. */
static int choose_segment(struct pid_probe *p, pid_t pid, uint64_t segment, bool from_child, char *err, size_t len)
{
	struct vma_list l;
	struct vma *pick = NULL;

	if (read_vmas(pid, &l) < 0) {
		snprintf(err, len, "cannot read /proc/%d/smaps: %s%s", (int)pid, strerror(errno),
			 !(errno == EACCES || errno == EPERM) ? ""
			 : geteuid() == 0 ? " (refused to root too: a process of another PID or user namespace, or "
					    "one ptrace access rules protect; it cannot be probed from here)"
					  : " (run as the processes' owner or as root)");
		return -1;
	}
	free(p->cands);
	p->cands = NULL;
	p->cand_count = 0;
	for (size_t i = 0; i < l.count; i++) {
		struct vma *v = &l.v[i];

		if (v->perms[3] == 's' && v->end - v->start >= CANDIDATE_MIN_BYTES && v->start < PT_USER_VA_END) {
			struct probe_candidate *n = realloc(p->cands, (p->cand_count + 1) * sizeof(*n));

			if (!n)
				break;
			p->cands = n;
			n = &p->cands[p->cand_count++];
			n->start = v->start;
			n->end = v->end;
			memcpy(n->perms, v->perms, 5);
			snprintf(n->name, sizeof(n->name), "%s", v->name[0] ? v->name : "[anonymous]");
			if (!pick || v->end - v->start > pick->end - pick->start)
				pick = segment ? pick : v;
		}
		if (segment && segment >= v->start && segment < v->end)
			pick = v;
	}
	/* Largest first. */
	for (size_t i = 1; i < p->cand_count; i++)
		for (size_t j = i; j > 0 && p->cands[j].end - p->cands[j].start >
					     p->cands[j - 1].end - p->cands[j - 1].start; j--) {
			struct probe_candidate t = p->cands[j];

			p->cands[j] = p->cands[j - 1];
			p->cands[j - 1] = t;
		}
	if (!pick) {
		if (segment)
			snprintf(err, len, "--segment 0x%" PRIx64 ": no mapping of pid %d contains that address",
				 segment, (int)pid);
		else
			snprintf(err, len, "pid %d has no shared mapping of 1 MiB or more (no 's' in /proc/%d/maps)",
				 (int)pid, (int)pid);
		free(l.v);
		return -1;
	}
	p->seg_start = pick->start;
	p->seg_end = pick->end;
	memcpy(p->seg_perms, pick->perms, 5);
	snprintf(p->seg_name, sizeof(p->seg_name), "%s", pick->name[0] ? pick->name : "[anonymous]");
	snprintf(p->seg_dev_inode, sizeof(p->seg_dev_inode), "%s", pick->dev_inode);
	p->seg_page_bytes = pick->kernel_page_bytes;
	p->seg_hugetlb = pick->hugetlb;
	p->seg_pmd_mapped_bytes = pick->pmd_mapped_bytes;
	p->seg_mode = mode_of(p);
	if (segment)
		snprintf(p->why, sizeof(p->why), "the mapping containing --segment 0x%" PRIx64 "%s", segment,
			 pick->perms[3] == 's' ? "" : " (a PRIVATE mapping: its pages are not shared)");
	else if (p->cand_count > 1)
		snprintf(p->why, sizeof(p->why), "the largest of %zu shared mappings of 1 MiB or more in pid %d%s "
			 "(next: %s, %s); --segment ADDR takes another", p->cand_count, (int)pid,
			 from_child ? ", a child of --pid (--pid itself has none)" : "",
			 FMT(p->cands[1].end - p->cands[1].start), p->cands[1].name);
	else
		snprintf(p->why, sizeof(p->why), "the only shared mapping of 1 MiB or more in pid %d%s", (int)pid,
			 from_child ? ", a child of --pid (--pid itself has none)" : "");
	free(l.v);
	return 0;
}

/* Mappings of dev_inode in pid's maps (cheap: /proc/P/maps, not smaps);
 * -1 when the maps cannot be read. */
static int maps_count(pid_t pid, const char *dev_inode, uint64_t *first_start)
{
	char path[64], line[1024];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off, ino;
		char perms[8], dev[32], id[64];

		if (!strchr(line, '\n') && !feof(f)) {
			/* a name longer than the buffer: skip the rest of the line */
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
		}
		if (sscanf(line, "%llx-%llx %7s %llx %31s %llu", &s, &e, perms, &off, dev, &ino) != 6)
			continue;
		snprintf(id, sizeof(id), "%s %llu", dev, ino);
		if (strcmp(id, dev_inode) == 0 && s < PT_USER_VA_END) {
			if (!n && first_start)
				*first_start = s;
			n++;
		}
	}
	fclose(f);
	return n;
}

/* Every process in /proc, ascending. */
static pid_t *all_pids(size_t *count)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t *v = NULL;
	size_t n = 0, cap = 0;

	*count = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 1024;
			pid_t *x = realloc(v, nc * sizeof(*x));

			if (!x)
				break;
			v = x;
			cap = nc;
		}
		v[n++] = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	*count = n;
	return v;
}

/* /proc/sysvipc/shm: the size, attach count and hugetlb-ness of a segment
 * id. 0, or -1 when there is no such segment. */
static int sysv_lookup(int64_t shmid, uint64_t *size, int64_t *nattch)
{
	FILE *f = fopen("/proc/sysvipc/shm", "re");
	char line[512];
	int rc = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		long long key, id, cpid, lpid, na;
		unsigned perms;
		unsigned long long sz;

		if (sscanf(line, "%lld %lld %o %llu %lld %lld %lld", &key, &id, &perms, &sz, &cpid, &lpid, &na) == 7 &&
		    id == shmid) {
			*size = sz;
			*nattch = na;
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

/* Is the file at name on DAX (statx's STATX_ATTR_DAX) or a device-DAX node? */
static bool name_on_dax(const char *name)
{
	struct statx stx;

	if (strncmp(name, "/dev/dax", 8) == 0)
		return true;
	if (name[0] != '/' || strstr(name, " (deleted)"))
		return false;
	if (statx(AT_FDCWD, name, 0, STATX_BASIC_STATS, &stx) != 0)
		return false;
	return (stx.stx_attributes_mask & 0x00200000) && (stx.stx_attributes & 0x00200000); /* STATX_ATTR_DAX */
}

/* The SysV segments pid attaches (names /SYSV..., inode = shmid). */
static void list_sysv(struct pid_probe *p, pid_t pid)
{
	struct vma_list l;

	if (read_vmas(pid, &l) < 0)
		return;
	for (size_t i = 0; i < l.count; i++) {
		const struct vma *v = &l.v[i];
		unsigned long long ino;
		char dev[32];
		bool seen = false;

		if (strncmp(v->name, "/SYSV", 5) != 0 || sscanf(v->dev_inode, "%31s %llu", dev, &ino) != 2)
			continue;
		for (size_t k = 0; k < p->sysv_count; k++)
			seen |= p->sysv[k].shmid == (int64_t)ino;
		if (seen || p->sysv_count == sizeof(p->sysv) / sizeof(p->sysv[0]))
			continue;
		p->sysv[p->sysv_count].shmid = (int64_t)ino;
		p->sysv[p->sysv_count].hugetlb = v->hugetlb;
		if (sysv_lookup((int64_t)ino, &p->sysv[p->sysv_count].size, &p->sysv[p->sysv_count].nattch) < 0) {
			p->sysv[p->sysv_count].size = v->end - v->start;
			p->sysv[p->sysv_count].nattch = -1;
		}
		p->sysv_count++;
	}
	free(l.v);
}

/* The first process (lowest pid) mapping dev_inode, and where. */
static pid_t first_mapper(const char *dev_inode, const pid_t *pids, size_t n, uint64_t *addr, size_t *unreadable)
{
	*unreadable = 0;
	for (size_t i = 0; i < n; i++) {
		int c;

		if (pids[i] == getpid())
			continue;
		c = maps_count(pids[i], dev_inode, addr);
		if (c < 0)
			(*unreadable)++;
		else if (c > 0)
			return pids[i];
	}
	return 0;
}

int pid_probe_run(const struct probe_target *t, struct pid_probe *p, char *err, size_t err_len)
{
	pid_t *kids = NULL, *pids = NULL, pid = t->pid;
	size_t nkids = 0, npids = 0;
	uint64_t *buf;
	char why[256];
	struct timespec t0;
	uint64_t segment = t->segment;

	memset(p, 0, sizeof(*p));
	p->shmid = p->nattch = -1;
	p->root = geteuid() == 0;
	pids = all_pids(&npids);
	if (!pids) {
		snprintf(err, err_len, "cannot read /proc");
		return -1;
	}
	if (t->by_shmid || t->file) {
		/* Find a process that maps it; it is the reference. */
		char id[96];
		size_t unreadable;
		uint64_t addr = 0;

		if (t->by_shmid) {
			uint64_t size;
			int64_t na;

			if (sysv_lookup(t->shmid, &size, &na) < 0) {
				snprintf(err, err_len, "no SysV shared memory segment with id %" PRId64 " (see ipcs -m)",
					 t->shmid);
				free(pids);
				return -1;
			}
			/* A SysV segment's inode is its id; its device is the
			 * internal shm mount's: any device. */
			pid = 0;
			for (size_t i = 0; i < npids && !pid; i++) {
				struct vma_list l;

				if (pids[i] == getpid() || read_vmas(pids[i], &l) < 0)
					continue;
				for (size_t k = 0; k < l.count && !pid; k++) {
					unsigned long long ino;
					char dev[32];

					if (strncmp(l.v[k].name, "/SYSV", 5) == 0 &&
					    sscanf(l.v[k].dev_inode, "%31s %llu", dev, &ino) == 2 &&
					    (int64_t)ino == t->shmid) {
						pid = pids[i];
						addr = l.v[k].start;
					}
				}
				free(l.v);
			}
			if (!pid) {
				snprintf(err, err_len, "SysV segment %" PRId64 " (%s) is attached %" PRId64 " time(s) but no "
					 "process whose maps can be read maps it%s", t->shmid, FMT(size), na,
					 p->root ? "" : " (run as root or as the database's owner)");
				free(pids);
				return -1;
			}
		} else {
			struct stat st;

			if (stat(t->file, &st) < 0) {
				snprintf(err, err_len, "--file %s: %s", t->file, strerror(errno));
				free(pids);
				return -1;
			}
			snprintf(id, sizeof(id), "%02x:%02x %llu", major(st.st_dev), minor(st.st_dev),
				 (unsigned long long)st.st_ino);
			pid = first_mapper(id, pids, npids, &addr, &unreadable);
			if (!pid) {
				snprintf(err, err_len, "--file %s: no process maps it (%zu process(es) could not be read%s)",
					 t->file, unreadable, p->root ? "" : "; run as root or as the database's owner");
				free(pids);
				return -1;
			}
		}
		segment = addr;
	}
	p->pid = pid;
	if (kill(pid, 0) < 0 && errno == ESRCH) {
		snprintf(err, err_len, "no such process");
		free(pids);
		return -1;
	}
	kids = descendants(pid, &nkids);
	p->descendants = nkids;
	if (choose_segment(p, pid, segment, false, err, err_len) < 0) {
		/* A launcher (e.g. `mshare-bench run`'s parent) may leave the
		 * mapping to its children. */
		bool found = false;

		for (size_t i = 0; !segment && kids && i < nkids && !found; i++)
			found = choose_segment(p, kids[i], 0, true, why, sizeof(why)) == 0;
		if (!found) {
			free(kids);
			free(pids);
			return -1;
		}
	}
	if (t->by_shmid)
		snprintf(p->why, sizeof(p->why), "--shmid %" PRId64 ", as pid %d maps it", t->shmid, (int)pid);
	else if (t->file)
		snprintf(p->why, sizeof(p->why), "--file %s, as pid %d maps it", t->file, (int)pid);
	p->on_dax = name_on_dax(p->seg_name) || (t->file && name_on_dax(t->file));
	if (strncmp(p->seg_name, "/SYSV", 5) == 0) {
		unsigned long long ino;
		char dev[32];
		uint64_t size;

		if (sscanf(p->seg_dev_inode, "%31s %llu", dev, &ino) == 2 && sysv_lookup((int64_t)ino, &size, &p->nattch) == 0)
			p->shmid = (int64_t)ino;
	}
	list_sysv(p, pid);
	buf = malloc(PAGEMAP_BATCH * 8);
	p->procs = calloc(npids + 1, sizeof(*p->procs));
	if (!buf || !p->procs) {
		free(buf);
		free(kids);
		free(pids);
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	/* Every process on the host that maps the segment, whatever its
	 * parent: Oracle's background and server processes are children of
	 * PID 1, not of one another. pid first, then ascending. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i <= npids; i++) {
		pid_t q = i == 0 ? pid : pids[i - 1];
		struct probe_proc *pp;
		struct timespec now;
		int c, rc;

		if (i > 0 && (q == pid || q == getpid()))
			continue;
		p->scanned++;
		c = maps_count(q, p->seg_dev_inode, NULL);
		if (c < 0) {
			/* Gone, or another user's (not root): its maps are closed. */
			if (kill(q, 0) == 0 || errno == EPERM)
				p->maps_unreadable++;
			continue;
		}
		if (c == 0) {
			for (size_t k = 0; k < nkids; k++)
				p->skipped_unmapped += kids[k] == q;
			continue;
		}
		pp = &p->procs[p->proc_count];
		rc = probe_one(p, q, pp, buf, why, sizeof(why));
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= 2) {
			fprintf(stderr, "mshare-bench plan --pid: read %zu of %zu processes\n", i + 1, npids + 1);
			t0 = now;
		}
		if (rc == 0) {
			pp->descendant = q == pid;
			for (size_t k = 0; k < nkids && !pp->descendant; k++)
				pp->descendant = kids[k] == q;
			p->outside_tree += !pp->descendant;
			p->vmas_found += pp->vmas;
			p->proc_count++;
			continue;
		}
		free_proc(pp);
		if (rc < 0) {
			p->skipped_unreadable++;
			if (!p->unreadable_example[0])
				snprintf(p->unreadable_example, sizeof(p->unreadable_example), "%s", why);
		}
	}
	free(buf);
	free(kids);
	free(pids);
	if (p->proc_count == 0) {
		snprintf(err, err_len, "no process mapping the segment could be read%s%s",
			 p->unreadable_example[0] ? ": " : "", p->unreadable_example);
		return -1;
	}
	return 0;
}

void pid_probe_free(struct pid_probe *p)
{
	for (size_t i = 0; i < p->proc_count; i++)
		free_proc(&p->procs[i]);
	free(p->procs);
	free(p->cands);
	memset(p, 0, sizeof(*p));
}
