"""The book layer's one naming source: how a paper's metric label reads as our registry name
(:func:`registry_name`), and how the chapters' tables head the columns of their page summaries
(:data:`PAGE_NAMES`).

A paper's label is, in most cases, the label on our metric's card (:meth:`metricbias.metrics.Metric.describe`):
"BLEU", "ROUGE-1", "WMD", "MoverScore" and, case and spaces aside, "GreedyMatching". :data:`PAPER_NAMES` holds
only the labels that differ from every card.
"""

from __future__ import annotations

from ...metrics import BUILTIN, metric_class

#: the papers' metric labels that are no card's label -> our registry name
PAPER_NAMES = {
    "ROUGE": "rouge1",  # Sun et al.'s released column: rouge-score's ROUGE-1 F (reproduced to 1e-9)
    "BLEURT": "regression",  # our BLEURT-style regression metric
    "BERTScore-F1": "bertscore",
    "EmbAvg": "embedding_average",
}
#: a suffix that names how a paper aggregates over references, not the metric ("WMD-max", "BLEURT-mean")
AGGREGATION_SUFFIXES = ("max", "mean")


def _key(label: str) -> str:
    return label.replace(" ", "").casefold()


def registry_name(label: str) -> str:
    """Our registry name for a paper's metric label: :data:`PAPER_NAMES`, else the metric whose card has that
    label (case and spaces aside); an aggregation suffix (``-max``, ``-mean``) is not part of the name."""
    stem, _, suffix = label.rpartition("-")
    if stem and suffix in AGGREGATION_SUFFIXES:
        label = stem
    if label in PAPER_NAMES:
        return PAPER_NAMES[label]
    by_card = {_key(metric_class(n).label or n): n for n in BUILTIN}  # the built-in cards: a user's own metric names no paper row
    if _key(label) not in by_card:
        raise KeyError(f"no registry metric for the paper label {label!r}: no metric card has it; add it to "
                       "metricbias.book.reproduction.names.PAPER_NAMES")
    return by_card[_key(label)]


#: readable column names for the page summaries chapters 6 and 7 show (display.LABELS heads the library's columns)
PAGE_NAMES = {
    # chapter 6: CDA counts, criteria, signatures
    "pairs_read": "pairs read", "dropped_held_out": "dropped (held out)", "pairs_used": "pairs used",
    "gendered_sentences": "gendered sentences", "debias_triples": "counterfactual triples",
    "kd_pairs": "distillation pairs", "p_value": "p", "signature_before": "without the adapter",
    "signature_after": "with the adapter",
    # chapter 7: pronoun readings, preference counts and shares, correlations before and after the swap
    "mean_male": "mean male", "mean_female": "mean female", "share_male_higher": "male higher",
    "share_female_higher": "female higher", "share_equal": "equal", "mean_difference": "difference",
    "p_value_origin": "p (origin)", "p_value_swap": "p (swap)", "n_origin": "n",
    "swapped_to": "swapped to", "significant_origin": "p (origin) ≤ 0.01",
    "n_male_higher": "pairs male higher", "n_female_higher": "pairs female higher", "n_equal": "pairs tied",
    "p_sign": "p (sign test)", "p_sign_adjusted": "p (BH)", "prefers": "prefers (BH < 0.05)",
}



#: what a trained part's folder prefix makes of its encoder (``para-all-MiniLM-L6-v2``: "MiniLM paraphraser")
PART_KINDS = {"para-": "paraphraser", "stsb-": "regression head", "mlm-": "masked-LM head"}
#: the metric a debiasing adapter's folder names (``debiased-<metric>-<backbone>``), as the tables write it
ADAPTED_METRICS = {"bertscore": "BERTScore", "regression": "Regression"}


