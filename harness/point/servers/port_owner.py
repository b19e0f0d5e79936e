"""Is the process answering on the server's port the one this point launched?

A real SGLang server opens its HTTP port only after loading its weights, so during loading any other process
listening on that port (a leftover server, another user's job) would answer the readiness probe and be
fingerprinted and benchmarked in its place. Two guards, both pure reads of the host's state:

- the port is picked by `free_port()` outside the kernel's ephemeral range where the host leaves room, so no
  outgoing connection is handed it while the server loads;
- before launch, `port_free(port)` proves nothing listens on the port (a bind on every interface succeeds), and
  where it fails, `holder(port)` says what holds it: a listening process, or connections using the port as their
  local port (ports in the kernel's ephemeral range are handed to outgoing connections);
- whenever the port answers, `foreign_listener(port, launched_ns)` looks up the listening socket in
  `/proc/net/tcp{,6}` and the process holding it: a process started before this point launched its server
  cannot be that server. Where the owner cannot be read (no `/proc`, another user's process), the check says
  nothing and the pre-launch guard stands alone.
"""

from __future__ import annotations

import os
import random
import socket
import time
from pathlib import Path

PROC = Path("/proc")
LISTEN = "0A"
TCP_STATES = {"01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1", "05": "FIN_WAIT2",
              "06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT", "09": "LAST_ACK", LISTEN: "LISTEN",
              "0B": "CLOSING"}
START_SLACK_NS = 1_000_000_000  # /proc start times have clock-tick resolution; the slack also covers clock slew
LOWEST_PICKED = 20000           # free_port never picks below: the registered ports of common services lie there
PICK_TRIES = 64
HANDED_OUT: set[int] = set()    # ports this process picked already: two picks before either binds never collide


def port_free(port: int) -> bool:
    """True when the port can be bound on all interfaces (nothing listens on it). SO_REUSEADDR, as servers bind:
    connections of an earlier server still in TIME_WAIT on the port do not count."""
    for family, host in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET, "127.0.0.1")):
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((host, port))
            except OSError:
                return False
    return True


def ports_outside_ephemeral(span: tuple[int, int] | None) -> list[range]:
    """The port ranges `free_port` picks from: from LOWEST_PICKED up, less the ephemeral range `span`."""
    if span is None:
        return []
    low, high = span
    return [r for r in (range(LOWEST_PICKED, min(low, 65536)), range(max(high + 1, LOWEST_PICKED), 65536)) if r]


def free_port(proc: Path = PROC, rng: random.Random | None = None) -> int:
    """A port nothing listens on, for a server to bind later. A real server binds only after loading its weights
    (minutes), and a port the kernel hands out for outgoing connections (its ephemeral range) can be taken by any
    connection on the host in that time; so it is picked outside that range, at random, where the host leaves room
    there, else the kernel picks one. A port this process picked before is not picked again (until all the
    others have been), so ports picked one after another for the parts of one deployment differ."""
    rng = rng or random.Random()
    spans = ports_outside_ephemeral(ephemeral_range(proc))
    for _ in range(PICK_TRIES if spans else 0):
        span = rng.choices(spans, weights=[len(r) for r in spans])[0]
        port = rng.choice(span)
        if port not in HANDED_OUT and port_free(port):
            return _handed(port)
    for _ in range(PICK_TRIES):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in HANDED_OUT:
            break
    return _handed(port)


def _handed(port: int) -> int:
    if len(HANDED_OUT) > 4096:
        HANDED_OUT.clear()
    HANDED_OUT.add(port)
    return port


def local_sockets(port: int, proc: Path = PROC) -> list[tuple[str, int]]:
    """(state, inode) of every TCP socket (IPv4 and IPv6) whose local port is `port`; state as the kernel's hex."""
    found: list[tuple[str, int]] = []
    for name in ("tcp", "tcp6"):
        try:
            lines = (proc / "net" / name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and int(fields[1].rsplit(":", 1)[1], 16) == port:
                found.append((fields[3], int(fields[9])))
    return found


def listening_inodes(port: int, proc: Path = PROC) -> set[int]:
    """Socket inodes listening on TCP `port` (IPv4 and IPv6)."""
    return {inode for state, inode in local_sockets(port, proc) if state == LISTEN}


def listener_pids(port: int, proc: Path = PROC) -> list[int]:
    """Pids of the processes listening on TCP `port` (those whose fds this user may read)."""
    return socket_owners(listening_inodes(port, proc), proc)


def ephemeral_range(proc: Path = PROC) -> tuple[int, int] | None:
    """The kernel's range of local ports for outgoing connections (net.ipv4.ip_local_port_range)."""
    try:
        low, high = (proc / "sys" / "net" / "ipv4" / "ip_local_port_range").read_text().split()[:2]
        return int(low), int(high)
    except (OSError, ValueError):
        return None


def socket_owners(inodes: set[int], proc: Path = PROC) -> list[int]:
    """Pids holding one of the socket `inodes` (only processes whose fds this user may read)."""
    wanted = {f"socket:[{i}]" for i in inodes}
    owners: list[int] = []
    for entry in proc.iterdir() if inodes else ():
        if not entry.name.isdigit():
            continue
        try:
            if any(os.readlink(fd) in wanted for fd in (entry / "fd").iterdir()):
                owners.append(int(entry.name))
        except OSError:
            continue
    return sorted(owners)


def boot_ns(proc: Path = PROC) -> int | None:
    """Wall-clock boot time from `/proc/uptime` (centisecond precision; `/proc/stat`'s `btime` is truncated to
    whole seconds, which would put every process's start up to a second early)."""
    try:
        uptime_s = float((proc / "uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return time.time_ns() - int(uptime_s * 1_000_000_000)


def process_start_ns(pid: int, proc: Path = PROC) -> int | None:
    """Wall-clock start time of `pid` (its start tick after boot, plus the boot time)."""
    try:
        stat = (proc / str(pid) / "stat").read_text()
        ticks = int(stat.rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None
    booted = boot_ns(proc)
    if booted is None:
        return None
    return booted + ticks * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def describe(pid: int, proc: Path = PROC) -> str:
    try:
        cmd = (proc / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        cmd = "?"
    return f"pid {pid} ({cmd[:160]})"


def foreign_listener(port: int, launched_ns: int, proc: Path = PROC) -> str | None:
    """A description of a process listening on `port` that started before `launched_ns`, else None."""
    for pid in listener_pids(port, proc):
        started = process_start_ns(pid, proc)
        if started is not None and started < launched_ns - START_SLACK_NS:
            return describe(pid, proc)
    return None


def holder(port: int, proc: Path = PROC) -> str:
    """What holds `port` when it cannot be bound: the listening process, else the connections that use it as their
    local port (with a word on the ephemeral range where the port lies in it), else that it is unknown."""
    sockets = local_sockets(port, proc)
    owners = socket_owners({inode for state, inode in sockets if state == LISTEN}, proc)
    if owners:
        return describe(owners[0], proc)
    states = sorted({TCP_STATES.get(state, state) for state, _ in sockets})
    if not states:
        return "held by a process this user cannot see"
    text = f"nothing listens on it; connections use it as their local port ({', '.join(states)})"
    span = ephemeral_range(proc)
    if span and span[0] <= port <= span[1]:
        text += (f"; it lies in the kernel's ephemeral port range {span[0]}-{span[1]} "
                 "(net.ipv4.ip_local_port_range), from which outgoing connections take their local ports")
    return text
