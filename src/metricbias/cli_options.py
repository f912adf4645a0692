"""Checks the ``metricbias`` commands share, made when the command line is read, before any work: an input file or
folder that exists (:func:`input_type`), an ``--out`` that can be written (:func:`check_out`)."""

from __future__ import annotations

import argparse
from pathlib import Path


def input_type(kind: str, cast=Path):
    """The type of an option that names an input file or folder (``kind`` as :func:`metricbias.paths.check_input`
    takes it): checked when the command line is read, before any work."""
    def check(text: str):
        from .paths import InputPathError, check_input

        try:
            check_input(text, "", kind=kind)
        except InputPathError as exc:
            raise argparse.ArgumentTypeError(str(exc).strip()) from None
        return cast(text)

    return check


def check_out(args, folder: bool = False) -> None:
    """Fail before any computing when ``--out`` cannot be written."""
    if getattr(args, "out", None) is not None:
        from .paths import check_writable

        check_writable(args.out, "--out", folder=folder)


__all__ = ["check_out", "input_type"]
