"""Reading a natural-language question as a search: its content words, and the time it points at, if any."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from bot.memory.index.wording import instances, root, variants

WORDS_KEPT = 4096  # words whose concepts are kept: a chat's questions reuse their words
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
_CAPITALISED = re.compile(r"\b[A-Z][^\W_]+", re.UNICODE)  # a name, unless it starts the text or a sentence
_STOP_WORDS = """
    a about above after again against ago all almost also am an and any anything are aren around as ask asked at
    back be because been before being below between both but by can could couldn d day did didn do does doesn
    doing don done down during each earlier else ever every few for from further get got had hadn has hasn have
    haven having he her here hers herself him himself his how i if in into is isn it its itself just know last
    let ll m maybe me mention mentioned might mine more most much must my myself need no nor not now o of off
    often on once one only or other our ours ourselves out over own please re recall remember remind s said same
    say saying says shall she should so some something somebody someone such t talk talked tell telling than
    thank thanks that the their theirs them themselves then there these they thing things think this those
    thought through time times to told too under until up us ve very was wasn we were weren what whatever when
    where which while who whom whose why will with won would wouldn yes yet you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_WORDS.split())  # function words, and the ones a question about the past is made of
MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        1,
    )
    for name in names
}
SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11), "winter": (12, 2)}
_UNITS = {"day": 1, "days": 1, "week": 7, "weeks": 7, "month": 30, "months": 30, "year": 365, "years": 365}
_RELATIVE = re.compile(r"\b(?:(\d+|a|an|one|two|three|four|few|couple of) )?(day|week|month|year)s? ago\b")
_LAST = re.compile(r"\blast (week|month|year|spring|summer|autumn|fall|winter)\b")
_NEAR = {
    re.compile(rf"\b{phrase}\b"): (phrase, days)  # days back it reaches
    for phrase, days in {"today": 0, "tonight": 0, "yesterday": 1, "this week": 7, "this month": 31}.items()
}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "few": 3, "couple of": 2}


NO_NAMES: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Query:
    """A question's content words (lower case, stop words and time words dropped) and the window it names."""

    text: str
    words: tuple[str, ...]
    since: float | None = None
    until: float | None = None
    names: frozenset[str] = NO_NAMES  # words written with a capital inside a sentence: names, which count more
    kinds: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (a question word, the things it names a kind of)

    @property
    def concepts(self) -> tuple[tuple[str, ...], ...]:
        """For each word, the roots of the words that stand for it (its forms and synonyms)."""
        return tuple(map(concept_roots, self.words))

    @property
    def things(self) -> dict[str, list[int]]:
        """Each root of a thing a word names a kind of (none of the word's own roots) -> the numbers of those words."""
        found: dict[str, list[int]] = {}
        for word, things in self.kinds:
            if word in self.words:
                number = self.words.index(word)
                own = self.concepts[number]
                for one in dict.fromkeys(root(thing) for thing in things):
                    if one not in own:
                        found.setdefault(one, []).append(number)
        return found

    @property
    def expression(self) -> str:
        """The words, their forms and synonyms as an FTS5 OR of quoted terms and root prefixes (so no user text is
        read as FTS5 syntax), and the things they name kinds of as quoted terms; "" when there are none."""
        terms = [concept_expression(word) for word in self.words]
        terms += [f'"{thing}"' for word, things in self.kinds if word in self.words for thing in things]
        return " OR ".join(terms)

    @property
    def narrow_expression(self) -> str:
        """The words alone as an FTS5 OR of quoted terms (stemmed by the index's tokenizer, without root prefixes or
        synonyms); "" when there are none."""
        return " OR ".join(f'"{word}"' for word in self.words)


def concept_roots(word: str) -> tuple[str, ...]:
    """The roots of the words that stand for a word (its forms and synonyms), each once."""
    return _kept_roots(word) if word.isalpha() else _roots(word)


def concept_expression(word: str) -> str:
    """One word's FTS5 terms: each variant as itself (stemmed by the index's tokenizer) and by its root prefix."""
    return _kept_expression(word) if word.isalpha() else _expression(word)


def _roots(word: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(root(v) for v in variants(word)))


