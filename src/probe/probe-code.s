# SPDX-License-Identifier: GPL-2.0-or-later
#
# probe-code.s - the in-process probes' code, the source of the byte arrays
# in stubs.c (not built: `python3 src/probe/probe-bytes.py` assembles it
# with GNU as and writes the arrays and the offsets of the labels e_*, t_*
# and *_full, where RIP is at a full ring's stop, into stubs.c). The
# thread's area is at its GS base; its layout is evabi.h's and only there:
# probe-bytes.py puts `.equ` lines of evabi.h's values (printed by a C
# program) before this source, so PROBE_HEAD, PROBE_ALIVE (where fortstat's
# liveness word is, from the area: its thread id while it lives, those bits
# cleared by the kernel when it dies, as a robust futex's), PROBE_SHADOW
# (entries of 16 bytes: PROBE_SHADOW_SHIFT), PROBE_EV_TSC... (an event's
# fields in the ring: tsc, slot, ret, word) are the header's own numbers.
# Placeholders, patched per stub: 0x3333... the return trap, 0x1111...
# the trampoline, 0x2222... the entry's word, 0x44444444 the jmp to the
# classic stub's plain path (and the lea of its address), 0x5555... the
# trampoline's call (t_call: INSN_PROBE_TRAMP_CALL bytes before it).

# A full ring (p: the section's label prefix, giving p_wait, the stop's
# p_full and the jmp back to p_again; s: the first of the eight slots below
# RSP it uses, 0x28, or 0x30 where that one holds a value; out: where a
# ring no one reads leads). The thread sends itself SIGURG: the tracer
# drains the ring at that signal's stop and suppresses it. Not an int3: a
# tracer that dies while the thread is stopped there leaves it a SIGURG to
# deliver, which it ignores (its default), where a SIGTRAP would kill it.
# SIGURG is unblocked meanwhile (a thread may block every signal). The
# registers the system calls use are kept below RSP and put back.
	.macro ring_full p, s, out
\p\()_wait: mov %gs:PROBE_ALIVE,%rdx; testl $EV_ALIVE_TID,%gs:(%rdx)
	jz \out				# fortstat is gone: not recorded
	mov %rax,-(\s)(%rsp); mov %rcx,-(\s+0x8)(%rsp); mov %r11,-(\s+0x10)(%rsp)
	mov %rdi,-(\s+0x18)(%rsp); mov %rsi,-(\s+0x20)(%rsp); mov %r10,-(\s+0x28)(%rsp)
	movq $0x400000,-(\s+0x30)(%rsp)	# {SIGURG}: bit 23 - 1
	mov $1,%edi; lea -(\s+0x30)(%rsp),%rsi; lea -(\s+0x38)(%rsp),%rdx; mov $8,%r10d
	mov $14,%eax; syscall			# rt_sigprocmask(SIG_UNBLOCK, .., &old)
	mov $186,%eax; syscall			# gettid
	mov %eax,%edi; mov $23,%esi; mov $200,%eax; syscall	# tkill(tid, SIGURG)
\p\()_full: mov $2,%edi; lea -(\s+0x38)(%rsp),%rsi; xor %edx,%edx; mov $8,%r10d
	mov $14,%eax; syscall			# rt_sigprocmask(SIG_SETMASK, &old, 0)
	mov -(\s)(%rsp),%rax; mov -(\s+0x8)(%rsp),%rcx; mov -(\s+0x10)(%rsp),%r11
	mov -(\s+0x18)(%rsp),%rdi; mov -(\s+0x20)(%rsp),%rsi; mov -(\s+0x28)(%rsp),%r10
	jmp \p\()_again			# the tracer drained the ring
	.endm

