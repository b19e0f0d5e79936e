"""A server's port is picked outside the kernel's ephemeral range; when one cannot be bound before launch, the refusal
says what holds it: the listening process, or the connections using it as their local port (and that the port lies
in the kernel's ephemeral range)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from harness.point.servers import port_owner


def test_a_port_held_by_a_connection_is_named_as_such() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.socket() as client:
            client.bind(("127.0.0.1", 0))
            port = client.getsockname()[1]
            client.connect(server.getsockname())
            assert not port_owner.port_free(port)
            text = port_owner.holder(port)
    assert text.startswith("nothing listens on it; connections use it as their local port (ESTABLISHED"), text


def test_a_listening_port_names_its_process() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert port_owner.holder(server.getsockname()[1]).startswith(f"pid {os.getpid()} (")


def fake_proc(tmp_path: Path, port: int, state: str, span: str) -> Path:
    header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    row = f"   0: 0100007F:{port:04X} 0100007F:1F90 {state} 00000000:00000000 00:00000000 00000000  0 0 4242 1\n"
    (tmp_path / "net").mkdir()
    (tmp_path / "net" / "tcp").write_text(header + row)
    (tmp_path / "sys" / "net" / "ipv4").mkdir(parents=True)
    (tmp_path / "sys" / "net" / "ipv4" / "ip_local_port_range").write_text(span)
    return tmp_path


def test_a_port_in_the_ephemeral_range_says_so(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path, 33100, "06", "32768\t60999\n")
    assert port_owner.ephemeral_range(proc) == (32768, 60999)
    text = port_owner.holder(33100, proc)
    assert "(TIME_WAIT)" in text and "ephemeral port range 32768-60999" in text, text


def test_a_port_below_the_ephemeral_range_does_not_mention_it(tmp_path: Path) -> None:
    text = port_owner.holder(31100, fake_proc(tmp_path, 31100, "01", "32768\t60999\n"))
    assert "(ESTABLISHED)" in text and "ephemeral" not in text, text


def test_nothing_visible_holds_the_port(tmp_path: Path) -> None:
    assert port_owner.holder(31100, fake_proc(tmp_path, 31101, "01", "32768 60999")) == \
        "held by a process this user cannot see"


def _span_only(tmp_path: Path, span: str) -> Path:
    (tmp_path / "sys" / "net" / "ipv4").mkdir(parents=True)
    (tmp_path / "sys" / "net" / "ipv4" / "ip_local_port_range").write_text(span)
    return tmp_path


def test_the_picked_port_lies_outside_the_ephemeral_range_and_is_free() -> None:
    span = port_owner.ephemeral_range()
    assert span is not None                                  # Linux: the range is readable
    if not port_owner.ports_outside_ephemeral(span):
        pytest.skip(f"this host's ephemeral range {span} leaves no room above {port_owner.LOWEST_PICKED}")
    picked = [port_owner.free_port() for _ in range(200)]
    assert all(p >= port_owner.LOWEST_PICKED and not span[0] <= p <= span[1] for p in picked), picked
    assert len(set(picked)) == 200                           # one process never picks a port twice
    assert all(port_owner.port_free(p) for p in picked[:20])


def test_ranges_left_by_the_ephemeral_range(tmp_path: Path) -> None:
    assert port_owner.ports_outside_ephemeral((32768, 60999)) == [range(20000, 32768), range(61000, 65536)]
    assert port_owner.ports_outside_ephemeral((10000, 65535)) == []
    assert port_owner.ports_outside_ephemeral((1024, 50000)) == [range(50001, 65536)]
    assert port_owner.ports_outside_ephemeral(None) == []
    assert 50001 <= port_owner.free_port(_span_only(tmp_path, "1024 50000\n")) <= 65535


def test_without_room_outside_the_range_the_kernel_picks(tmp_path: Path) -> None:
    port = port_owner.free_port(_span_only(tmp_path, "1024 65535\n"))
    assert 1024 <= port <= 65535 and port_owner.port_free(port)
