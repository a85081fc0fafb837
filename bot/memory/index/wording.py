"""Words that mean the same to a search: a light stem (allergic, allergy → aller), irregular verb forms
(saw → see) and a few everyday synonyms (film → movie), so a question in other words still finds its passage."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

ROOT_CHARS = 5
ROOTS_KEPT = 8192  # stems kept: a few languages' everyday vocabulary, about 1.5 MB at most
_SUFFIXES: tuple[str, ...] = ("ations", "ation", "ings", "ing", "ions", "ion", "ments", "ment", "edly", "ies")
_SUFFIXES += ("ied", "ed", "es", "ic", "ly", "s", "y")  # longest first: the first that fits is cut
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
KINDS_FILE = Path(__file__).with_name("kinds.txt")  # kinds of things and their commonest instances, from WordNet
NAMES_FILE = Path(__file__).with_name("names.txt")  # kinds of named things and their names, from WordNet
KIN_KEPT = 1024  # names whose kin are kept: a chat's questions name a few things again and again

_IRREGULAR = """
see saw seen|go went gone goes|eat ate eaten|buy bought|get got gotten|make made|take took taken|give gave given
meet met|run ran|pay paid|leave left|find found|send sent|bring brought|write wrote written|fly flew flown
drive drove driven|swim swam swum|sell sold|think thought|feel felt|keep kept|lend lent|lose lost|spend spent
begin began begun|choose chose chosen|speak spoke spoken|wear wore worn|win won|teach taught|catch caught
"""
_SYNONYMS = """
film movie cinema|present gift|boss manager supervisor|job work profession career occupation|doctor dr physician
wifi network wireless|shop store|flat apartment|kid child son daughter|mum mom mother|dad father
holiday vacation trip|photo picture|phone mobile|code combination password pin|appointment booking
hike hiking trail walk route|quote price cost expensive|repair fix|gig concert show|sofa couch
neighbour neighbor|colour color|favourite favorite|ill sick|car vehicle|house home|lake pond
"""


def root(word: str) -> str:
    """A word's light stem, at most ROOT_CHARS letters: what its inflections and derivations share; a word with
    digits (a code, a number, an id) stays whole."""
    word = word.lower()
    return _stem(word) if word.isalpha() else word


@lru_cache(maxsize=ROOTS_KEPT)  # words recur far more than they are new; numbers and ids, which never end, stay out
def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word[:ROOT_CHARS]


def _groups(table: str) -> dict[str, tuple[str, ...]]:
    found: dict[str, tuple[str, ...]] = {}
    for group in table.replace("\n", "|").split("|"):
        words = tuple(group.split())
        for word in words:
            found[word] = tuple(dict.fromkeys((*found.get(word, ()), *words)))
    return found


IRREGULAR = _groups(_IRREGULAR)
SYNONYMS = _groups(_SYNONYMS)


def variants(word: str) -> tuple[str, ...]:
    """The word and the words that stand for it: its irregular forms and its synonyms."""
    return tuple(dict.fromkeys((word, *IRREGULAR.get(word, ()), *SYNONYMS.get(word, ()))))


@lru_cache(maxsize=1)
def _kinds() -> dict[str, tuple[str, ...]]:
    """Each kind's names (the word, and a noun's plural) -> its things, read from KINDS_FILE once."""
    found: dict[str, tuple[str, ...]] = {}
    for line in KINDS_FILE.read_text(encoding="utf-8").splitlines():
        if line[:1].isalpha():
            names, *things = line.split()
            found.update(dict.fromkeys(names.split(","), tuple(things)))
    return found


def instances(word: str) -> tuple[str, ...]:
    """The commonest things a word names a kind of (art: painting, sculpture; religious: church), for a question
    that names the kind where what was said names the thing; () for most words."""
    return _kinds().get(word, ())


@lru_cache(maxsize=1)
def _named() -> tuple[dict[str, list[int]], list[tuple[str, ...]]]:
    """Each name -> the numbers of its kinds' lines, and each line's words (its kind's, then its names), read from
    NAMES_FILE once."""
    kinds: dict[str, list[int]] = {}
    lines: list[tuple[str, ...]] = []
    for line in NAMES_FILE.read_text(encoding="utf-8").splitlines():
        if line[:1].isalpha() or line[:1] == "-":
            words, *names = line.split()
            for name in names:
                kinds.setdefault(name, []).append(len(lines))
            lines.append((*(word for word in words.split(",") if word != "-"), *names))
    return kinds, lines


@lru_cache(maxsize=KIN_KEPT)
def kin(word: str) -> tuple[str, ...]:
    """For a name (Vivaldi), the words of its kind and the other names of that kind (composer, bach, mozart …), for
    a question that names one thing where what was said names others of its kind; () for most words."""
    kinds, lines = _named()
    return tuple(dict.fromkeys(one for n in kinds.get(word, ()) for one in lines[n] if one != word))


def roots_of(text: str) -> set[str]:
    """The roots of every word of a text."""
    return {root(word) for word in set(_WORD.findall(text.lower()))}
