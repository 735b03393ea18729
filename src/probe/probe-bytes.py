#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""probe-bytes.py - assemble probe-code.s (GNU as) and write its bytes and
its labels' offsets into stubs.c, between the markers there (Go's entry
and exit too: goentry_code, goexit_code). The area's layout that the code
uses (PROBE_HEAD, PROBE_EV_WORD...) is the event ABI's, evabi.h's: a C
compiler prints its values as .equ lines put before the source, so the
offsets are written in one place. A maintainer's
tool: the build uses the arrays in stubs.c; tests/check_probe.c runs them.
With --check it writes nothing and exits 1 when stubs.c's arrays and
offsets are not what the assembly makes (tests/e2e/probebytes.sh)."""
import os
import re
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
src, dst = os.path.join(here, "probe-code.s"), os.path.join(here, "stubs.c")
include = os.path.join(here, "..", "..", "include")

# The names probe-code.s takes from evabi.h, and the C expressions of the
# ones it derives (an event's fields in the ring, the shifts).
ABI = [
    ("PROBE_SELF", "PROBE_SELF"), ("PROBE_HEAD", "PROBE_HEAD"), ("PROBE_TAIL", "PROBE_TAIL"),
    ("PROBE_DEPTH", "PROBE_DEPTH"), ("PROBE_FLAGS", "PROBE_FLAGS"), ("PROBE_F_TRAP", "PROBE_F_TRAP"),
    ("PROBE_CAP", "PROBE_CAP"), ("PROBE_NCOUNT", "PROBE_NCOUNT"), ("PROBE_ALIVE", "PROBE_ALIVE"),
    ("EV_ALIVE_TID", "EV_ALIVE_TID"), ("PROBE_SHADOW", "PROBE_SHADOW"),
    ("PROBE_SHADOW_N", "PROBE_SHADOW_N"),
    ("PROBE_SHADOW_SHIFT", "__builtin_ctz((PROBE_RING - PROBE_SHADOW) / PROBE_SHADOW_N)"),
    ("PROBE_RING_N", "PROBE_RING_N"), ("PROBE_EV_SHIFT", "__builtin_ctz(PROBE_EV_SIZE)"),
    ("PROBE_EV_TSC", "PROBE_RING + offsetof(struct probe_event, tsc)"),
    ("PROBE_EV_SLOT", "PROBE_RING + offsetof(struct probe_event, slot)"),
    ("PROBE_EV_RET", "PROBE_RING + offsetof(struct probe_event, ret)"),
    ("PROBE_EV_WORD", "PROBE_RING + offsetof(struct probe_event, word)"),
    ("PROBE_W_RETURN", "PROBE_W_RETURN"), ("PROBE_W_NCOUNT_SHIFT", "PROBE_W_NCOUNT_SHIFT"),
]


def abi_equs(tmp):
    """evabi.h's values as .equ lines, printed by a C program built with cc."""
    c, exe = os.path.join(tmp, "abi.c"), os.path.join(tmp, "abi")
    with open(c, "w") as f:
        f.write("#include <stddef.h>\n#include <stdio.h>\n#include \"fortstat/evabi.h\"\n")
        f.write("int main(void)\n{\n")
        for name, expr in ABI:
            f.write('\tprintf(".equ %s, 0x%%llx\\n", (unsigned long long)(%s));\n' % (name, expr))
        f.write("\treturn 0;\n}\n")
    subprocess.check_call([os.environ.get("CC", "cc"), "-I", include, "-o", exe, c])
    return subprocess.check_output([exe]).decode()


def assemble():
    with tempfile.TemporaryDirectory() as tmp:
        obj, whole = os.path.join(tmp, "p.o"), os.path.join(tmp, "p.s")
        with open(src) as f, open(whole, "w") as w:
            w.write(abi_equs(tmp) + f.read())
        subprocess.check_call(["as", "-o", obj, whole])
        code, labels = {}, {}
        for sec in ("entry", "tramp", "count", "alloc", "goentry", "goexit"):
            out = os.path.join(tmp, sec)
            subprocess.check_call(["objcopy", "-O", "binary", "-j", "." + sec, obj, out])
            with open(out, "rb") as f:
                code[sec] = f.read()
        for line in subprocess.check_output(["nm", obj]).decode().splitlines():
            f = line.split()
            if len(f) == 3:
                labels[f[2]] = int(f[0], 16)
    return code, labels


