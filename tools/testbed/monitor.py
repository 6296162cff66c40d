#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Run human-monitor commands on a testbed QEMU and print their replies.

    tools/testbed/monitor.py SOCKET COMMAND...

SOCKET is the unix socket run.sh gives QEMU's monitor (-monitor
unix:SOCKET,server=on,wait=off).  Each COMMAND's reply is printed after a
"(qemu) COMMAND" line, without the monitor's terminal escapes.  Exit code:
0 when every command was sent, 1 when the socket could not be reached.  A
QEMU that goes away after a command (an NMI the kernel panics on, with
-no-reboot) ends the output there, not in an error.
"""

import re
import socket
import sys

PROMPT = b"(qemu) "
ESCAPES = re.compile(rb"\x1b\[[0-9;]*[A-Za-z]|\r")


def read_reply(sock):
    """Bytes up to the next prompt, or up to EOF when QEMU went away."""
    buf = b""
    while not buf.endswith(PROMPT):
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        buf += chunk
    return ESCAPES.sub(b"", buf)


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 1
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    try:
        sock.connect(argv[1])
    except OSError as err:
        sys.stderr.write(f"monitor.py: {argv[1]}: {err}\n")
        return 1
    read_reply(sock)  # the banner
    out = sys.stdout.buffer
    for cmd in argv[2:]:
        try:
            sock.sendall(cmd.encode() + b"\n")
        except OSError:
            break
        reply = read_reply(sock)
        # The monitor echoes the command line; keep what follows it.
        body = reply.split(b"\n", 1)[1] if b"\n" in reply else b""
        if body.endswith(PROMPT):
            body = body[:-len(PROMPT)]
        out.write(b"(qemu) " + cmd.encode() + b"\n" + body)
        out.flush()
    sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