# The entry's fast path. RAX, RDX, RCX, R11 are kept below RSP (dead at an
# entry; a signal frame lands 128 bytes lower); the flags are not kept (no
# routine expects them at its entry). The TSC is read as late as it can be,
# just before the word commits the event: what follows (three loads, the
# jmp) is the routine's.
#
# A hooked entry runs its routine by a `call` (e_call, through the one just
# before the trampoline, t_call, with RSP one past the slot: the slot then
# holds the trampoline's address, pushed by it), not by a jmp with the
# trampoline written over the return address: the CPU's return stack
# buffer then holds the trampoline above the caller's return address, and
# both returns, the routine's and the trampoline's, are predicted. With
# the jmp, the routine's `ret` (to the trampoline) took the caller's entry
# and the trampoline's `ret` its caller's, and every later return of the
# program was predicted one frame off: a timed leaf under 8 untimed frames
# cost 55 ns a call more than the calibration's loop, in the program's own
# code. -0x78(%rsp) holds where the call goes (the classic stub's plain
# path), 0 when the entry is not hooked (e_chained, e_off): at the call,
# RSP 8 higher, it is the red zone's lowest word, which a signal frame
# (128 bytes below RSP) leaves alone.

	.section .entry, "ax"
	mov %rax,-0x10(%rsp); mov %rdx,-0x18(%rsp); mov %rcx,-0x20(%rsp)
	mov %r11,-0x8(%rsp)
	mov %gs:PROBE_ALIVE,%r11; testl $EV_ALIVE_TID,%gs:(%r11)
	jz e_off				# fortstat is gone: a plain call
	testb $PROBE_F_TRAP,%gs:PROBE_FLAGS; jnz e_slow		# no area of its own
e_retrap: movabs $0x3333333333333333,%r11
	cmp %r11,(%rsp)
e_nohook: je e_chained			# a tail call: hooked already (made a jmp
					# for a routine that never returns)
e_tramp: movabs $0x1111111111111111,%r11
	cmp %r11,(%rsp); je e_chained		# (by a trap, or in-process)
	mov $1,%ecx; xadd %rcx,%gs:PROBE_DEPTH		# take a shadow entry
	cmp $PROBE_SHADOW_N,%rcx; jae e_deep
	shl $PROBE_SHADOW_SHIFT,%rcx; add %gs:PROBE_SELF,%rcx
	mov (%rsp),%rax; mov %rsp,PROBE_SHADOW(%rcx); mov %rax,PROBE_SHADOW+8(%rcx)
e_target: .byte 0x4c,0x8d,0x1d; .long 0x44444444	# lea plain(%rip),%r11
	mov %r11,-0x78(%rsp); jmp e_record	# hooked, by the call at e_call
e_chained: movq $0,-0x78(%rsp)
	mov (%rsp),%rax
e_record:
e_word:	movabs $0x2222222222222222,%r11	# PROBE_W_ENTRY | patch
	mov $1,%ecx; xadd %rcx,%gs:PROBE_HEAD		# take a ring index
e_again: mov %rcx,%rdx; sub %gs:PROBE_TAIL,%rdx; cmp %gs:PROBE_CAP,%rdx; jae e_wait
	and $PROBE_RING_N-1,%rcx; shl $PROBE_EV_SHIFT,%rcx; add %gs:PROBE_SELF,%rcx
	mov %rax,PROBE_EV_RET(%rcx); mov %rsp,PROBE_EV_SLOT(%rcx)
	mov %gs:PROBE_NCOUNT,%rdx; shl $PROBE_W_NCOUNT_SHIFT,%rdx; or %rdx,%r11	# counted calls so far
	rdtsc; shl $32,%rdx; or %rdx,%rax; mov %rax,PROBE_EV_TSC(%rcx)
	mov %r11,PROBE_EV_WORD(%rcx)			# the word commits it
e_gone:	mov -0x10(%rsp),%rax; mov -0x18(%rsp),%rdx; mov -0x20(%rsp),%rcx
	cmpq $0,-0x78(%rsp); jne e_call
e_plain: .byte 0xe9; .long 0x44444444	# jmp to the classic stub's plain path
	ring_full e, 0x28, e_gone
e_call:	lea 8(%rsp),%rsp; jmp *e_tcall(%rip)	# to the trampoline's call
e_tcall: .quad 0x5555555555555555
e_off:	movq $0,-0x78(%rsp); jmp e_gone
e_deep:	decq %gs:PROBE_DEPTH
e_slow:	mov -0x10(%rsp),%rax; mov -0x18(%rsp),%rdx; mov -0x20(%rsp),%rcx
	mov -0x8(%rsp),%r11			# then the classic stub follows

