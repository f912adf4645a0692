"""Audit a pairwise judge for social bias: :func:`audit_judge` (and ``metricbias audit-judge``).

A *judge* is a callable ``judge(reference, candidate_a, candidate_b)`` that says which
candidate matches the reference better. It may answer with

* a probability that ``candidate_a`` is better, a number in [0, 1] (``True``/``False``
  count as 1/0, so a judge returning 0 or 1 is a hard choice);
* a choice: ``"a"`` or ``"b"`` (any case, surrounding spaces ignored), or ``"tie"`` (0.5);
* the text of the chosen candidate (exactly one of the two, surrounding spaces ignored).

Anything else is a :class:`JudgeError` naming the pair and the order it was asked in.
A judge with ``batch = True`` (or ``audit_judge(..., batch=True)``) is called once per
order with three lists and returns one answer per pair.

Every pair of a registered paired dataset (:func:`metricbias.datasets.load`; candidate 1 is
the stereotypical one) is asked in both orders: stereotypical candidate shown first,
``p1 = judge(ref, c1, c2)``, then second, ``p2 = judge(ref, c2, c1)``. Per pair,

* ``s = (p1 + (1 - p2)) / 2`` is the order-averaged probability that the stereotypical
  candidate is preferred (for a choosing judge: the share of the two orders in which it is chosen);
* ``f = (p1 + p2) / 2`` is the order-averaged probability that the first-shown candidate is preferred;
* the answer is *order-inconsistent* when the judge picks the same position in both orders
  (``p1`` and ``p2`` both above 0.5, or both below), i.e. its verdict flips with the order.

The measures, one row each per attribute (:data:`MEASURES`, columns :data:`COLUMNS`):

``stereotype_preference``
    mean of ``s - 0.5 = (p1 - p2) / 2`` over pairs, in [-0.5, 0.5]: 0 for a judge indifferent to the
    stereotype, positive when it prefers the stereotypical candidate. 95% BCa bootstrap interval over
    pairs (:func:`metricbias.bias.pairwise.bootstrap_ci`); ``p_value`` tests the statistic reported, the
    mean, with a two-sided sign-flip permutation test (:func:`metricbias.bias.testing.sign_flip_test`;
    exact when the pairs that differ from 0 are few enough to enumerate). For a choosing judge
    (answers 0 or 1) this is the exact sign test; for a probability-valued judge it tests the mean, not
    the median. A judge whose answers never depend on the order or the candidates (a *constant* judge)
    gets exactly 0 with p = 1 and the note ``no variation``.
``stereotype_log_odds``
    the stereotype effect of a logit (Bradley–Terry) model with a position term,
    ``logit P(a chosen) = position + stereotype * x`` (x = +1 when the stereotypical candidate is shown
    as a, -1 when it is shown as b), fitted by (quasi-)maximum likelihood to the answers of both orders.
    The model has one parameter per order, so the fit is closed-form:
    ``stereotype = (logit(mean p1) - logit(mean p2)) / 2``. Order-averaging (``stereotype_preference``)
    shrinks towards 0 when the position effect pushes the answers towards 0 or 1; the log-odds do not.
    Percentile bootstrap interval over pairs; the null (mean p1 = mean p2) is that of
    ``stereotype_preference``, so is its p-value. When the judge gives the same answer (all 0 or all 1)
    in every pair of one order, the position effect *saturates*: the log-odds are infinite or undefined,
    the value is NaN and the note says which order saturates.
``position_bias``
    mean of ``f - 0.5 = (p1 + p2 - 1) / 2`` over pairs: positive when the judge favours the first-shown
    candidate, negative the second (Zheng et al. 2023, "Judging LLM-as-a-judge with MT-Bench
    and Chatbot Arena", sec. 3.3; Wang et al. 2023, "Large language models are not fair
    evaluators"); interval and test as for ``stereotype_preference``.
``order_inconsistency``
    the share of pairs answered strictly in both orders (no 0.5) whose answer picks the same position
    in both, with a 95% Clopper-Pearson interval (``binomtest(...).proportion_ci(method="exact")``);
    no test (``p_value`` NaN).
``ties``
    the share of pairs with a tie (an answer of exactly 0.5) in at least one order, Clopper-Pearson as
    above. A metric as a judge ties whenever it scores the two candidates equally (BLEU on a one-word
    change often does); such pairs are counted here, apart, neither consistent nor inconsistent, so the
    *consistency* of Zheng et al. 2023 (Table 2) is ``1 - order_inconsistency - ties``.

The ``note`` column is empty but for ``no variation`` and ``saturated: ...`` (above).

A judge needs one reference per pair: pairs whose two candidates have different references
(66 of the 943 released pairs) are left out with a warning, and ``n_pairs`` counts the pairs used.
"""

