// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * plan.c - what planning the entry stubs costs: insn_plan_stub on every
 * function symbol of an ELF file (.symtab, else .dynsym; in .text, 5 bytes
 * at least), as the tracer calls it without the gap before the entry, and
 * the process CPU time it takes. Build and run from the source tree:
 *   gcc -O2 -Iinclude -Isrc/arch/x86_64 -o /tmp/plan bench/plan.c \
 *       src/arch/x86_64/capstone.c src/arch/x86_64/insn.c src/arch/x86_64/stub*.c \
 *       src/arch/x86_64/walk.c src/arch/x86_64/lendec.c -lcapstone -lelf
 *   /tmp/plan /usr/lib/gcc/x86_64-linux-gnu/12/cc1
 * The checksum sums the plans (covered length, stub size, padding, the
 * stub's and the jmp's bytes): two builds that plan alike print the same
 * one. Then what the plan cache does at a PIE's later exec instead: each
 * stub moved to other addresses (insn_stub_move: the image 0x5550000000
 * higher, the stub, return trap and page elsewhere), its CPU time, and the
 * moved stubs that differ from a plan made there (none expected).
 */
#include "fortstat/insn.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double cpu(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	Elf_Scn *scn = NULL, *text = NULL, *syms = NULL;
	GElf_Shdr th, sh;
	Elf_Data *code, *d;
	size_t shstr, n = 0, stubs = 0, differ = 0;
	unsigned long sum = 0;
	double t = 0, tm = 0;
	Elf *e;
	int fd;

	if (argc != 2 || (fd = open(argv[1], O_RDONLY)) < 0 || elf_version(EV_CURRENT) == EV_NONE ||
	    !(e = elf_begin(fd, ELF_C_READ, NULL)) || elf_getshdrstrndx(e, &shstr)) {
		fprintf(stderr, "usage: plan ELF-FILE\n");
		return 2;
	}
	while ((scn = elf_nextscn(e, scn)) && gelf_getshdr(scn, &sh)) {
		const char *name = elf_strptr(e, shstr, sh.sh_name);

		if (name && !strcmp(name, ".text"))
			text = scn;
		if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !syms))
			syms = scn;
	}
	if (!text || !syms || !gelf_getshdr(text, &th) || !(code = elf_getdata(text, NULL)) ||
	    !gelf_getshdr(syms, &sh) || !(d = elf_getdata(syms, NULL)) || !sh.sh_entsize) {
		fprintf(stderr, "plan: %s: no .text or no symbols\n", argv[1]);
		return 2;
	}
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		const uint64_t bias = 0x5550000000ull;
		struct insn_stub st, fresh;
		GElf_Sym s;
		double t0;
		bool planned;

		if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    s.st_size < 5 || s.st_value < th.sh_addr ||
		    s.st_value + s.st_size > th.sh_addr + code->d_size)
			continue;
		t0 = cpu();
		planned = insn_plan_stub((const uint8_t *)code->d_buf + (s.st_value - th.sh_addr),
					 s.st_size, s.st_value, s.st_value + 0x10000000, 0x3ff000,
					 0x3fe000, 1, NULL, &st) == 0;
		if (planned) {
			stubs++;
			sum += st.len * 31ul + st.code_len + st.pad_addr;
			for (unsigned q = 0; q < st.code_len; q++) /* and its bytes */
				sum = sum * 131 + st.code[q];
			for (unsigned q = 0; q < sizeof(st.jmp); q++)
				sum = sum * 131 + st.jmp[q];
		}
		t += cpu() - t0;
		n++;
		if (planned) {
			const struct insn_place a = {0, s.st_value + 0x10000000, 0x3ff000, 0,
						     0x3fe000};
			const struct insn_place b = {bias, bias + s.st_value + 0x10002000,
						     bias + 0x3ff000, 0, 0x7f0000000000ull};
			int rc;

			t0 = cpu();
			rc = insn_stub_move(&st, &a, &b);
			tm += cpu() - t0;
			if (rc ||
			    insn_plan_stub((const uint8_t *)code->d_buf + (s.st_value - th.sh_addr),
					   s.st_size, b.bias + s.st_value, b.stub, b.retrap, b.page,
					   1, NULL, &fresh) ||
			    fresh.code_len != st.code_len ||
			    memcmp(fresh.code, st.code, st.code_len) ||
			    memcmp(fresh.jmp, st.jmp, sizeof(st.jmp)))
				differ++;
		}
	}
	printf(
	    "%zu routines: %zu stubs, %zu refused (checksum %lu), %.3f s CPU, %.1f us a routine\n",
	    n, stubs, n - stubs, sum, t, n ? t / (double)n * 1e6 : 0);
	printf("%zu stubs moved: %.3f s CPU, %.2f us a stub; %zu differ from a plan made there\n",
	       stubs, tm, stubs ? tm / (double)stubs * 1e6 : 0, differ);
	insn_cleanup();
	elf_end(e);
	close(fd);
	return 0;
}
