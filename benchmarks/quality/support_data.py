"""Realistic support conversations, several customers in one memory: the development set of
issue 53 item 5, measured beside LoCoMo, MADial and the current-fact sets
(:mod:`benchmarks.quality.support_memory`).

A support agent of a meal-kit delivery service ("Hearth & Harvest") keeps one memory per team;
each memory holds four customers (``user_id``), who talk to it over three phases weeks apart:
onboarding, a delivery problem, and changes. What ordinary conversations do and the tuning
sets did not:

- **turns of two or three facts**: "I live in Lisbon and work as a UX designer";
  "I'm Marta, I have a dog called Biscuit, and Thursdays suit me best for deliveries";
- **questions about one slot while another changed** (the Lisbon/job case): the job changes
  ("I started a new job as a product manager at a bank") and the question asks where the
  customer lives; the gold stays the two-fact turn;
- **retractions** ("the gluten thing was a misdiagnosis") and **reversed preferences**
  ("these days I drink coffee, not tea"), phrased close to what they retract;
- **updates** (a plan upgraded, deliveries moved to another day, a move to another city);
- **short turns** whose meaning is the agent's question before them ("PayPal.") and **long
  turns** (a complaint of 60-90 words with one distinctive detail);
- **other scripts**: one customer per memory writes in Russian or Chinese and is asked in
  that language;
- **other customers' facts of the same slots** in the same memory (every customer has a city,
  a job, a drink): a search filtered by ``user_id`` must not need them gone, an unfiltered one
  must tell them apart (the agent greets customers by name).

Questions carry the labels of the turns that answer them (``gold``) and of the turns a
change replaced (``stale``); most are asked with the customer's ``user_id``, as a
``ragflow-sdk`` caller filters, some without (by name or by a detail). Deterministic for a
seed; nothing is copied from any dataset.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from benchmarks.quality.support_values import (
    ACKS,
    CHAT,
    CITIES,
    DAYS,
    DIETS,
    DRINKS,
    FILLERS,
    INCIDENTS,
    JOBS,
    NAMES,
    NEW_JOBS,
    OTHER,
    PAYMENTS,
    PETS,
    PLANS,
)

DEV_SEED, HELD_OUT_SEED = 53, 1053
AGENT = "support-agent"


@dataclass(frozen=True)
class Turn:
    """One turn as written: ``user_input`` (``text``) and ``agent_response`` (``reply``)."""

    label: str
    user: str
    session: str
    text: str
    reply: str


@dataclass(frozen=True)
class Question:
    text: str
    user: str | None
    """The ``user_id`` the search is filtered by (None: no user filter)."""
    gold: tuple[str, ...]
    kind: str
    stale: tuple[str, ...] = ()


@dataclass(frozen=True)
class SupportMemory:
    name: str
    turns: tuple[Turn, ...]
    """In writing order: phase by phase, the customers' sessions shuffled within a phase."""
    questions: tuple[Question, ...]


@dataclass
class _Customer:
    """One customer's sessions by phase, and their questions, while being generated."""

    user: str
    name: str
    sessions: list[list[tuple[str, str]]] = field(default_factory=lambda: [[], [], []])
    marks: dict[str, tuple[int, int]] = field(default_factory=dict)
    """A fact's turn: (phase, place in that phase's session)."""
    questions: list[tuple[str, str | None, tuple[str, ...], str, tuple[str, ...]]] = field(
        default_factory=list
    )
    """(text, user filter, gold marks, kind, stale marks)."""

    def say(self, phase: int, text: str, reply: str, mark: str = "") -> None:
        if mark:
            self.marks[mark] = (phase, len(self.sessions[phase]))
        self.sessions[phase].append((text, reply))

    def ask(self, text: str, gold: str, kind: str, stale: str = "", filtered: bool = True) -> None:
        user = self.user if filtered else None
        self.questions.append((text, user, (gold,), kind, (stale,) if stale else ()))