# The return trampoline: the routine's `ret` lands here with RSP one past
# the slot (the hooked entry's call, t_call, pushed this address). Its
# event carries RAX, the value returned (--alloc: the block). The slot's
# entry is looked for from the top of the shadow stack down (entries above
# it are frames left by longjmp or an exception); none: the classic return
# trap, where the tracer finds the frame. The TSC
# is read first, after an lfence: rdtsc is not ordered, and without it the
# stamp is taken while the routine's last instructions are still under way
# (a 0.2 us routine came out 5% short).
	.section .tramp, "ax"
t_call:	call *-0x80(%rsp)		# a hooked entry's: RSP one past the slot
t_land:	sub $8,%rsp				# RSP: the slot again
	mov %rax,-0x8(%rsp); mov %rdx,-0x10(%rsp)
	lfence; rdtsc; shl $32,%rdx; or %rdx,%rax
	mov %rcx,-0x18(%rsp); mov %r11,-0x20(%rsp); mov %rax,-0x28(%rsp)
	mov %gs:PROBE_DEPTH,%rcx; cmp $PROBE_SHADOW_N,%rcx; ja.d32 t_miss
t_find:	test %rcx,%rcx; jz.d32 t_miss; dec %rcx
	mov %rcx,%rax; shl $PROBE_SHADOW_SHIFT,%rax; add %gs:PROBE_SELF,%rax
	cmp %rsp,PROBE_SHADOW(%rax); jne t_find
	mov PROBE_SHADOW+8(%rax),%rax; mov %rax,(%rsp)	# the real return address, read
	mov %rcx,%gs:PROBE_DEPTH			# before the entry is popped: a
					# handler that interrupts us after the
					# pop would take that entry for its own
	mov %gs:PROBE_NCOUNT,%r11; shl $PROBE_W_NCOUNT_SHIFT,%r11		# counted calls so far
	movabs $PROBE_W_RETURN,%rax; or %rax,%r11	# PROBE_W_RETURN
	mov $1,%ecx; xadd %rcx,%gs:PROBE_HEAD
t_again: mov %rcx,%rdx; sub %gs:PROBE_TAIL,%rdx; cmp %gs:PROBE_CAP,%rdx; jae t_wait
	and $PROBE_RING_N-1,%rcx; shl $PROBE_EV_SHIFT,%rcx; add %gs:PROBE_SELF,%rcx
	mov -0x8(%rsp),%rdx; mov %rdx,PROBE_EV_RET(%rcx)	# RAX: what it returned
	mov %rsp,PROBE_EV_SLOT(%rcx)
	mov -0x28(%rsp),%rax; mov %rax,PROBE_EV_TSC(%rcx)
	mov %r11,PROBE_EV_WORD(%rcx)			# the word commits it
t_out:	mov -0x8(%rsp),%rax; mov -0x10(%rsp),%rdx; mov -0x18(%rsp),%rcx
	mov -0x20(%rsp),%r11; ret
	ring_full t, 0x30, t_out
t_miss:	mov -0x8(%rsp),%rax; mov -0x10(%rsp),%rdx; mov -0x18(%rsp),%rcx
	mov -0x20(%rsp),%r11; add $8,%rsp; jmp *0(%rip)
t_retrap: .quad 0x3333333333333333

# The count-only path (-c, and a throttled routine's calls): the thread's
# own counter of the patch and its count of counted calls (the next event
# carries it: their cost is charged to the routine that made them), an
# instruction each (a signal cannot split one).
	.section .count, "ax"
	mov %r11,-0x8(%rsp)
	testb $PROBE_F_TRAP,%gs:PROBE_FLAGS; jnz c_classic
c_ctr:	incq %gs:0x7fffffff			# PROBE_CTR + 8 * patch
	incq %gs:PROBE_NCOUNT
c_plain: .byte 0xe9; .long 0x44444444	# jmp plain
c_classic:

