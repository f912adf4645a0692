"""The table of the shipped score packs in benchmarks/README.md (*Score packs*), from their provenance files.

``python benchmarks/pack_table.py [DIR]`` (default ``models/packs``): one row per text set with its files, scores,
bytes on disk and the seconds the build recorded, then the totals. Nothing is scored.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def main(folder: Path) -> None:
    rows = defaultdict(lambda: {"files": 0, "scores": 0, "bytes": 0, "seconds": 0.0, "chapters": set()})
    json_bytes = 0
    for side in sorted(folder.glob("*.json")):
        record = json.loads(side.read_text(encoding="utf-8"))
        row = rows[record["meta"]["text_set"]]
        row["files"] += 1
        row["scores"] += record["meta"]["scores"]
        row["bytes"] += side.with_suffix(".npz").stat().st_size
        row["seconds"] += record["seconds"]
        json_bytes += side.stat().st_size
    print("| text set | files | scores | on disk (compressed) | seconds to build |")
    print("|---|---:|---:|---:|---:|")
    for name, row in sorted(rows.items()):
        print(f"| `{name}` | {row['files']} | {row['scores']:,} | {row['bytes'] / 1e6:.2f} MB | {row['seconds']:,.0f} s |")
    total = {k: sum(r[k] for r in rows.values()) for k in ("files", "scores", "bytes", "seconds")}
    print(f"\n{total['files']} files, {total['scores']:,} scores, {total['bytes'] / 1e6:.2f} MB of .npz and "
          f"{json_bytes / 1e6:.2f} MB of provenance; {total['seconds'] / 60:,.0f} minutes to build")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "models" / "packs")
