"""The papers' meta-measure figures, in shape, on a realistic generated benchmark.

The set is ``benchmarks/make_benchmark.py`` at its default seed (objects on a textured
background that partly imitates them, methods of varied quality with blur, shifts, misses and
false alarms): the generator the speed benchmarks use, not one made for this test. What is
asserted is what the paper reports, with its table cited; what the paper reports but this set
does not reproduce is written down instead of asserted.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from fminspect.io.discovery import discover
from fminspect.meta.runner import run_meta
from fminspect.meta.workflow import meta_config

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "make_benchmark.py"


def _make_benchmark(root: Path) -> Path:
    spec = importlib.util.spec_from_file_location("make_benchmark", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.make_benchmark(root, images=60, methods=5, size=(240, 320), names="plain", jobs=1)
    return root


@pytest.mark.slow
def test_noise_injection_has_the_shape_of_the_context_measure_papers_table_2(
    tmp_path: Path,
) -> None:
    """Context-measure paper, Table 2, MM#3 (noise sensitivity, §4.3), error rates on COD10K /
    NC4K / Trans10K: IoU 0.55 / 0.39 / 3.00 %, F_β 1.48 / 2.00 / 7.65 %, F^ω_β 0.01 %,
    S_α 10.47 / 8.43 / 0.53 %, E_φ 13.73 / 15.64 / 5.62 %, C_β 0.01 %.

    Asserted: the weighted F and C_β (both evaluate the map without thresholding it) make
    (almost) no error; the adaptively thresholded IoU and F stay in single digits; E_φ errs
    more often than F^ω_β and C_β. Not asserted: S_α's 8–10 % on COD10K/NC4K, which the paper
    puts down to moderate-quality camouflage predictions — on this set S_α makes no error.
    """
    (ds,), _ = discover(_make_benchmark(tmp_path / "bench"))
    config = meta_config(
        protocol="context2025",
        metas=["noise_injection"],
        measures=["adpIoU", "adpFm", "wFm", "Sm", "adpEm", "Cm"],
    )
    report = run_meta([ds], config, cache_path=tmp_path / "c.sqlite", progress=False)

    def rate(key: str) -> float:
        return report.value("bench", "noise_injection", "error rate", key)

    n = next(r.n for r in report.summary if r.measure == "Cm")
    assert n >= 150  # maps with F1 ≥ 0.6 (§4.3 (a)) out of 300
    assert rate("wFm") <= 0.01 and rate("Cm") <= 0.01
    for key in ("adpIoU", "adpFm"):
        assert rate(key) < 0.10, key
    assert rate("adpEm") > max(rate("wFm"), rate("Cm"))


@pytest.mark.slow
def test_sota_vs_noise_has_the_shape_of_the_e_measure_papers_table_2(tmp_path: Path) -> None:
    """E-measure paper, Table 2, MM3 (SOTA vs generic noise, §4.3), error rates on PASCAL /
    ECSSD / SOD / HKU: IoU/F1/JI 5.6 / 1.9 / 6.9 / 0.2 %, F^w_β 4.3 / 1.2 / 5.7 / 0.1 %,
    S-measure 0 %, E-measure 0 %.

    Asserted: the E-measure over its thresholds (meanEm) and the S-measure make no error —
    a noise map never beats the mean of the good maps — and E errs no more often than IoU,
    F1 and F^w_β. Measured on this set (60 images × 5 methods, the protocol's N(0.5, 0.25²)
    reading of the unstated noise): every measure 0 % but the adaptive E-measure, 3.4 %
    (2 of 58 images). Not asserted, and why:

    * the adaptive E-measure's errors: the adaptive threshold of a noise map of mean 0.5 is
      ≈ 1, so the binarised noise is nearly empty, and E scores an (almost) empty map by the
      background's share — 0.91 for an object of 1.6 % of the image. The paper scores
      binary maps (its noise map binarised by a rule it does not state), which the protocol
      lists as not reproduced;
    * IoU's and F^w_β's few per cent: they depend on how many of a dataset's maps are poor;
      on this set the good maps always beat the noise (0 %).
    """
    (ds,), _ = discover(_make_benchmark(tmp_path / "bench"))
    keys = ["adpIoU", "adpDice", "wFm", "Sm", "meanEm", "adpEm"]
    config = meta_config(protocol="emeasure2018", metas=["noise_map"], measures=keys)
    report = run_meta([ds], config, cache_path=tmp_path / "c.sqlite", progress=False)

    def rate(key: str) -> float:
        return report.value("bench", "noise_map", "error rate", key)

    assert rate("meanEm") == 0.0 and rate("Sm") == 0.0
    assert rate("meanEm") <= min(rate(k) for k in ("adpIoU", "adpDice", "wFm"))
    assert rate("adpEm") < 0.10  # documented above, not the paper's 0 %
