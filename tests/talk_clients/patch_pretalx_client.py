"""Lets pretalx-client 0.1.1 run on CPython 3.11, patching its pip-installed copy in place.

pretalx-client declares Python >= 3.14, and no Python that recent can be installed on the
project's machines (Debian 12 ships 3.11; PyPI has no interpreter to install). Its code needs
3.14 in three places only, all syntax or annotation semantics, none behaviour:

- adapters/talks.py and models.py annotate with names that do not exist yet when the
  annotation is read (a class imported only for type checkers, a class in its own body),
  which 3.14 never evaluates (PEP 649): `from __future__ import annotations` defers them on
  3.11 as well;
- models.py declares a generic function with 3.12's syntax (PEP 695): the type parameter
  and the annotations using it go;
- generated/models.py declares three aliases with 3.12's `type X = ...`: they become plain
  assignments, which mean the same at run time.

Each patch must match exactly as often as stated, or nothing is written and the script
fails: a new pretalx-client version needs this script read again.

Argument: the installed package's directory (`.../site-packages/pretalx_client`).
"""

import pathlib
import re
import sys

FUTURE = "from __future__ import annotations\n"


def defer_annotations(text):
    """Adds the `__future__` import after the module's docstring (a future import must come
    before any other statement)."""
    match = re.match(r'(\s*"""(?:.|\n)*?"""\n)', text)
    if not match:
        raise SystemExit("no module docstring to put the import after")
    return text[: match.end()] + "\n" + FUTURE + text[match.end() :], 1


def replace(old, new):
    def patch(text):
        return text.replace(old, new), text.count(old)

    return patch


def substitute(pattern, new):
    def patch(text):
        return re.subn(pattern, new, text, flags=re.MULTILINE)

    return patch


# (file, patch, how many places it must change)
PATCHES = [
    ("adapters/talks.py", defer_annotations, 1),
    ("models.py", defer_annotations, 1),
    (
        "models.py",
        replace(
            "def _parse_generated[T](cls: type[T], data: dict[str, Any]) -> T | None:",
            "def _parse_generated(cls, data):",
        ),
        1,
    ),
    ("generated/models.py", substitute(r"^type ([A-Za-z_][A-Za-z0-9_]*) = ", r"\1 = "), 3),
]


def main():
    package = pathlib.Path(sys.argv[1])
    patched = {}
    for name, patch, expected in PATCHES:
        path = package / name
        text = patched.get(path, path.read_text(encoding="utf-8"))
        if FUTURE in text and patch is defer_annotations:
            raise SystemExit(f"{path}: patched already")
        text, count = patch(text)
        if count != expected:
            raise SystemExit(f"{path}: {count} places to patch instead of {expected}")
        patched[path] = text
    for path, text in patched.items():
        path.write_text(text, encoding="utf-8")
        # Compiled copies of the unpatched file must not be used.
        for stale in path.parent.glob(f"__pycache__/{path.stem}.*.pyc"):
            stale.unlink()
    print(f"patched {len(patched)} files of {package} for Python 3.11")


if __name__ == "__main__":
    main()
