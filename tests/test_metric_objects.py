"""The metric objects researchers already hold, audited as they are (issue 29): sacreBLEU, bert-score,
sentence-transformers, torchmetrics and an ``evaluate``-style ``compute`` module, each with its own library's object,
its scores equal to the object's own and its settings in the signature."""

from __future__ import annotations

import functools
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metricbias as mb
from metricbias import backbones, cli, metrics
from metricbias.metrics.registry import resolve
from metricbias.signature import parse_signature

CANDIDATES = ["The nurse said she was tired.", "The man fixed the car.", ""]
REFERENCES = ["The nurse said that she was very tired.", "A person repaired a car.", "Someone spoke."]
AUDIT = dict(dataset="published", attributes=["age"], measures=["bias"], n_resamples=99, sample_size=6)


@pytest.fixture(autouse=True)
def _own_cache_and_registry(monkeypatch, tmp_path):
    monkeypatch.setattr("metricbias.metrics.registry._REGISTERED", {})
    monkeypatch.setenv("METRICBIAS_CACHE", str(tmp_path / "cache"))


def audited(obj, **kw):
    """``mb.audit`` of ``obj`` on 6 age pairs: the one row, checked against the same pairs scored and measured apart."""
    report = mb.audit(obj, **{**AUDIT, **kw})
    assert report["n_pairs"].tolist() == [6] and report["measure"].tolist() == ["bias"]
    pairs = mb.load_pairs("published", ["age"], sample_size=6, seed=0)
    scores = mb.score_pairs(pairs, obj, cache=False)
    assert report["signature"].iloc[0] == scores["signature"].iloc[0]
    expected = mb.measure(scores, ["bias"], n_resamples=99, seed=0)["value"].iloc[0]
    assert report["value"].iloc[0] == pytest.approx(expected)
    return report


# --- sacreBLEU ------------------------------------------------------------------------------------------

def test_sacrebleu_objects_score_as_sentence_score_with_their_signature_inside_ours():
    from sacrebleu.metrics import BLEU, CHRF, TER

    for obj, label, direction in ((BLEU(effective_order=True), "sacreBLEU-BLEU", "higher"),
                                  (CHRF(word_order=2), "sacreBLEU-chrF2++", "higher"), (TER(), "sacreBLEU-TER", "lower")):
        got_label, metric = resolve(obj)
        expected = [obj.sentence_score(c, [r]).score for c, r in zip(CANDIDATES, REFERENCES)]
        assert metric.score(CANDIDATES, REFERENCES) == pytest.approx(expected)
        fields = parse_signature(metric.signature)
        assert got_label == label and fields["direction"] == direction
        assert fields["sacrebleu"] == obj.get_signature().format().replace("|", ",")
    assert resolve(CHRF())[1].signature != resolve(CHRF(word_order=2))[1].signature  # never one cache entry
    report = audited(CHRF())
    assert "sacrebleu:nrefs:1,case:mixed,eff:yes,nc:6,nw:0,space:no,version:" in report["signature"].iloc[0]


def test_the_cli_audits_an_object_named_module_attr(tmp_path, monkeypatch, capsys):
    (tmp_path / "mymetrics.py").write_text("from sacrebleu.metrics import CHRF\nchrf = CHRF(lowercase=True)\n"
                                           "answer = 42\n")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "audit.csv"
    status = cli.main(["audit", "--metric", "mymetrics:chrf", "--attributes", "age", "--measures", "bias",
                       "--n-resamples", "99", "--out", str(out)])
    assert status == 0, capsys.readouterr().err
    table = pd.read_csv(out)
    assert table["metric"].tolist() == ["mymetrics:chrf"] and table["n_pairs"].tolist() == [71]
    assert "|sacrebleu:nrefs:1,case:lc,eff:yes,nc:6,nw:0," in table["signature"].iloc[0]
    status = cli.main(["audit", "--metric", "mymetrics:answer", "--out", str(tmp_path / "no.csv")])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ": error: " in ln]
    assert status == 2 and len(lines) == 1 and "cannot use builtins.int as a metric; accepted:" in lines[0]
    assert "sacreBLEU BLEU/CHRF/TER" in lines[0] and "compute(predictions=, references=)" in lines[0]
    assert not (tmp_path / "no.csv").exists()


# --- an evaluate-style module ----------------------------------------------------------------------------

