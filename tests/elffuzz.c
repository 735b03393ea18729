// SPDX-License-Identifier: GPL-2.0-or-later
/* elffuzz.c - run fortstat on mutated copies of an ELF executable and check how it answers. */
/*
 * Usage: elffuzz FORTSTAT FIXTURE WORKDIR FIRST_SEED COUNT [FORTSTAT-OPTION]...
 *
 * For each seed, a copy of FIXTURE is mutated deterministically (byte flips,
 * a truncation, a field of the ELF header, of a program header, of a
 * section header or of a .symtab entry), run directly (execve, no shell, with a timeout) to learn
 * what the kernel makes of it, then run under fortstat with a timeout.
 * Demands:
 *  - fortstat is never killed by a signal and never hangs (a mutant that
 *    hangs when run directly is not run under fortstat): hung is still
 *    running after 15 s with 10 s of CPU used by fortstat and its children,
 *    or after 120 s whatever it used (a starved run is no hang);
 *  - a refusal (status 125, 126 or 127 without a report) is exactly one
 *    line, "fortstat: ..." with a reason after the path, never "not an ELF
 *    file" for a file that starts with the ELF magic, never the tracer's
 *    "no free address range" (a reason about the file belongs to the ELF
 *    reader);
 *  - a mutant that the kernel runs is either timed, with the same exit
 *    status as when run directly (when that run exits rather than
 *    crashes: a crash on garbage depends on the stack's layout, which
 *    differs under a tracer), or refused in one line.
 * Prints one line per failure (seed, mutation, what was wrong, fortstat's
 * stderr; for a hang, the state of fortstat and its children and, when gdb
 * is installed, fortstat's stacks) and a summary; the failing mutants are
 * kept in WORKDIR; the summary names the longest run under fortstat, with
 * its CPU time. The runs get PATH alone, and FORTSTAT_MECHANISM when it
 * is set (the traps' and the probes' runs of the test differ by it). With
 * ELFFUZZ_VERBOSE set, also one line for every other mutant. Exits 1
 * if any seed failed, 0 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RUN_TIMEOUT_MS 3000 /* the mutant run directly */
/*
 * The mutant under fortstat: a hang after FS_TIMEOUT_MS when fortstat and
 * its children have used FS_CPU_MS of CPU by then, else after FS_HARD_MS.
 * On a loaded machine a run is starved, not hung: a process that waits for
 * a CPU is in state R too (a spinning loop got 1.7 s of CPU in 15 s here
 * while six test suites ran on two CPUs).
 */
#define FS_TIMEOUT_MS 15000
#define FS_CPU_MS 10000
#define FS_HARD_MS 120000
#define ST_TIMEOUT (-1) /* run_wait: killed after the timeout */
#define ST_NOEXEC (-2)	/* run_wait: execve itself failed */

static uint64_t rng;
/*
 * The environment of every run: PATH, and the mechanism that the test
 * asks fortstat for (tests/e2e/probes/ and tests/e2e/ differ by it alone).
 */
static char *child_env[3] = {"PATH=/usr/bin:/bin", NULL, NULL};