def _english(rng: random.Random, c: _Customer, used: dict[str, list[object]]) -> None:
    """An English-speaking customer: every slot, a random subset of them changed later."""
    city, job = used["city"].pop(), used["job"].pop()
    (pet, pet_name), day = used["pet"].pop(), rng.choice(DAYS)
    plan, upgrade = rng.choice(PLANS)
    diet, retraction = used["diet"].pop()
    drink, other_drink = used["drink"].pop()
    incident, paraphrase = used["incident"].pop()
    ack = lambda: rng.choice(ACKS).format(name=c.name)  # noqa: E731
    # phase 0: onboarding
    c.say(0, "Hi, I just signed up and wanted to set up my preferences.",
          f"Welcome to Hearth & Harvest, {c.name}! Tell me anything we should know.")  # fmt: skip
    c.say(0, rng.choice([f"I live in {city} and I work as a {job}, so weekday evenings are "
                         "when I cook.",
                         f"I'm a {job} based in {city}, I usually cook after work."]),
          f"{ack()} Boxes to {city} go out from our nearest hub.", "city_job")  # fmt: skip
    c.say(0, f"I'm {c.name}, I have a {pet} called {pet_name}, and {day}s suit me best for "
          "deliveries.", f"{ack()} {day} it is, and say hi to {pet_name}.", "three")  # fmt: skip
    c.say(0, diet, f"{ack()} I've added that as a restriction on every box.", "diet")
    c.say(0, f"For the drinks add-on I'd like {drink}, not {other_drink}.",
          f"{ack()} {drink.capitalize()} it is.", "drink")  # fmt: skip
    c.say(0, f"I'm on the {plan} plan for now.", f"{ack()} The {plan} plan is active.", "plan")
    chat = rng.sample(CHAT, len(CHAT))
    for _ in range(rng.randint(3, 5)):
        c.say(0, *chat.pop())
    c.say(0, *rng.choice(FILLERS))
    # phase 1: a delivery problem, and a short answer to the agent's question
    c.say(1, f"Hello again. I have to complain about Tuesday's delivery: {incident}. I've been "
          "a customer for a while and this is the first time something like this has happened, "
          "but I was really disappointed and I had to throw most of it away, which is not "
          "what I pay for. Can you sort this out?",
          f"I'm so sorry, {c.name}. I've refunded the box and flagged it with the courier. "
          "Which payment method should the refund go to?", "incident")  # fmt: skip
    c.say(1, rng.choice(PAYMENTS), "Done, the refund is on its way there.", "payment")
    for _ in range(rng.randint(2, 4)):
        c.say(1, *chat.pop())
    c.say(1, *rng.choice(FILLERS))
    # phase 2: changes, each for some customers only
    changes = [rng.choice(["job", "move", "job", "move", ""]), rng.choice(["upgrade", "day"])]
    changes += rng.sample(["retract", "reverse"], rng.randint(1, 2))
    changes = [change for change in changes if change]
    rng.shuffle(changes)
    c.say(2, "Hi, a few updates on my side.", f"Hi {c.name}, go ahead.")
    new_city = used["city"].pop()
    new_job, company = rng.choice(NEW_JOBS)
    new_day = rng.choice([d for d in DAYS if d != day])
    lines = {
        "job": (f"I started a new job as a {new_job} at {company}, so my hours changed.",
                "Congratulations on the new job!"),
        "move": (f"We've just moved to {new_city}, please send everything there from now on.",
                 f"Updated, boxes go to {new_city} from next week."),
        "retract": (retraction, "Great news, I've removed the restriction."),
        "reverse": (f"These days I drink {other_drink}, not {drink}, can you switch the add-on?",
                    f"Switched to {other_drink}."),
        "upgrade": (f"I upgraded to the {upgrade} plan yesterday because the portions were "
                    "too small.", f"Yes, I see the {upgrade} plan on your account."),
        "day": (f"Could deliveries come on {new_day}s instead from now on?",
                f"Sure, moved to {new_day}s."),
    }  # fmt: skip
    for change in changes:
        c.say(2, *lines[change], mark=f"new_{change}")
        if rng.random() < 0.5:
            c.say(2, *chat.pop())
    for _ in range(rng.randint(1, 3)):
        c.say(2, *chat.pop())
    c.say(2, *rng.choice(FILLERS))
    _questions(rng, c, changes, (pet, drink, other_drink, paraphrase))


def _questions(
    rng: random.Random, c: _Customer, changes: list[str], said: tuple[str, str, str, str]
) -> None:
    """An English-speaking customer's questions: each slot's current turn, given what
    changed; ``said``: their pet, drink, the other drink and a paraphrase of the incident."""
    pet, drink, other_drink, paraphrase = said
    q = rng.choice
    if "move" in changes:
        c.ask(q(["Where does the customer live now?", "Which city should boxes ship to?"]),
              "new_move", "update", stale="city_job")  # fmt: skip
    else:
        kind = "other slot changed" if "job" in changes else "multi-fact"
        c.ask(q(["Where does the customer live?", "Which city is the customer in?"]),
              "city_job", kind)  # fmt: skip
    if "job" in changes:
        c.ask(q(["What does the customer do for work now?", "What is the customer's job?"]),
              "new_job", "update", stale="city_job")  # fmt: skip
    else:
        kind = "other slot changed" if "move" in changes else "multi-fact"
        c.ask(q(["What does the customer do for a living?", "What is the customer's job?"]),
              "city_job", kind)  # fmt: skip
    c.ask(q(["What is the customer's pet called?", f"What's the name of the customer's {pet}?"]),
          "three", "multi-fact")  # fmt: skip
    if "day" in changes:
        c.ask("Which day should the customer's deliveries come?", "new_day", "update", "three")
    else:
        c.ask("Which day does the customer want deliveries?", "three", "multi-fact")
    if "retract" in changes:
        c.ask(q(["Does the customer have any dietary restrictions?",
                 "Is the customer still avoiding anything in their food?"]),
              "new_retract", "retraction", stale="diet")  # fmt: skip
    else:
        c.ask("Does the customer have any dietary restrictions?", "diet", "fact")
    if "reverse" in changes:
        c.ask(q([f"{drink.capitalize()} or {other_drink} for the customer's drinks add-on?",
                 "Which drink does the customer want in the add-on these days?"]),
              "new_reverse", "reversal", stale="drink")  # fmt: skip
    else:
        c.ask("Which drink does the customer want in the add-on?", "drink", "fact")
    if "upgrade" in changes:
        c.ask("Which plan is the customer on?", "new_upgrade", "update", stale="plan")
    else:
        c.ask("Which plan is the customer on?", "plan", "fact")
    c.ask("How does the customer pay?", "payment", "short answer")
    c.ask("What went wrong with the customer's delivery?", "incident", "long turn")
    c.ask(f"Which customer's {paraphrase}?", "incident", "unfiltered", filtered=False)
    if "move" not in changes:
        c.ask(f"Which city does {c.name} live in?", "city_job", "unfiltered", filtered=False)


