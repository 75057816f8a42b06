"""The guard: which URLs sift may fetch, and which addresses it may connect to.

Only http and https, no userinfo, ports 80 and 443 (plus `allow_ports`), and only public
addresses — unless an address lies inside `allow_prefixes`, which also lifts the port rule.
Three entry points share one rule set:

- `precheck(url)` parses and normalises a URL without resolving names (batch submit, and the
  first step of every fetch and redirect hop). A literal address is read the way a resolver
  (`inet_aton`) reads it, so `2130706433`, `0x7f.1` and `0177.0.0.1` are all 127.0.0.1.
- `resolve_and_check(target)` resolves a name and requires every address to pass. It blocks:
  run it off the actor thread. The fetcher pins curl to exactly these addresses, so a DNS
  answer that changes after the check (rebinding) is never used.
- `check_address(ip, port)` is the rule for one concrete address; the fetcher calls it again at
  connect time on the address curl actually uses.

The normalised `Target.url` (canonical host, default port dropped, unsafe path characters
escaped, no fragment) is what the fetcher hands to curl, so curl never parses a host spelling
the guard did not see.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

from sift.core.errors import BadRequest, Blocked, SiftError, UpstreamError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]

DEFAULT_PORTS = {"http": 80, "https": 443}
# What the operator's log says would allow a refused address or port (never the caller's answer).
ALLOW_ADDRESS = "[guard] allow_prefixes (the address's network; any port)"
ALLOW_PORT = "[guard] allow_ports"
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
_QUERY_SAFE = _PATH_SAFE + "?"
_NAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*")
_V4_PART = re.compile(r"0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*")
_NUMERIC_LABEL = re.compile(r"[0-9]+|0[xX][0-9a-fA-F]*")


IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def _nets(*pairs: tuple[str, str]) -> list[tuple[IPNetwork, str]]:
    return [(ipaddress.ip_network(net), name) for net, name in pairs]


# First match names the class. Anything not listed that Python does not call global is
# "reserved" too (see `describe`).
_V4_CLASSES = _nets(
    ("0.0.0.0/32", "unspecified"),
    ("0.0.0.0/8", "reserved"),  # "this network"
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "CGNAT"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local"),
    ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "reserved"),  # IETF protocol assignments
    ("192.0.2.0/24", "documentation"),
    ("192.88.99.0/24", "reserved"),  # 6to4 relay anycast
    ("192.168.0.0/16", "private"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation"),
    ("203.0.113.0/24", "documentation"),
    ("224.0.0.0/4", "multicast"),
    ("255.255.255.255/32", "broadcast"),
    ("240.0.0.0/4", "reserved"),
)
_V6_CLASSES = _nets(
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("64:ff9b:1::/48", "reserved"),  # local-use NAT64
    ("100::/64", "reserved"),  # discard-only
    ("2001::/32", "reserved"),  # Teredo
    ("2001:2::/48", "benchmarking"),
    ("2001:db8::/32", "documentation"),
    ("3fff::/20", "documentation"),
    ("fc00::/7", "private"),
    ("fe80::/10", "link-local"),
    ("fec0::/10", "private"),  # site-local, deprecated
    ("ff00::/8", "multicast"),
)
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_V4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_SIXTOFOUR = ipaddress.IPv6Network("2002::/16")


@dataclass(frozen=True)
class Target:
    """A URL that passed the pre-check: normalised parts and the URL curl will fetch."""

    scheme: str
    host: str  # lower case, no trailing dot; an IPv6 address without brackets
    port: int
    url: str

    @property
    def literal(self) -> bool:
        """True when the host is an IP address (nothing to resolve)."""
        return _ip(self.host) is not None


def parse_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address `inet_aton` reads in `host` (`127.1`, `0x7f000001`, `0177.0.0.1`), or None.

    Up to four parts, each decimal, octal (leading 0) or hex (0x); the last part fills the
    remaining bytes. This is what resolvers and curl accept, so the guard must read it too.
    """
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(_V4_PART.fullmatch(p) for p in parts):
        return None
    values = [_v4_part(p) for p in parts]
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (4 - len(head)):
        return None
    number = 0
    for v in head:
        number = number * 256 + v
    return ipaddress.IPv4Address(number * 256 ** (4 - len(head)) + last)