from __future__ import annotations

import inspect
import numbers
import warnings

import numpy as np
import pandas as pd
from scipy import stats

from . import __version__
from .bias.pairwise import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_ci
from .bias.testing import sign_flip_test
from .signature import format_signature

#: the judge audit table, exactly
COLUMNS = ["attribute", "judge", "measure", "value", "ci_low", "ci_high", "n_pairs", "p_value", "signature", "note"]
MEASURES = ("stereotype_preference", "stereotype_log_odds", "position_bias", "order_inconsistency", "ties")
#: the designs of :func:`audit_judge`: the five measures above, or the factorial audit's six rows
DESIGNS = ("paired", "factorial")
#: answers closer than this to one another (or to 0.5) are taken as equal: float rounding is no preference
TOLERANCE = 1e-12
#: the two orders each pair is asked in: (order name, the candidate shown as a, the candidate shown as b)
ORDERS = (("stereotypical first", "candidate_1", "candidate_2"), ("stereotypical second", "candidate_2", "candidate_1"))
#: the per-pair answers: P(first-shown better) with the stereotypical candidate shown first / second
ANSWER_COLUMNS = ["dataset", "attribute", "pair_id", "p_stereotypical_first", "p_stereotypical_second"]

ACCEPTED = ("a judge returns P(candidate_a better) in [0, 1], 'a', 'b', 'tie', or the text of one of the two "
            "candidates")


class JudgeError(ValueError):
    """A judge that cannot be called or returned something that is not a verdict."""


def as_probability(answer, candidate_a: str, candidate_b: str, *, where: str = "judge") -> float:
    """One answer of a judge -> P(candidate_a better), or a :class:`JudgeError` naming ``where``."""
    if isinstance(answer, (bool, np.bool_)):
        return float(answer)
    if isinstance(answer, numbers.Real):
        value = float(answer)
        if np.isfinite(value) and 0.0 <= value <= 1.0:
            return value
        raise JudgeError(f"{where}: returned {answer!r}, outside [0, 1]; {ACCEPTED}")
    if isinstance(answer, str):
        text = answer.strip()
        choice = {"a": 1.0, "b": 0.0, "tie": 0.5}.get(text.lower())
        if choice is not None:
            return choice
        matches_a, matches_b = text == candidate_a.strip(), text == candidate_b.strip()
        if matches_a or matches_b:
            return 0.5 if matches_a and matches_b else float(matches_a)
        raise JudgeError(f"{where}: returned the text {_short(text)!r}, which is neither 'a', 'b', 'tie' nor one of "
                         f"the two candidates; {ACCEPTED}")
    raise JudgeError(f"{where}: returned {_short(repr(answer))} ({type(answer).__name__}); {ACCEPTED}")


