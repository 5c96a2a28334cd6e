"""Plain HTTP/1.1 calls to the edge, as curl would make them, and what they answer (the edge
tests' helpers)."""

from __future__ import annotations

import base64
import http.client
import json
import struct
from typing import Any

from google.rpc import error_details_pb2


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


def lobby_json(port: int, method: str, message: dict[str, Any], token: str = "") -> tuple[int, Any]:
    """A LobbyService call as Connect JSON through the edge: (HTTP status, the answer's JSON)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    status, _headers, body = post(
        port,
        f"/okey.v1.LobbyService/{method}",
        json.dumps(message).encode(),
        "application/json",
        **headers,
    )
    return status, json.loads(body) if body else None


def error_reason(answer: dict[str, Any]) -> str:
    """The reason of a Connect JSON error's ErrorInfo."""
    by_type = {detail["type"]: detail["value"] for detail in answer["details"]}
    raw = by_type[error_details_pb2.ErrorInfo.DESCRIPTOR.full_name]
    info = error_details_pb2.ErrorInfo.FromString(base64.b64decode(raw + "=" * (-len(raw) % 4)))
    return str(info.reason)
