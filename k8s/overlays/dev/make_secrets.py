"""Generate the dev overlay's secrets into a folder (``make k8s`` runs it): the signing key and
its JWKS, the PostgreSQL password and each service's database URL, and a self-signed TLS
certificate for the ingress. Files that exist are kept, so rendering again changes nothing.

    .venv/bin/python k8s/overlays/dev/make_secrets.py k8s/overlays/dev/secrets

Development only: production reads its secrets from a secret store (overlays/prod).
"""

from __future__ import annotations

import argparse
import datetime
import json
import secrets
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from okey101.platform.auth import SigningKey, jwks_of, load_signing_key

#: The ingress host of the dev overlay (resolves to 127.0.0.1).
HOST = "okey101.localtest.me"
#: The services with a database, each its own database on the dev PostgreSQL.
DATABASE_SERVICES = ("lobby", "table", "scoring")


def _write(folder: Path, name: str, make: Callable[[], bytes]) -> bool:
    path = folder / name
    if path.exists():
        return False
    path.write_bytes(make())
    path.chmod(0o600)
    return True


def _certificate() -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(HOST)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return certificate.public_bytes(serialization.Encoding.PEM), key_pem


def generate(folder: Path) -> list[str]:
    """Write the missing secret files into ``folder``; the names of those written."""
    folder.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    if _write(folder, "signing-key.pem", lambda: SigningKey.generate().pem()):
        written.append("signing-key.pem")
        (folder / "jwks.json").unlink(missing_ok=True)  # it must publish this key

    def jwks() -> bytes:
        key = load_signing_key(folder / "signing-key.pem")
        return (json.dumps(jwks_of(key), indent=2) + "\n").encode()

    if _write(folder, "jwks.json", jwks):
        written.append("jwks.json")
    if _write(folder, "postgres-password", lambda: secrets.token_urlsafe(24).encode()):
        written.append("postgres-password")
    password = (folder / "postgres-password").read_text().strip()
    for service in DATABASE_SERVICES:
        url = f"postgresql://okey101:{password}@postgres:5432/okey_{service}"
        if _write(folder, f"database-{service}", url.encode):
            written.append(f"database-{service}")
    if not (folder / "tls.crt").exists() or not (folder / "tls.key").exists():
        certificate, key = _certificate()
        (folder / "tls.crt").unlink(missing_ok=True)
        (folder / "tls.key").unlink(missing_ok=True)
        _write(folder, "tls.key", lambda: key)
        _write(folder, "tls.crt", lambda: certificate)
        written += ["tls.crt", "tls.key"]
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("folder", type=Path, help="where the secret files go")
    args = parser.parse_args(argv)
    written = generate(args.folder)
    if written:
        print(f"{args.folder}: generated {', '.join(written)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
