"""The reference appendix (notebooks/A2_reference.md): one card per registered metric and bias measure, rendered
from the registries, a user's own ones included."""

from __future__ import annotations

import re

import pytest

from metricbias import metrics
from metricbias.bias import registry
from metricbias.book.reproduction import reference


@pytest.fixture(autouse=True)
def _forget_user_registrations(monkeypatch):
    registry.table()  # the built-in measures, registered on first use
    monkeypatch.setattr(registry, "_REGISTERED", dict(registry._REGISTERED))
    monkeypatch.setattr("metricbias.metrics.registry._REGISTERED", {})


def _cards(text: str) -> list[str]:
    """The cards of a rendered text: each starts with a bold title line."""
    return re.split(r"\n\n(?=\*\*)", text)


def test_every_registered_metric_has_one_card_with_its_options_and_limits():
    text = reference.metric_cards(keys=frozenset(), index={})
    cards = _cards(text)
    assert len(cards) == len(metrics.names())
    for name, card in zip(metrics.names(), cards):
        described = metrics.metric_class(name).describe()
        assert card.startswith(f"**{described['label']}** (`{name}`)")
        for option in described["options"]:
            assert f"`{option['name']}`" in card
        assert (f"- **Limits**: {described['limits']}" in card) if described["limits"] else "**Limits**" not in card
        assert card.split("\n")[2] not in ("", "—"), f"{name}: the card has no description"
    bertscore = cards[metrics.names().index("bertscore")]
    assert "- **Backbones** (encoder): " in bertscore and "`all-MiniLM-L6-v2`" in bertscore
    assert "- **Backbones**: none (no model)" in cards[0]  # BLEU


def test_every_registered_measure_has_one_card():
    cards = _cards(reference.measure_cards(index={}))
    assert [re.match(r"\*\*`([^`]+)`\*\*", c).group(1) for c in cards] == registry.names()
    bias = cards[0]
    assert "- **Takes**: pairs" in bias and "- **Returns**: a value, a 95% interval" in bias
    assert "`n_resamples`" in bias and "Sun et al. 2022, Eq. 2" in bias
    assert "- **Returns**: a value, a 95% interval, a p-value" in cards[registry.names().index("size_robust_difference")]


def test_a_users_metric_and_measure_get_cards_too():
    @metrics.register(name="length_gap", citation="me: my note")
    def length_gap(candidates, references):
        """Absolute length difference in characters."""
        return [abs(len(c) - len(r)) for c, r in zip(candidates, references)]

    @registry.register_measure("max_gap", takes="distributions", description="largest score gap")
    def max_gap(x, y, seed=0):
        return float(max(x) - min(y))

    assert "**length_gap** (`length_gap`)\n\nAbsolute length difference in characters." in reference.metric_cards()
    measure = _cards(reference.measure_cards())[-1]
    assert measure.startswith("**`max_gap`**\n\nlargest score gap")
    assert "- **Takes**: distributions" in measure and "- **Options**: `seed`" in measure


def test_a_citation_key_of_the_bibliography_becomes_a_citation(tmp_path):
    bib = tmp_path / "references.bib"
    bib.write_text("@article{zhang2020bertscore,\n  title={BERTScore}\n}\n@inproceedings{ post2018sacrebleu ,\n}\n")
    keys = reference.bibliography_keys(bib)
    assert keys == {"zhang2020bertscore", "post2018sacrebleu"}
    assert reference.citation("zhang2020bertscore: Zhang et al. (2020), BERTScore", keys) == \
        "Zhang et al. (2020), BERTScore {cite:p}`zhang2020bertscore`"
    # a key missing from the bibliography stays text, and so does a citation without a key
    assert reference.citation("nobody2020x: Nobody (2020)", keys) == "nobody2020x: Nobody (2020)"
    assert reference.citation("Lin (2004), ROUGE", keys) == "Lin (2004), ROUGE"
    assert reference.citation("", keys) == "—"
    assert reference.bibliography_keys(tmp_path / "missing.bib") == frozenset()


def test_the_cards_cite_every_work_they_name_by_author_and_year(tmp_path):
    """"Sentence BLEU (Papineni et al., 2002)" in a docstring is a citation on the page, and every key the cards
    cite is in the bibliography."""
    from metricbias.book.reproduction.citations import MENTION, author_year_index, cite_mentions

    bib = tmp_path / "references.bib"
    bib.write_text("@inproceedings{papineni2002bleu,\n  author = {Papineni, K. and Roukos, S. and Ward, T.},\n"
                   "  title = {BLEU}, year = {2002}\n}\n@inproceedings{lin2004rouge,\n  author = {Lin, Chin-Yew},\n"
                   "  title = {ROUGE}, year = {2004}\n}\n@article{gao2022social,\n  author = {Gao, M. and Wan, X.},\n"
                   "  title = {Biases}, year = {2022}\n}\n")
    index = author_year_index(bib)
    assert index == {("Papineni et al.", "2002"): "papineni2002bleu", ("Papineni", "2002"): "papineni2002bleu",
                     ("Lin", "2004"): "lin2004rouge", ("Gao & Wan", "2022"): "gao2022social",
                     ("Gao", "2022"): "gao2022social"}
    assert cite_mentions("Sentence BLEU (Papineni et al., 2002); after Lin (2004), as Gao and Wan 2022 do; "
                         "Nobody (2020); `Lin (2004)`", index) == (
        "Sentence BLEU {cite:p}`papineni2002bleu`; after {cite:t}`lin2004rouge`, as {cite:t}`gao2022social` do; "
        "Nobody (2020); `Lin (2004)`")
    assert reference.citation("gao2022social: metrics as Gao & Wan (2022) run them", {"gao2022social"}, index) \
        == "metrics as {cite:t}`gao2022social` run them"  # cited once
    keys = reference.bibliography_keys()
    text = reference.metric_cards() + "\n\n" + reference.measure_cards()
    cited = {k.strip() for roles in re.findall(r"\{cite:[pt]\}`([^`]+)`", text) for k in roles.split(",")}
    assert {"papineni2002bleu", "lin2004rouge", "kusner2015wmd", "sun2022bertscore"} <= cited <= keys
    plain = re.sub(r"`[^`]*`", "", re.sub(r"\{cite:[pt]\}`[^`]+`", "", text))
    assert [m.group(0) for m in MENTION.finditer(plain)] == []


def test_the_appendix_page_renders_the_cards_and_is_in_the_toc():
    from metricbias.book import runner

    stems = [c.stem for c in runner.chapters()]
    assert stems[-3:] == ["A1_using_metricbias", "A2_reference", "A3_reproducibility"]
    page = next(c for c in runner.chapters() if c.stem == "A2_reference").source.read_text()
    assert "reference.metric_cards()" in page and "reference.measure_cards()" in page


def test_cards_show_tag_like_words_as_written_and_moverscore_names_its_code():
    """PRISM's option text names the tag ``<en>``: escaped, so that it is not read as raw HTML that swallows the
    rest of the card; MoverScore's card says which moverscore_v2 its scores follow."""
    cards = dict(zip(metrics.names(), _cards(reference.metric_cards(keys=frozenset()))))
    assert "auto: \\<en\\> when the tokenizer" in cards["prism"] and "<en>" not in cards["prism"]
    assert reference._text("`<en>` or <en>") == "`<en>` or \\<en\\>"  # code is left as it is
    mover = cards["moverscore"]
    assert "1 / (1 + EMD)" in mover and "GitHub ``moverscore_v2``" in mover and "1.0.3" in mover
    for name in ("bertscore", "moverscore", "bartscore", "prism", "frugalscore"):
        assert "—" not in cards[name], name
