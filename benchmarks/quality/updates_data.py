"""Synthetic conversations in which a user's facts change: the development set of issue 42.

Deterministic for a seed. Three kinds of question, each with the turn that holds the current
fact and the turns it replaced:

- **update**: a fact is stated plainly ("I work as a nurse at St Mary's Hospital.") and later
  changes in the words of a change event ("Big news: I handed in my notice ... starting as a
  data analyst at Zenith Bank on Monday!"), so the old turn is the canonical phrasing;
- **contradiction**: a later statement, phrased like the first, says the opposite or another
  value ("Actually, my sister's birthday is on the 13th of May, not the 3rd.");
- **move**: 2-5 moves between cities, each told differently, then "where do I live now?".

Inspired by the GoodAI LTM benchmark's generators (``colours``, ``locations_directions``,
``conflicting_personal_information``; MIT), written here from scratch: no code or text of
theirs is used. Every turn is a user message with a long assistant reply, as agents write
them, between filler chat on unrelated topics and on-topic follow-ups that mention the old
value again (the neighbours that conversation context lifts).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

KINDS = ("update", "contradiction", "move")


@dataclass(frozen=True)
class SynthTurn:
    label: str
    user: str
    agent: str
    session: str
    at: datetime


@dataclass(frozen=True)
class SynthQuestion:
    kind: str
    text: str
    current: str
    """The label of the turn that holds the current fact."""
    stale: tuple[str, ...]
    """Labels of the turns it replaced."""
    cue: bool
    """Whether the question says it wants the present ("now", "currently", ...)."""


@dataclass(frozen=True)
class SynthConversation:
    name: str
    turns: tuple[SynthTurn, ...]
    questions: tuple[SynthQuestion, ...]


# --- the facts ------------------------------------------------------------------------------

JOBS = [
    ("nurse", "St Mary's Hospital"), ("data analyst", "Zenith Bank"),
    ("primary school teacher", "Oakfield Primary"), ("software tester", "Brightline Games"),
    ("pastry chef", "Le Petit Four"), ("paralegal", "Hart & Vance"),
    ("graphic designer", "Pixelworks Studio"), ("physiotherapist", "Northside Clinic"),
    ("logistics coordinator", "Cargoway"), ("librarian", "the city library"),
]  # fmt: skip
CARS = ["Toyota Corolla", "Volkswagen Golf", "Tesla Model 3", "Honda Civic", "Ford Fiesta",
        "Renault Zoe", "Mazda MX-5", "Subaru Outback", "Kia Niro", "Fiat 500"]  # fmt: skip
INSTRUMENTS = ["piano", "violin", "cello", "guitar", "drums", "saxophone", "flute", "ukulele"]
DIETS = ["vegetarian", "vegan", "pescatarian", "gluten-free", "on a keto diet", "dairy-free"]
COMMUTES = [("take the train", "train"), ("cycle", "bike"), ("drive", "car"),
            ("take the bus", "bus"), ("walk", "walk"), ("ride a scooter", "scooter")]  # fmt: skip
GYM_DAYS = ["Mondays and Wednesdays", "Tuesdays and Thursdays", "weekends",
            "Monday, Wednesday and Friday", "every morning before work"]  # fmt: skip
COLOURS = ["red", "teal", "mustard yellow", "navy blue", "forest green", "lilac", "orange",
           "burgundy", "charcoal grey", "coral"]  # fmt: skip
NAMES = ["Mia", "Maya", "Lena", "Tom", "Oscar", "Priya", "Jonas", "Aiko", "Rafael", "Nora"]
MONTHS = ["January", "March", "May", "July", "September", "November"]
ALLERGIES = ["peanuts", "shellfish", "penicillin", "cats", "pollen", "eggs", "latex"]
CITIES = [("Lisbon", "Alfama"), ("Auckland", "Ponsonby"), ("Berlin", "Kreuzberg"),
          ("Toronto", "the Annex"), ("Osaka", "Namba"), ("Edinburgh", "Leith"),
          ("Melbourne", "Fitzroy"), ("Barcelona", "Gràcia"), ("Chicago", "Wicker Park"),
          ("Cape Town", "Observatory"), ("Vienna", "Neubau"),
          ("Montreal", "the Plateau")]  # fmt: skip

REPLY_OPENERS = [
    "That's really good to know, thanks for telling me.",
    "Thanks for sharing that with me, I'll keep it in mind.",
    "Oh, how interesting!",
    "Got it, I've made a note of that.",
    "That sounds like a big part of your life.",
]
REPLY_GENERIC = [
    "If you ever want to talk it through, I'm happy to help you plan the details.",
    "Many people find that small routines make changes like this much easier to handle.",
    "It can help to write down what you want from the next few months and check in on it.",
    "Let me know if you'd like suggestions, reminders or a checklist for any of it.",
    "I can also look for tips from people who have been in a similar situation.",
    "Remember to give yourself some time to adjust; the first weeks are always the busiest.",
    "Would you like me to remember anything else about this for later conversations?",
]


#: How many sentences of generic advice close each assistant reply (``generate``'s ``advice``).
_ADVICE: ContextVar[int] = ContextVar("advice", default=3)


def _reply(rng: random.Random, *middle: str) -> str:
    """A long assistant reply: an opener, the given sentences, and generic advice."""
    return " ".join([rng.choice(REPLY_OPENERS), *middle, *rng.sample(REPLY_GENERIC, _ADVICE.get())])


@dataclass(frozen=True)
class Statement:
    user: str
    agent: str
    follow_up: tuple[str, str] | None = None
    """An on-topic turn right after it that names the value again (user, agent)."""


@dataclass(frozen=True)
class Slot:
    """One fact of one person: its statements in order (the last is current) and questions."""

    kind: str
    statements: tuple[Statement, ...]
    questions: tuple[tuple[str, bool], ...]
    """(question, whether it says it wants the present), one picked per conversation."""


def _job(rng: random.Random) -> Slot:
    (a, at), (b, bt) = rng.sample(JOBS, 2)
    first = Statement(
        f"I work as a {a} at {at}.",
        _reply(rng, f"Working as a {a} at {at} must keep you busy."),
        (f"Work at {at} was hectic again today.", _reply(rng, f"Long days at {at} add up.")),
    )
    second = Statement(
        rng.choice(
            [
                f"Big news: I handed in my notice and start as a {b} at {bt} on Monday!",
                f"Guess what, {bt} offered me the {b} role and I accepted it!",
                f"My first week as a {b} at {bt} went great, so glad I switched.",
            ]
        ),
        _reply(rng, f"Congratulations on the move to {bt}!"),
    )
    questions = [("What is my job now?", True), ("Where do I work?", False),
                 ("What do I do for a living these days?", True)]  # fmt: skip
    return Slot("update", (first, second), tuple(questions))


def _car(rng: random.Random) -> Slot:
    a, b = rng.sample(CARS, 2)
    first = Statement(
        f"I drive a {a}.",
        _reply(rng, f"A {a} is a sensible car."),
        (f"The {a} needs new tyres soon.", _reply(rng, "Tyres are worth not skimping on.")),
    )
    second = Statement(
        rng.choice(
            [
                f"Finally picked up the {b} from the dealer today, I love it!",
                f"Sold the old one last week, I've got a {b} now.",
            ]
        ),
        _reply(rng, f"Enjoy the {b}!"),
    )
    return Slot("update", (first, second), (("What car do I drive now?", True),
                                            ("What car do I have?", False)))  # fmt: skip


def _instrument(rng: random.Random) -> Slot:
    a, b = rng.sample(INSTRUMENTS, 2)
    first = Statement(
        f"I'm learning to play the {a}.",
        _reply(rng, f"The {a} is a wonderful instrument to learn."),
        (f"My {a} teacher says I'm improving.", _reply(rng, "Practice is paying off.")),
    )
    second = Statement(
        rng.choice(
            [
                f"I gave up on that and started {b} lessons instead, much more fun.",
                f"Switched teachers and instruments: it's {b} lessons for me from now on!",
            ]
        ),
        _reply(rng, f"The {b} is a great choice."),
    )
    return Slot("update", (first, second), (("Which instrument am I learning now?", True),
                                            ("What instrument do I play?", False)))  # fmt: skip


def _diet(rng: random.Random) -> Slot:
    a, b = rng.sample(DIETS, 2)
    first = Statement(
        f"I'm {a}.",
        _reply(rng, f"Being {a} takes some planning when eating out."),
        (f"Found a great {a} recipe book.", _reply(rng, "Recipe books help a lot.")),
    )
    second = Statement(
        rng.choice(
            [
                f"My doctor suggested a change, so I've been {b} for a month now.",
                f"Trying something new with food: {b} since the new year!",
            ]
        ),
        _reply(rng, f"Good luck with going {b}."),
    )
    return Slot("update", (first, second), (("What is my diet currently?", True),
                                            ("What diet do I follow?", False)))  # fmt: skip


def _commute(rng: random.Random) -> Slot:
    (a, an), (b, bn) = rng.sample(COMMUTES, 2)
    first = Statement(
        f"I {a} to work every day.",
        _reply(rng, f"Commuting by {an} has its pros and cons."),
        (f"The {an} was delayed this morning, ugh.", _reply(rng, "Delays are frustrating.")),
    )
    second = Statement(
        f"I've stopped doing that, these days I {b} to the office instead.",
        _reply(rng, f"Going by {bn} sounds nice."),
    )
    return Slot("update", (first, second), (("How do I get to work now?", True),
                                            ("How do I commute to work?", False)))  # fmt: skip


def _gym(rng: random.Random) -> Slot:
    a, b = rng.sample(GYM_DAYS, 2)
    first = Statement(f"I go to the gym on {a}.", _reply(rng, "A steady gym routine is great."))
    second = Statement(
        f"New schedule since my shifts changed: gym on {b} now.",
        _reply(rng, f"{b.capitalize()} should work well."),
    )
    return Slot("update", (first, second), (("When do I go to the gym now?", True),
                                            ("Which days do I go to the gym?", False)))  # fmt: skip


def _colour(rng: random.Random) -> Slot:
    values = rng.sample(COLOURS, rng.randint(2, 4))
    phrasing = ["My favourite colour is {}.", "{} is my favourite colour.",
                "Actually, my favourite colour is {} now.",
                "I've changed my mind, {} is my favourite colour."]  # fmt: skip
    statements = [
        Statement(
            (phrasing[0] if n == 0 else rng.choice(phrasing[1:])).format(c).capitalize(),
            _reply(rng, f"{c.capitalize()} is a lovely colour."),
        )
        for n, c in enumerate(values)
    ]
    return Slot("contradiction", tuple(statements), (("What is my favourite colour?", False),))


def _birthday(rng: random.Random) -> Slot:
    name, month = rng.choice(NAMES), rng.choice(MONTHS)
    d1, d2 = rng.sample(range(2, 28), 2)
    first = Statement(
        f"My sister {name}'s birthday is on the {d1}th of {month}.",
        _reply(rng, f"I'll remember {name}'s birthday."),
    )
    second = Statement(
        f"Sorry, I got it wrong before: {name}'s birthday is on the {d2}th of {month}.",
        _reply(rng, "Thanks for correcting that."),
    )
    return Slot("contradiction", (first, second), ((f"When is {name}'s birthday?", False),))


def _allergy(rng: random.Random) -> Slot:
    a, b = rng.sample(ALLERGIES, 2)
    first = Statement(f"I'm allergic to {a}.", _reply(rng, f"An allergy to {a} is serious."))
    second = Statement(
        f"The tests came back: I'm not allergic to {a} after all, I'm allergic to {b}.",
        _reply(rng, "Good that the tests cleared that up."),
    )
    return Slot("contradiction", (first, second), (("What am I allergic to?", False),))


def _partner(rng: random.Random) -> Slot:
    a, b = rng.sample(NAMES, 2)
    first = Statement(
        f"My best friend is called {a}.", _reply(rng, f"{a} sounds like a good friend.")
    )
    second = Statement(
        f"I misspoke earlier, my best friend is {b}, {a} is just a colleague.",
        _reply(rng, f"Noted, {b} is your best friend."),
    )
    return Slot("contradiction", (first, second), (("Who is my best friend?", False),))


MOVE_PHRASES = [
    "I'm relocating to {city} for a contract!",
    "We just finished moving into our new flat in {area}, {city}.",
    "Packing boxes all week, but the move to {city} is done.",
    "Settled in {city} now, after the move. The flat in {area} is tiny but cosy.",
    "Signed the lease today, so {city} is home from next week!",
]


def _moves(rng: random.Random) -> Slot:
    cities = rng.sample(CITIES, rng.randint(3, 6))
    (first_city, first_area), later = cities[0], cities[1:]
    statements = [
        Statement(
            f"I live in {first_area}, {first_city}.",
            _reply(rng, f"{first_city} is a beautiful city to live in."),
            (
                f"The trams near my place in {first_area} are so convenient.",
                _reply(rng, f"Getting around {first_city} sounds easy."),
            ),
        )
    ]
    for city, area in later:
        statements.append(
            Statement(
                rng.choice(MOVE_PHRASES).format(city=city, area=area),
                _reply(rng, f"Exciting times, {city} has a lot to offer."),
                (
                    f"Still finding my way around {area} in {city}.",
                    _reply(rng, "A new neighbourhood takes a while to learn."),
                ),
            )
        )
    questions = [("Where do I live now?", True), ("Which city am I living in currently?", True),
                 ("Where do I live?", False)]  # fmt: skip
    return Slot("move", tuple(statements), tuple(questions))


SLOTS: dict[str, Sequence[Callable[[random.Random], Slot]]] = {
    "update": (_job, _car, _instrument, _diet, _commute, _gym),
    "contradiction": (_colour, _birthday, _allergy, _partner),
    "move": (_moves,),
}

FILLER = [
    ("Can you suggest something easy to cook tonight?",
     "A quick stir-fry works well: slice whatever vegetables you have, cook them hot and fast "
     "with garlic and soy sauce, and serve over rice or noodles."),
    ("Any tips for sleeping better?",
     "Keep a regular bedtime, dim the lights an hour before, avoid screens in bed and keep the "
     "room cool; caffeine after lunch can also keep you awake."),
    ("What should I read next?",
     "If you liked character-driven novels, try something by Kazuo Ishiguro or Sally Rooney; "
     "for non-fiction, a popular history book is a good change of pace."),
    ("How do I keep my houseplants alive?",
     "Most houseplants die from overwatering: water only when the top soil is dry, give them "
     "bright indirect light, and repot every couple of years."),
    ("I watched a great documentary about octopuses yesterday.",
     "Octopuses are fascinating: they can solve puzzles, change colour in milliseconds and "
     "each arm has a large share of their neurons."),
    ("What's a good way to save money each month?",
     "Automate a transfer to savings on payday, track spending for a month to see where it "
     "goes, and cancel subscriptions you do not use."),
    ("Can you recommend a board game for four people?",
     "Ticket to Ride and Codenames are both easy to learn and fun with four; Wingspan is a "
     "calmer option if your group likes strategy."),
    ("I'm trying to drink more water.",
     "Keeping a bottle on your desk and drinking a glass with every meal are simple habits "
     "that add up; some people like a tracking app."),
    ("What's the best way to learn a language?",
     "Daily practice beats long weekly sessions: combine an app for vocabulary with listening "
     "to podcasts and speaking with a tutor or exchange partner."),
    ("It rained all weekend here.",
     "Rainy weekends are perfect for films, baking or finally tidying a cupboard; hopefully "
     "the sun comes back soon."),
    ("Do you know any good stretches for back pain?",
     "Gentle cat-cow stretches, child's pose and knee-to-chest stretches help many people; "
     "if pain persists, see a doctor or physiotherapist."),
    ("I want to plan a weekend trip.",
     "Pick somewhere within three hours, book accommodation early, and plan one main activity "
     "per day so the trip stays relaxing."),
]  # fmt: skip


def _filler(rng: random.Random) -> tuple[str, str]:
    user, agent = rng.choice(FILLER)
    return user, _reply(rng, agent)


def conversation(name: str, rng: random.Random, start: datetime) -> SynthConversation:
    """One person's conversation: a slot of every kind (a few of each), their statements
    spread over sessions with filler between, and one question per slot."""
    slots = [rng.choice(SLOTS["move"])(rng)]
    slots += [make(rng) for make in rng.sample(list(SLOTS["update"]), 3)]
    slots += [make(rng) for make in rng.sample(list(SLOTS["contradiction"]), 3)]
    # Each statement gets a place in the timeline; a slot's statements stay in their order.
    events: list[tuple[float, int, int]] = []
    for s, slot in enumerate(slots):
        steps = sorted(rng.random() for _ in slot.statements)
        events += [(t, s, n) for n, t in enumerate(steps)]
    events.sort()
    turns: list[SynthTurn] = []
    labels: dict[tuple[int, int], str] = {}
    at = start

    def add(user: str, agent: str) -> str:
        nonlocal at
        label = f"{name}:{len(turns)}"
        turns.append(SynthTurn(label, user, agent, f"{name}/{at:%Y-%m-%d}", at))
        at += timedelta(minutes=rng.randint(2, 20))
        return label

    for _, s, n in events:
        for _ in range(rng.randint(1, 4)):
            add(*_filler(rng))
        statement = slots[s].statements[n]
        labels[(s, n)] = add(statement.user, statement.agent)
        if statement.follow_up:
            add(*statement.follow_up)
        if rng.random() < 0.5:
            at += timedelta(days=rng.randint(3, 40))
    questions = []
    for s, slot in enumerate(slots):
        text, cue = rng.choice(slot.questions)
        chain = [labels[(s, n)] for n in range(len(slot.statements))]
        questions.append(SynthQuestion(slot.kind, text, chain[-1], tuple(chain[:-1]), cue))
    return SynthConversation(name, tuple(turns), tuple(questions))


def generate(count: int = 12, seed: int = 42, advice: int = 3) -> list[SynthConversation]:
    """``count`` conversations, the same for the same seed; ``advice``: sentences of generic
    advice per assistant reply (3: turns of 350-530 characters; 7, all of them: 670-840)."""
    if not 0 <= advice <= len(REPLY_GENERIC):
        raise ValueError(f"advice must be 0 to {len(REPLY_GENERIC)}")
    rng = random.Random(seed)
    start = datetime(2023, 1, 9, 9, 0, tzinfo=UTC)
    token = _ADVICE.set(advice)
    try:
        return [conversation(f"synth-{seed}-{n}", rng, start) for n in range(count)]
    finally:
        _ADVICE.reset(token)


__all__ = ["KINDS", "SynthConversation", "SynthQuestion", "SynthTurn", "generate"]