def _v4_part(part: str) -> int:
    if part[:2] in ("0x", "0X"):
        return int(part[2:] or "0", 16)
    return int(part, 8) if part.startswith("0") else int(part)


def describe(addr: IPAddress) -> str | None:
    """Why `addr` is not a public address ("private address 10.0.0.1"), or None if it is."""
    kind = classify(addr)
    if kind is None:
        return None
    embedded = _embedded_v4(addr) if isinstance(addr, ipaddress.IPv6Address) else None
    if embedded is not None:
        return f"{kind} address {addr} ({embedded[0]} {embedded[1]})"
    return f"{kind} address {addr}"


def classify(addr: IPAddress) -> str | None:
    """The class of a non-public address ("loopback", "private", ...), or None if public.

    An IPv6 address that carries an IPv4 address (mapped, NAT64, 6to4) has the class of the
    address it carries; IPv4-compatible addresses are deprecated and never public.
    """
    if isinstance(addr, ipaddress.IPv4Address):
        for net, name in _V4_CLASSES:
            if addr in net:
                return name
        return None if addr.is_global else "reserved"
    embedded = _embedded_v4(addr)
    if embedded is not None:
        how, v4 = embedded
        inner = classify(v4)
        return inner or ("reserved" if how == "IPv4-compatible" else None)
    for net, name in _V6_CLASSES:
        if addr in net:
            return name
    if addr not in _GLOBAL_UNICAST or not addr.is_global:
        return "reserved"
    return None


