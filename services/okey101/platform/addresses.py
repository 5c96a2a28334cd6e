"""Who is calling: the client's network address, through the proxies we trust.

Limits per client address (guests minted, tables hosted) need the address of the client, not
of the proxy in front of the service. Behind an ingress or the edge the connection comes from
the proxy, which appends the address it saw to ``X-Forwarded-For`` (gRPC metadata
``x-forwarded-for``). That header is only as good as whoever wrote it: a client can send any
value. So the algorithm is the standard one (nginx's ``real_ip_recursive``): start from the
peer of the connection; while that address is one of the configured trusted proxies, step left
to the address it says it was called from. The first address that is not a trusted proxy is
the client. With no trusted proxies configured (the default) the header is ignored entirely.

``OKEY_TRUSTED_PROXIES``: a comma-separated list of addresses or CIDR networks
(``10.0.0.0/8,127.0.0.1``), read by every service and by the edge.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: The gRPC metadata key (and HTTP header, lowercased) a proxy appends the client to.
FORWARDED_FOR: Final = "x-forwarded-for"
#: The setting that names the trusted proxies.
TRUSTED_PROXIES_ENV: Final = "OKEY_TRUSTED_PROXIES"
#: The most addresses of a header read (a longer chain is cut from the left: its rightmost
#: entries, written by the proxies nearest to us, are the ones that can be trusted).
_MOST_HOPS: Final = 16


@dataclass(frozen=True)
class TrustedProxies:
    """The networks whose ``X-Forwarded-For`` is believed (none: the header is ignored)."""

    networks: tuple[IpNetwork, ...] = ()

    @classmethod
    def parse(cls, text: str) -> TrustedProxies:
        """From ``"10.0.0.0/8, 127.0.0.1"``; ValueError naming the entry that is no address."""
        networks = []
        for raw in text.split(","):
            item = raw.strip()
            if not item:
                continue
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError as error:
                raise ValueError(
                    f"{TRUSTED_PROXIES_ENV}: {item!r} is not an address or network"
                ) from error
        return cls(tuple(networks))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> TrustedProxies:
        return cls.parse((os.environ if env is None else env).get(TRUSTED_PROXIES_ENV, ""))

    def trusts(self, address: IpAddress | None) -> bool:
        return address is not None and any(address in network for network in self.networks)

    def client_address(self, peer: str | None, forwarded_for: Iterable[str] = ()) -> str:
        """The client's address as text (``"unknown"`` if the peer is not an IP address).

        ``peer`` is the connection's address in gRPC's form (``ipv4:1.2.3.4:5678``,
        ``ipv6:[::1]:5678``) or a bare address; ``forwarded_for`` the header's values, in the
        order received (each may be a comma-separated chain)."""
        current = parse_peer(peer)
        if current is None:
            return "unknown"
        if not self.networks:
            return str(current)
        chain: list[str] = []
        for value in forwarded_for:
            chain.extend(part.strip() for part in value.split(","))
        chain = [part for part in chain if part][-_MOST_HOPS:]
        while self.trusts(current) and chain:
            previous = _address(chain.pop())
            if previous is None:
                break  # a malformed entry: the last proxy we trust is as far as we can see
            current = previous
        return str(current)


def parse_peer(peer: str | None) -> IpAddress | None:
    """The address of a gRPC peer string (``ipv4:127.0.0.1:50000``, ``ipv6:[::1]:5``), or of a
    bare address; None for anything else (a Unix socket)."""
    if not peer:
        return None
    text = peer
    for scheme in ("ipv4:", "ipv6:"):
        if text.startswith(scheme):
            text = text[len(scheme) :]
            break
    else:
        return _address(text)
    text = text.removeprefix("[")
    if "]" in text:
        text = text.split("]", 1)[0]
    elif text.count(":") == 1:
        text = text.rsplit(":", 1)[0]
    return _address(text)


def _address(text: str) -> IpAddress | None:
    text = text.strip().removeprefix("[").split("]", 1)[0]
    if text.count(":") == 1 and "." in text:  # 1.2.3.4:5678 (a port some proxies add)
        text = text.split(":", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def grpc_client_address(context: object, trusted: TrustedProxies) -> str:
    """The client's address of a gRPC call (``context`` a servicer context)."""
    peer = getattr(context, "peer", None)
    metadata = getattr(context, "invocation_metadata", None)
    values = [
        str(value)
        for key, value in (metadata() if metadata is not None else None) or ()
        if key == FORWARDED_FOR
    ]
    return trusted.client_address(peer() if peer is not None else None, values)


__all__ = [
    "FORWARDED_FOR",
    "TRUSTED_PROXIES_ENV",
    "TrustedProxies",
    "grpc_client_address",
    "parse_peer",
]