def _other_script(rng: random.Random, c: _Customer, lang: str) -> None:
    """A customer who writes in Russian or Chinese, asked in that language."""
    t = OTHER[lang]
    intro = str(t["intro"]).format(city=rng.choice(t["cities"]), job=rng.choice(t["jobs"]))
    c.say(0, intro, str(t["intro_reply"]), "intro")
    c.say(0, str(t["drink"]), str(t["reply"]), "drink")
    chat = [str(line) for line in t["chat"]]  # type: ignore[attr-defined]
    c.say(0, chat[0], str(t["reply"]))
    c.say(0, str(t["ok"]), str(t["reply"]))
    c.say(1, chat[1], str(t["reply"]))
    c.say(1, str(t["incident"]), str(t["reply"]), "incident")
    c.say(2, chat[2], str(t["reply"]))
    c.say(2, str(t["reversed"]), str(t["reply"]), "reversed")
    c.say(2, chat[3], str(t["reply"]))
    c.say(2, str(t["ok"]), str(t["reply"]))
    for text, mark in t["questions"]:  # type: ignore[attr-defined]
        stale = "drink" if mark == "reversed" else ""
        c.ask(text, mark, f"other script ({lang})", stale=stale)


def memory(name: str, rng: random.Random, lang: str, customers: int = 4) -> SupportMemory:
    """One team's memory: ``customers - 1`` English-speaking customers and one writing in
    ``lang``, their sessions interleaved phase by phase."""
    used: dict[str, list[object]] = {
        "city": rng.sample(CITIES, 2 * customers),
        "job": rng.sample(JOBS, customers),
        "pet": rng.sample(PETS, customers),
        "diet": rng.sample(DIETS, len(DIETS)) * customers,
        "drink": rng.sample(DRINKS, len(DRINKS)) * customers,
        "incident": rng.sample(INCIDENTS, customers),
    }
    names = rng.sample(NAMES, customers)
    people = [_Customer(f"{name}-customer-{n}", names[n]) for n in range(customers)]
    for n, c in enumerate(people):
        if n == customers - 1:
            _other_script(rng, c, lang)
        else:
            _english(rng, c, used)
    turns: list[Turn] = []
    labels: dict[tuple[str, str], str] = {}
    for phase in range(3):
        for c in rng.sample(people, len(people)):
            session = f"{c.user}/phase-{phase}"
            for n, (text, reply) in enumerate(c.sessions[phase]):
                label = f"{session}/{n}"
                turns.append(Turn(label, c.user, session, text, reply))
                for mark, at in c.marks.items():
                    if at == (phase, n):
                        labels[(c.user, mark)] = label
    questions = [
        Question(text, user, tuple(labels[(c.user, g)] for g in gold), kind,
                 tuple(labels[(c.user, s)] for s in stale))
        for c in people
        for text, user, gold, kind, stale in c.questions
    ]  # fmt: skip
    return SupportMemory(name, tuple(turns), tuple(questions))


def generate(seed: int = DEV_SEED, memories: int = 4, customers: int = 4) -> list[SupportMemory]:
    """``memories`` support memories of ``customers`` customers each, the same for a seed."""
    if not 2 <= customers <= 6:
        raise ValueError("customers must be 2 to 6 (the value pools hold that many)")
    rng = random.Random(seed)
    return [
        memory(f"support-{seed}-{n}", rng, ("ru", "zh")[n % 2], customers) for n in range(memories)
    ]


__all__ = ["DEV_SEED", "HELD_OUT_SEED", "Question", "SupportMemory", "Turn", "generate"]
