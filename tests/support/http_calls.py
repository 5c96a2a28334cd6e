"""Plain HTTP/1.1 calls to the edge, as curl would make them, and what they answer (the edge
tests' helpers)."""

from __future__ import annotations

import http.client
import struct


def post(
    port: int, path: str, body: bytes, content_type: str, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    """POST ``body`` to 127.0.0.1:``port``; (status, headers lowercased, body). Header names
    are given as keywords, ``_`` for ``-`` (``Connect_Protocol_Version="1"``)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        names = {
            "Content-Type": content_type,
            **{key.replace("_", "-"): value for key, value in headers.items()},
        }
        connection.request("POST", path, body=body, headers=names)
        answer = connection.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        connection.close()


def grpc_web_frames(body: bytes) -> tuple[list[bytes], dict[str, str]]:
    """A gRPC-Web answer's messages and its trailers (lowercased names)."""
    messages, trailers, at = [], {}, 0
    while at < len(body):
        flags, length = struct.unpack(">BI", body[at : at + 5])
        chunk = body[at + 5 : at + 5 + length]
        at += 5 + length
        if flags & 0x80:
            for line in chunk.decode().split("\r\n"):
                if line:
                    key, _, value = line.partition(":")
                    trailers[key.strip().lower()] = value.strip()
        else:
            messages.append(chunk)
    return messages, trailers
