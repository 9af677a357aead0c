"""Where and how to connect: the address, the bearer token and TLS, from the
constructor's arguments or else the environment, read as ``redlockctl``
reads it (``REDLOCKD_ADDR``, ``REDLOCKD_TOKEN``, ``REDLOCKD_CA``,
``REDLOCKD_CERT`` with ``REDLOCKD_KEY``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional, Tuple

import grpc

from ._errors import InvalidArgument

#: The sidecar on loopback.
DEFAULT_ADDR = "127.0.0.1:7420"


@dataclass(frozen=True)
class TLS:
    """TLS settings, as PEM bytes: the CA to trust (``None``: the system's
    roots) and, for mutual TLS, a client certificate chain and its key."""

    ca: Optional[bytes] = None
    cert: Optional[bytes] = None
    key: Optional[bytes] = None

    def __post_init__(self) -> None:
        if (self.cert is None) != (self.key is None):
            raise InvalidArgument("invalid tls: cert and key must be given together")

    def __repr__(self) -> str:  # the key is a secret
        shown = ", ".join(f"{name}={'set' if getattr(self, name) else None}" for name in ("ca", "cert", "key"))
        return f"TLS({shown})"

    @staticmethod
    def from_files(ca: Optional[str] = None, cert: Optional[str] = None, key: Optional[str] = None) -> "TLS":
        """Reads the PEM files (paths)."""

        def read(path: Optional[str]) -> Optional[bytes]:
            if path is None:
                return None
            with open(path, "rb") as f:
                return f.read()

        if (cert is None) != (key is None):
            raise InvalidArgument("invalid tls: cert and key must be given together")
        return TLS(read(ca), read(cert), read(key))


@dataclass(frozen=True)
class Settings:
    target: str
    token: Optional[str]
    tls: Optional[TLS]

    def channel_credentials(self) -> grpc.ChannelCredentials:
        tls = self.tls
        return grpc.ssl_channel_credentials(root_certificates=tls.ca, private_key=tls.key, certificate_chain=tls.cert)

    def metadata(self) -> Optional[Tuple[Tuple[str, str], ...]]:
        if self.token is None:
            return None
        return (("authorization", f"Bearer {self.token}"),)


def settings(addr: Optional[str], token: Optional[str], tls: Optional[TLS]) -> Settings:
    """What was given, else what the environment says. ``addr`` is
    ``host:port``, ``http://host:port`` or ``https://host:port`` (TLS with
    the system's roots unless ``tls`` or ``REDLOCKD_CA`` says otherwise)."""

    def env(name: str) -> Optional[str]:
        return os.environ.get(name) or None

    addr = addr or env("REDLOCKD_ADDR") or DEFAULT_ADDR
    token = token if token is not None else env("REDLOCKD_TOKEN")
    if tls is None and (env("REDLOCKD_CA") or env("REDLOCKD_CERT") or env("REDLOCKD_KEY")):
        if bool(env("REDLOCKD_CERT")) != bool(env("REDLOCKD_KEY")):
            raise InvalidArgument("REDLOCKD_CERT and REDLOCKD_KEY must be set together")
        tls = TLS.from_files(env("REDLOCKD_CA"), env("REDLOCKD_CERT"), env("REDLOCKD_KEY"))
    if addr.startswith("https://"):
        addr, tls = addr[len("https://") :], tls or TLS()
    elif addr.startswith("http://"):
        if tls is not None:
            raise InvalidArgument(f"TLS settings need an https:// address (or host:port), not {addr}")
        addr = addr[len("http://") :]
    if token is not None and not (token.isascii() and token.isprintable() and token):
        raise InvalidArgument("invalid token: must be non-empty printable ASCII (it is sent as a header)")
    return Settings(addr.rstrip("/"), token, tls)
