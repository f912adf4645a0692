"""trained.loop: the one optimisation loop of every trainer, and its shuffled batches."""

import pytest

torch = pytest.importorskip("torch")

from metricbias.trained.loop import fit, shuffled_batches  # noqa: E402


def _sgd(w):
    optimizer = torch.optim.SGD([w], lr=0.1)
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)


@pytest.mark.parametrize("clip, expected", [(None, [1.0, 0.64]), (1.0, [1.0, 0.81])])
def test_fit_steps_on_w_squared(clip, expected):
    # loss w^2, gradient 2w, lr 0.1: w 1 -> 0.8 -> 0.64; clipped at norm 1: w 1 -> 0.9 -> 0.8
    w = torch.nn.Parameter(torch.tensor(1.0))
    optimizer, scheduler = _sgd(w)
    seen = []
    losses = fit(lambda batch: w ** 2, iter(range(100)), params=[w], optimizer=optimizer, scheduler=scheduler,
                 steps=2, clip=clip, after_step=lambda step, losses: seen.append((step, list(losses))))
    assert losses == pytest.approx(expected)
    assert [s for s, _ in seen] == [1, 2] and seen[-1][1] == losses
    assert w.item() == pytest.approx(0.64 if clip is None else 0.8) and w.grad is None


def test_fit_resumes_at_start():
    w = torch.nn.Parameter(torch.tensor(1.0))
    optimizer, scheduler = _sgd(w)
    steps = []
    fit(lambda batch: w ** 2, iter(range(100)), params=[w], optimizer=optimizer, scheduler=scheduler, steps=5,
        start=3, after_step=lambda step, losses: steps.append(step))
    assert steps == [4, 5]


def test_shuffled_batches_are_permutations_epoch_after_epoch():
    batches = shuffled_batches(7, 3, torch.Generator().manual_seed(0))
    epochs = [[next(batches) for _ in range(3)] for _ in range(2)]
    for epoch in epochs:
        assert [len(b) for b in epoch] == [3, 3, 1]
        assert sorted(i for b in epoch for i in b) == list(range(7))
    assert epochs[0] != epochs[1]
    kept = shuffled_batches(7, 3, torch.Generator().manual_seed(0), drop_last=True)
    assert [len(next(kept)) for _ in range(4)] == [3, 3, 3, 3]
    short = shuffled_batches(2, 3, torch.Generator().manual_seed(0), drop_last=True)
    assert sorted(next(short)) == [0, 1]


@pytest.mark.parametrize("drop_last", [False, True])
def test_shuffled_batches_started_later_continue_an_uninterrupted_sequence(drop_last):
    # 7 examples in batches of 3: 3 batches an epoch (2 with drop_last); started at any step, the same batches follow
    whole = shuffled_batches(7, 3, torch.Generator().manual_seed(5), drop_last=drop_last)
    steps = [next(whole) for _ in range(8)]
    for start in (1, 2, 3, 5):
        later = shuffled_batches(7, 3, torch.Generator().manual_seed(5), drop_last=drop_last, start=start)
        assert [next(later) for _ in range(8 - start)] == steps[start:]