# An allocator's entry (--alloc): the timed entry's path, but the event
# carries the call's arguments where a timed entry has its TSC and its
# return address (RSI and RDI: sizes, pointers); the allocator is not
# timed, its return is hooked as any (the trampoline's event gives RAX).
	.section .alloc, "ax"
	mov %rax,-0x10(%rsp); mov %rdx,-0x18(%rsp); mov %rcx,-0x20(%rsp)
	mov %r11,-0x8(%rsp)
	mov %gs:PROBE_ALIVE,%r11; testl $EV_ALIVE_TID,%gs:(%r11)
	jz a_off
	testb $PROBE_F_TRAP,%gs:PROBE_FLAGS; jnz a_slow
a_retrap: movabs $0x3333333333333333,%r11
	cmp %r11,(%rsp); je a_chained
a_tramp: movabs $0x1111111111111111,%r11
	cmp %r11,(%rsp); je a_chained
	mov $1,%ecx; xadd %rcx,%gs:PROBE_DEPTH
	cmp $PROBE_SHADOW_N,%rcx; jae a_deep
	shl $PROBE_SHADOW_SHIFT,%rcx; add %gs:PROBE_SELF,%rcx
	mov (%rsp),%rax; mov %rsp,PROBE_SHADOW(%rcx); mov %rax,PROBE_SHADOW+8(%rcx)
a_target: .byte 0x4c,0x8d,0x1d; .long 0x44444444	# lea plain(%rip),%r11
	mov %r11,-0x78(%rsp); jmp a_record
a_chained: movq $0,-0x78(%rsp)
a_record:
a_word:	movabs $0x2222222222222222,%r11	# PROBE_W_ENTRY | patch
	mov $1,%ecx; xadd %rcx,%gs:PROBE_HEAD
a_again: mov %rcx,%rdx; sub %gs:PROBE_TAIL,%rdx; cmp %gs:PROBE_CAP,%rdx; jae a_wait
	and $PROBE_RING_N-1,%rcx; shl $PROBE_EV_SHIFT,%rcx; add %gs:PROBE_SELF,%rcx
	mov %rdi,PROBE_EV_RET(%rcx); mov %rsp,PROBE_EV_SLOT(%rcx); mov %rsi,PROBE_EV_TSC(%rcx)
	mov %gs:PROBE_NCOUNT,%rdx; shl $PROBE_W_NCOUNT_SHIFT,%rdx; or %rdx,%r11
	mov %r11,PROBE_EV_WORD(%rcx)			# the word commits it
a_gone:	mov -0x10(%rsp),%rax; mov -0x18(%rsp),%rdx; mov -0x20(%rsp),%rcx
	cmpq $0,-0x78(%rsp); jne a_call
a_plain: .byte 0xe9; .long 0x44444444
	ring_full a, 0x28, a_gone
a_call:	lea 8(%rsp),%rsp; jmp *a_tcall(%rip)
a_tcall: .quad 0x5555555555555555
a_off:	movq $0,-0x78(%rsp); jmp a_gone
a_deep:	decq %gs:PROBE_DEPTH
a_slow:	mov -0x10(%rsp),%rax; mov -0x18(%rsp),%rdx; mov -0x20(%rsp),%rcx
	mov -0x8(%rsp),%r11

# Go's entry (INSN_PROBE_GO): a goroutine's stack is walked and copied by
# Go's runtime, so nothing is hooked; the entry's event holds the goroutine
# (g: R14 in Go's register ABI) and the depth of the slot in its stack
# (g.stack.hi - RSP, which a copied stack keeps) instead of the slot and the
# return address. As e_* otherwise (g_full: a full ring's stop; g_plain:
# the classic stub's plain path; the slow path falls into the classic stub).
	.section .goentry, "ax"
	mov %rax,-0x10(%rsp); mov %rdx,-0x18(%rsp); mov %rcx,-0x20(%rsp)
	mov %r11,-0x8(%rsp)
	mov %gs:PROBE_ALIVE,%r11; testl $EV_ALIVE_TID,%gs:(%r11)
	jz g_gone				# fortstat is gone: a plain call
	testb $PROBE_F_TRAP,%gs:PROBE_FLAGS; jnz g_slow		# no area of its own
