"""A small JSON-over-HTTP client on the standard library: one kept-alive
connection per session (a session steps one request at a time)."""

from __future__ import annotations

import http.client
import json
from typing import Any, Dict, Optional, Tuple
from urllib.parse import urlsplit

from ._types import SessionError


class JsonHttp:
    """Requests to one server, on a connection kept between them."""

    def __init__(self, base_url: str, *, token: Optional[str] = None, timeout: float = 300.0):
        parts = urlsplit(base_url.rstrip("/"))
        if parts.scheme not in ("http", "https"):
            raise ValueError(f"{base_url!r} is not an http(s) URL")
        self._scheme = parts.scheme
        self._netloc = parts.netloc
        self._prefix = parts.path
        self._timeout = timeout
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._conn: Optional[http.client.HTTPConnection] = None

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            self._conn = cls(self._netloc, timeout=self._timeout)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(
        self, method: str, path: str, body: Any = None
    ) -> Tuple[int, Dict[str, str], Any]:
        """Send once; on a connection the server closed meanwhile, once more
        on a new one (nothing was read, so nothing was done twice)."""
        data = None if body is None else json.dumps(body).encode()
        for attempt in (0, 1):
            conn = self._connection()
            try:
                conn.request(method, self._prefix + path, body=data, headers=self._headers)
                response = conn.getresponse()
                raw = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                if attempt == 1:
                    raise
                continue
            headers = {k.lower(): v for k, v in response.getheaders()}
            try:
                value = json.loads(raw) if raw else None
            except json.JSONDecodeError:
                value = raw.decode(errors="replace")
            return response.status, headers, value
        raise RuntimeError("unreachable")

    def json(self, method: str, path: str, body: Any = None, ok: Tuple[int, ...] = (200,)) -> Any:
        """The answer's JSON, or a :class:`SessionError` saying why not."""
        status, _, value = self.request(method, path, body)
        if status in ok:
            return value
        raise error_of(status, value)


def error_of(status: int, value: Any) -> SessionError:
    """A server's error answer as a :class:`SessionError`: the service's
    ``{"error"}`` and ``{"errors": [...]}``, OpenEnv's ``{"detail"}``."""
    kind = field = None
    message = f"HTTP {status}"
    if isinstance(value, dict):
        kind = value.get("kind")
        field = value.get("field")
        if isinstance(value.get("errors"), list) and value["errors"]:
            first = value["errors"][0]
            field = field or first.get("location")
            message = "; ".join(
                f"`{e.get('location') or e.get('file')}`: {e.get('message')}" for e in value["errors"]
            )
            kind = kind or "invalid"
        elif isinstance(value.get("detail"), list) and value["detail"]:
            message = "; ".join(str(d.get("msg")) for d in value["detail"])
        elif value.get("error") or value.get("detail"):
            message = str(value.get("error") or value.get("detail"))
    elif isinstance(value, str) and value:
        message = value
    return SessionError(message, status=status, kind=kind, field=field, body=value)
