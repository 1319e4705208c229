"""fminspect: inspect, explain and rank foreground maps.

Importing the package loads nothing heavy (no Qt, OpenCV or SciPy); the measures live in
:mod:`fminspect.metrics`, datasets on disk in :mod:`fminspect.io`, human-ranking studies in
:mod:`fminspect.ranking` and the desktop application in :mod:`fminspect.gui`.
"""

__version__ = "0.1.0"

#: Bumped whenever any measure's definition, default or arithmetic changes, so cached results
#: computed under an older definition are never reused. 2: the Context-measure's F_m in float64.
#: 3: the measure registry (every confusion-count measure in five variants; records of the
#: confusion families hold scores only, the sweep's counts a record of their own).
#: 4: AUCPR without the binarisations that predict nothing (scikit-learn's PR curve); AUCPR
#: and AP of an empty GT NaN.
MEASURE_DEFINITION_VERSION = 4

__all__ = ["MEASURE_DEFINITION_VERSION", "__version__"]
