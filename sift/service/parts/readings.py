"""The PDF extractions running now, by (who may share it, URL or content key), with the face of
the document each reads: a request out of time answers the pages done so far, `/v1/progress`
and the CLI's progress bar show how far it has got. One per flight at most, so bounded as the
flights are. Used on the loop, read (`any`) from the CLI's progress thread too."""

from __future__ import annotations

from dataclasses import dataclass

from sift.core.types import Content
from sift.documents.pdf.runner import Progress

Key = tuple[str, str]


@dataclass(frozen=True)
class Reading:
    """One extraction in flight: how far it has got, and the document it reads."""

    progress: Progress
    face: Content


class Readings:
    def __init__(self) -> None:
        self._running: dict[Key, Reading] = {}

    def start(self, key: Key, progress: Progress, face: Content) -> None:
        """An extraction of a fetched document starts: the one shown under `key` now."""
        self._running[key] = Reading(progress, face)

    def join(self, key: Key, progress: Progress, face: Content) -> None:
        """An extraction of a local file's bytes starts: shown under `key` unless one of the
        same bytes runs already (the pool shares that one's job, so its progress is the one
        that moves)."""
        self._running.setdefault(key, Reading(progress, face))

    def end(self, key: Key, progress: Progress) -> None:
        """The extraction `progress` ended: no longer shown, unless another is shown instead."""
        reading = self._running.get(key)
        if reading is not None and reading.progress is progress:
            del self._running[key]

    def get(self, key: Key) -> Reading | None:
        return self._running.get(key)

    def any(self) -> Progress | None:
        """Some extraction running now (the CLI's one fetch has at most one)."""
        running = list(self._running.values())
        return running[0].progress if running else None
