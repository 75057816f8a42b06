"""What the browser tests share: the system Chromium they render in, a render and guard
configuration (the origin on 127.0.0.1 allowed, 127.0.0.2 refused), a page only a browser
shows, a `Sentinel` on 127.0.0.2 that counts every connection the guard let through, and the
browser launches metric."""

from __future__ import annotations

import socket
import threading

BROWSER = "/usr/bin/chromium"

SCRIPT_PAGE = """<html><head><title>Script page</title></head><body><div id="app"></div>
<script>
document.getElementById('app').innerHTML = '<h1>Written by script</h1><p>' +
  'The quick brown fox was rendered by JavaScript in the browser. '.repeat(8) + '</p>';
</script></body></html>"""

RENDER = {"enabled": True, "browser": BROWSER, "deadline": "15s"}
GUARD = {"allow_prefixes": ["127.0.0.1/32"]}  # 127.0.0.2 is loopback, and refused


class Sentinel:
    """A TCP listener on 127.0.0.2 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.2", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    @property
    def netloc(self) -> str:
        return f"127.0.0.2:{self.port}"

    def close(self) -> None:
        self.sock.close()


def launches(sift) -> float:
    """Warm browsers started (the metric: one process holds every test's sift)."""
    text = sift.request("GET", "/metrics", token=None).body.decode()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("sift_browser_launches_total")
    )
