"""Dependency direction (STYLE §3.2) and packaging completeness."""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HEADLESS = [
    "fminspect",
    "fminspect.metrics",
    "fminspect.io",
    "fminspect.pipeline",
    "fminspect.ranking",
    "fminspect.batch",
    "fminspect.meta",
    "fminspect.inspector",
    "fminspect.cli",
]


@pytest.mark.slow
@pytest.mark.parametrize("module", HEADLESS)
def test_core_modules_load_no_qt(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'PySide6', 'pyqtgraph', 'shiboken6', 'qtpy', 'fminspect.gui'} "
        "or m.startswith('fminspect.gui'))\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} imports {out.stdout.strip()}"


def _loaded(statements: str, prefixes: tuple[str, ...]) -> list[str]:
    """The modules starting with one of ``prefixes`` that a fresh interpreter has loaded
    after running ``statements``."""
    code = (
        f"import sys\n{statements}\n"
        f"print(','.join(sorted(m for m in sys.modules if m.startswith({prefixes!r}))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [m for m in out.stdout.strip().split(",") if m]


def test_package_import_is_light() -> None:
    assert _loaded("import fminspect", ("cv2", "scipy", "numpy")) == []


def test_the_stores_alone_do_not_load_the_measures() -> None:
    # a tagging process, a study's server and the result store read and write records and
    # notes: none of them imports the measures (half a second for each process started)
    stores = "import fminspect.pipeline.tags, fminspect.pipeline.store, fminspect.pipeline"
    assert _loaded(stores, ("fminspect.metrics",)) == []


def test_the_measures_load_scikit_image_s_morphology_only_when_used() -> None:
    # scikit-image's morphology and measure modules (with scipy.ndimage, scipy.spatial…)
    # took ~0.3 s of every process importing the measures, every eval worker's; only HCE
    # and the size-invariant family use them
    heavy = ("skimage.morphology", "skimage.measure", "scipy.ndimage")
    assert _loaded("import fminspect.metrics", heavy) == []


def test_every_name_of_the_pipeline_package_resolves() -> None:
    import fminspect.pipeline as pipeline

    assert sorted(pipeline.__all__) == sorted(pipeline._HOMES)
    for name in pipeline.__all__:
        module = importlib.import_module(f"fminspect.pipeline.{pipeline._HOMES[name]}")
        assert getattr(pipeline, name) is getattr(module, name), name
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        pipeline.nothing  # noqa: B018


def test_building_the_command_line_parser_is_light() -> None:
    # every fminspect command builds the whole parser first: it must not import the measures
    build = "import fminspect.cli as c\nc.build_parser(); c.build_gui_parser()"
    assert _loaded(build, ("cv2", "scipy", "numpy", "matplotlib")) == []


def test_every_subpackage_is_listed_in_pyproject() -> None:
    listed = set(
        tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(p.parent.relative_to(REPO).parts)
        for p in (REPO / "fminspect").rglob("__init__.py")
    }
    assert found <= listed, f"missing from pyproject packages: {sorted(found - listed)}"
    assert "fminspect.resources" in listed


def test_the_import_contracts_hold() -> None:
    # the layers, Qt only in the windows, private modules, no cycles: pyproject.toml
    # [tool.importlinter] (also run by .ci/run)
    lint = Path(sys.executable).with_name("lint-imports")
    out = subprocess.run(
        [str(lint), "--no-cache"], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "0 broken" in out.stdout


def test_no_class_is_a_hub_and_the_window_module_stays_small() -> None:
    """No class over 600 lines and the window's module at most 800 (#47): a class that
    grows past them holds several jobs, as InspectorWindow did at 1,224 lines."""
    import ast

    package = Path(__file__).resolve().parents[1] / "fminspect"
    long = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                if lines > 600:
                    long.append(f"{path.relative_to(package)}: {node.name}, {lines} lines")
    assert long == []
    window = package / "gui" / "main_window.py"
    assert len(window.read_text(encoding="utf-8").splitlines()) <= 800
