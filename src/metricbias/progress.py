"""Progress bars for the library's long loops.

Outside ``metricbias run`` this is ``tqdm.auto``'s bar, shown or not as the caller asks.
Inside a chapter that ``metricbias run`` executes, the runner names a file in
``METRICBIAS_PROGRESS_FILE`` and copies what is written there to the terminal of the build
as it comes; every bar then goes to that file as text, and never into the notebook, so it
is shown even where a chapter passes ``progress=False`` (which keeps bars out of the book).
"""

from __future__ import annotations

import os
from functools import lru_cache

#: set by :mod:`metricbias.book.runner` for the kernels it starts
FILE_ENV = "METRICBIAS_PROGRESS_FILE"
COLUMNS_ENV = "METRICBIAS_PROGRESS_COLUMNS"
#: set in worker processes whose parent shows the progress (the pack check of ``metricbias run --jobs N``)
QUIET_ENV = "METRICBIAS_PROGRESS_QUIET"


@lru_cache(maxsize=4)
def _terminal(path: str):
    return open(path, "a", encoding="utf-8")  # noqa: SIM115  (open for the process's lifetime)


def tqdm(iterable=None, **kwargs):
    """``tqdm.auto.tqdm(iterable, **kwargs)``, or a text bar on the build's terminal under ``metricbias run``; none
    in a worker whose parent shows the progress (``METRICBIAS_PROGRESS_QUIET``)."""
    if os.environ.get(QUIET_ENV):
        kwargs["disable"] = True
    path = os.environ.get(FILE_ENV)
    if path:
        from tqdm.std import tqdm as text_bar

        kwargs.update(file=_terminal(path), disable=False, ncols=int(os.environ.get(COLUMNS_ENV, "100")))
        return text_bar(iterable, **kwargs)
    from tqdm.auto import tqdm as auto_bar

    return auto_bar(iterable, **kwargs)