def _embedded_v4(addr: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """An IPv4 address that `addr` carries (mapped, compatible, NAT64, 6to4), if any."""
    if addr.ipv4_mapped is not None:
        return "IPv4-mapped", addr.ipv4_mapped
    if addr in _NAT64:
        return "NAT64", ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    if addr in _V4_COMPATIBLE and int(addr) > 1:
        return "IPv4-compatible", ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    if addr in _SIXTOFOUR:
        return "6to4", ipaddress.IPv4Address((int(addr) >> 80) & 0xFFFFFFFF)
    return None


def _ip(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None


def system_resolver(host: str, port: int) -> list[str]:
    """Every address `getaddrinfo` gives for host (no proxy settings are ever consulted)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class Guard:
    """The URL and address rules, configured by `[guard]`.

    Args:
        allow_prefixes: networks ("10.0.0.0/8") whose addresses are allowed, on any port.
        allow_ports: ports allowed besides 80 and 443.
        resolver: `resolver(host, port) -> [ip, ...]`; defaults to `getaddrinfo`. Tests inject
            one to answer names without DNS.
    """

    def __init__(
        self,
        allow_prefixes: Iterable[str] = (),
        allow_ports: Iterable[int] = (),
        resolver: Resolver | None = None,
    ) -> None:
        self.prefixes = [ipaddress.ip_network(p, strict=False) for p in allow_prefixes]
        self.ports = {80, 443, *allow_ports}
        self.resolver: Resolver = resolver or system_resolver

    def precheck(self, url: str) -> Target:
        """Parse and check `url` without resolving names.

        Raises:
            Blocked: a scheme, userinfo, port or literal address the rules refuse.
            BadRequest: not a URL sift can read (no host, bad port, malformed address).
        Returns:
            The normalised target.
        """
        try:
            parts = urlsplit(url.strip())
        except ValueError as exc:
            raise BadRequest(f"invalid url: {exc}") from None
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS:
            if not scheme or (not parts.netloc and ("." in scheme or parts.path[:1].isdigit())):
                raise BadRequest("invalid url: it must start with http:// or https://")
            raise Blocked(f"scheme {scheme} not allowed")
        if "@" in parts.netloc:
            raise Blocked("userinfo not allowed")
        host, port = self._host_port(parts.netloc, DEFAULT_PORTS[scheme])
        addr = _ip(host)
        if addr is not None:
            self.check_address(host, port)
        else:
            self.check_name(host, port)
        netloc = f"[{host}]" if ":" in host else host
        if port != DEFAULT_PORTS[scheme]:
            netloc += f":{port}"
        path = quote(parts.path, safe=_PATH_SAFE) or "/"
        query = quote(parts.query, safe=_QUERY_SAFE)
        if query:
            path += "?" + query
        return Target(scheme, host, port, f"{scheme}://{netloc}{path}")

    def check_name(self, host: str, port: int) -> None:
        """The rule for a host name before it is resolved: localhost names are loopback.

        The port is checked here only when no address could lift the port rule.
        """
        local = host == "localhost" or host.endswith(".localhost")
        if local and not self._allowed(ipaddress.ip_address("127.0.0.1")):
            raise Blocked(f"loopback name {host}", ALLOW_ADDRESS)
        if not self.prefixes and port not in self.ports:
            raise Blocked(f"port {port} not allowed", ALLOW_PORT)

    def check_address(self, ip: str, port: int) -> None:
        """The rule for one concrete address and port.

        Raises:
            Blocked: the address is not public (and not allowed), or the port is not allowed.
        """
        addr = _ip(ip)
        if addr is None:
            raise Blocked(f"not an IP address: {ip}")
        if self._allowed(addr):
            return
        reason = describe(addr)
        if reason is not None:
            raise Blocked(reason, ALLOW_ADDRESS)
        if port not in self.ports:
            raise Blocked(f"port {port} not allowed", ALLOW_PORT)

    def resolve_and_check(self, target: Target) -> list[str]:
        """Resolve the target's host and require every address to pass. Blocks: call it off the
        actor thread.

        Raises:
            Blocked: one of the addresses is refused.
            UpstreamError: the name does not resolve.
        Returns:
            The addresses.
        """
        if target.literal:
            self.check_address(target.host, target.port)
            return [target.host]
        try:
            addresses = self.resolver(target.host, target.port)
        except SiftError:
            raise
        except (OSError, UnicodeError):
            addresses = []
        if not addresses:
            raise UpstreamError(f"could not resolve host {target.host}")
        for ip in addresses:
            self.check_address(ip, target.port)
        return addresses

    def address_for(self, netloc: str) -> tuple[str, int]:
        """The one address to connect to for `host[:port]` (a proxy's request or CONNECT),
        checked as a fetch checks it: the name, every address it resolves to, the one used.
        Blocks (it resolves): call it off the loop.

        Raises:
            Blocked: the rules refuse the name, the port or an address.
            BadRequest / UpstreamError: not a host sift can read / the name does not resolve.
        """
        target = self.precheck(f"http://{netloc}/")
        ip = self.resolve_and_check(target)[0]
        self.check_address(ip, target.port)
        return ip, target.port

    def _allowed(self, addr: IPAddress) -> bool:
        candidates: list[IPAddress] = [addr]
        if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
            candidates.append(addr.ipv4_mapped)
        return any(a.version == n.version and a in n for a in candidates for n in self.prefixes)

    @staticmethod
    def _host_port(netloc: str, default: int) -> tuple[str, int]:
        """Split and normalise host and port; an IPv4 literal comes back dotted-quad."""
        if netloc.startswith("["):
            inside, sep, rest = netloc[1:].partition("]")
            addr = _ip(unquote(inside))
            if not sep or not isinstance(addr, ipaddress.IPv6Address):
                raise BadRequest(f"invalid url: bad IPv6 address [{inside}]")
            host = addr.compressed
        else:
            host, sep, rest = netloc.partition(":")
            rest = sep + rest
            host = _normalise_name(host)
        if rest and not re.fullmatch(r":[0-9]*", rest):
            raise BadRequest(f"invalid url: bad port {rest[1:]!r}")
        port = int(rest[1:]) if len(rest) > 1 else default
        if not 0 < port < 65536:
            raise BadRequest(f"invalid url: bad port {port}")
        return host, port


def _normalise_name(raw: str) -> str:
    """Lower case, percent-decoded, IDNA-encoded, no trailing dot; numeric hosts as dotted quad."""
    host = unquote(raw).lower()
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise BadRequest(f"invalid url: bad host name {raw!r}") from None
    if host.endswith("."):
        host = host[:-1]
    if not host:
        raise BadRequest("invalid url: no host")
    v4 = parse_ipv4(host)
    if v4 is not None:
        return str(v4)
    if _NUMERIC_LABEL.fullmatch(host.rsplit(".", 1)[-1]):
        raise BadRequest(f"invalid url: bad IPv4 address {raw!r}")
    if len(host) > 253 or not _NAME.fullmatch(host):
        raise BadRequest(f"invalid url: bad host name {raw!r}")
    return host
