"""One TLS client context per process: each one loads the CA bundle, tens of milliseconds of start-up."""

from __future__ import annotations

import functools
import os
import ssl


@functools.cache
def client_context() -> ssl.SSLContext:
    """Verifying context with the CA bundle httpx would load: SSL_CERT_FILE or SSL_CERT_DIR, else certifi's."""
    if cafile := os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=cafile)
    if capath := os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=capath)
    import certifi

    return ssl.create_default_context(cafile=certifi.where())
