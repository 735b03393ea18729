#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""outlive.py MODE TRIES MAXDELAY EXPECT PROG [OPTION...] [-- ARG...] - kill fortstat
($FORTSTAT) with SIGKILL at a random moment of PROG's run, TRIES times, and
see how PROG (fixtures/outlive.c: "started", calls until its stop file
exists, then "stopped" and exit status 3) ends. MODE: launch (fortstat
runs PROG) or attach (PROG runs, fortstat -p attaches). EXPECT: outlive
(PROG ends as it would have: its output and status 3) or die (PROG is
killed with fortstat: SIGKILL). The kill comes MAXDELAY seconds at most
after PROG said "started" (launch) or fortstat said it had patched it
(attach, -v). OPTIONs go to fortstat, ARGs to PROG after its stop file
(fixtures/outlive.c: its number of threads). This script is a subreaper, so the orphaned program is its
child: it waits for it (its exit status), kills it by its pid after 20 s
(a hang), and leaves no process of its own behind. Exit status 0, 1 (a
failure) or 77 (no subreaper here)."""
import ctypes
import os
import random
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def children(me=None):
    """The pids of our children (of me's), from each /proc/PID/stat's ppid."""
    me, kids = me or os.getpid(), []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    st = f.read()
            except OSError:
                continue
            if int(st[st.rindex(")") + 2:].split()[1]) == me:
                kids.append(int(d))
    return kids


def wait_text(path, text, proc, timeout=60):
    """Until file path holds text; False if proc ended first or on timeout."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            with open(path) as f:
                if text in f.read():
                    return True
        except OSError:
            pass
        if proc.poll() is not None:
            return False
        time.sleep(0.002)
    return False


def wait_pid(pid, timeout=20):
    """pid's wait status, or None: killed (by its pid) after timeout seconds."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        p, st = os.waitpid(pid, os.WNOHANG)
        if p == pid:
            return st
        time.sleep(0.005)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


def how(st):
    if st is None:
        return "hung (killed after 20 s)"
    if os.WIFEXITED(st):
        return "exit status %d" % os.WEXITSTATUS(st)
    return "killed by signal %d" % os.WTERMSIG(st)


def main():
    mode, tries, maxd, expect, prog = sys.argv[1:6]
    opts, args = sys.argv[6:], []
    if "--" in opts:
        args = opts[opts.index("--") + 1:]
        opts = opts[:opts.index("--")]
    fs_bin = os.environ["FORTSTAT"]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("SKIP: no subreaper here")
        return 77
    fails, seen = 0, {}
    for i in range(int(tries)):
        stop, out, err = "stop.%d" % i, "out.%d" % i, "err.%d" % i
        if os.path.exists(stop):
            os.unlink(stop)
        d = random.uniform(0, float(maxd))
        with open(out, "w") as fo, open(err, "w") as fe:
            if mode == "launch":
                fs = subprocess.Popen([fs_bin, "-o", "rep.%d" % i] + opts + [prog, stop] + args,
                                      stdin=subprocess.DEVNULL, stdout=fo, stderr=fe)
                ready = wait_text(out, "started", fs)
                kids = children(fs.pid)
                pid = kids[0] if len(kids) == 1 else None
            else:
                p = subprocess.Popen([prog, stop] + args, stdin=subprocess.DEVNULL, stdout=fo)
                pid = p.pid
                ready = wait_text(out, "started", p)
                fs = subprocess.Popen([fs_bin, "-v", "-o", "rep.%d" % i] + opts +
                                      ["-p", str(pid)], stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=fe)
                ready = ready and wait_text(err, "its threads run on", fs)
        if not ready or pid is None:
            print("FAIL: try %d: the program did not start (or fortstat did not patch it): %s"
                  % (i, open(err).read().strip()))
            fails += 1
        time.sleep(d)
        alive = fs.poll() is None
        fs.kill()
        fs.wait()
        open(stop, "w").close()
        st = wait_pid(pid) if pid is not None else None
        with open(out) as f:
            text = f.read()
        ended = how(st)
        if expect == "outlive":
            ok = st is not None and os.WIFEXITED(st) and os.WEXITSTATUS(st) == 3 and \
                text == "started\nstopped\n"
        else:
            ok = st is not None and os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGKILL
        if not alive:
            ok = False
            ended += ", fortstat had ended before the kill"
        seen[ended] = seen.get(ended, 0) + 1
        if not ok:
            fails += 1
            print("FAIL: try %d (%s, fortstat killed %.3f s in): the program ended with %s, "
                  "output %r" % (i, mode, d, ended, text))
        left = children()
        for k in left:  # ours alone, by their pids
            os.kill(k, signal.SIGKILL)
            os.waitpid(k, 0)
        if left:
            fails += 1
            print("FAIL: try %d: processes left behind: %s" % (i, left))
    print("%s %s, %s tries (%s): %s" % (mode, " ".join(opts + args), tries, expect,
                                         ", ".join("%s %d" % kv for kv in sorted(seen.items()))))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
