"""Token-level text editing for building references: tokenize, align two sentences, edit, detokenize.

Tokens keep the whitespace that preceded them, so a sentence edited at one
place is byte-identical to the original everywhere else.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_TOKEN = re.compile(r"\w+(?:['\u2019-]\w+)*|[^\w\s]")


@dataclass(frozen=True)
class Token:
    text: str
    ws: str = ""  # whitespace before the token

    @property
    def lower(self) -> str:
        return self.text.lower().replace("\u2019", "'")

    @property
    def is_word(self) -> bool:
        return bool(re.match(r"\w", self.text))


def tokenize(text: str) -> list[Token]:
    out, pos = [], 0
    for m in _TOKEN.finditer(text):
        out.append(Token(m.group(), text[pos:m.start()]))
        pos = m.end()
    return out


def detokenize(tokens: list[Token]) -> str:
    return "".join(t.ws + t.text for t in tokens).strip()


def diff_blocks(a: list[Token], b: list[Token]) -> list[tuple[int, int, int, int]]:
    """The differing blocks ``(i1, i2, j1, j2)`` of two token lists (case-insensitive), in order."""
    sm = difflib.SequenceMatcher(a=[t.lower for t in a], b=[t.lower for t in b], autojunk=False)
    return [(i1, i2, j1, j2) for op, i1, i2, j1, j2 in sm.get_opcodes() if op != "equal"]


# Closed-class English words: what follows an identity term tells whether it modifies a noun.
DETERMINERS = frozenset(
    "a an the this that these those my your his her its our their some any every each no another one "
    "many few several all both most".split()
)
ARTICLES = frozenset({"a", "an"})
COPULAS = frozenset(
    "is are was were be been being am 's 're seem seems seemed look looks looked appear appears appeared "
    "become becomes became feel feels felt remain remains remained stay stays stayed get gets got "
    "he's she's it's that's who's there's they're we're you're i'm".split()
)
DEGREE_ADVERBS = frozenset("so very too really quite extremely pretty rather incredibly".split())
INTENSIFIERS = DEGREE_ADVERBS | {"only", "just", "even"}
MODALS = frozenset("will would can could should must may might shall".split())
# past tenses that are not spelled -ed: after an identity noun they make "The Hindu thought ..." a clause
IRREGULAR_PAST = frozenset(
    "saw thought said took made went came knew told gave got left felt found ran sat stood won lost bought brought "
    "caught taught fought kept held met paid sent spent built wrote drove ate drank began became stole broke spoke "
    "chose wore threw grew drew flew hid hit put let set cut read led fed fled slept meant heard sold".split()
)
FUNCTION_WORDS = frozenset(
    (
        "and or but nor so yet for because since although though while if when whenever where wherever as than "
        "that which who whom whose what how why to of in on at by with without from into onto about over under "
        "after before during until against among between through around near up down out off again then there "
        "here not no never always also too very just even still ever "
        "i you he she it we they me him her us them my your his its our their mine yours hers ours theirs "
        "myself yourself himself herself itself ourselves themselves "
        "is are was were be been being am do does did done have has had having will would shall should can could "
        "may might must "
        "'s 're 've 'll 'd n't don't doesn't didn't isn't aren't wasn't weren't won't wouldn't can't couldn't "
        "shouldn't haven't hasn't hadn't "
        "a an the this these those some any every each all both either neither another such"
    ).split()
)
# "an" before a vowel sound: a vowel letter, except a "you" or "w" sound (university, use, usual, European, one),
# and a silent h (hour, honest, heir, honour)
_VOWEL_SOUND = re.compile(r"^(?:(?!uni(?![mnd])|us[eu]|ur[aeiou]|uti|euro|eu|ewe|one\b|once\b)[aeiou]"
                          r"|hour|honest|heir|honou?r)", re.I)
# letters whose name starts with a vowel sound, for words read letter by letter (an FBI agent, a US citizen)
_VOWEL_LETTERS = frozenset("AEFHILMNORSX")


def term_range(tokens: list[Token], start: int, end: int) -> tuple[int, int]:
    """The identity term inside a differing span ``tokens[start:end]``: without leading articles and edge
    punctuation ("an Italian." -> "Italian")."""
    while start < end and (tokens[start].lower in ARTICLES or not tokens[start].is_word):
        start += 1
    while end > start and not tokens[end - 1].is_word:
        end -= 1
    return start, end


def is_content(tok: Token | None) -> bool:
    """A word that is not a closed-class (function) word."""
    return tok is not None and tok.is_word and tok.lower not in FUNCTION_WORDS


def looks_like_verb(tok: Token | None) -> bool:
    """A word spelled like a past tense or participle ("sighed", "taking", "thought")."""
    return tok is not None and tok.is_word and (
        tok.lower in IRREGULAR_PAST or (len(tok.lower) > 4 and tok.lower.endswith(("ed", "ing"))))


def degree_start(tokens: list[Token], start: int) -> int:
    """Where the degree adverbs before ``start`` begin ("a very heavy boy": the index of "very")."""
    i = start
    while i > 0 and start - i < 2 and tokens[i - 1].lower in DEGREE_ADVERBS:
        i -= 1
    return i


def predicate_start(tokens: list[Token], start: int) -> int | None:
    """Where a predicative phrase "was (so) TERM" begins (after the copula), or None."""
    i = start
    while i > 0 and start - i < 2 and tokens[i - 1].lower in INTENSIFIERS:
        i -= 1
    return i if i > 0 and tokens[i - 1].lower in COPULAS else None


def indefinite_article(word: str) -> str:
    """``a`` or ``an`` before ``word``, by its first sound: a vowel letter with the usual exceptions (``an hour``,
    ``a university``, ``a one``), capitals of up to five letters read letter by letter (``an FBI agent``), and
    numbers by their first word (``an 8``, ``an 18-year-old``)."""
    word = word.strip()
    if re.match(r"8|1[18](?!\d)", word):
        return "an"
    if 2 <= len(word) <= 5 and word.isalpha() and word.isupper():
        return "an" if word[0] in _VOWEL_LETTERS else "a"
    return "an" if _VOWEL_SOUND.match(word) else "a"


def match_case(new: str, old: str) -> str:
    """``new`` capitalized like ``old`` (first letter only)."""
    if new and old[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


def edit(tokens: list[Token], start: int, end: int, new: str) -> list[Token]:
    """Replace ``tokens[start:end]`` by ``new`` (``""`` drops them), keeping spacing and sentence case.

    Dropping a sentence-initial span capitalizes the next word; an ``a``/``an``
    right before the edit is re-chosen for the word that now follows it.
    """
    old = tokens[start:end]
    first = old[0] if old else tokens[start]
    # a neutral phrase that brings its own article replaces the one before the span ("in a trailer park" ->
    # "in a neighborhood", not "in an a neighborhood"; "through the ghetto" -> "through a neighborhood")
    if new and start > 0 and tokens[start - 1].lower in ARTICLES | {"the"} and new.split()[0].lower() in DETERMINERS:
        first = tokens[start - 1]
        start -= 1
    sentence_start = start == 0 or tokens[start - 1].text in {'"', "."}
    if new:
        out = tokens[:start] + [Token(match_case(new, first.text) if sentence_start else new, first.ws)] + tokens[end:]
        nxt = start
    else:
        out = tokens[:start] + tokens[end:]
        nxt = start
        if nxt < len(out):
            follower = out[nxt]
            text = match_case(follower.text, first.text) if sentence_start and follower.is_word else follower.text
            out[nxt] = Token(text, first.ws)
    # article agreement: "an old idiot" -> drop "old" -> "a idiot" -> "an idiot"
    if nxt > 0 and nxt < len(out) and out[nxt - 1].lower in ARTICLES and out[nxt].is_word:
        art = indefinite_article(out[nxt].text.split()[0])
        out[nxt - 1] = Token(match_case(art, out[nxt - 1].text), out[nxt - 1].ws)
    return out


_LEADING_PUNCTUATION = re.compile(r"^[^\w\s\"'“‘(\[{$£€]+\s*")
_DOUBLED_ARTICLE = re.compile(r"\b(a|an|the)\s+\1\b", re.I)
_INDEFINITE = re.compile(r"\b([Aa]n?)(\s+)([\w'’-]+)")


def tidy(text: str) -> str:
    """A source sentence with slips of typing undone, the same way in every candidate and reference: stray
    punctuation at the start dropped (".Black people" -> "Black people"), a doubled article made single
    ("the the"), each a/an re-chosen for the word after it (:func:`indefinite_article`), the first letter
    capitalized."""
    text = _LEADING_PUNCTUATION.sub("", text.strip())
    text = _DOUBLED_ARTICLE.sub(lambda m: m.group(1), text)

    def article(m):
        if m.group(3).lower() in {"a", "an", "the"}:
            return m.group(0)
        return match_case(indefinite_article(m.group(3)), m.group(1)) + m.group(2) + m.group(3)

    text = _INDEFINITE.sub(article, text)
    return text[:1].upper() + text[1:]
