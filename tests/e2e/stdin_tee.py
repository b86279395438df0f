"""Runs a command with a copy of its stdin kept in a file: what a client sent
to a server, exactly as the server read it, when the server does not log it.

Usage: python stdin_tee.py LOG COMMAND [ARGS...]

The command's stdout and stderr are ours (the client reads the server's
answers straight from it). Each line the client writes is appended to LOG and
passed on at once. At the end of our stdin the command's stdin is closed, and
when it has exited, "exit status N" (or "killed by signal N") is appended to
LOG and we exit with its status. A client that kills the process group instead
(an SDK's shutdown after its grace period) kills us too: that line is missing.
"""

import subprocess
import sys

log_path, *command = sys.argv[1:]
with open(log_path, "wb", buffering=0) as log:
    server = subprocess.Popen(command, stdin=subprocess.PIPE)
    for line in iter(sys.stdin.buffer.readline, b""):
        log.write(line)
        try:
            server.stdin.write(line)
            server.stdin.flush()
        except BrokenPipeError:
            break
    try:
        server.stdin.close()
    except BrokenPipeError:
        pass
    status = server.wait()
    how = f"exit status {status}" if status >= 0 else f"killed by signal {-status}"
    log.write(f"\n{how}\n".encode())
sys.exit(status if status >= 0 else 128 - status)
