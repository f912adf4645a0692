"""The one optimisation loop every trainer runs (regression heads, paraphrasers, masked-LM heads, debiasing
adapters), with hooks for what differs: the batches, the loss of a batch, and what happens after a step (logging,
validation, checkpoints)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator


def shuffled_batches(n: int, batch_size: int, generator, *, drop_last: bool = False,
                     start: int = 0) -> Iterator[list[int]]:
    """Index batches of ``n`` examples, epoch after epoch, each epoch a new permutation drawn from ``generator``.

    ``drop_last``: leave out an epoch's last, short batch (one short batch per epoch when ``n < batch_size``).
    ``start``: begin with the batch of step ``start + 1`` (the permutations before it drawn and passed over), so that
    a run resumed at step ``start`` with a generator seeded as at the beginning draws the batches of an uninterrupted
    one.
    """
    import torch

    last = max(n - batch_size, 0) + 1 if drop_last else n
    per_epoch = len(range(0, last, batch_size))
    skip = start
    while True:
        order = torch.randperm(n, generator=generator).tolist()
        if skip >= per_epoch:
            skip -= per_epoch
            continue
        for begin in range(skip * batch_size, last, batch_size):
            yield order[begin:begin + batch_size]
        skip = 0


def epoch_batches(n: int, batch_size: int, seed: int, *, start: int = 0) -> Iterator[list[int]]:
    """Index batches of ``n`` examples for steps ``start + 1``, ``start + 2``, ...: epoch ``e`` (steps
    ``e * per_epoch + 1`` to ``(e + 1) * per_epoch``, the last batch of an epoch short when ``batch_size`` does not
    divide ``n``) is a permutation drawn from a generator seeded with ``(seed, e)`` alone.

    The batch of a step follows from the step number, so a run resumed from a checkpoint at step ``start`` draws
    the batches an uninterrupted run draws (:func:`shuffled_batches` draws each epoch from one running generator).
    """
    import numpy as np

    per_epoch = -(-n // batch_size)
    epoch, offset = divmod(start, per_epoch)
    while True:
        order = np.random.default_rng([seed, epoch]).permutation(n).tolist()
        for b in range(offset, per_epoch):
            yield order[b * batch_size:(b + 1) * batch_size]
        epoch, offset = epoch + 1, 0


def fit(batch_loss: Callable, batches: Iterable, *, params, optimizer, scheduler, steps: int, start: int = 0,
        clip: float | None = 1.0, bar=None, after_step: Callable | None = None) -> list[float]:
    """Steps ``start + 1`` to ``steps``, one batch of ``batches`` each: the loss ``batch_loss(batch)``, its gradient,
    the gradient norm of ``params`` clipped at ``clip`` (None: not clipped), an optimizer and a scheduler step.

    ``bar`` (a progress bar) advances by one a step; ``after_step(step, losses)`` runs after each step with the
    losses so far (floats); when it returns True the loop stops there (early stopping). Returns the losses.
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
        if after_step is not None and after_step(step, losses):
            break
    return losses


__all__ = ["epoch_batches", "fit", "shuffled_batches"]