MODULE_SCRIPT = '''
"""A module in the form of a Hugging Face evaluate metric script (no evaluate import: only its compute)."""


class WordRecall:
    name = "word_recall"
    config_name = "default"

    def compute(self, *, predictions=None, references=None):
        hits = [len(set(p.lower().split()) & set(r.lower().split())) / len(set(r.lower().split()))
                for p, r in zip(predictions, references)]
        return {"recall": sum(hits) / len(hits), "pairs": len(hits)}


word_recall = WordRecall()
'''


def test_an_object_with_compute_is_scored_one_pair_at_a_time(tmp_path, monkeypatch, capsys):
    (tmp_path / "word_recall.py").write_text(textwrap.dedent(MODULE_SCRIPT))
    monkeypatch.syspath_prepend(str(tmp_path))
    from word_recall import word_recall

    with pytest.raises(metrics.MetricError, match=r"returns several numbers \(recall, pairs\); choose one with "
                                                  r"metricbias.metrics.adapt\(obj, key=...\)"):
        resolve(word_recall)[1].score(["a"], ["a"])
    metric = mb.adapt(word_recall, key="recall")()
    # hand-worked: 6 of the reference's 8 words; 1 of 4 ("car."); none of 2
    assert metric.score(CANDIDATES, REFERENCES) == pytest.approx([6 / 8, 1 / 4, 0.0])
    assert metric.config_label() == "word_recall" and "|module:word_recall.WordRecall|code:" in metric.signature
    assert "|config:default|key:recall|direction:higher|" in metric.signature
    report = audited(metric)
    assert report["metric"].iloc[0] == "word_recall"
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "audit.csv"  # the CLI: one output picked without asking
    (tmp_path / "one_output.py").write_text(textwrap.dedent(MODULE_SCRIPT).replace(', "pairs": len(hits)', ""))
    assert cli.main(["audit", "--metric", "one_output:word_recall", "--attributes", "age", "--measures", "bias",
                     "--n-resamples", "99", "--out", str(out)]) == 0, capsys.readouterr().err
    # the signature names the object, not how the command line named it (one metric, one signature)
    assert pd.read_csv(out)["signature"].str.startswith("metric:compute.word_recall|module:").all()


# --- torchmetrics ------------------------------------------------------------------------------------------

def test_torchmetrics_modules_and_functionals_score_each_pair_with_their_settings():
    tm = pytest.importorskip("torchmetrics", reason="pip install -c requirements.lock -e '.[objects]'")
    from torchmetrics.functional.text import chrf_score, translation_edit_rate

    module = tm.text.CHRFScore(n_word_order=0)
    _, from_module = resolve(module)
    _, from_functional = resolve(functools.partial(chrf_score, n_word_order=0))
    expected = [float(chrf_score([c], [[r]], n_word_order=0)) for c, r in zip(CANDIDATES, REFERENCES)]
    assert from_module.score(CANDIDATES, REFERENCES) == pytest.approx(expected)
    assert from_functional.score(CANDIDATES, REFERENCES) == pytest.approx(expected)
    assert "|n_char_order:6|n_word_order:0|beta:2.0|" in from_module.signature
    assert "|n_word_order:0|" in from_functional.signature and "torchmetrics-" in from_module.signature
    assert from_module.signature != resolve(tm.text.CHRFScore())[1].signature
    label, ter = resolve(tm.text.TranslationEditRate(lowercase=False))
    assert label == "torchmetrics-TranslationEditRate" and "|direction:lower|" in ter.signature
    assert "|tokenizer.lowercase:False|" in ter.signature
    assert ter.score(CANDIDATES[:2], REFERENCES[:2]) == pytest.approx(
        [float(translation_edit_rate([c], [[r]], lowercase=False)) for c, r in zip(CANDIDATES[:2], REFERENCES[:2])])
    assert "|direction:lower|" in resolve(translation_edit_rate)[1].signature  # the module class of its file says
    rouge = tm.text.ROUGEScore(rouge_keys="rougeL")  # several outputs: the F-measure, or the one asked for
    expected = tm.functional.text.rouge_score(CANDIDATES[0], REFERENCES[0], rouge_keys="rougeL")
    assert resolve(rouge)[1].score(CANDIDATES[:1], REFERENCES[:1])[0] == pytest.approx(
        float(expected["rougeL_fmeasure"]))
    precision = mb.adapt(rouge, key="rougeL_precision")()
    assert precision.score(CANDIDATES[:1], REFERENCES[:1])[0] == pytest.approx(float(expected["rougeL_precision"]))
    assert "|key:rougeL_precision|" in precision.signature and "|key:-|" in resolve(rouge)[1].signature
    with pytest.raises(metrics.MetricError, match="does not score a candidate against a reference"):
        resolve(tm.text.Perplexity())
    audited(module)


