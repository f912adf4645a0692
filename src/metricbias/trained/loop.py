"""The one optimisation loop every trainer runs (regression heads, paraphrasers, masked-LM heads, debiasing
adapters), with hooks for what differs: the batches, the loss of a batch, and what happens after a step (logging,
validation, checkpoints)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator


def shuffled_batches(n: int, batch_size: int, generator, *, drop_last: bool = False) -> Iterator[list[int]]:
    """Index batches of ``n`` examples, epoch after epoch, each epoch a new permutation drawn from ``generator``.

    ``drop_last``: leave out an epoch's last, short batch (one short batch per epoch when ``n < batch_size``).
    """
    import torch

    last = max(n - batch_size, 0) + 1 if drop_last else n
    while True:
        order = torch.randperm(n, generator=generator).tolist()
        for start in range(0, last, batch_size):
            yield order[start:start + batch_size]


def fit(batch_loss: Callable, batches: Iterable, *, params, optimizer, scheduler, steps: int, start: int = 0,
        clip: float | None = 1.0, bar=None, after_step: Callable | None = None) -> list[float]:
    """Steps ``start + 1`` to ``steps``, one batch of ``batches`` each: the loss ``batch_loss(batch)``, its gradient,
    the gradient norm of ``params`` clipped at ``clip`` (None: not clipped), an optimizer and a scheduler step.

    ``bar`` (a progress bar) advances by one a step; ``after_step(step, losses)`` runs after each step with the
    losses so far (floats). Returns the losses.
    """
    import torch

    losses: list[float] = []
    for step, batch in zip(range(start + 1, steps + 1), batches):
        loss = batch_loss(batch)
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(params, clip)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(float(loss.detach()))
        if bar is not None:
            bar.update(1)
        if after_step is not None:
            after_step(step, losses)
    return losses


__all__ = ["fit", "shuffled_batches"]