def _expression(word: str) -> str:
    terms: list[str] = []
    for variant in variants(word):
        terms.append(f'"{variant}"')
        if len(stem := root(variant)) >= 4 and stem != variant:
            terms.append(f'"{stem}"*')
    return " OR ".join(dict.fromkeys(terms))


# Words recur far more than they are new; numbers and ids, which never end, stay out of what is kept.
_kept_roots = lru_cache(maxsize=WORDS_KEPT)(_roots)
_kept_expression = lru_cache(maxsize=WORDS_KEPT)(_expression)


def parse_query(text: str, now: datetime) -> Query:
    """The question read for search: content words in order, and a time window when it names one."""
    lowered = text.lower()
    found = _WORD.findall(lowered)
    since, until, time_words = _window(lowered, found, now)
    words: list[str] = []
    names = _names(text) if text != lowered else set()
    for word in found:
        if "'" in word or "’" in word:
            word = word.replace("’", "'").split("'")[0]
        if word in STOP_WORDS or word in time_words or len(word) < 2 and not word.isdigit():
            continue
        if word not in words:
            words.append(word)
    kinds = tuple((word, things) for word in words if (things := instances(word)))
    return Query(text, tuple(words), since, until, frozenset(names.intersection(words)) if names else NO_NAMES, kinds)


def _names(text: str) -> set[str]:
    """The words written with a capital inside a sentence, lower-cased."""
    names = set()
    for match in _CAPITALISED.finditer(text):
        at = match.start()
        if at and not (at > 1 and text[at - 2] in ".!?" and text[at - 1].isspace()):
            names.add(match.group().lower())
    return names


def _window(text: str, words: list[str], now: datetime) -> tuple[float | None, float | None, frozenset[str]]:
    """The period a question points at (`3 weeks ago`, `last month`, `in spring`, `in March`) and its words (`words`:
    the text's own); each pattern is tried only when its fixed part is in the text, as most questions name no time."""
    if " ago" in text and (match := _RELATIVE.search(text)):
        amount = _NUMBERS.get(match.group(1) or "a") or int(match.group(1))
        days = _UNITS[match.group(2)] * amount
        middle = now - timedelta(days=days)
        spread = timedelta(days=max(2, days // 2))
        return (middle - spread).timestamp(), (middle + spread).timestamp(), frozenset(match.group(0).split())
    if "last " in text and (match := _LAST.search(text)):
        unit = match.group(1)
        if unit in SEASONS:
            return _season(unit, now, this_year=False) + (frozenset(("last", unit)),)
        days = _UNITS[unit]
        return (now - timedelta(days=2 * days)).timestamp(), now.timestamp(), frozenset(("last", unit))
    for near, (phrase, days) in _NEAR.items():
        if phrase in text and near.search(text):
            start = (now - timedelta(days=days)).replace(hour=0, minute=0, second=0, microsecond=0)
            return start.timestamp(), now.timestamp() + 1, frozenset(phrase.split())
    for word in words:
        if word in SEASONS:
            return _season(word, now, this_year=True) + (frozenset((word,)),)
        if word in MONTHS and (word != "may" or re.search(r"\b(?:in|of|during|early|late) may\b", text)):
            month = MONTHS[word]
            year = now.year if month <= now.month else now.year - 1
            start = now.replace(year=year, month=month, day=1, hour=0, minute=0, second=0, microsecond=0)
            end = (start + timedelta(days=32)).replace(day=1)
            return start.timestamp(), end.timestamp(), frozenset((word,))
    return None, None, frozenset()


def _season(name: str, now: datetime, this_year: bool) -> tuple[float, float]:
    """The most recent such season that has begun (or the one before it, for `last`)."""
    first, last = SEASONS[name]
    year = now.year if now.month >= first else now.year - 1
    if not this_year:
        year -= 1
    start = now.replace(year=year, month=first, day=1, hour=0, minute=0, second=0, microsecond=0)
    months = (last - first) % 12 + 1
    end_month = (first - 1 + months) % 12 + 1
    end = start.replace(year=year + (first - 1 + months) // 12, month=end_month)
    return start.timestamp(), end.timestamp()
