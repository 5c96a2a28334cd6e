"""Local push providers for tests (``tests/lobby/test_push*.py``): FCM, APNs and a webhook
receiver on 127.0.0.1, each checking the requests it gets as its documentation specifies them.

- ``HttpServer``: an asyncio HTTP server in the test's own loop, over TLS (ALPN ``h2`` then
  ``http/1.1``) or plain TCP, speaking HTTP/2 with the ``h2`` library or HTTP/1.1; it records
  each request (``Received``, with its HTTP version) and answers what a handler says.
- ``FakeFcm``: FCM HTTP v1 and its OAuth 2.0 token endpoint. The service account it writes
  (``ServiceAccount``: a fresh RSA key, its ``token_uri`` pointing here) is what the lobby's
  google-auth signs its JWT assertion with; the token endpoint verifies the assertion (RS256
  with the account's public key, ``aud`` Google's token endpoint, ``iss`` the account, ``scope``
  firebase.messaging, an hour at most) and issues an access token, which ``messages:send``
  then requires as its bearer. A message must have a token, a notification with a title and a
  body, string data and an Android TTL such as ``"60s"``.
- ``FakeApns``: APNs' provider API: HTTP/2 only, ``POST /3/device/<hex token>``, a provider
  token that verifies as ES256 with the .p8 key's public half (``kid`` the key id, ``iss`` the
  team, ``iat`` within the hour), ``apns-topic`` the bundle id, ``apns-push-type: alert``,
  ``apns-expiration`` and ``apns-priority``, and a JSON payload with ``aps.alert``.
- ``WebhookReceiver``: a plain HTTP receiver that checks ``X-Okey-Signature`` (HMAC-SHA256 of
  ``<timestamp>.<body>``) and refuses a timestamp more than 5 minutes away.

Each answers 200 unless a test scripts otherwise (``fail_next``: a status, a JSON body and
headers, for the next request to one device), and keeps what it accepted (``accepted``) and
anything that broke its documentation (``violations``, which a test expects empty).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import hmac
import ipaddress
import json
import re
import ssl
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import h2.config
import h2.connection
import h2.events
import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
#: A service account's assertion names Google's token endpoint as its audience, wherever it is
#: sent (Google's "Using OAuth 2.0 for server to server applications").
GOOGLE_TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token"


# ---------------------------------------------------------------------------------------------
# Keys and certificates


@dataclass(frozen=True)
class Certificates:
    """A CA (its PEM: the lobby's ``push_ca_file``) and a server certificate it signed for
    127.0.0.1 and localhost."""

    ca_file: Path
    cert_file: Path
    key_file: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(self.cert_file), str(self.key_file))
        context.set_alpn_protocols(["h2", "http/1.1"])
        return context


def make_certificates(directory: Path) -> Certificates:
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "okey101 test push CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    made = Certificates(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    made.ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    made.cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    made.key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return made


@dataclass(frozen=True)
class ServiceAccount:
    """A Firebase service account's JSON key (written to ``path``) and its public key."""

    path: Path
    project_id: str
    client_email: str
    public_key: rsa.RSAPublicKey


def make_service_account(path: Path, token_uri: str) -> ServiceAccount:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    project = "okey101-test"
    email = f"push@{project}.iam.gserviceaccount.com"
    info = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": uuid.uuid4().hex,
        "private_key": key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode(),
        "client_email": email,
        "client_id": "1234567890",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": token_uri,
    }
    path.write_text(json.dumps(info))
    return ServiceAccount(path, project, email, key.public_key())


@dataclass(frozen=True)
class ApnsKey:
    """An APNs provider key (.p8, written to ``path``) and the ids that go with it."""

    path: Path
    key_id: str
    team_id: str
    topic: str
    public_key: ec.EllipticCurvePublicKey


def make_apns_key(path: Path) -> ApnsKey:
    key = ec.generate_private_key(ec.SECP256R1())
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ApnsKey(path, "ABC123DEFG", "DEF123GHIJ", "com.example.okey", key.public_key())