g_word:	movabs $0x2222222222222222,%r11	# PROBE_W_ENTRY | patch
	mov $1,%ecx; xadd %rcx,%gs:PROBE_HEAD		# take a ring index
g_again: mov %rcx,%rdx; sub %gs:PROBE_TAIL,%rdx; cmp %gs:PROBE_CAP,%rdx; jae g_wait
	and $PROBE_RING_N-1,%rcx; shl $PROBE_EV_SHIFT,%rcx; add %gs:PROBE_SELF,%rcx
	mov 8(%r14),%rax; sub %rsp,%rax; mov %rax,PROBE_EV_SLOT(%rcx)	# depth
	mov %r14,PROBE_EV_RET(%rcx)			# g
	mov %gs:PROBE_NCOUNT,%rdx; shl $PROBE_W_NCOUNT_SHIFT,%rdx; or %rdx,%r11	# counted calls so far
	rdtsc; shl $32,%rdx; or %rdx,%rax; mov %rax,PROBE_EV_TSC(%rcx)
	mov %r11,PROBE_EV_WORD(%rcx)			# the word commits it
g_gone:	mov -0x10(%rsp),%rax; mov -0x18(%rsp),%rdx; mov -0x20(%rsp),%rcx
g_plain: .byte 0xe9; .long 0x44444444	# jmp to the classic stub's plain path
	ring_full g, 0x28, g_gone
g_slow:	mov -0x10(%rsp),%rax; mov -0x18(%rsp),%rdx; mov -0x20(%rsp),%rcx
	mov -0x8(%rsp),%r11			# then the classic stub follows

# Go's exit (insn_plan_go_exit): a jmp over a routine's epilogue and `ret`
# leads here; the epilogue is copied before this code (RSP at the return
# address after it), which records the exit {tsc, depth, g, PROBE_W_EXIT |
# patch} and returns as the routine would have. x_trap: the slow path's
# int3 (a thread without an area: the tracer emulates the ret).
	.section .goexit, "ax"
	mov %rax,-0x10(%rsp); mov %rdx,-0x18(%rsp)
	lfence; rdtsc; shl $32,%rdx; or %rdx,%rax
	mov %rcx,-0x20(%rsp); mov %r11,-0x8(%rsp); mov %rax,-0x28(%rsp)
	mov %gs:PROBE_ALIVE,%r11; testl $EV_ALIVE_TID,%gs:(%r11)
	jz x_gone				# fortstat is gone: not recorded
	testb $PROBE_F_TRAP,%gs:PROBE_FLAGS; jnz x_slow		# no area of its own
x_word:	movabs $0x2222222222222222,%r11	# PROBE_W_EXIT | patch
	mov $1,%ecx; xadd %rcx,%gs:PROBE_HEAD
x_again: mov %rcx,%rdx; sub %gs:PROBE_TAIL,%rdx; cmp %gs:PROBE_CAP,%rdx; jae x_wait
	and $PROBE_RING_N-1,%rcx; shl $PROBE_EV_SHIFT,%rcx; add %gs:PROBE_SELF,%rcx
	mov 8(%r14),%rax; sub %rsp,%rax; mov %rax,PROBE_EV_SLOT(%rcx)	# depth
	mov %r14,PROBE_EV_RET(%rcx)			# g
	mov %gs:PROBE_NCOUNT,%rdx; shl $PROBE_W_NCOUNT_SHIFT,%rdx; or %rdx,%r11
	mov -0x28(%rsp),%rax; mov %rax,PROBE_EV_TSC(%rcx)
	mov %r11,PROBE_EV_WORD(%rcx)			# the word commits it
x_gone:	mov -0x10(%rsp),%rax; mov -0x18(%rsp),%rdx; mov -0x20(%rsp),%rcx
	mov -0x8(%rsp),%r11; ret
	ring_full x, 0x30, x_gone
x_slow:	mov -0x10(%rsp),%rax; mov -0x18(%rsp),%rdx; mov -0x20(%rsp),%rcx
	mov -0x8(%rsp),%r11
x_trap:	int3
