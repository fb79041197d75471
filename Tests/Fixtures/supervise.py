#!/usr/bin/env python3
"""Runs one daemon (redis-server, nginx) for a test and ties its life to the test's.

Usage: supervise.py PIDFILE COMMAND [ARGS...]

The child's pid is written to PIDFILE so the test can signal it directly (SIGSTOP to
simulate a hung server, SIGKILL for a crash). The child dies when this supervisor dies
(PR_SET_PDEATHSIG) and is terminated when stdin reaches EOF, which happens when the test
process exits, however it exits: no daemon outlives the test run.
"""
import ctypes
import os
import signal
import subprocess
import sys
import threading

PR_SET_PDEATHSIG = 1


def die_with_parent():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # The test runner blocks signals on its threads and children inherit the mask: without
    # this the daemon would never see the SIGTERM that asks it to shut down.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)


def main():
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    pidfile, command = sys.argv[1], sys.argv[2:]
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)
    with open(pidfile + ".tmp", "w") as handle:
        handle.write(str(child.pid))
    os.rename(pidfile + ".tmp", pidfile)

    def forward(number, _frame):
        child.send_signal(number)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)

    def watch_stdin():
        while sys.stdin.buffer.read(4096):
            pass
        child.send_signal(signal.SIGCONT)
        child.terminate()
        try:
            child.wait(5)
        except subprocess.TimeoutExpired:
            child.kill()

    threading.Thread(target=watch_stdin, daemon=True).start()
    status = child.wait()
    # os._exit: a normal exit would wait for the stdin reader thread's buffer lock.
    os._exit(status if status >= 0 else 128 - status)


if __name__ == "__main__":
    main()
