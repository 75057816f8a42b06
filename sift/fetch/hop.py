"""One hop of a transfer on a curl handle: its options, with curl pinned to the addresses the
guard checked, and the guard again at connect time.

curl never resolves a name itself: it is handed exactly the checked addresses
(`CURLOPT_RESOLVE`), so a DNS answer that changes after the check (rebinding) is never used.
`OPENSOCKETFUNCTION` checks every address curl is about to connect to and `PREREQFUNCTION`
the connection a request is about to be sent on (`ConnectCheck`). Redirects are not
followed by curl: the Fetcher follows them hop by hop.
"""

from __future__ import annotations

import logging
import socket
from typing import Any

import pycurl

from sift.core.errors import Blocked, SiftError
from sift.fetch.guard import Guard
from sift.fetch.identity import OWN_HEADERS, Signer
from sift.fetch.transfer import Transfer

log = logging.getLogger("sift.fetch")

# The site's own markdown first (for the same document), then HTML and the other kinds.
ACCEPT = (
    "text/markdown,text/html;q=0.9,application/xhtml+xml;q=0.9,application/json;q=0.8,"
    "text/plain;q=0.8,application/pdf;q=0.7,*/*;q=0.5"
)
_HAS_PREREQ = hasattr(pycurl, "PREREQFUNCTION")  # libcurl ≥ 7.80, pycurl ≥ 7.45.2
_PROTOCOLS = pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS


class ConnectCheck:
    """The guard at connect time. Its callbacks run inside curl's socket action on the
    fetcher's thread and must not raise: a refusal is kept on the transfer."""

    def __init__(self, guard: Guard) -> None:
        self.guard = guard
        self._opened: list[socket.socket] = []  # sockets handed to curl (as dups) this action

    def open(self, t: Transfer, addr: Any) -> Any:
        """A socket for `addr` if the guard allows it, else `SOCKET_BAD`."""
        try:
            if addr.family not in (socket.AF_INET, socket.AF_INET6):
                raise Blocked(f"address family {addr.family} not allowed")
            self.guard.check_address(addr.addr[0], addr.addr[1])
            sock = socket.socket(addr.family, addr.socktype, addr.protocol)
            self._opened.append(sock)  # pycurl keeps a dup; ours is closed after the action
            return sock
        except Blocked as exc:
            t.blocked = exc
        except Exception:
            log.exception("opensocket callback failed")
            t.error = SiftError()
        return pycurl.SOCKET_BAD

    def prereq(self, t: Transfer, ip: str, port: int) -> int:
        """Whether the request may be sent on a connection to `ip`:`port` (a reused one too)."""
        try:
            self.guard.check_address(ip, port)
            return int(pycurl.PREREQFUNC_OK)
        except Blocked as exc:
            t.blocked = exc
        except Exception:
            log.exception("prereq callback failed")
            t.error = SiftError()
        return int(pycurl.PREREQFUNC_ABORT)

    def close_opened(self) -> None:
        """Close our copies of the sockets handed to curl during the last socket action."""
        for sock in self._opened:
            sock.close()
        self._opened.clear()


def setup(
    curl: pycurl.Curl,
    t: Transfer,
    remaining: float,
    user_agent: str,
    check: ConnectCheck,
    signer: Signer | None = None,
) -> None:
    """Set `curl` up for the transfer's current hop, within `remaining` seconds; signed for
    this hop's authority when sift has an identity (`signer`)."""
    curl.reset()
    sent = t.sent
    if signer is not None:  # sift's signature is the one a site sees, never the caller's
        sent = tuple((n, v) for n, v in sent if n.lower() not in OWN_HEADERS)
    own = {name.lower() for name, _ in sent}
    headers = [] if "accept" in own else ["Accept: " + ACCEPT]
    headers += [f"{name}: {value}" for name, value in sent]
    if signer is not None:
        headers += signer.headers(t.target.scheme, t.target.host, t.target.port)
    for name, value in (("If-None-Match", t.etag), ("If-Modified-Since", t.last_modified)):
        if value:
            headers.append(f"{name}: " + " ".join(value.splitlines()).strip())
    options: list[tuple[int, Any]] = [
        (pycurl.URL, t.target.url),
        (pycurl.PROTOCOLS, _PROTOCOLS),
        (pycurl.REDIR_PROTOCOLS, _PROTOCOLS),
        (pycurl.FOLLOWLOCATION, 0),
        (pycurl.NOSIGNAL, 1),
        (pycurl.PROXY, ""),
        (pycurl.NOPROXY, "*"),
        (pycurl.ACCEPT_ENCODING, ""),
        (pycurl.USERAGENT, user_agent),
        (pycurl.HTTPHEADER, headers),
        (pycurl.TIMEOUT_MS, max(1, int(remaining * 1000))),
        (pycurl.HEADERFUNCTION, t.on_header),
        (pycurl.WRITEFUNCTION, t.on_write),
        (pycurl.OPENSOCKETFUNCTION, lambda purpose, addr: check.open(t, addr)),
    ]
    if not t.target.literal:  # "+": an ordinary cache entry that expires, not a permanent one
        pinned = ",".join(f"[{ip}]" if ":" in ip else ip for ip in t.addresses)
        options.append((pycurl.RESOLVE, [f"+{t.target.host}:{t.target.port}:{pinned}"]))
    if _HAS_PREREQ:
        prereq = lambda ip, _lip, port, _lport: check.prereq(t, ip, port)  # noqa: E731
        options.append((pycurl.PREREQFUNCTION, prereq))
    for option, value in options:
        curl.setopt(option, value)