def array(name, b):
    rows = ["    " + " ".join("0x%02x," % x for x in b[i:i + 16]) for i in range(0, len(b), 16)]
    return "static const uint8_t %s[] = {\n%s\n};\n" % (name, "\n".join(rows))


def main():
    code, l = assemble()
    e, t, c, a = code["entry"], code["tramp"], code["count"], code["alloc"]
    ge, gx = code["goentry"], code["goexit"]
    assert l["g_wait"] == l["g_plain"] + 5 and ge[l["g_plain"]] == 0xE9
    assert gx[l["x_trap"]] == 0xCC and l["x_trap"] + 1 == len(gx)
    assert l["e_wait"] == l["e_plain"] + 5 and e[l["e_plain"]] == 0xE9
    assert c[l["c_ctr"] - 2] == 0x75, "the count path's jnz must be short"
    assert e[l["e_nohook"]] == 0x74, "the hook's je must be short (a jmp replaces it)"
    assert l["a_wait"] == l["a_plain"] + 5 and a[l["a_plain"]] == 0xE9
    assert t[:l["t_land"]] == bytes([0xFF, 0x54, 0x24, 0x80]), "the trampoline's call: 4 bytes"
    defs = [
        ("ENTRY_RETRAP", l["e_retrap"] + 2), ("ENTRY_TRAMP", l["e_tramp"] + 2),
        ("ENTRY_NOHOOK", l["e_nohook"]), ("ENTRY_WORD", l["e_word"] + 2), ("ENTRY_PLAIN", l["e_plain"] + 1),
        ("ENTRY_FULL", l["e_full"]), ("ENTRY_TARGET", l["e_target"] + 3),
        ("ENTRY_TCALL", l["e_tcall"]), ("TRAMP_LAND", l["t_land"]), ("TRAMP_FULL", l["t_full"]),
        ("TRAMP_RETRAP", l["t_retrap"]), ("COUNT_JNZ", l["c_ctr"] - 1),
        ("COUNT_CTR", l["c_ctr"] + 5), ("COUNT_PLAIN", l["c_plain"]),
        ("ALLOC_RETRAP", l["a_retrap"] + 2), ("ALLOC_TRAMP", l["a_tramp"] + 2),
        ("ALLOC_WORD", l["a_word"] + 2), ("ALLOC_PLAIN", l["a_plain"] + 1), ("ALLOC_FULL", l["a_full"]),
        ("ALLOC_TARGET", l["a_target"] + 3), ("ALLOC_TCALL", l["a_tcall"]),
        ("GOENTRY_WORD", l["g_word"] + 2), ("GOENTRY_PLAIN", l["g_plain"] + 1),
        ("GOENTRY_FULL", l["g_full"]), ("GOEXIT_WORD", l["x_word"] + 2),
        ("GOEXIT_FULL", l["x_full"]), ("GOEXIT_TRAP", l["x_trap"]),
    ]
    body = array("entry_code", e) + array("tramp_code", t) + array("count_code", c)
    body += array("alloc_code", a)
    body += array("goentry_code", ge) + array("goexit_code", gx)
    body += "".join("#define %s 0x%x\n" % d for d in defs)
    with open(dst) as f:
        text = f.read()
    begin, end = "/* probe-bytes.py: begin */\n", "/* probe-bytes.py: end */\n"
    i, j = text.index(begin) + len(begin), text.index(end)
    if "--check" in sys.argv[1:]:
        if text[i:j] == body:
            return 0
        print("probe-bytes.py: %s does not hold what %s assembles to: run %s"
              % (dst, src, os.path.basename(__file__)), file=sys.stderr)
        return 1
    with open(dst, "w") as f:
        f.write(text[:i] + body + text[j:])
    print("entry %d, trampoline %d, count %d, alloc %d, Go entry %d, Go exit %d bytes"
          % (len(e), len(t), len(c), len(a), len(ge), len(gx)))


if __name__ == "__main__":
    sys.exit(main())
