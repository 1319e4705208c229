"""Test configuration shared by every test folder."""

from __future__ import annotations

import os

# Qt must never try to open a display in tests (set before any QApplication exists).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# The window's background work at the tests' own priority: on a machine kept busy by other
# work, niced work gets a few per cent of a core (fminspect._runtime.background_niceness;
# tests/gui/test_responsiveness.py checks the niceness the window gives it by default).
os.environ["FMINSPECT_NO_NICE"] = "1"

import tempfile
from pathlib import Path

import pytest

# The result store's index and the window's default store live in the user's cache folder:
# never the real one in tests (each test that cares gets its own, see isolated_cache).
os.environ["FMINSPECT_CACHE_DIR"] = tempfile.mkdtemp(prefix="fminspect-test-cache-")
os.environ["FMINSPECT_DATA_DIR"] = tempfile.mkdtemp(prefix="fminspect-test-data-")

from tests.reference import oracle


@pytest.fixture(scope="session")
def pysod(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """``run(cases, meta)`` → pysodmetrics 1.6.2's results (see tests/reference/oracle.py)."""
    if os.environ.get("FMINSPECT_SKIP_REFERENCE") == "1":
        pytest.skip("FMINSPECT_SKIP_REFERENCE=1: parity with pysodmetrics not checked")
    try:
        oracle.reference_python()
    except oracle.ReferenceUnavailable as exc:
        pytest.fail(str(exc))
    cache = getattr(request.config, "cache", None)  # None under -p no:cacheprovider
    cache_dir = cache.mkdir("fminspect-pysod") if cache else None

    def run(cases, meta=None):  # type: ignore[no-untyped-def]
        if meta is None:
            meta = [
                {"groups": ["classic", "handlers", "msiou"], "normalize": c["normalize"]}
                for c in cases
            ]
        return oracle.run(cases, meta, cache_dir)

    return run


@pytest.fixture(scope="session")
def pysod142(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """``run(cases)`` → pysodmetrics 1.4.2's classic measures (the release PySODEvalToolkit
    pins; tests/reference/pysod142_oracle.py)."""
    if os.environ.get("FMINSPECT_SKIP_REFERENCE") == "1":
        pytest.skip("FMINSPECT_SKIP_REFERENCE=1: parity with pysodmetrics 1.4.2 not checked")
    try:
        oracle.reference_python(old=True)
    except oracle.ReferenceUnavailable as exc:
        pytest.fail(str(exc))
    cache = getattr(request.config, "cache", None)
    cache_dir = cache.mkdir("fminspect-pysod142") if cache else None

    def run(cases):  # type: ignore[no-untyped-def]
        return oracle.run(cases, [{} for _ in cases], cache_dir, old=True)

    return run


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A fresh user cache folder per test: what one test stored is never read by another."""
    folder = tmp_path_factory.mktemp("user-cache")
    monkeypatch.setenv("FMINSPECT_CACHE_DIR", str(folder))
    return folder


@pytest.fixture(autouse=True)
def callbacks_do_not_fail(caplog: pytest.LogCaptureFixture):  # type: ignore[no-untyped-def]
    """A callback of the inspector model's events that raises is logged and the others run
    (fminspect.inspector.events): in a test, that log fails the test."""
    yield
    failed = [r for r in caplog.get_records("call") if r.name == "fminspect.inspector.events"]
    if failed:
        pytest.fail("\n".join(r.getMessage() + "\n" + (r.exc_text or "") for r in failed))


def _registered(family, monkeypatch: pytest.MonkeyPatch, attribute: str):  # type: ignore[no-untyped-def]
    """``family`` registered here and, through FMINSPECT_MEASURE_MODULES, in every process
    started meanwhile (workers, the window's scoring service); unregistered after."""
    from fminspect.metrics import REGISTRY
    from fminspect.metrics.suite import PLUGINS_VARIABLE

    monkeypatch.setenv(PLUGINS_VARIABLE, f"tests.toy_measure:{attribute}")
    registered = REGISTRY.register(family)
    try:
        yield registered
    finally:
        REGISTRY.unregister(family.field)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """The toy measure family of tests/toy_measure.py, registered as a plug-in is."""
    from tests.toy_measure import FAMILY

    yield from _registered(FAMILY, monkeypatch, "FAMILY")


@pytest.fixture
def toy_image(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """The toy family that needs the image (as C^ω_β does), registered as a plug-in is."""
    from tests.toy_measure import IMAGE_FAMILY

    yield from _registered(IMAGE_FAMILY, monkeypatch, "IMAGE_FAMILY")


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as an interactive shell gives it, whoever started the tests: a shell script
    that runs them in the background (``pytest &``) starts them with SIGINT ignored, and the
    processes they start inherit that, so the tests of what Ctrl-C does would see nothing
    (fminspect, rightly, leaves an ignored SIGINT alone)."""
    import signal
    import threading

    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    ):
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/gui carries the ``gui`` marker (``-m "not gui"``: no Qt).

    The tests keep their files' order. Running the ``slow`` ones first was tried: it put
    the tests that start many processes (Dask clusters, Octave, the reference oracles) side
    by side on both test processes, and ``.ci/run``'s tests took 7:05 idle against 6:08."""
    gui = Path(__file__).parent / "gui"
    for item in items:
        if gui in item.path.parents:
            item.add_marker(pytest.mark.gui)
