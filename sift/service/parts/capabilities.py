"""What this server can do beyond fetching, as an operator needs to see it: rendering, OCR and
its languages, search, the model, the store. `/healthz` reports it and `sift serve` prints the
same lines at start, so a host where Chromium or Tesseract could not be installed says so.

Nothing secret is in it: no URL (SearXNG's, the model's or PostgreSQL's may carry credentials),
no key, only fixed states and Tesseract's language names. Tesseract's languages are read once,
at start, by a child off the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from sift.actors.store import StoreHealth
from sift.browser.engine import Engine
from sift.core.config import Config
from sift.documents.ocr.runner import tesseract

log = logging.getLogger("sift.capabilities")
LIST_LANGS_TIMEOUT = 10.0  # seconds `tesseract --list-langs` may take


class Capabilities:
    """Each capability as `{"state": …}` with its details; `lines` as `sift serve` prints them."""

    def __init__(self, cfg: Config, browser: Engine, store_health: StoreHealth) -> None:
        self.cfg = cfg
        self.browser = browser
        self.store_health = store_health
        self.ocr_binary = tesseract(cfg.ocr.tesseract)
        self.languages: list[str] | None = None  # Tesseract's, once read
        self._reading: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Read Tesseract's languages in the background (on the running loop)."""
        if self.ocr_binary is not None and self._reading is None:
            self._reading = asyncio.ensure_future(self._read_languages(self.ocr_binary))

    async def settled(self) -> None:
        """Until the languages are read (or could not be)."""
        self.start()
        if self._reading is not None:
            await asyncio.shield(self._reading)

    async def stop(self) -> None:
        """At shutdown: a read still running is given up (its child killed)."""
        if self._reading is not None and not self._reading.done():
            self._reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reading

    async def _read_languages(self, binary: str) -> None:
        proc = await asyncio.create_subprocess_exec(
            binary,
            "--list-langs",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={},  # as the OCR children run it
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), LIST_LANGS_TIMEOUT)
        except TimeoutError:
            log.warning("tesseract --list-langs did not answer in %.0f s", LIST_LANGS_TIMEOUT)
            self.languages = []
            return
        finally:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        self.languages = list_langs((out + err).decode(errors="replace"))

    def report(self) -> dict[str, dict[str, object]]:
        return {
            "render": self._render(),
            "ocr": self._ocr(),
            "search": {"state": _configured(self.cfg.search.searxng_url)},
            "model": {"state": _configured(self.cfg.digest.endpoint)},
            "store": {
                "state": "ok" if self.store_health.reason is None else "degraded",
                "backend": _backend(self.cfg.store.url),
            },
        }

    def lines(self) -> list[str]:
        """One line a capability: `ocr: ready (languages: eng, osd)`."""
        out = []
        for name, value in self.report().items():
            details = [
                f"{key}: {', '.join(map(str, v)) if isinstance(v, list) else v}"
                for key, v in value.items()
                if key != "state"
            ]
            said = f" ({'; '.join(details)})" if details else ""
            out.append(f"{name}: {value['state']}{said}")
        return out

    def _render(self) -> dict[str, object]:
        """`ready` is installed and on, whether or not a browser runs now (it starts at the
        first render): `browser` says which, read without starting one."""
        if not self.cfg.render.enabled:
            return {"state": "off"}
        if not self.browser.installed:
            return {"state": "not installed"}
        return {"state": "ready", "browser": self.browser.state}

    def _ocr(self) -> dict[str, object]:
        if self.ocr_binary is None:
            return {"state": "not installed"}
        if self.languages is None:
            return {"state": "checking"}
        missing = [n for n in self.cfg.ocr.languages.split("+") if n not in self.languages]
        if missing:
            have = self.languages
            return {"state": "language not installed", "missing": missing, "languages": have}
        return {"state": "ready", "languages": self.languages}


def list_langs(text: str) -> list[str]:
    """The language names of `tesseract --list-langs` (after its "List of available…" line)."""
    lines = text.splitlines()
    start = next((i + 1 for i, ln in enumerate(lines) if ln.startswith("List of")), len(lines))
    return [ln.strip() for ln in lines[start:] if ln.strip()]


def _configured(setting: str) -> str:
    return "configured" if setting else "not configured"


def _backend(url: str) -> str:
    return "sqlite" if url.startswith("sqlite:") else "postgresql"
