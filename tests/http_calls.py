"""Plain HTTP/1.1 calls to the edge, as curl would make them (the edge tests' one helper)."""

from __future__ import annotations

import http.client


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
