"""Short display names of methods ("aliases"), read from JSON or YAML files.

Accepted layouts (the first two are PySODEvalToolkit's):

* an alias file of ``plot.py`` / ``converter.py``: ``{"method": {"2020-ECCV-HDFNet": "HDFNet",
  …}, "dataset": {…}}`` — its ``method`` section names methods, its ``dataset`` section
  datasets (and, in figures, chooses and orders the panels, as ``plot.py`` does);
* a method config of ``eval.py``: ``{"MethodName": {"DATASET": {"path": …, "suffix": …}}}`` —
  it names methods but gives no short names, so each method is its own alias (such a file is
  still useful: it says which methods exist);
* a plain mapping ``{"name": "alias", …}``.

Values that are not strings, empty aliases and duplicate aliases (two methods that would look
the same) are refused with a message naming the file and the entry; nothing is half-read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: Largest alias file read (bytes): an alias file is a few kB; anything larger is not one.
MAX_ALIAS_FILE = 1 << 20


class AliasError(ValueError):
    """An alias file that cannot be used; the message names the file and the problem."""


def yaml_problem(exc: Exception) -> str:
    """A YAML parser's error in one line: its problem and line (PyYAML's own message is a
    few lines with a caret under the text)."""
    mark = getattr(exc, "problem_mark", None)
    where = f", line {mark.line + 1}" if mark is not None else ""
    return f"{getattr(exc, 'problem', None) or 'cannot be parsed'}{where}"


def _parse(path: Path, text: str) -> Any:
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise AliasError(f"{path}: not valid YAML ({yaml_problem(exc)})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise AliasError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None


def aliases_from_mapping(
    data: object, source: str = "aliases", *, section: str = "method"
) -> dict[str, str]:
    """Aliases from parsed content in any accepted layout (see the module notes): of
    methods, or with ``section="dataset"`` of datasets (the ``dataset`` section of a
    PySODEvalToolkit alias file; none elsewhere). The order is the file's."""
    if not isinstance(data, dict):
        raise AliasError(f"{source}: expected a mapping of method names to aliases")
    sections = {k: v for k, v in data.items() if k in ("method", "dataset") and isinstance(v, dict)}
    if section == "dataset" or (sections and "method" not in sections):
        data = sections.get(section, {})
    elif isinstance(data.get("method"), dict):
        data = data["method"]
    out: dict[str, str] = {}
    assert isinstance(data, dict)
    for key, value in data.items():
        if key is None or isinstance(key, (dict, list)):
            raise AliasError(f"{source}: entry {key!r}: a method name must be text")
        name = str(key)  # YAML reads a name such as 2020 as a number
        if isinstance(value, dict):  # a PySODEvalToolkit method config: no short name
            value = name
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise AliasError(f"{source}: entry {name!r}: the alias must be text, not {value!r}")
        value = str(value)
        alias = value.strip()
        if not alias:
            raise AliasError(f"{source}: entry {name!r}: empty alias")
        out[name] = alias
    seen: dict[str, str] = {}
    for name, alias in out.items():
        if alias in seen:
            raise AliasError(
                f"{source}: {seen[alias]!r} and {name!r} have the same alias {alias!r}"
            )
        seen[alias] = name
    return out


def read_aliases(path: Path | str, *, section: str = "method") -> dict[str, str]:
    """``{method: alias}`` (or with ``section="dataset"`` ``{dataset: alias}``) from a JSON
    or YAML file (see the module notes)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_ALIAS_FILE:
            raise AliasError(f"{path}: {size} bytes is too large for an alias file")
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark is allowed
    except FileNotFoundError:
        raise AliasError(f"{path}: file not found") from None
    except UnicodeDecodeError:
        raise AliasError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise AliasError(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        data = _parse(path, text)
    except RecursionError:
        raise AliasError(f"{path}: nested too deeply to be an alias file") from None
    return aliases_from_mapping(data, str(path), section=section)
