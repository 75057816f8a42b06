"""Shared fixtures: the loopback origin, generated PDFs, a running sift, and two guards:
no test may leave actors running, and no test may log an unexpected ERROR."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

import pykka
import pytest

# Every shared fixture is registered here, once: a test asks for it by name, never imports it.
pytest_plugins = [
    "tests.support.origin",
    "tests.support.sift_server",
    "tests.support.fake_llm",
    "tests.support.fake_searxng",
    "tests.support.processes",
    "tests.support.replicas",
    "tests.support.log_capture",
    "tests.support.pdfs",
    "tests.support.agent_site",
    "tests.support.batch_rig",
    "tests.support.mcp_client",
]


def pytest_configure(config: pytest.Config) -> None:
    """Under `pytest -n`, each test process has a temporary directory of its own (inherited by
    the sift, `sift serve` and browser processes it starts), so a test that looks for what was
    left behind there sees only its own process's leftovers."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        path = Path(tempfile.mkdtemp(prefix=f"sift-tests-{worker}-"))
        path.chmod(0o1777)  # as /tmp: PostgreSQL and the browser run as users of their own
        os.environ["TMPDIR"] = tempfile.tempdir = str(path)
        config.stash[_OWN_TMP] = path


def pytest_unconfigure(config: pytest.Config) -> None:
    path = config.stash.get(_OWN_TMP, None)
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)


_OWN_TMP = pytest.StashKey[Path]()


@pytest.fixture(autouse=True)
def no_actors_left() -> object:
    yield
    left = pykka.ActorRegistry.get_all()
    if left:
        names = sorted(r.actor_class.__name__ for r in left)
        pykka.ActorRegistry.stop_all()
        pytest.fail(f"test left actors running: {names}")


class _ErrorCatcher(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(autouse=True)
def no_error_logs(request: pytest.FixtureRequest) -> object:
    """An ERROR log fails the test, unless the test is marked `allow_error_logs`."""
    catcher = _ErrorCatcher()
    root = logging.getLogger()
    root.addHandler(catcher)
    yield catcher
    root.removeHandler(catcher)
    if catcher.records and not request.node.get_closest_marker("allow_error_logs"):
        msgs = [f"{r.name}: {r.getMessage()}" for r in catcher.records]
        pytest.fail(f"unexpected ERROR logs: {msgs}")


@pytest.fixture(scope="session")
def pg_cluster():
    """A throwaway PostgreSQL cluster for the whole session (tests/support/pg.py)."""
    from tests.support.pg import start_cluster

    yield from start_cluster()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Files a test wrote for review (`record_property("artifact", path)`, the page's
    screenshots), named at the end of the run, under `-n` too."""
    paths = sorted(
        {
            str(value)
            for reports in terminalreporter.stats.values()
            for report in reports
            for name, value in getattr(report, "user_properties", ())
            if name == "artifact"
        }
    )
    if paths:
        terminalreporter.write_sep("-", "files written for review")
        for path in paths:
            terminalreporter.write_line(path)
