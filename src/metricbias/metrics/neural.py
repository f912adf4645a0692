"""What every model-based metric shares: a ``backbone`` option resolved to local files,
fingerprints of those files (and of an adapter) in the signature, a device.

The backbone is resolved when the metric is built, so that an unavailable backbone
is a :class:`metricbias.backbones.BackboneError` at once, listing what is available.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from .. import backbones, models
from .base import Metric, MetricError


def backbone_label(backbone: str) -> str:
    """A backbone as tables name it: its short label when registered, else its folder's name."""
    info = backbones.BACKBONES.get(backbone)
    return info.label if info is not None else Path(str(backbone)).name


class ModelMetric(Metric):
    needs_backbone: ClassVar[bool] = True
    #: a transformer per pair: minutes on two CPU cores at the book's sizes, on every data set
    packed: ClassVar[bool] = True
    #: device, batch size and the adapter *path* do not change scores (the adapter's fingerprint does)
    runtime_options: ClassVar[tuple[str, ...]] = ("device", "batch_size", "adapter")

    def __init__(self, **options):
        super().__init__(**options)
        backbone = self.options["backbone"]
        if not isinstance(backbone, str) or not backbone:
            raise MetricError(f"metric {self.name}: backbone must be a registered name or a model folder")
        self.backbone_path = self._resolve_backbone(backbone)
        kind = self._backbone_kind(backbone)
        if self.backbone_kinds and kind not in self.backbone_kinds:
            raise MetricError(f"metric {self.name}: backbone {backbone!r} is a {kind} backbone; "
                              f"{self.name} takes {' or '.join(self.backbone_kinds)} backbones")
        if "adapter" in self.options and self.options["adapter"] is not None:
            # a folder, or the name of a shipped adapter; fails now if it is missing
            self.options["adapter"] = str(models.adapter_folder(self.options["adapter"]))

    def _resolve_backbone(self, backbone: str):
        return backbones.resolve(backbone)

    @classmethod
    def label_for(cls, options: dict) -> str:
        return f"{cls.label or cls.name}-{backbone_label({**cls.defaults, **options}['backbone'])}"

    def _backbone_kind(self, backbone: str) -> str:
        if backbone in backbones.BACKBONES:
            return backbones.kind_of(backbone)
        return backbones.kind_of(str(self.backbone_path))

    def fingerprints(self) -> dict[str, str]:
        out = {"weights": backbones.fingerprint_path(self.backbone_path)}
        if "adapter" in self.options:
            out["adapter"] = models.adapter_fingerprint(self.options["adapter"])
        return out
