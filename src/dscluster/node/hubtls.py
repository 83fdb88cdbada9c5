"""The hub's self-signed TLS certificate for `--public`: made once (ECDSA P-256, 825 days, the master's
host name and addresses as its names), the key 0600 in the hub's private directory; its SHA-256
fingerprint is what people compare in their browser the first time."""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
from pathlib import Path

from dscluster.errors import DsclusterError
from dscluster.fsutil import atomic_write_bytes
from dscluster.i18n import tr


def fingerprint(cert_pem: bytes) -> str:
    from cryptography import x509  # noqa: PLC0415
    from cryptography.hazmat.primitives import hashes  # noqa: PLC0415

    digest = x509.load_pem_x509_certificate(cert_pem).fingerprint(hashes.SHA256())
    return ":".join(f"{b:02X}" for b in digest)


def _names() -> list:
    from cryptography import x509  # noqa: PLC0415

    host = socket.gethostname()
    names: list = [x509.DNSName(host), x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    try:
        for addr in {info[4][0] for info in socket.getaddrinfo(host, None, socket.AF_INET)}:
            if addr != "127.0.0.1":
                names.append(x509.IPAddress(ipaddress.ip_address(addr)))
    except OSError:
        pass
    return names


def ensure_certificate(private: Path) -> tuple[tuple[str, str], str]:
    """((cert path, key path), SHA-256 fingerprint): the existing pair, or a new one."""
    cert_path, key_path = private / "tls.crt", private / "tls.key"
    if cert_path.is_file() and key_path.is_file():
        return (str(cert_path), str(key_path)), fingerprint(cert_path.read_bytes())
    try:
        from cryptography import x509  # noqa: PLC0415
        from cryptography.hazmat.primitives import hashes, serialization  # noqa: PLC0415
        from cryptography.hazmat.primitives.asymmetric import ec  # noqa: PLC0415
        from cryptography.x509.oid import NameOID  # noqa: PLC0415
    except ImportError:
        raise DsclusterError(tr("the Python package cryptography is not installed"),
                             tr("install the hub extra: pip install 'dscluster[hub]'")) from None
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, socket.gethostname()[:64] or "dscluster-hub")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=825))
            .add_extension(x509.SubjectAlternativeName(_names()), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .sign(key, hashes.SHA256()))
    atomic_write_bytes(key_path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                   serialization.NoEncryption()), mode=0o600)
    pem = cert.public_bytes(serialization.Encoding.PEM)
    atomic_write_bytes(cert_path, pem, mode=0o644)
    os.chmod(private, 0o700)
    return (str(cert_path), str(key_path)), fingerprint(pem)
