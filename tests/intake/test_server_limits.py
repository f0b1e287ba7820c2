"""The server's limits, before any authentication: bounded request heads, read timeouts and a
cap on connections (docs/security.md, "Server limits"). Raw sockets, since a well-behaved
client cannot misbehave in these ways."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import psutil
import pytest
import requests

from morpheus_pipelines.crm.api.http_server import ServerLimits
from morpheus_pipelines.devtools.serve_process import morpheus_serve
from tests.support.intake import Tenant, intake_settings, problem_of, serving

SHORT = ServerLimits(head_timeout=0.5, max_connections=4)


@pytest.fixture
def limited(database_url: str) -> Iterator[int]:
    settings = intake_settings(database_url, body_read_timeout=0.5)
    with serving(settings, SHORT) as (base, _):
        yield int(base.rsplit(":", 1)[1])


def _answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    sock.settimeout(10)
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def _flood_header(port: int, *, limit_bytes: int) -> tuple[int, bytes]:
    """Send one header that never ends, up to ``limit_bytes``; ``(bytes sent, answer)``."""
    sent = 0
    chunk = b"a" * 65536
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"POST /v1/leads HTTP/1.1\r\nHost: x\r\nX-Flood: ")
        try:
            while sent < limit_bytes:
                sock.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            return sent, _answer(sock)
        except ConnectionResetError:
            return sent, b""


def test_a_never_ending_header_is_431_after_the_head_limit(limited: int) -> None:
    sent, answer = _flood_header(limited, limit_bytes=100 * 1024 * 1024)
    # What the kernel's socket buffers took before the server's close reached us, not 100 MB.
    assert sent < 16 * 1024 * 1024
    assert answer == b"" or _status(answer) == 431


def test_too_many_header_fields_is_431(limited: int) -> None:
    headers = "".join(f"X-H{i}: v\r\n" for i in range(SHORT.max_headers + 1))
    with socket.create_connection(("127.0.0.1", limited)) as sock:
        sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: x\r\n{headers}\r\n".encode())
        answer = _answer(sock)
    assert _status(answer) == 431
    assert b"content-type: application/problem+json" in answer
    assert b'"error":"request_head_too_large"' in answer


def test_a_head_within_the_limits_is_served(limited: int) -> None:
    answer = requests.get(
        f"http://127.0.0.1:{limited}/v1/leads/x",
        headers={"X-Big": "b" * 8_000, **{f"X-H{i}": "v" for i in range(90)}},
        timeout=10,
    )
    assert answer.status_code == 401  # read, then refused for want of a key


def test_a_connection_that_sends_no_head_is_closed_after_the_head_timeout(limited: int) -> None:
    sockets = [socket.create_connection(("127.0.0.1", limited)) for _ in range(3)]
    sockets[1].sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # a head never finished
    started = time.monotonic()
    try:
        answers = [_answer(sock) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()
    assert time.monotonic() - started >= SHORT.head_timeout * 0.9
    assert [_status(a) for a in answers] == [408, 408, 408]


def _after_one_kept_alive_request(port: int, then: bytes) -> tuple[bytes, bytes]:
    """The answer to one request, then everything the server sends after ``then`` on the
    same connection."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(10)
        first = sock.recv(65536)
        sock.sendall(then)  # the next head stalls, or is too large
        return first, _answer(sock)


def test_a_keep_alive_connection_gets_the_head_timeout_for_its_next_request(
    limited: int,
) -> None:
    first, rest = _after_one_kept_alive_request(limited, b"GET /healthz HTTP/1.1\r\nHo")
    assert _status(first) == 200
    assert _status(rest) == 408


def test_a_body_that_stalls_is_408(limited: int, database_url: str) -> None:
    tenant = Tenant(database_url)
    with socket.create_connection(("127.0.0.1", limited)) as sock:
        sock.sendall(
            (
                "POST /v1/leads HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Authorization: Bearer {tenant.key}\r\nContent-Length: 500\r\n\r\n"
                '{"subscription_id": '
            ).encode()
        )
        answer = _answer(sock)
    assert _status(answer) == 408 and b'"error":"request_timeout"' in answer
    assert b"application/problem+json" in answer
    assert tenant.leads() == 0


def test_past_the_connection_cap_a_request_is_503(limited: int) -> None:
    idle = [socket.create_connection(("127.0.0.1", limited)) for _ in range(SHORT.max_connections)]
    try:
        answer = requests.get(f"http://127.0.0.1:{limited}/healthz", timeout=10)
    finally:
        for sock in idle:
            sock.close()
    # uvicorn's own plain-text 503, taken over: a problem like every other error.
    problem_of(answer, 503, "server_busy")
    assert answer.headers["Retry-After"] == "1"


# -- `morpheus serve` itself -------------------------------------------------------------------


@pytest.fixture
def serve_process(database_url: str) -> Iterator[tuple[int, psutil.Process]]:
    # Two workers, as `morpheus serve` runs by default: uvicorn then pickles its options.
    with morpheus_serve(database_url, workers=2) as (base, pid):
        yield int(base.rsplit(":", 1)[1]), psutil.Process(pid)


def _tree_rss(process: psutil.Process) -> int:
    return sum(p.memory_info().rss for p in [process, *process.children(recursive=True)])


def test_morpheus_serve_refuses_three_100_mb_headers_without_growing(serve_process) -> None:
    port, process = serve_process
    before = _tree_rss(process)
    results = [_flood_header(port, limit_bytes=100 * 1024 * 1024) for _ in range(3)]
    grown = _tree_rss(process) - before
    for sent, answer in results:
        assert sent < 16 * 1024 * 1024
        assert answer == b"" or _status(answer) == 431
    assert grown < 20 * 1024 * 1024, f"the server grew by {grown / 2**20:.0f} MiB"
    assert requests.get(f"http://127.0.0.1:{port}/healthz", timeout=10).ok


def _statuses(answer: bytes) -> list[int]:
    return [int(part.split(b" ", 1)[0]) for part in answer.split(b"HTTP/1.1 ")[1:]]


def test_a_large_body_and_the_next_pipelined_head_are_not_counted_as_one_head(
    limited: int,
) -> None:
    body = b'{"x": "' + b"y" * 30_000 + b'"}'
    first = b"POST /v1/leads HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
    second = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", limited)) as sock:
        sock.sendall(first + body + second)
        answer = _answer(sock)
    assert _statuses(answer) == [401, 200]  # each answered for itself, in order


@pytest.mark.parametrize("split", [None, 10_000])
def test_a_finished_head_over_the_limit_is_431_however_it_arrives(
    limited: int, split: int | None
) -> None:
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 200_000 + b"\r\n\r\n"
    with socket.create_connection(("127.0.0.1", limited)) as sock:
        try:
            if split is None:
                sock.sendall(head)
            else:
                sock.sendall(head[:split])
                sock.sendall(head[split:])
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            answer = _answer(sock)
        except ConnectionResetError:  # closed with our bytes unread: the 431 may be lost
            answer = b""
        assert _statuses(answer) in ([431], [])  # never served


def test_an_oversize_head_after_a_kept_alive_request_is_431_after_its_answer(
    limited: int,
) -> None:
    big = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 40_000 + b"\r\n\r\n"
    first, rest = _after_one_kept_alive_request(limited, big)
    assert _statuses(first) == [200] and _statuses(rest) == [431]