# --- model-based objects ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def minilm() -> str:
    backbones.offline_env()
    return str(backbones.resolve("all-MiniLM-L6-v2"))


def test_a_bertscorer_keeps_model_layer_idf_and_baseline_in_the_signature(tiny_bert, tmp_path):
    from bert_score import BERTScorer

    plain = BERTScorer(model_type=str(tiny_bert), num_layers=2)
    label, metric = resolve(plain)
    p, r, f = plain.score(CANDIDATES[:2], REFERENCES[:2])
    assert metric.score(CANDIDATES[:2], REFERENCES[:2]) == pytest.approx(f.numpy())
    assert label == f"BERTScorer-F-{tiny_bert.name}-L2"
    # the model folder by its name, never an absolute local path (its weights' hash follows)
    assert f"|model:{Path(tiny_bert).name}|layer:2|all_layers:False|variant:F|idf:-|baseline:-|" in metric.signature
    assert str(tiny_bert) not in metric.signature
    assert mb.adapt(plain, key="P")().score(CANDIDATES[:2], REFERENCES[:2]) == pytest.approx(p.numpy())
    baseline = tmp_path / "baseline.tsv"
    baseline.write_text("LAYER,P,R,F\n0,0.1,0.1,0.1\n1,0.2,0.2,0.2\n2,0.3,0.3,0.3\n")
    tuned = BERTScorer(model_type=str(tiny_bert), num_layers=1, idf=True, idf_sents=REFERENCES,
                       rescale_with_baseline=True, baseline_path=str(baseline), lang="en")
    label, metric = resolve(tuned)
    fields = parse_signature(metric.signature)
    assert label == f"BERTScorer-F-{tiny_bert.name}-L1-idf-rescaled"
    assert fields["layer"] == "1" and fields["idf"] != "-" and fields["baseline"] != "-"
    assert fields["weights"] != parse_signature(resolve(plain)[1].signature)["weights"]  # 1 layer
    assert metric.score(CANDIDATES[:2], REFERENCES[:2]) == pytest.approx(
        tuned.score(CANDIDATES[:2], REFERENCES[:2])[2].numpy())
    audited(tuned)


def test_a_sentence_transformer_scores_the_cosine_of_the_embeddings(minilm):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(minilm, device="cpu")
    label, metric = resolve(model)
    a, b = model.encode(CANDIDATES), model.encode(REFERENCES)
    cosine = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert metric.score(CANDIDATES, REFERENCES) == pytest.approx(cosine, abs=1e-5)
    assert label == "SBERT-cos-MiniLM" and "|score:cosine|modules:Transformer(" in metric.signature
    assert "Pooling(embedding_dimension=384,include_prompt=True,pooling_mode=mean);Normalize()" in metric.signature
    audited(model)


def test_a_cross_encoder_predicts_on_candidate_reference_pairs(minilm):
    import torch
    from sentence_transformers import CrossEncoder

    torch.manual_seed(0)  # an untrained head on MiniLM: any fixed weights will do for the plumbing
    model = CrossEncoder(minilm, num_labels=1, device="cpu")
    label, metric = resolve(model)
    expected = model.predict(list(zip(CANDIDATES, REFERENCES)))
    assert metric.score(CANDIDATES, REFERENCES) == pytest.approx(expected, abs=1e-6)
    assert label == "CrossEncoder-MiniLM" and "|pairs:candidate,reference|activation:Sigmoid|" in metric.signature
    torch.manual_seed(1)
    other = CrossEncoder(minilm, num_labels=1, device="cpu")  # another head: another signature
    assert resolve(other)[1].signature != metric.signature
    audited(model)


def test_anything_else_is_one_line_listing_what_is_accepted():
    with pytest.raises(metrics.MetricError) as error:
        resolve({"not": "a metric"})
    assert "\n" not in str(error.value) and "cannot use builtins.dict as a metric; accepted:" in str(error.value)
    with pytest.raises(metrics.MetricError, match="direction must be 'higher' or 'lower'"):
        mb.adapt(pytest.importorskip("sacrebleu").metrics.CHRF(), direction="up")


def test_the_appendix_sacrebleu_example_runs_as_printed(tmp_path, monkeypatch):
    from doc_blocks import code_block

    example = code_block("notebooks/A1_using_metricbias.md", "CHRF(")
    monkeypatch.chdir(tmp_path)
    proc = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "gender" in proc.stdout and "stereotypical_difference" in proc.stdout
    assert "metric:sacrebleu.CHRF|sacrebleu:nrefs:1,case:mixed,eff:yes,nc:6,nw:2,space:no,version:" in proc.stdout