# ---------------------------------------------------------------------------------------------
# The HTTP server


@dataclass(frozen=True)
class Received:
    """One request as the server read it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    http_version: str
    at: float

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, status: int, document: Any = None, **headers: str) -> Reply:
        body = b"" if document is None else json.dumps(document).encode()
        named = tuple((name.replace("_", "-").lower(), value) for name, value in headers.items())
        kind = (("content-type", "application/json"),) if body else ()
        return cls(status, body, kind + named)


Handler = Callable[[Received], Awaitable[Reply]]


class HttpServer:
    """HTTP/2 (h2, through ALPN) or HTTP/1.1 on 127.0.0.1 (module docstring)."""

    def __init__(self, handler: Handler, context: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.context = context
        self.received: list[Received] = []
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        self._server = await asyncio.start_server(
            self._connection, "127.0.0.1", 0, ssl=self.context
        )
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            tls = writer.get_extra_info("ssl_object")
            if tls is not None and tls.selected_alpn_protocol() == "h2":
                await self._h2(reader, writer)
            else:
                await self._http1(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _answer(self, request: Received) -> Reply:
        self.received.append(request)
        try:
            return await self.handler(request)
        except Exception as error:  # a handler's bug: a 500 the test will see
            return Reply.of(500, {"error": repr(error)})

    async def _http1(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, version = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            reply = await self._answer(
                Received(method, path, headers, body, version.split("/")[1], time.monotonic())
            )
            out = [f"HTTP/1.1 {reply.status} X", f"content-length: {len(reply.body)}"]
            out += [f"{name}: {value}" for name, value in reply.headers]
            writer.write(("\r\n".join(out) + "\r\n\r\n").encode() + reply.body)
            await writer.drain()

    async def _h2(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        )
        connection.initiate_connection()
        writer.write(connection.data_to_send())
        streams: dict[int, tuple[dict[str, str], bytearray]] = {}
        answering: set[asyncio.Task[None]] = set()

        async def answer(stream_id: int, headers: dict[str, str], body: bytes) -> None:
            request = Received(
                headers.get(":method", ""),
                headers.get(":path", ""),
                headers,
                body,
                "2",
                time.monotonic(),
            )
            reply = await self._answer(request)
            response = [(":status", str(reply.status)), *reply.headers]
            response.append(("content-length", str(len(reply.body))))
            connection.send_headers(stream_id, response, end_stream=not reply.body)
            if reply.body:
                connection.send_data(stream_id, reply.body, end_stream=True)
            writer.write(connection.data_to_send())

        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    return
                for event in connection.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        fields = {str(k): str(v) for k, v in event.headers}
                        streams[event.stream_id] = (fields, bytearray())
                    elif isinstance(event, h2.events.DataReceived):
                        streams[event.stream_id][1].extend(event.data)
                        connection.acknowledge_received_data(
                            event.flow_controlled_length, event.stream_id
                        )
                    elif isinstance(event, h2.events.StreamEnded):
                        fields, body = streams.pop(event.stream_id)
                        task = asyncio.ensure_future(answer(event.stream_id, fields, bytes(body)))
                        answering.add(task)
                        task.add_done_callback(answering.discard)
                    elif isinstance(event, h2.events.ConnectionTerminated):
                        return
                writer.write(connection.data_to_send())
                await writer.drain()
        finally:
            for task in answering:
                task.cancel()


# ---------------------------------------------------------------------------------------------
# The providers


@dataclass
class Provider:
    """What every fake provider keeps: scripted replies by device, what it accepted, and what
    broke its documentation."""

    scripts: dict[str, list[Reply]] = field(default_factory=dict)
    accepted: list[Received] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    server: HttpServer | None = None

    def fail_next(self, device: str, *replies: Reply) -> None:
        """The next requests to ``device`` (a token, or a webhook's path) get ``replies``."""
        self.scripts.setdefault(device, []).extend(replies)

    def scripted(self, device: str) -> Reply | None:
        queue = self.scripts.get(device)
        return queue.pop(0) if queue else None

    def sends(self) -> list[Received]:
        """Every notification request, answered 200 or not (not the token endpoint's)."""
        assert self.server is not None
        return [r for r in self.server.received if r.path != "/token"]

    async def until(self, count: int, timeout: float = 20.0) -> list[Received]:
        """Once ``count`` notifications have been accepted: those."""
        async with asyncio.timeout(timeout):
            while len(self.accepted) < count:
                await asyncio.sleep(0.02)
        return list(self.accepted)

    def violation(self, what: str) -> None:
        self.violations.append(what)


class FakeFcm(Provider):
    """FCM HTTP v1 and its token endpoint (module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.account: ServiceAccount | None = None
        self.issued: set[str] = set()
        self.token_requests = 0

    @property
    def token_uri(self) -> str:
        assert self.server is not None
        return f"https://127.0.0.1:{self.server.port}/token"

    def base_url(self) -> str:
        assert self.server is not None
        return f"https://127.0.0.1:{self.server.port}"

    def messages(self) -> list[dict[str, Any]]:
        """The accepted messages (the ``message`` object of each request)."""
        return [request.json()["message"] for request in self.accepted]

    async def handle(self, request: Received) -> Reply:
        if request.path == "/token":
            return self._token(request)
        assert self.account is not None
        expected = f"/v1/projects/{self.account.project_id}/messages:send"
        if request.method != "POST" or request.path != expected:
            self.violation(f"{request.method} {request.path}")
            return Reply.of(404, {"error": {"code": 404, "status": "NOT_FOUND"}})
        bearer = request.headers.get("authorization", "")
        if not bearer.startswith("Bearer ") or bearer[7:] not in self.issued:
            self.violation("a send without an access token this server issued")
            return Reply.of(401, {"error": {"code": 401, "status": "UNAUTHENTICATED"}})
        if not request.headers.get("content-type", "").startswith("application/json"):
            self.violation("content-type")
        try:
            message = request.json()["message"]
            problem = _fcm_message_problem(message)
        except (ValueError, KeyError, TypeError) as error:
            problem = f"body: {error!r}"
            message = {}
        if problem:
            self.violation(problem)
            return Reply.of(400, {"error": {"code": 400, "status": "INVALID_ARGUMENT"}})
        reply = self.scripted(message["token"])
        if reply is not None:
            return reply
        self.accepted.append(request)
        name = f"projects/{self.account.project_id}/messages/{len(self.accepted)}"
        return Reply.of(200, {"name": name})

    def _token(self, request: Received) -> Reply:
        assert self.account is not None
        self.token_requests += 1
        form = {key: values[0] for key, values in parse_qs(request.body.decode()).items()}
        if form.get("grant_type") != JWT_BEARER:
            self.violation(f"grant_type {form.get('grant_type')}")
            return Reply.of(400, {"error": "unsupported_grant_type"})
        try:
            claims = jwt.decode(
                form.get("assertion", ""),
                self.account.public_key,
                algorithms=["RS256"],
                audience=GOOGLE_TOKEN_AUDIENCE,
                options={"require": ["iss", "aud", "iat", "exp", "scope"]},
            )
        except jwt.PyJWTError as error:
            self.violation(f"assertion: {error}")
            return Reply.of(400, {"error": "invalid_grant"})
        if claims["iss"] != self.account.client_email:
            self.violation(f"assertion iss {claims['iss']}")
        if FCM_SCOPE not in str(claims["scope"]).split():
            self.violation(f"assertion scope {claims['scope']}")
        if not 0 < claims["exp"] - claims["iat"] <= 3600:
            self.violation("assertion lifetime")
        access = f"ya29.{uuid.uuid4().hex}"
        self.issued.add(access)
        return Reply.of(200, {"access_token": access, "expires_in": 3599, "token_type": "Bearer"})


def _fcm_message_problem(message: dict[str, Any]) -> str:
    if not isinstance(message.get("token"), str) or not message["token"]:
        return "message.token"
    notification = message.get("notification", {})
    if not (
        isinstance(notification.get("title"), str) and isinstance(notification.get("body"), str)
    ):
        return "message.notification"
    data = message.get("data", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        return "message.data: strings only"
    if any(k.startswith(("google", "gcm")) or k in ("from", "message_type") for k in data):
        return "message.data: a reserved key"
    android = message.get("android", {})
    if not re.fullmatch(r"\d+(\.\d{1,9})?s", str(android.get("ttl", ""))):
        return "message.android.ttl"
    if android.get("priority") not in ("NORMAL", "HIGH"):
        return "message.android.priority"
    headers = message.get("apns", {}).get("headers", {})
    if not all(isinstance(v, str) for v in headers.values()):
        return "message.apns.headers: strings only"
    return ""


class FakeApns(Provider):
    """APNs' provider API (module docstring)."""

    def __init__(self, key: ApnsKey) -> None:
        super().__init__()
        self.key = key
        self.provider_tokens: set[str] = set()

    def base_url(self) -> str:
        assert self.server is not None
        return f"https://127.0.0.1:{self.server.port}"

    def payloads(self) -> list[dict[str, Any]]:
        return [request.json() for request in self.accepted]

    async def handle(self, request: Received) -> Reply:
        if request.http_version != "2":
            self.violation(f"HTTP/{request.http_version}: APNs takes HTTP/2 only")
            return Reply.of(505)
        match = re.fullmatch(r"/3/device/([0-9a-f]{64,200})", request.path)
        if request.method != "POST" or match is None:
            self.violation(f"{request.method} {request.path}")
            return Reply.of(400, {"reason": "BadPath"})
        reason = self._header_problem(request.headers)
        if reason:
            self.violation(reason)
            status = 403 if "ProviderToken" in reason else 400
            return Reply.of(status, {"reason": reason.split(":")[0]})
        try:
            payload = request.json()
            alert = payload["aps"]["alert"]
            assert isinstance(alert["title"], str) and isinstance(alert["body"], str)
        except (ValueError, KeyError, TypeError, AssertionError):
            self.violation("payload")
            return Reply.of(400, {"reason": "PayloadEmpty"})
        reply = self.scripted(match.group(1))
        if reply is not None:
            return reply
        self.accepted.append(request)
        return Reply.of(200, apns_id=request.headers["apns-id"])

    def _header_problem(self, headers: dict[str, str]) -> str:
        authorization = headers.get("authorization", "")
        if not authorization.startswith("bearer "):
            return "MissingProviderToken"
        token = authorization[7:]
        try:
            header = jwt.get_unverified_header(token)
            claims = jwt.decode(
                token, self.key.public_key, algorithms=["ES256"], options={"verify_aud": False}
            )
        except jwt.PyJWTError as error:
            return f"InvalidProviderToken: {error}"
        if header.get("kid") != self.key.key_id or header.get("alg") != "ES256":
            return "InvalidProviderToken: kid"
        if claims.get("iss") != self.key.team_id:
            return "InvalidProviderToken: iss"
        if not time.time() - 3600 < float(claims.get("iat", 0)) <= time.time() + 5:
            return "ExpiredProviderToken"
        self.provider_tokens.add(token)
        if headers.get("apns-topic") != self.key.topic:
            return "BadTopic"
        if headers.get("apns-push-type") != "alert":
            return "InvalidPushType"
        if not headers.get("apns-expiration", "").isdigit():
            return "BadExpirationDate"
        if headers.get("apns-priority") not in ("5", "10"):
            return "BadPriority"
        collapse = headers.get("apns-collapse-id", "")
        if len(collapse.encode()) > 64:
            return "BadCollapseId"
        try:
            uuid.UUID(headers.get("apns-id", ""))
        except ValueError:
            return "BadMessageId"
        return ""


class WebhookReceiver(Provider):
    """A webhook receiver that checks signatures (module docstring)."""

    def __init__(self, secret: bytes) -> None:
        super().__init__()
        self.secret = secret

    def url(self, name: str) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.port}/hook/{name}"

    def documents(self) -> list[dict[str, Any]]:
        return [request.json() for request in self.accepted]

    async def handle(self, request: Received) -> Reply:
        if not verified(self.secret, request.headers, request.body):
            self.violation("a webhook that does not verify")
            return Reply.of(401, {"error": "signature"})
        reply = self.scripted(request.path)
        if reply is not None:
            return reply
        self.accepted.append(request)
        return Reply.of(200)


