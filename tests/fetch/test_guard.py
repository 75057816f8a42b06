"""The guard's rules as pure functions: address classes, every spelling, ports, schemes."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from sift.core.errors import BadRequest, Blocked, UpstreamError
from sift.fetch.guard import Guard, Target, classify, describe, parse_ipv4

NON_PUBLIC = [
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("10.0.0.1", "private"),
    ("172.16.0.1", "private"),
    ("172.31.255.255", "private"),
    ("192.168.1.1", "private"),
    ("169.254.169.254", "link-local"),
    ("100.64.0.1", "CGNAT"),
    ("100.127.255.254", "CGNAT"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("0.0.0.0", "unspecified"),
    ("0.1.2.3", "reserved"),
    ("255.255.255.255", "broadcast"),
    ("240.0.0.1", "reserved"),
    ("192.0.0.8", "reserved"),
    ("192.0.2.1", "documentation"),
    ("198.51.100.7", "documentation"),
    ("203.0.113.9", "documentation"),
    ("198.18.0.1", "benchmarking"),
    ("198.19.255.255", "benchmarking"),
    ("192.88.99.1", "reserved"),
    ("::1", "loopback"),
    ("::", "unspecified"),
    ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("fe80::1", "link-local"),
    ("fec0::1", "private"),
    ("ff02::1", "multicast"),
    ("2001:db8::1", "documentation"),
    ("3fff::1", "documentation"),
    ("2001:2::1", "benchmarking"),
    ("100::1", "reserved"),
    ("2001::1", "reserved"),  # Teredo
    ("64:ff9b:1::1", "reserved"),
    ("::ffff:0:a00:1", "reserved"),  # IPv4-translated, outside 2000::/3
    ("4000::1", "reserved"),
    # IPv6 carrying a non-public IPv4 address
    ("::ffff:127.0.0.1", "loopback"),
    ("::ffff:10.1.2.3", "private"),
    ("::ffff:169.254.169.254", "link-local"),
    ("::127.0.0.1", "loopback"),  # IPv4-compatible
    ("::8.8.8.8", "reserved"),  # IPv4-compatible is deprecated, never public
    ("64:ff9b::127.0.0.1", "loopback"),  # NAT64
    ("64:ff9b::10.0.0.1", "private"),
    ("64:ff9b::a9fe:a9fe", "link-local"),
    ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
    ("2002:c0a8:101::1", "private"),  # 6to4 of 192.168.1.1
]

PUBLIC = [
    "93.184.216.34",
    "8.8.8.8",
    "1.1.1.1",
    "100.63.255.255",  # just below CGNAT
    "100.128.0.0",  # just above
    "172.15.255.255",
    "172.32.0.0",
    "2606:2800:220:1:248:1893:25c8:1946",
    "2a00:1450:4001:81c::200e",
    "::ffff:93.184.216.34",
    "64:ff9b::8.8.8.8",
    "2002:808:808::1",
]


@pytest.mark.parametrize(("ip", "kind"), NON_PUBLIC)
def test_non_public_addresses_are_classified(ip: str, kind: str) -> None:
    addr = ipaddress.ip_address(ip)
    assert classify(addr) == kind
    reason = describe(addr)
    assert reason is not None and reason.startswith(f"{kind} address ")


@pytest.mark.parametrize("ip", PUBLIC)
def test_public_addresses_pass(ip: str) -> None:
    assert classify(ipaddress.ip_address(ip)) is None
    Guard().check_address(ip, 443)


@pytest.mark.parametrize(("ip", "kind"), NON_PUBLIC)
def test_check_address_refuses_non_public(ip: str, kind: str) -> None:
    with pytest.raises(Blocked) as err:
        Guard().check_address(ip, 80)
    assert err.value.reason.startswith(f"{kind} address")
    assert err.value.message.startswith("blocked: ")
    assert err.value.status == 403


def test_embedded_addresses_name_what_they_carry() -> None:
    assert describe(ipaddress.ip_address("::ffff:127.0.0.1")) == (
        "loopback address ::ffff:7f00:1 (IPv4-mapped 127.0.0.1)"
    )
    assert describe(ipaddress.ip_address("2002:a00:1::1")) == (
        "private address 2002:a00:1::1 (6to4 10.0.0.1)"
    )


# Every way a resolver (inet_aton) or curl reads 127.0.0.1 and friends.
SPELLINGS = [
    ("2130706433", "127.0.0.1"),
    ("0x7f000001", "127.0.0.1"),
    ("0X7F000001", "127.0.0.1"),
    ("017700000001", "127.0.0.1"),
    ("0177.0.0.1", "127.0.0.1"),
    ("0177.0000.0000.0001", "127.0.0.1"),
    ("0x7f.0.0.1", "127.0.0.1"),
    ("0x7f.0x0.0x0.0x1", "127.0.0.1"),
    ("127.1", "127.0.0.1"),
    ("127.0.1", "127.0.0.1"),
    ("0x7f.1", "127.0.0.1"),
    ("0177.1", "127.0.0.1"),
    ("127.0x1", "127.0.0.1"),
    ("0x7f.0.0x1", "127.0.0.1"),
    ("10.0x10203", "10.1.2.3"),
    ("0xa.1.2.3", "10.1.2.3"),
    ("012.1.2.3", "10.1.2.3"),
    ("167772161", "10.0.0.1"),
    ("0xa9fea9fe", "169.254.169.254"),
    ("0", "0.0.0.0"),
    ("0.0.0.0", "0.0.0.0"),
]


@pytest.mark.parametrize(("spelling", "dotted"), SPELLINGS)
def test_ipv4_spellings_read_as_inet_aton_does(spelling: str, dotted: str) -> None:
    assert str(parse_ipv4(spelling)) == dotted
    assert socket.inet_ntoa(socket.inet_aton(spelling)) == dotted  # the system agrees


@pytest.mark.parametrize(
    "text", ["1.2.3.4.5", "256.1.1.1", "08.1.1.1", "1.0x1000000", "4294967296", "1..1", "a.b", ""]
)
def test_not_ipv4(text: str) -> None:
    assert parse_ipv4(text) is None


@pytest.mark.parametrize(("spelling", "dotted"), SPELLINGS)
def test_precheck_refuses_every_spelling_of_a_non_public_literal(
    spelling: str, dotted: str
) -> None:
    with pytest.raises(Blocked) as err:
        Guard().precheck(f"http://{spelling}/")
    assert dotted in err.value.reason


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://[::1]/", "loopback address ::1"),
        ("http://[::ffff:127.0.0.1]/", "loopback address"),
        ("http://[::ffff:7f00:1]/", "loopback address"),
        ("http://[0:0:0:0:0:ffff:127.0.0.1]/", "loopback address"),
        ("http://[::127.0.0.1]/", "loopback address"),
        ("http://[64:ff9b::10.0.0.1]/", "private address"),
        ("http://[2002:0a00:0001::]/", "private address"),
        ("http://[fe80::1%25eth0]/", "link-local address fe80::1"),
        ("http://[FD00::1]/", "private address fd00::1"),
        ("http://127.0.0.1./", "loopback address 127.0.0.1"),
        ("http://%31%32%37.0.0.1/", "loopback address 127.0.0.1"),
        ("http://１２７.０.０.１/", "loopback address 127.0.0.1"),  # full-width digits
        ("http://127。0。0。1/", "loopback address 127.0.0.1"),  # ideographic full stops
        ("HTTP://LOCALHOST/", "loopback name localhost"),
        ("http://localhost./", "loopback name localhost"),
        ("http://api.localhost/", "loopback name api.localhost"),
        ("http://169.254.169.254/latest/meta-data/", "link-local address 169.254.169.254"),
        ("http://100.64.0.1/", "CGNAT address 100.64.0.1"),
        ("http://0.0.0.0/", "unspecified address 0.0.0.0"),
        ("http://192.168.0.1:443/", "private address 192.168.0.1"),
    ],
)
def test_precheck_refuses_non_public_literals_and_names(url: str, reason: str) -> None:
    with pytest.raises(Blocked) as err:
        Guard().precheck(url)
    assert err.value.reason.startswith(reason), err.value.reason


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("file:///etc/passwd", "scheme file not allowed"),
        ("gopher://example.com/", "scheme gopher not allowed"),
        ("ftp://example.com/", "scheme ftp not allowed"),
        ("javascript:alert(1)", "scheme javascript not allowed"),
        ("http://user@example.com/", "userinfo not allowed"),
        ("http://user:pw@example.com/", "userinfo not allowed"),
        ("http://@example.com/", "userinfo not allowed"),
        ("http://example.com\\@127.0.0.1/", "userinfo not allowed"),
        ("http://example.com:8080/", "port 8080 not allowed"),
        ("https://93.184.216.34:22/", "port 22 not allowed"),
    ],
)
def test_precheck_refuses_schemes_userinfo_and_ports(url: str, reason: str) -> None:
    with pytest.raises(Blocked) as err:
        Guard().precheck(url)
    assert err.value.reason == reason


@pytest.mark.parametrize(
    "url",
    [
        "example.com",
        "localhost:8080/x",
        "http://",
        "http:///path",
        "http://[::1/",
        "http://ex ample.com/",
        "http://1.2.3.4.5/",
        "http://999.1.1.1/",
        "http://example.com:99999/",
        "http://example.com:0/",
        "http://example.com:x/",
        "http://[not-v6]/",
    ],
)
def test_precheck_rejects_malformed_urls(url: str) -> None:
    with pytest.raises(BadRequest):
        Guard().precheck(url)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://example.com", Target("http", "example.com", 80, "http://example.com/")),
        (
            "https://EXAMPLE.com.:443/a b/ü?q=x y#frag",
            Target("https", "example.com", 443, "https://example.com/a%20b/%C3%BC?q=x%20y"),
        ),
        ("http://example.com:443/", Target("http", "example.com", 443, "http://example.com:443/")),
        ("http://0x5db8d822/", Target("http", "93.184.216.34", 80, "http://93.184.216.34/")),
        (
            "http://[2606:2800:220:1::1]/x?a=1&b=%2F",
            Target("http", "2606:2800:220:1::1", 80, "http://[2606:2800:220:1::1]/x?a=1&b=%2F"),
        ),
        (
            "http://bücher.example/",
            Target("http", "xn--bcher-kva.example", 80, "http://xn--bcher-kva.example/"),
        ),
    ],
)
def test_precheck_normalises(url: str, expected: Target) -> None:
    assert Guard().precheck(url) == expected


def test_precheck_never_resolves() -> None:
    def resolver(host: str, port: int) -> list[str]:
        raise AssertionError("precheck must not resolve")

    target = Guard(resolver=resolver).precheck("https://some.name.example/")
    assert target.host == "some.name.example" and not target.literal


def test_allow_prefixes_let_addresses_through_on_any_port() -> None:
    guard = Guard(allow_prefixes=["127.0.0.0/8", "10.9.0.0/16", "fd00::/8"])
    for url in (
        "http://127.0.0.1:8731/",
        "http://0x7f.1:1/",
        "http://10.9.1.2:8080/x",
        "http://[fd00::5]:81/",
        "http://[::ffff:127.0.0.1]:9/",
    ):
        guard.precheck(url)
    guard.check_address("10.9.9.9", 1234)
    with pytest.raises(Blocked, match=r"private address 10\.8\.0\.1"):
        guard.check_address("10.8.0.1", 80)
    with pytest.raises(Blocked, match="loopback address ::1"):
        guard.check_address("::1", 80)  # 127.0.0.0/8 does not cover IPv6 loopback
    # localhost names are loopback: allowed only when 127.0.0.1 is.
    guard.precheck("http://localhost:8731/")
    with pytest.raises(Blocked, match="loopback name"):
        Guard(allow_prefixes=["10.0.0.0/8"]).precheck("http://localhost/")


def test_allow_ports() -> None:
    guard = Guard(allow_ports=[8080])
    guard.precheck("http://example.com:8080/")
    guard.check_address("93.184.216.34", 8080)
    with pytest.raises(Blocked, match="port 8081 not allowed"):
        guard.precheck("http://example.com:8081/")
    with pytest.raises(Blocked, match="port 22 not allowed"):
        guard.check_address("93.184.216.34", 22)
    # A non-public address is refused whatever the port.
    with pytest.raises(Blocked, match="private address"):
        guard.check_address("10.0.0.1", 8080)


def test_name_ports_wait_for_resolution_when_prefixes_could_allow_them() -> None:
    guard = Guard(allow_prefixes=["10.9.0.0/16"], resolver=lambda h, p: ["10.9.1.1"])
    target = guard.precheck("http://intranet.example:8080/")
    assert guard.resolve_and_check(target) == ["10.9.1.1"]
    public = Guard(allow_prefixes=["10.9.0.0/16"], resolver=lambda h, p: ["93.184.216.34"])
    with pytest.raises(Blocked, match="port 8080 not allowed"):
        public.resolve_and_check(public.precheck("http://example.com:8080/"))


def test_resolve_and_check_requires_every_address_to_pass() -> None:
    answers = {
        "ok.example": ["93.184.216.34", "2606:2800:220:1::1"],
        "mixed.example": ["93.184.216.34", "10.0.0.1"],
        "mapped.example": ["::ffff:192.168.0.1"],
    }
    guard = Guard(resolver=lambda host, port: answers[host])
    assert guard.resolve_and_check(guard.precheck("http://ok.example/")) == answers["ok.example"]
    with pytest.raises(Blocked, match=r"private address 10\.0\.0\.1"):
        guard.resolve_and_check(guard.precheck("http://mixed.example/"))
    with pytest.raises(Blocked, match="private address ::ffff:c0a8:1"):
        guard.resolve_and_check(guard.precheck("http://mapped.example/"))


def test_resolve_and_check_passes_port_and_reports_failures() -> None:
    calls: list[tuple[str, int]] = []

    def resolver(host: str, port: int) -> list[str]:
        calls.append((host, port))
        if host == "gone.example":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return []

    guard = Guard(resolver=resolver)
    with pytest.raises(UpstreamError, match=r"could not resolve host gone\.example") as err:
        guard.resolve_and_check(guard.precheck("https://gone.example/"))
    assert err.value.status == 502
    with pytest.raises(UpstreamError, match=r"could not resolve host empty\.example"):
        guard.resolve_and_check(guard.precheck("http://empty.example/"))
    assert calls == [("gone.example", 443), ("empty.example", 80)]


def test_resolve_and_check_skips_resolution_for_literals() -> None:
    def resolver(host: str, port: int) -> list[str]:
        raise AssertionError("a literal needs no resolver")

    guard = Guard(resolver=resolver)
    assert guard.resolve_and_check(guard.precheck("http://93.184.216.34/")) == ["93.184.216.34"]
