"""Execute every chapter with the smoke profile and build the book, in a process of its own.

``python tests/smoke_book.py DIR``: the book's sources are copied to ``DIR/book-root``, the score cache is
``DIR/cache``; on success ``DIR/outputs.json`` lists the executed notebooks. ``conftest.py`` starts it when the
session collects a test that reads the smoke book, so that the book builds while the other tests run.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import _book_environment, copy_book  # noqa: E402


def main(folder: Path) -> None:
    root = copy_book(folder / "book-root")
    _book_environment(os.environ.__setitem__, root, folder / "cache")
    from metricbias.book import runner

    outputs = runner.run(profile="smoke", jobs=2)  # two chapters at once, as `make book` runs them
    runner.build_book(root, strict=True)
    (folder / "outputs.json").write_text(json.dumps([str(p) for p in outputs]), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
