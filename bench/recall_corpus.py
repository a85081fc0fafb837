"""A synthetic multi-week chat for bench/recall.py: facts told in passing among everyday chatter, and questions
asked weeks later in other words (paraphrased, often without the words the fact used), each with its evidence.

Every fact kind has several ways to be told and several ways to be asked about; the same kind recurs
with other details (three hikes, four restaurants), so a question has near misses to beat.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

NAMES = [
    "Maya",
    "Leo",
    "Priya",
    "Tom",
    "Ines",
    "Omar",
    "Julia",
    "Ken",
    "Sofia",
    "Raj",
    "Nora",
    "Felix",
    "Ana",
    "Ben",
    "Lena",
    "Hugo",
    "Zoe",
    "Ivan",
    "Clara",
    "Sam",
    "Aiko",
    "Bruno",
    "Chloe",
    "Dmitri",
    "Elif",
    "Farah",
    "Gus",
    "Hana",
    "Iris",
    "Jonas",
    "Kofi",
    "Lucia",
    "Mateo",
    "Nadia",
    "Oskar",
    "Pia",
    "Quinn",
    "Rosa",
    "Theo",
    "Yara",
]
PETS = ["Biscuit", "Pepper", "Mochi", "Luna", "Ziggy", "Olive", "Baxter", "Nimbus", "Tofu", "Pixel", "Waffles", "Juno"]
ANIMALS = ["kitten", "puppy", "rabbit", "parrot", "hamster", "tortoise", "goldfish", "guinea pig"]
TRAILS = [
    "Eagle Crest",
    "Fox Hollow",
    "Silver Creek",
    "Raven Ridge",
    "Cedar Loop",
    "Misty Falls",
    "Granite Pass",
    "Willow Bend",
]
FEATURES = [
    "the lake",
    "a waterfall",
    "the old lighthouse",
    "the whole valley",
    "wild horses",
    "the glacier",
    "the city skyline",
    "a ruined castle",
    "the sea cliffs",
    "a field of lavender",
]
RESTAURANTS = [
    "Casa Lumen",
    "Blue Ginger",
    "Trattoria Sole",
    "The Copper Pot",
    "Saffron House",
    "Nori Bar",
    "El Faro",
    "Bistro 19",
]
DISHES = [
    "ramen",
    "paella",
    "lamb curry",
    "mushroom risotto",
    "tacos al pastor",
    "duck confit",
    "pho",
    "gnocchi",
    "dumplings",
    "fish and chips",
    "pad thai",
    "cheesecake",
]
BOOKS = [
    "The Salt Path",
    "Piranesi",
    "Klara and the Sun",
    "The Overstory",
    "Project Hail Mary",
    "Circe",
    "Educated",
    "Pachinko",
]
AUTHORS = ["Raynor Winn", "Susanna Clarke", "Kazuo Ishiguro", "Richard Powers", "Andy Weir", "Madeline Miller"]
CITIES = [
    "Lisbon",
    "Kyoto",
    "Edinburgh",
    "Valencia",
    "Krakow",
    "Montreal",
    "Porto",
    "Vienna",
    "Seoul",
    "Oslo",
    "Bologna",
]
HOTELS = ["Hotel Miradouro", "Ryokan Hanaya", "The Balmoral", "Casa Azahar", "Hotel Wawel", "Le Germain"]
SPECIALISTS = [("dentist", "teeth"), ("dermatologist", "skin"), ("physiotherapist", "back"), ("optician", "eyes")]
SURNAMES = ["Okafor", "Lindqvist", "Moreau", "Tanaka", "Herrera", "Novak", "Brennan", "Costa", "Weiss", "Adeyemi"]
GIFTS = ["a pottery class", "noise-cancelling headphones", "a vintage camera", "a cast iron pan", "a telescope"]
PLANTS = ["monstera", "fiddle leaf fig", "basil", "orchid", "snake plant", "lemon tree", "cactus", "bonsai", "fern"]
SPORTS = [
    ("climbing", "Boulder Barn"),
    ("yoga", "Lotus Studio"),
    ("boxing", "Iron Gym"),
    ("swimming", "Aquapark"),
    ("pilates", "Core Club"),
    ("fencing", "Salle Duval"),
    ("tennis", "Riverside Courts"),
    ("judo", "Dojo Kaze"),
]
LANGUAGES = [
    ("Japanese", "Kanji Kun"),
    ("Portuguese", "Falar"),
    ("German", "Wortschatz"),
    ("Italian", "Parla"),
    ("Korean", "Hangul Hero"),
    ("Greek", "Alpha Beta"),
    ("Dutch", "Gezellig"),
    ("Turkish", "Merhaba Pro"),
]
BANDS = [
    ("Arctic Monkeys", "the Forum"),
    ("Khruangbin", "Paradiso"),
    ("Björk", "the Royal Hall"),
    ("Phoenix", "Zenith"),
    ("Fleet Foxes", "the Roundhouse"),
    ("Radiohead", "the Arena"),
    ("Beach House", "the Apollo"),
]
FURNITURE = [
    ("sofa", "Nordhaus"),
    ("desk", "Woodcraft"),
    ("bookshelf", "Atelier 9"),
    ("dining table", "Linden & Co"),
    ("armchair", "Kettle Home"),
    ("wardrobe", "Oak & Iron"),
    ("bed frame", "Slumberworks"),
]
ALLERGENS = ["peanuts", "shellfish", "penicillin", "cats", "kiwi", "pollen"]
JOBS = ["firefighter", "marine biologist", "violin teacher", "air traffic controller", "baker", "architect"]
MOVIES = ["Dune", "Past Lives", "Oppenheimer", "Paddington 2", "Spirited Away", "The Grand Budapest Hotel"]
FILLER = [
    "Can you help me write an email to {person} about rescheduling our meeting?",
    "What's a quick dinner I can make with {dish_word} and rice?",
    "my laptop keeps freezing when I open too many tabs, any idea?",
    "Is it going to rain tomorrow? I forgot to check.",
    "Give me three ideas for a weekend with {person}.",
    "how many grams is a cup of flour",
    "Summarise the pros and cons of electric cars in a few lines.",
    "I'm so tired today, work was a lot.",
    "Remind me how to convert Celsius to Fahrenheit.",
    "What's a polite way to decline an invitation from {person}?",
    "Can you explain what an index fund is?",
    "suggest a playlist for cooking on a Sunday",
    "Translate 'good morning, how are you' into Spanish.",
    "Tell me a fun fact about {animal}s.",
    "I need a packing list for a weekend trip.",
    "Any tips for sleeping better?",
    "What should I watch tonight? Something light.",
    "How do I get candle wax out of a tablecloth?",
    "Write a short birthday message for {person}.",
    "what's the difference between baking soda and baking powder",
    "Help me plan a 30 minute workout without equipment.",
    "I walked past a new restaurant today, the smell was amazing.",
    "Thinking about going for a hike this weekend if the weather holds.",
    "The book club picked something long again, ugh.",
    "Our car is making a weird noise again.",
]
REPLY_PAD = (
    "Here are a few thoughts. It depends a little on your situation, so take these as starting points: keep it "
    "simple, check what matters most to you, and adjust as you go. Let me know if you want more detail on any "
    "of them or a different angle."
)


@dataclass(frozen=True, slots=True)
class Kind:
    """A kind of fact: ways to tell it, ways to ask about it, and how to fill its slots."""

    tell: tuple[str, ...]
    ask: tuple[str, ...]
    slots: dict[str, list[str]]
    answer: str  # the slot whose value answers the question


def _kinds() -> list[Kind]:
    pairs = [f"{a}|{b}" for a, b in SPECIALISTS]
    return [
        Kind(
            (
                "We finally adopted a {animal} from the shelter, we're calling it {pet}!",
                "meet the newest member of the family: a little {animal} named {pet}",
                "So the {animal} has a name now. {pet}. The kids chose it.",
            ),
            (
                "What did we name the {animal} we got?",
                "remind me what our {animal} is called",
                "what was the name of the pet we adopted, the {animal}?",
            ),
            {"animal": ANIMALS, "pet": PETS},
            "pet",
        ),
        Kind(
            (
                "Did the {trail} trail today, about {km} km, and the view of {feature} at the top was unreal",
                "hiked {trail} this morning! you can see {feature} from the ridge",
                "Back from a long walk on the {trail} route. {feature} was the highlight.",
            ),
            (
                "Which trail was it where I could see {feature}?",
                "what was that hike with {feature} called again?",
                "the hiking route with the view of {feature}, what's its name?",
            ),
            {"trail": TRAILS, "feature": FEATURES, "km": ["8", "12", "15", "21"]},
            "trail",
        ),
        Kind(
            (
                "Had dinner at {restaurant} tonight, their {dish} was the best I've had",
                "ok {restaurant} is my new favourite place, get the {dish} if you ever go",
                "we tried {restaurant} for Ana's birthday. the {dish}!! wow",
            ),
            (
                "Where did I eat that amazing {dish}?",
                "which restaurant had the {dish} I raved about?",
                "name of the place with the really good {dish}?",
            ),
            {"restaurant": RESTAURANTS, "dish": DISHES},
            "restaurant",
        ),
        Kind(
            (
                "Started reading {book} by {author}, {person} lent it to me",
                "{person} recommended {book} ({author}) so I picked it up today",
                "new book on the nightstand: {book}. it was {person}'s suggestion",
            ),
            (
                "Who recommended {book} to me?",
                "who lent me the {author} novel?",
                "which friend suggested that book {book}?",
            ),
            {"book": BOOKS, "author": AUTHORS, "person": NAMES},
            "person",
        ),
        Kind(
            (
                "Booked the {spec} for next {day}, Dr. {surname}, hopefully they can sort out my {part}",
                "my {part} has been bothering me so I made an appointment with a {spec}, Dr. {surname}",
                "Dr. {surname} is the new {spec}, the old one retired. going on {day}",
            ),
            (
                "What's the name of my {spec}?",
                "who was the doctor I'm seeing about my {part}?",
                "which doctor did I book for my {part}?",
            ),
            {"spec|part": pairs, "surname": SURNAMES, "day": ["Monday", "Tuesday", "Thursday", "Friday"]},
            "surname",
        ),
        Kind(
            (
                "For {person}'s birthday I'm getting {gift}, don't let me forget",
                "decided on {gift} as {person}'s present this year",
                "gift idea for {person} sorted: {gift}. ordering it tonight",
            ),
            (
                "What present did I plan to give {person}?",
                "what was I getting {person} for their birthday?",
                "remind me of the gift I picked for {person}",
            ),
            {"person": NAMES, "gift": GIFTS},
            "gift",
        ),
        Kind(
            (
                "Flights to {city} are booked! We're staying at {hotel}",
                "trip to {city} is happening, found a room at {hotel}",
                "{city} plan: three nights at {hotel}, then we'll see",
            ),
            (
                "Which hotel are we staying at in {city}?",
                "where's our accommodation for the {city} trip?",
                "what was the name of the place we booked in {city}?",
            ),
            {"city": CITIES, "hotel": HOTELS},
            "hotel",
        ),
        Kind(
            (
                "Repotted the {plant} today; the shop said to water it every {n} days",
                "note to self, the {plant} needs water every {n} days, not more",
                "new {plant}! apparently every {n} days is the right watering rhythm",
            ),
            (
                "How often should I water the {plant}?",
                "how many days between waterings for my {plant}?",
                "what's the watering schedule for the {plant}?",
            ),
            {"plant": PLANTS, "n": ["3", "5", "7", "10", "14"]},
            "n",
        ),
        Kind(
            (
                "Signed up for {sport} at {gym}, classes on {day} evenings",
                "I'm doing {sport} now! {gym}, every {day}",
                "first {sport} session at {gym} today, I'm sore already",
            ),
            (
                "Where do I go for {sport}?",
                "what's the name of the place where I do {sport}?",
                "which gym did I join for {sport} classes?",
            ),
            {"sport|gym": [f"{a}|{b}" for a, b in SPORTS], "day": ["Monday", "Wednesday", "Thursday"]},
            "gym",
        ),
        Kind(
            (
                "Turns out {person} is allergic to {allergen}, good thing we found out",
                "{person} had a reaction to {allergen} yesterday, so no more of that",
                "note: {person} can't have {allergen}. allergy confirmed by the doctor",
            ),
            (
                "What is {person} allergic to?",
                "what did {person} react badly to?",
                "remind me what {person} can't have",
            ),
            {"person": NAMES, "allergen": ALLERGENS},
            "allergen",
        ),
        Kind(
            (
                "Our new neighbour {person} works as a {job}, such a nice person",
                "met the people next door, {person} is a {job}!",
                "chatted with {person} from next door, they're a {job}",
            ),
            (
                "What does {person} next door do for work?",
                "what's the job of our neighbour {person}?",
                "remind me what {person} the neighbour does for a living",
            ),
            {"person": NAMES, "job": JOBS},
            "job",
        ),
        Kind(
            (
                "Learning {language} with an app called {app}, 15 minutes a day",
                "I've been using {app} for my {language} practice, it's pretty good",
                "day 10 of {language} on {app}!",
            ),
            (
                "Which app am I using to learn {language}?",
                "what's the {language} app I practise with?",
                "name of the language app for {language}?",
            ),
            {"language|app": [f"{a}|{b}" for a, b in LANGUAGES]},
            "app",
        ),
        Kind(
            (
                "Got tickets for {band} at {venue}!!",
                "{band} is playing {venue} and we're going",
                "bought two tickets to see {band}, the gig is at {venue}",
            ),
            ("Where is the {band} concert?", "what venue are we seeing {band} at?", "where's the gig for {band}?"),
            {"band|venue": [f"{a}|{b}" for a, b in BANDS]},
            "venue",
        ),
        Kind(
            (
                "Ordered a {furniture} from {shop}, delivery in {n} weeks",
                "finally bought the {furniture}! it's from {shop}",
                "the {furniture} from {shop} should arrive in {n} weeks",
            ),
            (
                "Where did I order the {furniture} from?",
                "which shop is the {furniture} coming from?",
                "what store did we buy the {furniture} at?",
            ),
            {"furniture|shop": [f"{a}|{b}" for a, b in FURNITURE], "n": ["2", "3", "6"]},
            "shop",
        ),
        Kind(
            (
                "Watched {movie} with {person} last night, loved it",
                "movie night with {person}: {movie}. great pick",
                "{person} and I finally saw {movie}",
            ),
            (
                "Which film did I see with {person}?",
                "what movie did {person} and I watch?",
                "what did I watch with {person} that night?",
            ),
            {"movie": MOVIES, "person": NAMES},
            "movie",
        ),
        Kind(
            (
                "My locker code at the {place} is {code}, writing it here so I don't forget",
                "new padlock for the {place} locker, combination {code}",
                "{place} locker combo: {code}",
            ),
            (
                "What's the combination for my locker at the {place}?",
                "what was my {place} locker code again?",
                "the code for the padlock at the {place}?",
            ),
            {"place": ["gym", "pool", "office", "climbing hall"], "code": ["4471", "0925", "7310", "5582", "1066"]},
            "code",
        ),
        Kind(
            (
                "The mechanic says the {part} on the car needs replacing, he quoted {price} euros",
                "car update: new {part} needed, {price} euros at the garage",
                "ugh, {price} euros to fix the {part}",
            ),
            (
                "How much did the garage want for the {part}?",
                "what was the quote for fixing the car's {part}?",
                "how expensive was the {part} repair going to be?",
            ),
            {
                "part": ["clutch", "brakes", "timing belt", "exhaust", "alternator", "windscreen"],
                "price": ["180", "240", "420", "650", "900"],
            },
            "price",
        ),
        Kind(
            (
                "The guest wifi at {place} is called {ssid}",
                "{place} wifi network name: {ssid}",
                "if you're at {place}, connect to {ssid}",
            ),
            (
                "What's the name of the wifi network at {place}?",
                "which network do I join at {place}?",
                "the wireless network at {place}, what was it called?",
            ),
            {
                "place": ["Mum's house", "the office", "the cabin", "the studio", "Grandpa's flat", "the library"],
                "ssid": ["BlueFalcon", "Hive-5G", "Larch_Guest", "NETGEAR42", "ByTheSea", "Pumpkin"],
            },
            "ssid",
        ),
    ]


@dataclass
class Corpus:
    """Exchanges (user text, reply, time) in order, and questions with the exchange that holds their answer."""

    exchanges: list[tuple[str, str, datetime]] = field(default_factory=list)
    questions: list[tuple[str, int, str]] = field(default_factory=list)  # (question, evidence index, answer)
    end: datetime = datetime(2026, 6, 1, 20, 0)


def build_corpus(exchanges: int = 2400, questions: int = 300, days: int = 70, seed: int = 7) -> Corpus:
    """A conversation of `exchanges` over `days` days, `questions` of them facts asked about at the end."""
    rng = random.Random(seed)
    kinds = _kinds()
    corpus = Corpus()
    start = corpus.end - timedelta(days=days)
    fact_at = set(rng.sample(range(exchanges), questions))
    asked: set[tuple[int, tuple[str, ...]]] = set()  # what each question names: one fact answers it, not two
    for index in range(exchanges):
        when = start + timedelta(minutes=index * days * 24 * 60 / exchanges + rng.randint(0, 30))
        if index not in fact_at:
            corpus.exchanges.append(_filler(rng, when))
            continue
        kind, values = _unasked(rng, kinds, asked)
        told = rng.choice(kind.tell).format(**values)
        told = rng.choice(["", "btw ", "oh and ", "Quick one: ", "fyi "]) + told
        reply = rng.choice(["Noted!", "That sounds great.", "Love that.", f"Got it: {values[kind.answer]}.", "Nice!"])
        corpus.exchanges.append((told, reply + " " + REPLY_PAD[: rng.randint(0, len(REPLY_PAD))], when))
        question = rng.choice(kind.ask).format(**values) + _when_hint(rng, when, corpus.end)
        corpus.questions.append((question, index, values[kind.answer]))
    return corpus


def _unasked(
    rng: random.Random, kinds: list[Kind], asked: set[tuple[int, tuple[str, ...]]]
) -> tuple[Kind, dict[str, str]]:
    """A fact whose question names details no earlier fact's question named."""
    for _ in range(10_000):
        number = rng.randrange(len(kinds))
        kind = kinds[number]
        values = _fill(rng, kind)
        named = sorted({slot for template in kind.ask for slot in re.findall(r"{(\w+)}", template)})
        key = (number, tuple(values[slot] for slot in named))
        if key not in asked:
            asked.add(key)
            return kind, values
    raise ValueError("more questions than distinct facts the kinds can make")


def _fill(rng: random.Random, kind: Kind) -> dict[str, str]:
    values: dict[str, str] = {}
    for names, pool in kind.slots.items():
        for name, value in zip(names.split("|"), rng.choice(pool).split("|"), strict=True):
            values[name] = value
    values.setdefault("person", rng.choice(NAMES))
    return values


def _filler(rng: random.Random, when: datetime) -> tuple[str, str, datetime]:
    text = rng.choice(FILLER).format(person=rng.choice(NAMES), dish_word=rng.choice(DISHES), animal=rng.choice(ANIMALS))
    return text, REPLY_PAD + " " + REPLY_PAD[: rng.randint(40, len(REPLY_PAD))], when


def _when_hint(rng: random.Random, when: datetime, end: datetime) -> str:
    """Now and then the question says roughly when (as people do), in words the index reads as a period."""
    roll = rng.random()
    weeks = (end - when).days // 7
    if roll < 0.15 and weeks >= 2:
        return f" (that was about {weeks} weeks ago)"
    if roll < 0.25:
        return f" I think it was in {when.strftime('%B')}"
    return ""