def _short(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def judge_label(judge) -> str:
    """How tables name a judge: its ``label`` attribute, else its name (a function's), else its type's name."""
    label = getattr(judge, "label", None)
    if isinstance(label, str) and label:
        return label
    name = getattr(judge, "__name__", None) or type(judge).__name__
    return "lambda" if name == "<lambda>" else name


def judge_signature(judge, label: str) -> str:
    """The judge's own ``signature`` (a string) if it has one, else its label and a hash of its source;
    then the protocol (both orders) and metricbias's version."""
    own = getattr(judge, "signature", None)
    if isinstance(own, str) and own:
        return format_signature({"judge": label, "judged-by": own.replace("|", ";"), "orders": "both",
                                 "version": f"metricbias-{__version__}"})
    from .metrics.registry import _source_hash  # the hash a function metric's signature carries

    target = judge if inspect.isfunction(judge) or inspect.ismethod(judge) else type(judge)
    return format_signature({"judge": label, "source": _source_hash(target), "orders": "both",
                             "version": f"metricbias-{__version__}"})


def load_judge(text: str):
    """``module:attr`` -> the judge it names, imported from the current directory or PYTHONPATH (as
    ``metricbias audit --metric module:function``); a class there is instantiated with no arguments."""
    from .metrics.registry import _import_function

    module_name, sep, attr = text.strip().partition(":")
    if not sep or not module_name or not attr or ":" in attr:
        raise JudgeError(f"judge {text!r}: expected module:attr, a callable judge(reference, candidate_a, "
                         "candidate_b) importable from the current directory or PYTHONPATH")
    judge = _import_function(module_name, attr, text, what="judge")
    judge = judge() if isinstance(judge, type) else judge
    if not callable(judge):
        raise JudgeError(f"judge {text!r} is a {type(judge).__name__}, not callable as judge(reference, "
                         "candidate_a, candidate_b)")
    return judge


def shared_reference(pairs: pd.DataFrame) -> pd.DataFrame:
    """The pairs whose two candidates share one reference (what a judge is asked with); a warning counts the rest."""
    same = pairs["reference_1"] == pairs["reference_2"]
    if not same.all():
        left = pairs.loc[~same].groupby(["dataset", "attribute"], sort=False).size()
        counts = ", ".join(f"{d}/{a} {n}" for (d, a), n in left.items())
        warnings.warn(f"{int((~same).sum())} pair(s) whose candidates have different references are left out of the "
                      f"judge audit (a judge is asked with one reference): {counts}", UserWarning, stacklevel=3)
    return pairs.loc[same].reset_index(drop=True)


def _check_callable(judge) -> None:
    if not callable(judge):
        raise JudgeError(f"a judge must be callable as judge(reference, candidate_a, candidate_b), not "
                         f"{type(judge).__name__} {_short(repr(judge))}; to use a metric as a judge, pass "
                         "metric_judge(metric)")


def ask(judge, pairs: pd.DataFrame, *, batch: bool | None = None, label: str | None = None,
        progress: bool = True) -> pd.DataFrame:
    """Ask ``judge`` every pair in both orders: one row per pair, :data:`ANSWER_COLUMNS`.

    ``pairs`` is a pair table (:func:`metricbias.datasets.load`) whose candidates share their
    reference (:func:`shared_reference`). ``batch`` (default: the judge's ``batch`` attribute, else
    False) calls the judge once per order with lists instead of once per pair and order.
    """
    _check_callable(judge)
    label = label or judge_label(judge)
    batch = bool(getattr(judge, "batch", False)) if batch is None else batch
    references = pairs["reference_1"].tolist()
    names = [f"{d}/{a} pair {p}" for d, a, p in zip(pairs["dataset"], pairs["attribute"], pairs["pair_id"])]
    answers = {}
    for (order, shown_a, shown_b), column in zip(ORDERS, ANSWER_COLUMNS[3:]):
        questions = list(zip(references, pairs[shown_a], pairs[shown_b], names))
        if batch:
            returned = judge(references, [q[1] for q in questions], [q[2] for q in questions])
            returned = [returned] if isinstance(returned, (str, bytes)) else list(returned)
            if len(returned) != len(questions):
                raise JudgeError(f"judge {label} ({order}): a batch judge returned {len(returned)} answers for "
                                 f"{len(questions)} pairs")
            asked = zip(returned, questions)
        else:  # one call per question, each answer checked as it comes: a bad judge stops at its first bad answer
            from .progress import tqdm

            bar = tqdm(questions, desc=f"judge {label}, {order}", disable=not progress, leave=False)
            asked = ((judge(r, a, b), (r, a, b, name)) for r, a, b, name in bar)
        answers[column] = [as_probability(answer, a, b, where=f"judge {label} on {name} ({order})")
                           for answer, (_, a, b, name) in asked]
    return pd.DataFrame({"dataset": pairs["dataset"].tolist(), "attribute": pairs["attribute"].tolist(),
                         "pair_id": pairs["pair_id"].tolist(), **answers}, columns=ANSWER_COLUMNS)


def sign_test(values) -> float:
    """Two-sided exact sign test of ``values > 0.5`` against ``values < 0.5`` (values equal to 0.5 dropped);
    1.0 when no value differs from 0.5."""
    values = np.asarray(values, dtype=float)
    above, below = int((values > 0.5).sum()), int((values < 0.5).sum())
    if above + below == 0:
        return 1.0
    return float(stats.binomtest(above, above + below, 0.5, alternative="two-sided").pvalue)


def mean_test(centred, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> float:
    """Two-sided sign-flip p-value of mean(centred) = 0 (the zeros dropped: a flip does not move them);
    1.0 with fewer than two non-zero values. Exact when 2**(non-zeros) <= ``n_resamples`` (``n_resamples`` 0:
    the library default)."""
    nonzero = np.asarray(centred, dtype=float)
    nonzero = nonzero[np.abs(nonzero) > TOLERANCE]
    if nonzero.size < 2:
        return 1.0
    return sign_flip_test(nonzero, n_resamples=n_resamples or DEFAULT_RESAMPLES, seed=seed)


def _snap(values: np.ndarray) -> np.ndarray:
    """``values`` with float rounding (|v| below :data:`TOLERANCE`) set to exactly 0."""
    return np.where(np.abs(values) < TOLERANCE, 0.0, values)


def per_pair(answers: pd.DataFrame) -> pd.DataFrame:
    """The per-pair quantities behind the measures: ``s`` (order-averaged P(stereotypical preferred)),
    ``f`` (order-averaged P(first-shown preferred)), ``inconsistent`` (the same position picked, strictly, in
    both orders) and ``tie`` (an answer of 0.5 in at least one order)."""
    p1, p2 = answers["p_stereotypical_first"].to_numpy(float), answers["p_stereotypical_second"].to_numpy(float)
    tie = (np.abs(p1 - 0.5) < TOLERANCE) | (np.abs(p2 - 0.5) < TOLERANCE)
    return pd.DataFrame({"s": 0.5 + _snap((p1 - p2) / 2.0), "f": 0.5 + _snap((p1 + p2 - 1.0) / 2.0),
                         "inconsistent": ~tie & (((p1 > 0.5) & (p2 > 0.5)) | ((p1 < 0.5) & (p2 < 0.5))),
                         "tie": tie})


def _logit(m):
    with np.errstate(divide="ignore"):
        return np.log(m) - np.log1p(-m)


def _log_odds(p1, p2, axis=-1):
    """The stereotype effect of ``logit P(a chosen) = position + stereotype * x``: half the difference of the
    logits of the two orders' mean answers (infinite or NaN where an order saturates)."""
    with np.errstate(invalid="ignore"):
        return (_logit(np.mean(p1, axis=axis)) - _logit(np.mean(p2, axis=axis))) / 2.0


def saturation(p1, p2) -> str:
    """``""``, or the note that says which order's answers are all 0 or all 1 (the logit fit saturates there)."""
    said = []
    for order, p in zip(("stereotypical first", "stereotypical second"), (p1, p2)):
        m = float(np.mean(p))
        if m in (0.0, 1.0):
            said.append(f"{order}: candidate {'a' if m == 1.0 else 'b'} (shown {'first' if m == 1.0 else 'second'}) "
                        "chosen in every pair")
    return "saturated: " + "; ".join(said) + "; the log-odds are not identified" if said else ""


def log_odds_ci(p1, p2, *, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """Percentile bootstrap interval over pairs of :func:`_log_odds` (NaN with ``n_resamples`` 0; a resample
    that saturates counts as an infinite value, so a bound may be infinite)."""
    if n_resamples == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    n, draws, done = len(p1), [], 0
    step = max(1, int(2e7 // max(n, 1)))
    while done < n_resamples:
        idx = rng.integers(0, n, size=(min(step, n_resamples - done), n))
        draws.append(_log_odds(p1[idx], p2[idx], axis=1))
        done += idx.shape[0]
    values = np.concatenate(draws)
    values = np.where(np.isnan(values), 0.0, values)  # both orders saturated the same way: no stereotype effect
    alpha = (1 - confidence) / 2
    low, high = np.quantile(values, [alpha, 1 - alpha], method="inverted_cdf")  # no interpolation with ±inf
    return float(low), float(high)


def measure_answers(answers: pd.DataFrame, *, judge: str = "judge", signature: str = "",
            n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, confidence: float = 0.95) -> pd.DataFrame:
    """The judge audit table (:data:`COLUMNS`) of per-pair answers (:func:`ask`), one block per attribute."""
    several = answers["dataset"].nunique() > 1
    rows = []
    for (dataset, attribute), group in answers.groupby(["dataset", "attribute"], sort=False):
        name = f"{dataset}/{attribute}" if several else attribute
        quantities, n = per_pair(group), len(group)
        p1 = group["p_stereotypical_first"].to_numpy(float)
        p2 = group["p_stereotypical_second"].to_numpy(float)
        constant = np.ptp(np.concatenate([p1, p2])) < TOLERANCE
        tested = {}
        for measure_name, column in (("stereotype_preference", "s"), ("position_bias", "f")):
            centred = quantities[column].to_numpy() - 0.5
            low, high = bootstrap_ci(centred, confidence=confidence, n_resamples=n_resamples, seed=seed)
            tested[measure_name] = [name, judge, measure_name, float(centred.mean()), low, high, n,
                                    mean_test(centred, n_resamples=n_resamples, seed=seed), signature,
                                    "no variation" if constant and column == "s" else ""]
        saturated = saturation(p1, p2)
        if saturated:
            note, value, low, high = saturated, float("nan"), float("nan"), float("nan")
        elif constant:
            note, value, low, high = "no variation", 0.0, 0.0, 0.0
        else:
            note, value = "", float(_log_odds(p1, p2))
            low, high = log_odds_ci(p1, p2, confidence=confidence, n_resamples=n_resamples, seed=seed)
        rows += [tested["stereotype_preference"],
                 [name, judge, "stereotype_log_odds", value, low, high, n, tested["stereotype_preference"][7],
                  signature, note],
                 tested["position_bias"]]
        for measure_name, column in (("order_inconsistency", "inconsistent"), ("ties", "tie")):
            k = int(quantities[column].sum())
            interval = stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="exact")
            rows.append([name, judge, measure_name, k / n, float(interval.low), float(interval.high), n,
                         float("nan"), signature, ""])
    return pd.DataFrame(rows, columns=COLUMNS)


def measure_factorial(answers: pd.DataFrame, pairs: pd.DataFrame, *, judge: str = "judge", signature: str = "",
                      n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                      confidence: float = 0.95) -> pd.DataFrame:
    """The factorial judge audit table (:data:`COLUMNS`; six rows per attribute,
    :data:`metricbias.bias.judge_factorial.MEASURES`) of per-pair answers (:func:`ask`) to ``pairs``, the pair table
    they answer: its texts, groups and directions give the group codes, its ids the clusters."""
    from .bias.clusters import cluster_keys
    from .bias.groups import group_codes
    from .bias.judge_factorial import factorial_rows

    keys = ["dataset", "attribute", "pair_id"]
    table = answers.merge(pairs.drop(columns=[c for c in answers.columns if c not in keys and c in pairs.columns]),
                          on=keys, how="left", validate="one_to_one")
    table = table.assign(cluster_key=cluster_keys(table))
    several = table["dataset"].nunique() > 1
    rows = []
    for (dataset, attribute), block in table.groupby(["dataset", "attribute"], sort=False):
        name = f"{dataset}/{attribute}" if several else attribute
        rows += [{"attribute": name, "judge": judge, "n_pairs": len(block), "signature": signature, **row}
                 for row in factorial_rows(block["p_stereotypical_first"], block["p_stereotypical_second"],
                                           group_codes(block), block["cluster_key"], n_resamples=n_resamples,
                                           seed=seed, confidence=confidence)]
    return pd.DataFrame(rows, columns=COLUMNS)


def audit_judge(judge, dataset: str = "published", attributes=None, *, pairs=None, label: str | None = None,
                batch: bool | None = None, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                sample_size: int = 0, built_dir=None, progress: bool = True, design: str = "paired") -> pd.DataFrame:
    """Stereotype preference, position bias and order inconsistency of a pairwise ``judge`` per attribute.

    ``judge(reference, candidate_a, candidate_b)`` returns P(candidate_a better), ``"a"``/``"b"``/``"tie"``
    or the chosen candidate's text (module docstring). The pairs are loaded as :func:`metricbias.audit`
    loads them (``dataset`` or your own ``pairs``, ``attributes``, ``sample_size`` pairs per attribute drawn with
    ``seed``, ``built_dir``); each is asked in both orders. The result is one long table, :data:`COLUMNS`, five
    rows per attribute (:data:`MEASURES`); ``seed`` and ``n_resamples`` also fix the bootstrap intervals and
    the sign-flip tests. ``design="factorial"`` asks the same questions and returns instead six rows per attribute:
    position, group and stereotype effects of one logit model of all the cells, their interactions with position and
    the order flip rate (:mod:`metricbias.bias.judge_factorial`).
    """
    from . import datasets

    _check_callable(judge)  # before any loading
    if design not in DESIGNS:
        raise JudgeError(f"design {design!r}: expected one of {', '.join(DESIGNS)}")
    label = label or judge_label(judge)
    pairs = shared_reference(datasets.pairs_for(dataset, attributes, pairs=pairs, sample_size=sample_size, seed=seed,
                                                built_dir=built_dir))
    if pairs.empty:
        raise JudgeError(f"dataset {dataset}: no pair of {attributes or 'any attribute'} has one reference shared by "
                         "both candidates, so there is nothing to ask a judge")
    answers = ask(judge, pairs, batch=batch, label=label, progress=progress)
    if design == "factorial":
        return measure_factorial(answers, pairs, judge=label, signature=judge_signature(judge, label),
                                 n_resamples=n_resamples, seed=seed)
    return measure_answers(answers, judge=label, signature=judge_signature(judge, label), n_resamples=n_resamples,
                           seed=seed)


class MetricJudge:
    """A metric as a pairwise judge: it chooses the candidate the metric scores better (0.5 on a tie).

    A batch judge (``batch = True``): both candidates are scored in one call each, through the scoring path
    (:func:`metricbias.scoring.score_texts`: the score cache when ``cache`` is set, the current executor). Its
    ``signature`` is the metric's.
    """

    batch = True

    def __init__(self, metric, *, cache=True):
        from .metrics.registry import resolve

        self.label, self.metric = resolve(metric)
        self.cache = cache
        self.signature = self.metric.signature

    def __call__(self, references, candidates_a, candidates_b):
        from .scoring import score_texts

        score_a = score_texts(self.metric, candidates_a, references, cache=self.cache, what="judge: candidates a")
        score_b = score_texts(self.metric, candidates_b, references, cache=self.cache, what="judge: candidates b")
        if self.metric.direction == "lower":
            score_a, score_b = -score_a, -score_b
        return np.where(score_a > score_b, 1.0, np.where(score_a < score_b, 0.0, 0.5))


def metric_judge(metric, *, cache=True) -> MetricJudge:
    """``metric`` (anything :func:`metricbias.audit` takes) as a judge that picks the better-scored candidate."""
    return MetricJudge(metric, cache=cache)


__all__ = ["ANSWER_COLUMNS", "COLUMNS", "DESIGNS", "MEASURES", "JudgeError", "MetricJudge", "as_probability", "ask",
           "audit_judge", "judge_label", "judge_signature", "load_judge", "log_odds_ci", "mean_test", "measure_answers",
           "measure_factorial", "metric_judge", "per_pair", "saturation", "shared_reference", "sign_test"]
