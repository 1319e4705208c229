"""Colours with a meaning, shared by every panel and explain view.

The confusion classes use the Okabe–Ito palette, chosen to stay distinct under the common
colour-vision deficiencies: TP yellow, FP vermillion, FN blue (yellow and vermillion differ in
lightness where red and green would merge), TN dark. The GT contour is reddish purple, a
colour none of the classes uses. In the inspector they are drawn over the map in greyscale
(not over a colour map, which would blend with them).
"""

from __future__ import annotations

import numpy as np

#: RGB of the confusion codes 0 TN, 1 FP, 2 FN, 3 TP.
CONFUSION_RGB = np.array([[25, 25, 30], [213, 94, 0], [0, 114, 178], [240, 228, 66]], np.uint8)
CONFUSION_NAMES = ("TN", "FP", "FN", "TP")
#: RGB of the GT contour.
CONTOUR_RGB = (204, 121, 167)


def hex_colour(rgb: tuple[int, ...] | np.ndarray) -> str:
    """``#rrggbb`` of an RGB triple."""
    r, g, b = (int(c) for c in rgb[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def confusion_colour(name: str) -> tuple[int, int, int]:
    """RGB of a confusion class by name ('TP', 'FP', 'FN', 'TN')."""
    r, g, b = (int(c) for c in CONFUSION_RGB[CONFUSION_NAMES.index(name)])
    return r, g, b
