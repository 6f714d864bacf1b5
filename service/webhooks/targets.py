"""Where a webhook may send: an http(s) URL whose host resolves only to public addresses, or to networks the
operator allows (``EVALSERVE_WEBHOOK_ALLOW_NETWORKS``: networks, each with an optional port; a plain network
still refuses the well-known service ports, so allowing 127.0.0.1/32 does not allow Redis on :6379). Checked at
registration and again before every delivery, whose connection is then pinned to the addresses checked
(``webhooks.transport``): DNS rebinding gains nothing.

Addresses are judged after resolution (getaddrinfo), so decimal (``2130706433``), octal (``0177.0.0.1``), short
(``127.1``) and hex forms are judged as the address they name; IPv6 forms embedding an IPv4 address (mapped,
compatible, 6to4, NAT64) are judged by that address too. No Flask here: the API and the workers share it.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalserve.service.core.config import AllowEntry
from evalserve.service.core.problem_codes import ProblemCode

if TYPE_CHECKING:  # imported where a URL is parsed: httpx is slow to load
    import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
#: an allow-list entry: a network with an optional port, or a bare network (read as an entry without a port)
Allowed = AllowEntry | IPNetwork

#: problem codes of a refused registration (422)
REFUSED = ProblemCode.WEBHOOK_TARGET_REFUSED
UNRESOLVABLE = ProblemCode.WEBHOOK_TARGET_UNRESOLVABLE
SCHEMES = {"http": 80, "https": 443}
#: 100.64.0.0/10, carrier-grade NAT: neither private nor global to ``ipaddress``, and never a receiver's
SHARED = ipaddress.ip_network("100.64.0.0/10")
NAT64 = ipaddress.ip_network("64:ff9b::/96")


class TargetError(ValueError):
    """A URL evalserve will not send to: ``code`` is ``REFUSED`` or ``UNRESOLVABLE``; the message says why."""

    def __init__(self, code: ProblemCode, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


@dataclass(frozen=True)
class Target:
    """A checked URL: its parts as the request will use them, and the addresses its connection may go to."""

    url: httpx.URL
    scheme: str
    host: str  # ASCII (IDNA) host name or IP literal, without brackets
    port: int
    addresses: tuple[str, ...]  # every address the host resolved to, all allowed, in resolver order


def parse(url: str) -> Target:
    """The URL's scheme, host and port as httpx (which sends the request) reads them; TargetError unless it is
    http(s), has a host and a valid port, and carries no credentials (``user:pass@``). Not resolved yet."""
    import httpx

    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise TargetError(REFUSED, "not a valid URL") from exc
    if parsed.scheme not in SCHEMES:
        raise TargetError(REFUSED, "only http and https URLs are accepted")
    if parsed.userinfo or "@" in re.split(r"[/?#]", url.split("//", 1)[-1], maxsplit=1)[0]:
        raise TargetError(REFUSED, "credentials in the URL (user:pass@) are not accepted")
    try:
        host = parsed.raw_host.decode("ascii")
    except UnicodeDecodeError as exc:
        raise TargetError(REFUSED, "not a valid host name") from exc
    if not host:
        raise TargetError(REFUSED, "the URL has no host")
    port = parsed.port or SCHEMES[parsed.scheme]
    if not 0 < port < 65536:
        raise TargetError(REFUSED, f"port {port} is not a valid port")
    return Target(parsed, parsed.scheme, host, port, ())


def resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (IPv4 and IPv6, resolver order, no duplicates); OSError if none.
    A module attribute so that tests can stand in for DNS (there is none beyond localhost on the test machine)."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def refusal(address: IPAddress) -> str | None:
    """Why evalserve does not send to ``address`` (``"a loopback address"``), or None for a public address."""
    embedded = _embedded_ipv4(address)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return refusal(address.ipv4_mapped)  # ::ffff:a.b.c.d is a.b.c.d on a dual-stack socket
    checks = (("is_unspecified", "an unspecified address"), ("is_loopback", "a loopback address"),
              ("is_link_local", "a link-local address"), ("is_multicast", "a multicast address"))
    for flag, reason in checks:
        if getattr(address, flag):
            return reason
    if address in SHARED:
        return "a shared (carrier-grade NAT) address"
    if embedded is not None:
        inner = refusal(embedded)
        if inner is not None:
            return f"an IPv6 address embedding {inner}"
        return None  # 6to4, NAT64 or IPv4-compatible forms of a public address reach that public address
    if address.is_private:
        return "a private address"
    if address.is_reserved:
        return "a reserved address"
    if not address.is_global:
        return "an address that is not public"
    return None


def allowed(address: IPAddress, allow: Iterable[Allowed], port: int | None = None) -> bool:
    """Is ``address`` (or the IPv4 address an IPv4-mapped one stands for) in one of the operator's entries that
    admits ``port``? An entry naming a port admits that port only; a plain one every port but the well-known
    service ports (Redis, PostgreSQL, ...: ``core.config.SERVICE_PORTS``). ``port`` None: the address alone."""
    plain = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped else address
    for item in allow:
        entry = item if isinstance(item, AllowEntry) else AllowEntry(item)
        if plain.version == entry.network.version and plain in entry.network \
                and (port is None or entry.admits(port)):
            return True
    return False


def check(url: str, allow: Sequence[Allowed] = ()) -> Target:
    """Parse ``url``, resolve its host and judge every address: the Target to connect to (pinned to those
    addresses), or TargetError. One refused address refuses the URL: the resolver could return it next time."""
    target = parse(url)
    try:
        addresses = resolve(target.host, target.port)
    except (OSError, UnicodeError) as exc:
        raise TargetError(UNRESOLVABLE, f"the host {target.host!r} does not resolve") from exc
    if not addresses:
        raise TargetError(UNRESOLVABLE, f"the host {target.host!r} does not resolve")
    for text in addresses:
        address = ipaddress.ip_address(text.split("%", 1)[0])  # an IPv6 scope (%eth0) does not change the kind
        if allowed(address, allow, target.port):
            continue
        reason = refusal(address)
        if reason is not None and allowed(address, allow):
            raise TargetError(REFUSED, f"port {target.port} of {target.host!r} is not allowed: the allow-list"
                                       " names this network without this port (well-known service ports must be"
                                       " named, as in 127.0.0.1:8081)")
        if reason is not None:
            named = "" if text == target.host else f" ({text})"
            raise TargetError(REFUSED, f"the host {target.host!r} resolves to {reason}{named}; webhooks are only"
                                       " sent to public addresses")
    return Target(target.url, target.scheme, target.host, target.port, tuple(addresses))


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address inside an IPv4-compatible (``::a.b.c.d``), 6to4 (``2002::/16``) or NAT64
    (``64:ff9b::/96``) IPv6 address; None for other addresses."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    value = int(address)
    if value >> 32 == 0 and value > 1:  # ::a.b.c.d (not :: or ::1, judged as themselves)
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if address in NAT64:
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    return None