static uint64_t next(void)
{
	/* xorshift64*: deterministic for a seed, the same on every machine. */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

struct field {
	const char *name;
	unsigned off, size;
};

/* Fields of Elf64_Ehdr. */
static const struct field ehdr_fields[] = {
    {"EI_MAG0", 0, 1},	    {"EI_MAG3", 3, 1},	  {"EI_CLASS", 4, 1},	   {"EI_DATA", 5, 1},
    {"EI_VERSION", 6, 1},   {"EI_OSABI", 7, 1},	  {"EI_ABIVERSION", 8, 1}, {"EI_PAD", 9, 1},
    {"e_type", 16, 2},	    {"e_machine", 18, 2}, {"e_version", 20, 4},	   {"e_entry", 24, 8},
    {"e_phoff", 32, 8},	    {"e_shoff", 40, 8},	  {"e_flags", 48, 4},	   {"e_ehsize", 52, 2},
    {"e_phentsize", 54, 2}, {"e_phnum", 56, 2},	  {"e_shentsize", 58, 2},  {"e_shnum", 60, 2},
    {"e_shstrndx", 62, 2},
};

/* Fields of Elf64_Phdr. */
static const struct field phdr_fields[] = {
    {"p_type", 0, 4},	{"p_flags", 4, 4},   {"p_offset", 8, 8}, {"p_vaddr", 16, 8},
    {"p_paddr", 24, 8}, {"p_filesz", 32, 8}, {"p_memsz", 40, 8}, {"p_align", 48, 8},
};

/* Fields of Elf64_Sym. */
static const struct field sym_fields[] = {
    {"st_name", 0, 4},	{"st_info", 4, 1},  {"st_other", 5, 1},
    {"st_shndx", 6, 2}, {"st_value", 8, 8}, {"st_size", 16, 8},
};

/* Fields of Elf64_Shdr. */
static const struct field shdr_fields[] = {
    {"sh_name", 0, 4},	     {"sh_type", 4, 4},	    {"sh_flags", 8, 8}, {"sh_addr", 16, 8},
    {"sh_offset", 24, 8},    {"sh_size", 32, 8},    {"sh_link", 40, 4}, {"sh_info", 44, 4},
    {"sh_addralign", 48, 8}, {"sh_entsize", 56, 8},
};

static uint64_t get_le(const unsigned char *p, unsigned size)
{
	uint64_t v = 0;

	for (unsigned i = size; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static void put_le(unsigned char *p, unsigned size, uint64_t v)
{
	for (unsigned i = 0; i < size; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

/* A new value for a field: an edge value, a neighbour of the old one, or random. */
static uint64_t new_value(uint64_t old, unsigned size)
{
	uint64_t mask = size == 8 ? ~0ull : (1ull << (8 * size)) - 1, v;

	switch (next() % 7) {
	case 0:
		v = 0;
		break;
	case 1:
		v = mask;
		break;
	case 2:
		v = old + 1;
		break;
	case 3:
		v = old - 1;
		break;
	case 4:
		v = old * 2 + 1;
		break;
	case 5:
		v = old ^ (1ull << (next() % (8 * size)));
		break;
	default:
		v = next();
		break;
	}
	v &= mask;
	return v == old ? (old ^ 1) & mask : v;
}

/* Set one field of the table `f` (n entries) of the record at `base`; describe it. */
static void mutate_field(unsigned char *b, size_t len, size_t base, const struct field *f, size_t n,
			 const char *what, char *desc, size_t dlen)
{
	const struct field *fl = &f[next() % n];
	uint64_t old, v;

	if (base + fl->off + fl->size > len) {
		snprintf(desc, dlen, "%s beyond the file: unchanged", what);
		return;
	}
	old = get_le(b + base + fl->off, fl->size);
	v = new_value(old, fl->size);
	put_le(b + base + fl->off, fl->size, v);
	snprintf(desc, dlen, "%s%s %#llx -> %#llx", what, fl->name, (unsigned long long)old,
		 (unsigned long long)v);
}

/* Mutate the image b[0..*len) for the current seed; describe the mutation in desc. */
static void mutate(unsigned char *b, size_t *len, char *desc, size_t dlen)
{
	size_t n = *len, head = n < 4096 ? n : 4096;
	uint64_t phoff = get_le(b + 32, 8), shoff = get_le(b + 40, 8);
	unsigned phnum = (unsigned)get_le(b + 56, 2), shnum = (unsigned)get_le(b + 60, 2);
	char what[48];
	int k, used = 0;

	switch (next() % 6) {
	case 0: /* byte flips, mostly in the headers */
	case 1:
		used = snprintf(desc, dlen, "flip");
		for (k = 1 + (int)(next() % 3); k > 0; k--) {
			size_t off = next() % 4 ? next() % head : next() % n;
			unsigned char x = (unsigned char)(1 + next() % 255);

			b[off] ^= x;
			used += snprintf(desc + used, dlen - (size_t)used, " %zu^%#x", off, x);
		}
		break;
	case 2: /* truncation */
		*len = next() % 2 ? next() % head : next() % n;
		snprintf(desc, dlen, "truncated to %zu bytes", *len);
		break;
	case 3:
		mutate_field(b, n, 0, ehdr_fields, sizeof(ehdr_fields) / sizeof(*ehdr_fields), "",
			     desc, dlen);
		break;
	case 4: /* a field of a .symtab entry (symbols are what fortstat patches) */
		snprintf(desc, dlen, "no .symtab: unchanged");
		for (unsigned i = 0; i < shnum && shoff + (uint64_t)(i + 1) * 64 <= n; i++) {
			const unsigned char *sh = b + shoff + (size_t)i * 64;
			uint64_t off = get_le(sh + 24, 8), size = get_le(sh + 32, 8);

			if (get_le(sh + 4, 4) != 2 /* SHT_SYMTAB */ || size < 48 || off > n ||
			    size > n - off)
				continue;
			k = (int)(1 + next() % (size / 24 - 1));
			snprintf(what, sizeof(what), "sym[%d].", k);
			mutate_field(b, n, off + (size_t)k * 24, sym_fields,
				     sizeof(sym_fields) / sizeof(*sym_fields), what, desc, dlen);
			break;
		}
		break;
	default:
		if (next() % 2 && phnum) {
			unsigned i = (unsigned)(next() % phnum);

			snprintf(what, sizeof(what), "phdr[%u].", i);
			mutate_field(b, n, phoff + (size_t)i * 56, phdr_fields,
				     sizeof(phdr_fields) / sizeof(*phdr_fields), what, desc, dlen);
		} else if (shnum) {
			unsigned i = (unsigned)(next() % shnum);

			snprintf(what, sizeof(what), "shdr[%u].", i);
			mutate_field(b, n, shoff + (size_t)i * 64, shdr_fields,
				     sizeof(shdr_fields) / sizeof(*shdr_fields), what, desc, dlen);
		}
		break;
	}
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/*
 * Where the hung fortstat `pid` is, by gdb when there is one (a hang seen
 * once in thousands of runs is gone when run again: its stacks are all
 * there is). Its lines go to stdout, "hung: " before each.
 */
static void say_stacks(pid_t pid)
{
	char spid[16], out[] = "/tmp/elffuzz-gdb.XXXXXX", line[512];
	int fd = mkstemp(out), status;
	long end = now_ms() + 20000;
	pid_t g;
	FILE *f;

	if (fd < 0)
		return;
	snprintf(spid, sizeof(spid), "%d", (int)pid);
	g = fork();
	if (g == 0) {
		int null = open("/dev/null", O_RDONLY);

		dup2(null, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execlp("gdb", "gdb", "-nx", "-batch", "-p", spid, "-ex", "thread apply all bt",
		       (char *)NULL);
		_exit(127);
	}
	close(fd);
	while (g > 0 && waitpid(g, &status, WNOHANG) == 0) {
		if (now_ms() > end) {
			kill(g, SIGKILL);
			waitpid(g, &status, 0);
			break;
		}
		usleep(20000);
	}
	f = fopen(out, "r");
	while (f && fgets(line, sizeof(line), f))
		if (line[0] == '#' || !strncmp(line, "Thread ", 7))
			printf("hung: %s", line);
	if (f)
		fclose(f);
	unlink(out);
}

/* Print what a hung process and its descendants are doing (state, wait channel). */
static void say_hung(pid_t pid, int depth)
{
	char path[64], buf[512], wchan[64] = "?";
	FILE *f;
	pid_t child;

	snprintf(path, sizeof(path), "/proc/%d/wchan", (int)pid);
	if ((f = fopen(path, "r"))) {
		if (!fgets(wchan, sizeof(wchan), f))
			wchan[0] = '\0';
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r"))) {
		if (fgets(buf, sizeof(buf), f)) {
			const char *rp = strrchr(buf, ')');
			unsigned long ut = 0, st = 0;
			long hz = sysconf(_SC_CLK_TCK);

			printf("hung: %*s%.80s wchan %s\n", 2 * depth, "", buf, wchan);
			/* spinning or starved: the CPU time it had (fields 14 and 15) */
			if (rp && hz > 0 &&
			    sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
				   &ut, &st) == 2)
				printf("hung: %*s  %.2f s user, %.2f s system\n", 2 * depth, "",
				       (double)ut / (double)hz, (double)st / (double)hz);
		}
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	if ((f = fopen(path, "r"))) {
		if (fgets(buf, sizeof(buf), f))
			printf("hung: %*s  syscall %s", 2 * depth, "", buf);
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	if (depth < 4 && (f = fopen(path, "r"))) {
		while (fscanf(f, "%d", &child) == 1)
			say_hung(child, depth + 1);
		fclose(f);
	}
}

/* CPU time (ms) of process pid and its descendants, the children it reaped too. */
static long tree_cpu_ms(pid_t pid, int depth)
{
	char path[64], buf[1024];
	unsigned long ut = 0, st = 0, cut = 0, cst = 0;
	long hz = sysconf(_SC_CLK_TCK), ms = 0;
	const char *rp;
	pid_t child;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (hz <= 0 || !(f = fopen(path, "r")))
		return 0;
	if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) &&
	    sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %lu %lu", &ut, &st,
		   &cut, &cst) == 4)
		ms = (long)((ut + st + cut + cst) * 1000 / (unsigned long)hz);
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	if (depth < 4 && (f = fopen(path, "r"))) {
		while (fscanf(f, "%d", &child) == 1)
			ms += tree_cpu_ms(child, depth + 1);
		fclose(f);
	}
	return ms;
}

/* How long a run took: wall and CPU (its own and its children's), ms. */
struct run_time {
	long wall_ms, cpu_ms;
};

/*
 * Start argv[0] (execve, no PATH, no shell) in a process group of its own,
 * stdout to /dev/null, stderr to err_path (or /dev/null). Wait up to
 * timeout_ms, and beyond it while the run and its children have used less
 * than cpu_ms of CPU, up to hard_ms; then kill the group. Returns the wait
 * status, ST_TIMEOUT or ST_NOEXEC; how long it took in *rt.
 */
static int run_wait(char *const argv[], const char *err_path, long timeout_ms, long cpu_ms,
		    long hard_ms, struct run_time *rt)
{
	int pfd[2], status, e = 0;
	long start, end, next_look = 0;
	struct rusage ru;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return ST_NOEXEC;
	pid = fork();
	if (pid < 0)
		return ST_NOEXEC;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR), err;

		setpgid(0, 0);
		err = err_path ? open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : null;
		dup2(null, 0);
		dup2(null, 1);
		dup2(err, 2);
		execve(argv[0], argv, child_env);
		e = errno;
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(125);
		_exit(125);
	}
	close(pfd[1]);
	if (read(pfd[0], &e, sizeof(e)) != sizeof(e))
		e = 0;
	close(pfd[0]);
	start = now_ms();
	end = start + timeout_ms;
	for (;;) {
		pid_t w = wait4(pid, &status, WNOHANG, &ru);
		long now = now_ms();

		if (w == pid) {
			rt->wall_ms = now - start;
			rt->cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000L +
				     (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
			return e ? ST_NOEXEC : status;
		}
		if (now > end) {
			/* starved, not hung, while it has had little CPU */
			bool hung = now >= start + hard_ms;

			if (!hung && now >= next_look) {
				hung = tree_cpu_ms(pid, 0) >= cpu_ms;
				next_look = now + 200;
			}
			if (!hung) {
				usleep(2000);
				continue;
			}
			rt->wall_ms = now - start;
			rt->cpu_ms = tree_cpu_ms(pid, 0);
			if (err_path) {
				printf("hung: after %.1f s, %.1f s of CPU\n",
				       (double)rt->wall_ms / 1e3, (double)rt->cpu_ms / 1e3);
				say_hung(pid, 0);
				say_stacks(pid);
			}
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return ST_TIMEOUT;
		}
		usleep(2000);
	}
}

/* As a shell reports it: the exit status, or 128+N after signal N. */
static int shell_status(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf) {
			buf[n] = '\0';
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

struct tally {
	unsigned noexec, ran, hung, timed, refused, crash_differs, failed;
	unsigned long slow_seed; /* the longest run under fortstat that ended */
	struct run_time slow;
};

/*
 * Judge fortstat's answer `fs` (wait status or ST_TIMEOUT, stderr text
 * `err`) against the direct run `k`. Returns NULL when right, else why not.
 */
static const char *judge(int k, int fs, const char *err, bool elf_magic, struct tally *t)
{
	size_t lines = 0;
	bool report = strstr(err, " clock\n") != NULL || strstr(err, "(exit status") != NULL ||
		      strstr(err, "(killed by") != NULL;

	for (const char *p = err; *p; p++)
		lines += *p == '\n';
	if (fs == ST_TIMEOUT)
		return "fortstat hung (the mutant itself does not)";
	if (WIFSIGNALED(fs))
		return "fortstat was killed by a signal";
	if (strstr(err, "no free address range"))
		return "the scratch mapping's message for a reason about the file";
	if (!report && WEXITSTATUS(fs) >= 125 && WEXITSTATUS(fs) <= 127) {
		t->refused++;
		if (lines != 1 || strncmp(err, "fortstat: ", 10) != 0)
			return "a refusal that is not exactly one line \"fortstat: ...\"";
		if (elf_magic && strstr(err, "not an ELF file"))
			return "\"not an ELF file\" for a file with the ELF magic";
		if (WEXITSTATUS(fs) == 127)
			return "status 127 (not found) for a file that exists";
		return NULL;
	}
	if (k == ST_NOEXEC)
		return report ? NULL : "no report and no refusal";
	t->timed++;
	if (k >= 0 && WIFEXITED(k) && WEXITSTATUS(k) != WEXITSTATUS(fs))
		return "timed with an exit status other than the direct run's";
	/*
	 * A mutant that crashes when run directly runs on garbage: where it
	 * crashes depends on the layout of its stack and environment, which
	 * differ under a tracer. Such differences are counted, not failed.
	 */
	if (k >= 0 && WIFSIGNALED(k) && shell_status(k) != WEXITSTATUS(fs))
		t->crash_differs++;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *fortstat, *fixture, *dir;
	unsigned long first, count;
	struct tally t = {0};
	unsigned char *orig;
	size_t orig_len;

	if (argc < 6) {
		fprintf(stderr,
			"usage: elffuzz FORTSTAT FIXTURE WORKDIR FIRST_SEED COUNT [OPTION]...\n");
		return 2;
	}
	fortstat = argv[1];
	fixture = argv[2];
	dir = argv[3];
	first = strtoul(argv[4], NULL, 0);
	count = strtoul(argv[5], NULL, 0);
	if (getenv("FORTSTAT_MECHANISM")) {
		static char mech[64];

		snprintf(mech, sizeof(mech), "FORTSTAT_MECHANISM=%s", getenv("FORTSTAT_MECHANISM"));
		child_env[1] = mech;
	}
	orig = (unsigned char *)slurp(fixture, &orig_len);
	if (!orig || orig_len < 64) {
		fprintf(stderr, "elffuzz: %s: cannot read\n", fixture);
		return 2;
	}
	for (unsigned long seed = first; seed < first + count; seed++) {
		char mut[4096], errp[4096], desc[256];
		unsigned char *b = malloc(orig_len);
		size_t len = orig_len, n_args = (size_t)argc - 6, errlen = 0;
		char **fargv = calloc(n_args + 3, sizeof(*fargv));
		const char *why;
		struct run_time rt;
		char *err;
		int fd, k, fs;

		memcpy(b, orig, orig_len);
		rng = (seed + 1) * 0x9E3779B97F4A7C15ull;
		mutate(b, &len, desc, sizeof(desc));
		snprintf(mut, sizeof(mut), "%s/mut-%lu", dir, seed);
		snprintf(errp, sizeof(errp), "%s/mut-%lu.err", dir, seed);
		fd = open(mut, O_WRONLY | O_CREAT | O_TRUNC, 0755);
		if (fd < 0 || write(fd, b, len) != (ssize_t)len || close(fd) < 0) {
			fprintf(stderr, "elffuzz: %s: cannot write\n", mut);
			return 2;
		}
		k = run_wait((char *[]){mut, NULL}, NULL, RUN_TIMEOUT_MS, 0, RUN_TIMEOUT_MS, &rt);
		t.noexec += k == ST_NOEXEC;
		t.hung += k == ST_TIMEOUT;
		t.ran += k >= 0;
		if (k == ST_TIMEOUT) {
			/* It hangs by itself: under fortstat it would too. */
			unlink(mut);
			free(fargv);
			free(b);
			continue;
		}
		fargv[0] = (char *)fortstat;
		for (size_t i = 0; i < n_args; i++)
			fargv[1 + i] = argv[6 + i];
		fargv[1 + n_args] = mut;
		fs = run_wait(fargv, errp, FS_TIMEOUT_MS, FS_CPU_MS, FS_HARD_MS, &rt);
		if (fs != ST_TIMEOUT && rt.wall_ms >= t.slow.wall_ms) {
			t.slow = rt;
			t.slow_seed = seed;
		}
		err = slurp(errp, &errlen);
		why = judge(k, fs, err ? err : "", len >= 4 && !memcmp(b, "\177ELF", 4), &t);
		if (why) {
			t.failed++;
			printf(
			    "FAIL seed %lu (%s): %s; direct run %s%d, fortstat %s%d; stderr:\n%s",
			    seed, desc, why, k == ST_NOEXEC ? "exec failed " : "",
			    k >= 0 ? shell_status(k) : k, fs == ST_TIMEOUT ? "timeout " : "",
			    fs >= 0 ? shell_status(fs) : fs, err ? err : "");
		} else {
			if (getenv("ELFFUZZ_VERBOSE"))
				printf("seed %lu (%s): direct %d, fortstat %d: %.200s", seed, desc,
				       k >= 0 ? shell_status(k) : k,
				       fs >= 0 ? shell_status(fs) : fs,
				       err && strchr(err, '\n') == err + strlen(err) - 1
					   ? err
					   : "(report)\n");
			unlink(mut);
		}
		unlink(errp);
		free(err);
		free(fargv);
		free(b);
	}
	printf(
	    "elffuzz: %lu mutants of %s: %u refused by the kernel, %u ran (%u hung); "
	    "fortstat timed %u (%u of them crash when run directly but ended otherwise), "
	    "refused %u; %u failed; the longest under fortstat: seed %lu, %.1f s (%.1f s of CPU)\n",
	    count, fixture, t.noexec, t.ran, t.hung, t.timed, t.crash_differs, t.refused, t.failed,
	    t.slow_seed, (double)t.slow.wall_ms / 1e3, (double)t.slow.cpu_ms / 1e3);
	free(orig);
	return t.failed ? 1 : 0;
}