def verified(secret: bytes, headers: dict[str, str], body: bytes, now: float | None = None) -> bool:
    """A receiver's check (docs/push.md): the signature, then a timestamp within 5 minutes."""
    timestamp = headers.get("x-okey-timestamp", "")
    signature = headers.get("x-okey-signature", "")
    if not timestamp.isdigit():
        return False
    expected = hmac.new(secret, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(signature, f"sha256={expected}"):
        return False
    return abs((time.time() if now is None else now) - int(timestamp)) <= 300


@dataclass
class Providers:
    """The three local providers, and the settings that point a lobby at them."""

    fcm: FakeFcm
    apns: FakeApns
    webhook: WebhookReceiver
    certificates: Certificates
    secret_file: Path

    def settings(self) -> dict[str, Any]:
        assert self.fcm.account is not None
        return {
            "push_fcm_credentials_file": self.fcm.account.path,
            "push_fcm_url": self.fcm.base_url(),
            "push_apns_key_file": self.apns.key.path,
            "push_apns_key_id": self.apns.key.key_id,
            "push_apns_team_id": self.apns.key.team_id,
            "push_apns_topic": self.apns.key.topic,
            "push_apns_url": self.apns.base_url(),
            "push_webhook_secret_file": self.secret_file,
            "push_webhook_allow_loopback": True,
            "push_ca_file": self.certificates.ca_file,
        }

    def violations(self) -> list[str]:
        return self.fcm.violations + self.apns.violations + self.webhook.violations


@contextlib.asynccontextmanager
async def local_providers(directory: Path) -> AsyncIterator[Providers]:
    """FCM, APNs and a webhook receiver on 127.0.0.1, with their credentials under
    ``directory`` (module docstring)."""
    certificates = make_certificates(directory / "tls")
    secret = uuid.uuid4().hex.encode() + uuid.uuid4().hex.encode()
    secret_file = directory / "webhook-secret"
    secret_file.write_bytes(secret + b"\n")
    fcm, apns = FakeFcm(), FakeApns(make_apns_key(directory / "AuthKey.p8"))
    webhook = WebhookReceiver(secret)
    fcm.server = HttpServer(fcm.handle, certificates.server_context())
    apns.server = HttpServer(apns.handle, certificates.server_context())
    webhook.server = HttpServer(webhook.handle)
    for provider in (fcm, apns, webhook):
        assert provider.server is not None
        await provider.server.start()
    fcm.account = make_service_account(directory / "fcm-service-account.json", fcm.token_uri)
    try:
        yield Providers(fcm, apns, webhook, certificates, secret_file)
    finally:
        for provider in (fcm, apns, webhook):
            assert provider.server is not None
            await provider.server.stop()


__all__ = [
    "ApnsKey",
    "Certificates",
    "FakeApns",
    "FakeFcm",
    "HttpServer",
    "Providers",
    "Received",
    "Reply",
    "ServiceAccount",
    "WebhookReceiver",
    "local_providers",
    "make_apns_key",
    "make_certificates",
    "make_service_account",
    "verified",
]