def part_name(folder: str) -> str:
    """A trained part's folder name in words: "MiniLM paraphraser", "MPNet regression head", "BERTScore-MiniLM,
    debiased", "Regression-MiniLM, debiased (Table 7 recipe)"; a name it does not know is returned as it is."""
    from ...backbones import BACKBONES

    def short(name: str) -> str:
        found = BACKBONES.get(name)
        return (found.short or name) if found else name

    name, recipe = (folder[:-len("-table7")], " (Table 7 recipe)") if folder.endswith("-table7") else (folder, "")
    if name.startswith("debiased-"):
        metric, _, backbone = name[len("debiased-"):].partition("-")
        if metric in ADAPTED_METRICS and backbone:
            return f"{ADAPTED_METRICS[metric]}-{short(backbone)}, debiased{recipe}"
    for prefix, kind in PART_KINDS.items():
        rest = name[len(prefix):]
        if name.startswith(prefix) and not recipe and (rest in BACKBONES or name in BACKBONES):
            return f"{short(rest if rest in BACKBONES else name)} {kind}"
    return folder

def counted(n: int, singular: str, plural: str | None = None, zero: str = "no") -> str:
    """A count with its noun in the right number: ``counted(1, "built pair")`` → "1 built pair", ``counted(1234,
    "pair")`` → "1,234 pairs", ``counted(0, "pair")`` → "no pairs" (``zero``: the word for none)."""
    n = int(n)
    noun = singular if n == 1 else (plural or singular + "s")
    return f"{zero if n == 0 else f'{n:,}'} {noun}"


def signed(value: float, spec: str = ".1%") -> str:
    """A signed value with a true minus sign, as the page prints it: ``signed(-0.047)`` → "−4.7%", ``signed(0.036)``
    → "+3.6%"."""
    return f"{value:+{spec}}".replace("-", "−")


def joined(words, empty: str = "none") -> str:
    """Words as a list in a sentence: "a", "a and b", "a, b and c"; ``empty`` when there are none."""
    words = [str(w) for w in words]
    if not words:
        return empty
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def of_all(chosen, among, noun: str) -> str:
    """Which of ``among`` (names) are ``chosen``, as a phrase that never prints an empty slot: "both BARTScore
    models", "all 3 metrics", "neither BARTScore model", "none of the 3 metrics", or "1 of the 2 BARTScore models
    (BARTScore-BART-large)"; of one, "the only BARTScore model (…)" or "no BARTScore model". ``noun`` is the plural ("BARTScore models"); its singular drops a final "s"."""
    chosen, n = [c for c in among if c in set(chosen)], len(among)
    if n <= 1:
        return f"the only {noun[:-1]} ({chosen[0]})" if chosen else f"no {noun[:-1] if n else noun}"
    if len(chosen) == n:
        return f"both {noun}" if n == 2 else f"all {n} {noun}"
    if not chosen:
        return f"neither {noun[:-1]}" if n == 2 else f"none of the {n} {noun}"
    return f"{len(chosen)} of the {n} {noun} ({joined(chosen)})"


#: small counts as the page writes them in words
NUMBER_WORDS = dict(enumerate(("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")))


def share(k: int, n: int, noun: str, every: str = "each of the {n} {noun}") -> str:
    """``k`` of ``n`` things as a phrase that never prints "3 of the 3" or "0 of": all of them by ``every``
    ("each of the three others"; "all {n} {noun}" gives "all 174 cells"), none as "none of the three others",
    otherwise "2 of the 3 others". A count up to ten is written as a word where it stands alone."""
    k, n = int(k), int(n)
    word = NUMBER_WORDS.get(n, f"{n:,}") if n <= 10 else f"{n:,}"
    if n and k == n:
        return every.format(n=word, noun=noun)
    return f"none of the {word} {noun}" if k == 0 else f"{k:,} of the {n:,} {noun}"


__all__ = ["ADAPTED_METRICS", "AGGREGATION_SUFFIXES", "PAGE_NAMES", "PAPER_NAMES", "NUMBER_WORDS", "PART_KINDS", "counted", "joined", "of_all", "share", "signed",
           "part_name", "registry_name"]
