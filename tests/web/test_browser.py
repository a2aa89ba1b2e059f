"""The web UI in a real browser: headless Chromium (Debian's ``/usr/bin/chromium``, driven by
Playwright) against a live ``recallery serve`` on a fresh data directory, with the shipped
fake OpenAI-compatible chat model doing extraction (provider ``fake`` set through
``RECALLERY_PROVIDER_FAKE_BASE_URL``) and the real local embedder.

Turns go in over the REST API, as an agent writes them; everything else is done the way a
curator does it, by clicking and typing. Each journey ends by finding its change in the audit
log. Screenshots of the main pages are saved under the test session's temporary directory.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from recallery.testing import FakeLLM, Reply
from recallery.testing.serve import live_serve

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.model]

CHROMIUM = Path("/usr/bin/chromium")
ADMIN_KEY = "rc-browser-test-admin-key"
LLM = "fake-model@fake"
#: What the fake model extracts from a turn that says the key.
FACTS = {
    "Lisbon": "The user lives in Lisbon.",
    "espresso": "The user drinks espresso every morning.",
    "dentist": "The user's sister is a dentist.",
    "Porto": "The user went to Porto.",
}

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect
Page = Any


#: While on, the fake model answers a turn that says "glitch" with text that is not JSON.
GLITCH = {"on": False}


def extract(body: dict[str, Any]) -> Reply:
    """The fake model: a semantic fact for each known word of the turn; judgements add."""
    if "response_format" not in body:  # a curator's test of the chat model
        return Reply.text("OK")
    if body["response_format"]["json_schema"]["name"] == "reconcile_decision":
        return Reply.json({"action": "add", "entry": None})
    said = body["messages"][-1]["content"]
    if GLITCH["on"] and "glitch" in said:
        return Reply.text("no json here")
    found = [
        {"content": f, "valid_at": None, "invalid_at": None} for w, f in FACTS.items() if w in said
    ]
    return Reply.json({"semantic": found})


@dataclass(frozen=True)
class Live:
    url: str
    api: httpx.Client
    shots: Path

    def memory(self, name: str, **fields: Any) -> str:
        body = {
            "name": name,
            "memory_type": ["raw", "semantic"],
            "llm_id": LLM,
            "embd_id": "BAAI/bge-small-en-v1.5@Builtin",
            **fields,
        }
        return str(self.ok(self.api.post("/api/v1/memories", json=body))["id"])

    def say(self, memory_id: str, text: str, session: str = "s-1", user: str = "u-1") -> int:
        body = {
            "memory_id": [memory_id],
            "agent_id": "helper",
            "session_id": session,
            "user_input": text,
            "agent_response": "Noted.",
            "user_id": user,
        }
        (raw,) = self.ok(self.api.post("/api/v1/messages", json=body))
        return int(raw["message_id"])

    def extracted(self, memory_id: str) -> dict[int, list[dict[str, Any]]]:
        """Each turn's extracts, once every extraction job of the memory has finished."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            jobs = self.ok(self.api.get(f"/api/v1/memories/{memory_id}/jobs"))["jobs"]
            if jobs and all(j["state"] in ("done", "failed", "parked") for j in jobs):
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"extraction did not finish: {jobs}")
        page = self.ok(self.api.get(f"/api/v1/memories/{memory_id}", params={"page_size": 100}))
        return {r["message_id"]: r["extract"] for r in page["messages"]["message_list"]}

    def found(self, memory_id: str, query: str) -> set[int]:
        params = {"query": query, "memory_id": memory_id, "similarity_threshold": 0, "top_n": 50}
        return {
            h["message_id"] for h in self.ok(self.api.get("/api/v1/messages/search", params=params))
        }

    @staticmethod
    def ok(response: httpx.Response) -> Any:
        body = response.json()
        assert response.status_code == 200 and body["code"] == 0, body
        return body["data"]


def photograph(page: Page, live: Live, name: str) -> None:
    """Save the whole page as ``name`` (``RECALLERY_SCREENSHOTS`` names a folder to keep the
    pictures in, such as docs/) and check it shows something: each
    journey checks its own picture, so none depends on which tests ran before it."""
    path = live.shots / f"web-{name}"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """``recallery serve`` with the fake chat model as provider ``fake``."""
    data = tmp_path_factory.mktemp("web-data")
    # RECALLERY_SCREENSHOTS names a folder to keep the pictures (scripts/screenshots copies the
    # README's docs/web-*.png from it)
    wanted = os.environ.get("RECALLERY_SCREENSHOTS")
    shots = Path(wanted) if wanted else tmp_path_factory.mktemp("screenshots")
    with FakeLLM(extract) as llm:
        env = {
            "RECALLERY_ADMIN_API_KEY": ADMIN_KEY,
            "RECALLERY_PROVIDER_FAKE_BASE_URL": llm.url,
            "RECALLERY_PROVIDER_FAKE_API_KEY": "k",
        }
        with (
            live_serve(data, env) as (url, _),
            httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN_KEY}"}) as api,
        ):
            yield Live(url, api, shots)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    if not CHROMIUM.exists():  # a setup error, never a silent skip
        pytest.fail(f"{CHROMIUM} is missing: run scripts/setup (apt-get install chromium)")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, chromium_sandbox=False
        )
        yield browser
        browser.close()


@pytest.fixture
def page(chromium: Any) -> Iterator[Page]:
    """A fresh browser profile (no cookies) per test; a page error fails the test."""
    context = chromium.new_context(viewport={"width": 1360, "height": 900})
    tab = context.new_page()
    problems: list[str] = []
    tab.on("pageerror", lambda exc: problems.append(str(exc)))
    tab.on("dialog", lambda d: problems.append(f"dialog: {d.message}"))
    yield tab
    context.close()
    assert problems == []


def log_in(page: Page, live: Live, key: str = ADMIN_KEY, path: str = "/") -> None:
    page.goto(live.url + path)
    expect(page).to_have_url(re.compile(r"/login(\?next=.*)?$"))
    page.fill("input[name=key]", key)
    page.click("form[action='/login'] button[type=submit]")
    expect(page).to_have_url(live.url + path)


def audited(page: Page, live: Live, memory_id: str, action: str, message_id: int) -> None:
    """The audit log page lists this action on this message."""
    page.goto(f"{live.url}/audit?memory_id={memory_id}&action={action}")
    row = page.locator("table.events tbody tr", has=page.locator(f"a:text-is('{message_id}')"))
    expect(row.first).to_contain_text(action)


def hits(page: Page, live: Live, memory_id: str, query: str) -> list[int]:
    address = f"/search?memory_id={memory_id}&query={query}&similarity_threshold=0&top_n=20"
    page.goto(live.url + address)
    expect(page.locator("#hits")).to_be_visible()
    ids: list[str] = page.locator("#hits tr[data-id]").evaluate_all("r => r.map(x => x.dataset.id)")
    return [int(i) for i in ids]


# --- journeys -------------------------------------------------------------------------------


def test_a_logged_out_browser_is_sent_to_login_then_back(page: Page, live: Live) -> None:
    memory_id = live.memory("landing")
    log_in(page, live, path=f"/memories/{memory_id}/messages")
    expect(page.locator(".memory-head h1")).to_have_text("landing")
    page.click("form[action='/logout'] button")
    page.goto(f"{live.url}/memories/{memory_id}")
    expect(page).to_have_url(re.compile(r"/login\?next="))


def test_create_a_memory_then_see_turns_with_their_extracts_and_task_log(
    page: Page, live: Live
) -> None:
    log_in(page, live)
    page.click("#create summary")
    page.fill("#create input[name=name]", "travel journal")
    page.check("#create input[name=memory_type][value=semantic]")
    page.fill("#create input[name=llm_id]", LLM)
    page.click("#create button[type=submit]")
    expect(page.locator(".flash[role=status]")).to_contain_text("travel journal created")
    memory_id = page.url.rstrip("/").rsplit("/", 1)[-1]
    lisbon = live.say(memory_id, "I moved to Lisbon last March.")
    hostile = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"><b>bold</b>'
    xss = live.say(memory_id, hostile, session="s-2")
    live.say(memory_id, "Nothing to note here.", session="s-3")
    live.extracted(memory_id)

    page.goto(f"{live.url}/memories/{memory_id}/messages")
    rows = page.locator("tbody.turn")
    expect(rows).to_have_count(3)
    turn = page.locator(f"#turn-{lisbon}")
    turn.locator("details.extracts summary").click()
    expect(turn.locator("table.sub")).to_contain_text("The user lives in Lisbon.")
    expect(turn.locator(".task-head")).to_contain_text("done")
    expect(turn.locator("pre.log:not(.result)")).to_contain_text(
        re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
    )
    turn.locator("details.whole summary").click()
    photograph(page, live, "messages.png")

    bad = page.locator(f"#turn-{xss}")
    expect(bad.locator("details.whole summary")).to_contain_text(
        "<script>window.pwned = 1</script>"
    )
    assert bad.locator("b, img, script").count() == 0
    assert page.evaluate("window.pwned") is None
    empty = page.locator("tbody.turn").nth(0)  # newest first: the turn with nothing in it
    expect(empty.locator("details.extracts summary")).to_contain_text("nothing extracted")
    page.goto(f"{live.url}/memories/{memory_id}")
    expect(page.locator("svg.chart rect.bar")).not_to_have_count(0)
    photograph(page, live, "memory.png")
    audited(page, live, memory_id, "entry.add", lisbon)


def test_disable_hides_a_turn_from_the_playground_and_enable_brings_it_back(
    page: Page, live: Live
) -> None:
    memory_id = live.memory("switches")
    lisbon = live.say(memory_id, "I moved to Lisbon last March.")
    (fact,) = live.extracted(memory_id)[lisbon]
    log_in(page, live)
    assert {lisbon, fact["message_id"]} <= set(hits(page, live, memory_id, "Lisbon"))
    photograph(page, live, "search.png")
    expect(page.locator("#context-block")).to_contain_text("The user lives in Lisbon.")

    page.goto(f"{live.url}/memories/{memory_id}/messages")
    switch = page.locator(f"#turn-{lisbon} button.switch")
    switch.click()
    expect(switch).to_have_text("Disabled")
    expect(page.locator(f"#turn-{lisbon} .badge.disabled")).to_have_count(2)  # and its extract
    found = hits(page, live, memory_id, "Lisbon")
    assert lisbon not in found and fact["message_id"] not in found  # the extract goes with it
    expect(page.locator("#context-block")).not_to_contain_text("Lisbon.")

    page.goto(f"{live.url}/memories/{memory_id}/messages")
    page.locator(f"#turn-{lisbon} button.switch").click()
    expect(page.locator(f"#turn-{lisbon} button.switch")).to_have_text("Enabled")
    assert {lisbon, fact["message_id"]} <= set(hits(page, live, memory_id, "Lisbon"))
    audited(page, live, memory_id, "entry.disable", lisbon)
    audited(page, live, memory_id, "entry.enable", lisbon)


def test_filter_the_messages_page_by_status_and_forgotten_with_three_people(
    page: Page, live: Live
) -> None:
    """The filter form sends REST's values (status=false, forgotten=true) and shows only the
    turns they select, of three people writing English, Russian and Chinese."""
    memory_id = live.memory("filters")
    kept = live.say(memory_id, "I cycle to work every day.", user="u-1")
    off = live.say(memory_id, "Я живу в Казани.", user="u-2")
    gone = live.say(memory_id, "我住在上海。", user="u-3")
    live.extracted(memory_id)
    log_in(page, live, path=f"/memories/{memory_id}/messages")
    page.locator(f"#turn-{off} button.switch").click()
    expect(page.locator(f"#turn-{off} button.switch")).to_have_text("Disabled")
    page.locator(f"#turn-{gone} button:text-is('Forget'):not([aria-label])").click()
    expect(page.locator(f"#turn-{gone} td.state .badge.forgotten")).to_be_visible()
    form = page.locator("form.filters")
    chosen = [("disabled", "any", "status=false", off), ("any", "yes", "forgotten=true", gone)]
    for status, forgotten, sent, shown in chosen:
        form.locator("select[name=status]").select_option(label=status)
        form.locator("select[name=forgotten]").select_option(label=forgotten)
        form.locator("button[type=submit]").click()
        expect(page.locator(f"#turn-{shown}")).to_be_visible()
        assert sent in page.url
        others = {kept, off, gone} - {shown}
        assert all(page.locator(f"#turn-{i}").count() == 0 for i in others)


def test_forget_and_restore(page: Page, live: Live) -> None:
    memory_id = live.memory("forgetting")
    said = live.say(memory_id, "I drink espresso every morning.")
    live.extracted(memory_id)
    log_in(page, live)
    page.goto(f"{live.url}/memories/{memory_id}/messages")
    page.locator(f"#turn-{said} button:text-is('Forget'):not([aria-label])").click()
    expect(page.locator(f"#turn-{said} td.state .badge.forgotten")).to_be_visible()
    assert said not in live.found(memory_id, "espresso")
    page.locator(f"#turn-{said} button:text-is('Restore'):not([aria-label])").click()
    expect(page.locator(f"#turn-{said} td.state .badge.forgotten")).to_have_count(0)
    assert said in live.found(memory_id, "espresso")
    audited(page, live, memory_id, "entry.forget", said)
    audited(page, live, memory_id, "entry.restore", said)


def test_correct_an_entry_and_read_its_history(page: Page, live: Live) -> None:
    memory_id = live.memory("corrections")
    raw = live.say(memory_id, "My sister is a dentist.")
    (fact,) = live.extracted(memory_id)[raw]
    log_in(page, live)
    page.goto(f"{live.url}/memories/{memory_id}/entries/{fact['message_id']}")
    expect(page.locator(".sources")).to_contain_text("My sister is a dentist.")
    page.fill("textarea[name=content]", "The user's sister is an orthodontist.")
    page.fill("form[action$='/correct'] input[name=reason]", "she specialised")
    page.click("form[action$='/correct'] button[type=submit]")
    expect(page.locator(".flash[role=status]")).to_contain_text("Corrected")
    expect(page.locator("#entry-content")).to_have_text("The user's sister is an orthodontist.")
    versions = page.locator("section.card", has=page.locator("h3:text-is('Versions')"))
    expect(versions.locator("tbody tr")).to_have_count(2)
    expect(versions.locator("tr.is-retired")).to_contain_text("The user's sister is a dentist.")
    expect(versions.locator("tr.current")).to_contain_text("she specialised")
    photograph(page, live, "entry.png")
    new_id = int(page.url.rsplit("/", 1)[-1])
    assert new_id in live.found(memory_id, "orthodontist")
    audited(page, live, memory_id, "entry.correct", new_id)


def test_reject_and_confirm_from_the_keyboard_and_watch_the_count_drop(
    page: Page, live: Live
) -> None:
    memory_id = live.memory("reviews")
    first = live.say(memory_id, "I moved to Lisbon last March.")
    second = live.say(memory_id, "I went to Porto for a weekend.")
    facts = live.extracted(memory_id)
    wrong, right = facts[first][0]["message_id"], facts[second][0]["message_id"]
    log_in(page, live)
    page.goto(f"{live.url}/memories/{memory_id}/review")
    expect(page.locator(".review-item")).to_have_count(2)
    expect(page.locator(f"#review-{wrong} .source")).to_contain_text("I moved to Lisbon")
    photograph(page, live, "review.png")
    expect(page.locator(f"#review-{wrong}")).to_be_focused()  # oldest first
    count = page.locator("#review-waiting")
    expect(count).to_have_text("2 extracted entries waiting, oldest first")
    page.keyboard.press("r")
    expect(page.locator(f"#review-{wrong}.done .badge")).to_have_text("rejected")
    expect(count).to_have_text("1 extracted entry waiting, oldest first")  # counted again
    expect(page.locator(f"#review-{right}")).to_be_focused()
    page.keyboard.press("c")
    expect(page.locator(f"#review-{right}.done .badge")).to_have_text("confirmed")
    expect(count).to_have_text("0 extracted entries waiting, oldest first")
    assert wrong not in live.found(memory_id, "Lisbon")
    assert right in live.found(memory_id, "Porto")
    page.goto(f"{live.url}/memories/{memory_id}/review")
    expect(page.locator(".review-item")).to_have_count(0)
    audited(page, live, memory_id, "entry.reject", wrong)
    audited(page, live, memory_id, "entry.confirm", right)


def test_bulk_forget_shows_the_dry_run_count_first(page: Page, live: Live) -> None:
    memory_id = live.memory("bulk")
    trip = [live.say(memory_id, f"Porto day {i}.", session="trip") for i in (1, 2)]
    home = live.say(memory_id, "Porto is far from home.", session="home")
    live.extracted(memory_id)
    log_in(page, live)
    page.goto(f"{live.url}/memories/{memory_id}/messages?session=trip")
    expect(page.locator("tbody.turn")).to_have_count(2)
    page.select_option("select[name=action]", "forget")
    page.click("#bulk-preview-button")  # nothing ticked: said beside the form, nothing changes
    expect(page.locator("#bulk-preview .field-error")).to_contain_text("Tick some rows")
    page.check("input[name=scope][value=all]")
    page.click("#bulk-preview-button")
    extracts = sum(len(live.extracted(memory_id).get(t, ())) for t in trip)
    changes = 2 + extracts  # what applying changes: the turns and what came from them
    expect(page.locator("#bulk-preview #bulk-count")).to_have_text(f"Forget {changes} entries?")
    assert set(trip) <= live.found(memory_id, "Porto")  # a dry run changed nothing
    page.click("#bulk-apply")
    expect(page.locator(".flash[role=status]")).to_contain_text(
        f"forget: 2 selected, {changes} entries changed"
    )
    found = live.found(memory_id, "Porto")
    assert home in found and not set(trip) & found
    for said in trip:
        audited(page, live, memory_id, "entry.forget", said)


def test_erase_then_read_the_receipt(page: Page, live: Live) -> None:
    memory_id = live.memory("erasure")
    raw = live.say(memory_id, "I moved to Lisbon last March.")
    (fact,) = live.extracted(memory_id)[raw]
    log_in(page, live)
    page.goto(f"{live.url}/memories/{memory_id}/entries/{raw}")
    button = page.locator("#erase button[type=submit]")
    expect(button).to_be_disabled()
    page.fill("#erase input[name=reason]", "asked to be forgotten")
    page.fill("#erase input[name=confirm]", str(raw))
    expect(button).to_be_enabled()
    button.click()
    expect(page.locator("#tombstone h2")).to_have_text(f"Entry {raw} was erased")
    expect(page.locator("#erased-reason")).to_have_text("asked to be forgotten")
    erased = page.locator("#erased-ids").inner_text()
    assert {int(i) for i in erased.split(",")} == {raw, fact["message_id"]}
    page.reload()  # a GET after the redirect: the same receipt, nothing posted again
    expect(page.locator("#erased-ids")).to_have_text(erased)
    assert live.found(memory_id, "Lisbon") == set()
    audited(page, live, memory_id, "entry.erase", fact["message_id"])


def test_a_scoped_key_cannot_open_another_memory(page: Page, live: Live) -> None:
    mine, other = live.memory("scoped in"), live.memory("scoped out")
    secret = live.say(other, "The vault code is 4471.")
    admin = live.ok(live.api.get("/api/v1/users/me"))["id"]
    made = live.ok(live.api.post(f"/api/v1/users/{admin}/keys", json={"scope": [mine]}))
    log_in(page, live, made["key"])
    expect(page.locator("table.grid")).to_contain_text("scoped in")
    expect(page.locator("table.grid")).not_to_contain_text("scoped out")
    for path in (
        f"/memories/{other}",
        f"/memories/{other}/messages",
        f"/memories/{other}/entries/{secret}",
        f"/audit?memory={other}",
    ):
        page.goto(live.url + path)
        expect(page.locator("h1")).to_have_text("Not found")
        expect(page.locator("main")).not_to_contain_text("4471")
    assert hits(page, live, other, "vault") == []  # search leaves out what the key cannot read
    expect(page.locator("main")).not_to_contain_text("4471")


def test_erase_everything_about_a_user_from_their_page_after_the_dry_run(
    page: Page, live: Live
) -> None:
    first, second = live.memory("people one"), live.memory("people two")
    tom = [live.say(m, "I moved to Lisbon last March.", user="tom-p") for m in (first, second)]
    ann = live.say(first, "I drink espresso every morning.", user="ann-p")
    facts = [
        f["message_id"]
        for m, t in zip((first, second), tom, strict=True)
        for f in live.extracted(m)[t]
    ]
    log_in(page, live)
    page.click("nav a[href='/people']")
    page.fill("#find-person input[name=keywords]", "tom-p")
    page.click("#find-person button[type=submit]")
    page.click("#people a:text-is('tom-p')")
    expect(page.locator("#subject-total")).to_contain_text("4 entries in 2 memories")
    expect(page.locator("#subject-facts")).to_contain_text("The user lives in Lisbon.")
    photograph(page, live, "person.png")
    page.click("#erase-everything")
    expect(page.locator("#receipt-summary")).to_contain_text("Would erase 4 entries")
    assert len(live.found(first, "Lisbon") & set(tom)) == 1  # the dry run changed nothing
    page.fill("#apply-subject input[name=reason]", "data-subject request")
    page.fill("#apply-subject input[name=confirm]", "tom-p")
    page.click("#apply-subject button[type=submit]")
    expect(page.locator("#receipt-summary")).to_contain_text("Erased 4 entries")
    page.reload()  # a GET after the redirect: the same receipt, nothing posted again
    expect(page.locator("#receipt-summary")).to_contain_text("Erased 4 entries")
    assert not (live.found(first, "Lisbon") | live.found(second, "Lisbon")) & {*tom, *facts}
    assert ann in live.found(first, "espresso")
    for message_id in (*tom, *facts):
        memory_id = first if message_id in (tom[0], facts[0]) else second
        audited(page, live, memory_id, "entry.erase", message_id)


def test_the_people_page_lists_each_user_with_counts(page: Page, live: Live) -> None:
    memory_id = live.memory("support desk")
    said = {"maria": "I moved to Lisbon last March.", "tom": "I drink espresso every morning."}
    said["王小明"] = "I went to Porto last week."
    turns = {user: live.say(memory_id, text, user=user) for user, text in said.items()}
    assert all(live.extracted(memory_id)[t] for t in turns.values())  # a fact each
    admin = live.ok(live.api.get("/api/v1/users/me"))["id"]
    made = live.ok(live.api.post(f"/api/v1/users/{admin}/keys", json={"scope": [memory_id]}))
    log_in(page, live, made["key"])  # scoped to this memory: its three users, no one else
    page.click("nav a[href='/people']")
    rows = page.locator("#people tbody tr[data-id]")
    expect(rows).to_have_count(3)
    assert rows.evaluate_all("r => r.map(x => x.dataset.id)") == ["王小明", "tom", "maria"]
    expect(page.locator("#people tr[data-id='王小明'] td.num").first).to_have_text("1")
    photograph(page, live, "people.png")
    page.fill("#find-person input[name=keywords]", "小明")
    page.click("#find-person button[type=submit]")
    expect(rows).to_have_count(1)
    page.click("#people a:text-is('王小明')")
    expect(page.locator("#subject-id")).to_have_text("王小明")
    expect(page.locator("#subject-total")).to_contain_text("2 entries in 1 memory")


def test_confirm_disable_and_correct_facts_in_the_facts_table(page: Page, live: Live) -> None:
    memory_id = live.memory("fact table")
    tom = live.say(memory_id, "I moved to Lisbon last March.", user="tom-f")
    ann = live.say(memory_id, "I drink espresso every morning.", user="ann-f")
    facts = live.extracted(memory_id)
    (mine,), (theirs,) = facts[tom], facts[ann]
    fact = mine["message_id"]
    log_in(page, live)
    page.goto(f"{live.url}/memories/{memory_id}")
    page.click("nav.tabs a:text-is('Facts')")
    expect(page.locator("tr.fact")).to_have_count(2)
    page.fill("form.filters input[name=user_id]", "tom-f")
    page.click("form.filters button[type=submit]")
    expect(page.locator("tr.fact")).to_have_count(1)  # Ann's fact is filtered out
    expect(page.locator(f"#fact-{theirs['message_id']}")).to_have_count(0)
    row = page.locator(f"#fact-{fact}")
    expect(row).to_contain_text("The user lives in Lisbon.")
    expect(row.locator("a:text-is('turn " + str(tom) + "')")).to_be_visible()
    row.locator("button:text-is('Confirm')").click()  # htmx swaps the row in place
    expect(row.locator(".badge.trust-confirmed")).to_be_visible()
    row.locator("button:text-is('Disable')").click()
    expect(row.locator(".badge.disabled")).to_be_visible()
    photograph(page, live, "facts.png")
    row.locator("details.correct summary").click()
    row.locator("textarea").fill("The user lives in Porto since March.")
    row.locator("button:text-is('Save correction')").click()
    expect(page.locator(".flash[role=status]")).to_contain_text("confirmed replaces")
    expect(page.locator("tr.fact")).to_contain_text("The user lives in Porto since March.")
    assert fact not in live.found(memory_id, "Lisbon")  # disabled, then replaced
    audited(page, live, memory_id, "entry.confirm", fact)
    audited(page, live, memory_id, "entry.disable", fact)


def test_a_key_made_read_only_sees_write_controls_disabled(page: Page, live: Live) -> None:
    memory_id = live.memory("read only")
    turn = live.say(memory_id, "I drink espresso every morning.")
    log_in(page, live, path="/account")
    form = page.locator("form[action='/account/keys']")
    form.locator("input[name=name]").fill("reader")
    form.locator("input[name=capability][value=write]").uncheck()
    form.locator("input[name=capability][value=manage]").uncheck()
    form.locator("button[type=submit]").click()
    key = page.locator("#new-key").input_value()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live.url)
    page.click("button[data-copy=new-key]")  # shown by app.js, hidden without script
    expect(page.locator("#new-key-copied")).to_have_text("Copied.")
    assert page.evaluate("navigator.clipboard.readText()") == key
    row = page.locator("table.grid tbody tr", has=page.locator("td:text-is('reader')"))
    expect(row.locator(".badge.cap-read")).to_be_visible()
    expect(row.locator(".badge.cap-write")).to_have_count(0)
    page.click("form[action='/logout'] button")
    log_in(page, live, key, path=f"/memories/{memory_id}/messages")
    expect(page.locator("#key-limits")).to_have_text("read-only key")
    forget = page.locator(f"#turn-{turn} button:text-is('Forget'):not([aria-label])")
    expect(forget).to_be_disabled()
    expect(forget).to_have_attribute("title", "This key lacks the 'write' capability")
    assert turn in live.extracted(memory_id)  # the turn is still there


def test_reinstate_a_replaced_version(page: Page, live: Live) -> None:
    memory_id = live.memory("reinstating")
    raw = live.say(memory_id, "My sister is a dentist.")
    (fact,) = live.extracted(memory_id)[raw]
    old_id = fact["message_id"]
    log_in(page, live)
    page.goto(f"{live.url}/memories/{memory_id}/entries/{old_id}")
    page.fill("textarea[name=content]", "The user's sister is a baker.")
    page.click("form[action$='/correct'] button[type=submit]")
    expect(page.locator(".flash[role=status]")).to_contain_text("Corrected")
    page.locator("a:text-is('reinstate…')").click()
    page.fill("form[action$='/reinstate'] input[name=reason]", "the correction was wrong")
    page.click("form[action$='/reinstate'] button[type=submit]")
    expect(page.locator(".flash[role=status]")).to_contain_text("current version again")
    expect(page.locator("#entry-content")).to_have_text(fact["content"])
    assert old_id in live.found(memory_id, "sister")
    audited(page, live, memory_id, "entry.reinstate", old_id)


def test_retry_a_failed_extraction_from_the_jobs_page(page: Page, live: Live) -> None:
    memory_id = live.memory("retries")
    GLITCH["on"] = True
    try:
        turn = live.say(memory_id, "A glitch, then: I moved to Lisbon last March.")
        assert live.extracted(memory_id)[turn] == []
    finally:
        GLITCH["on"] = False
    log_in(page, live, path=f"/memories/{memory_id}/jobs")
    page.click(f"button[aria-label='retry the extraction of turn {turn}']")
    expect(page).to_have_url(re.compile(rf"/memories/{memory_id}/jobs"))
    (fact,) = live.extracted(memory_id)[turn]
    assert fact["content"] == "The user lives in Lisbon."
    page.goto(f"{live.url}/audit?memory={memory_id}&action=job.retry")
    expect(page.locator("table.events tbody tr").first).to_contain_text("job.retry")


def test_choose_the_chat_model_from_the_list_offered_and_test_it(page: Page, live: Live) -> None:
    memory_id = live.memory("models", llm_id="other-model@elsewhere")
    log_in(page, live, path=f"/memories/{memory_id}/config")
    offered = page.locator("datalist#offered-models option").evaluate_all(
        "os => os.map(o => o.value)"
    )
    assert "model@fake" in offered and "all-MiniLM-L6-v2@Builtin" in offered
    page.fill("input[name=llm_id]", LLM)
    page.click("button.primary:text('Save')")
    page.goto(f"{live.url}/memories/{memory_id}/config")
    expect(page.locator("input[name=llm_id]")).to_have_value(LLM)
    page.click("button:text('Test chat model')")
    expect(page.locator("#chat-check")).to_contain_text("ok")
    page.goto(f"{live.url}/audit?memory={memory_id}&action=memory.update")
    expect(page.locator("table.events tbody tr").first).to_contain_text("memory.update")


def test_the_request_log_names_its_callers_and_fits_a_1280_pixel_window(
    chromium: Any, live: Live
) -> None:
    names = ("заметки поддержки клиентов", "客户支持的长期记忆", "a memory with a rather long name")
    memories = [live.memory(n) for n in names]
    for m, user in zip(memories, ("ivan", "李雷", "tom"), strict=True):
        live.say(m, "I moved to Lisbon last March.", user=user)
    admin = live.ok(live.api.get("/api/v1/users/me"))["id"]
    made = live.ok(live.api.post(f"/api/v1/users/{admin}/keys", json={"name": "support agent"}))
    with httpx.Client(
        base_url=live.url, headers={"Authorization": f"Bearer {made['key']}"}
    ) as agent:
        params = {"query": "Lisbon", "memory_id": memories, "similarity_threshold": 0}
        for _ in range(3):
            assert live.ok(agent.get("/api/v1/messages/search", params=params))
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        log_in(page, live, path="/requests")
        page.goto(f"{live.url}/memories/{memories[1]}/entries/1")  # a long route in the log
        page.goto(f"{live.url}/requests")
        row = page.locator(
            "table.requests tbody tr", has=page.locator("a:text-is('support agent')")
        )
        expect(row.first).to_be_visible()
        expect(row.first.locator("a:text-is('客户支持的长期记忆')")).to_be_visible()
        expect(row.first.locator("td.request-key a")).to_have_attribute(
            "href", f"/account#key-{made['id']}"
        )
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1280, f"the page is {width} px wide at 1280"
        photograph(page, live, "requests.png")
    finally:
        context.close()


# --- every control a key may use, and only those ----------------------------------------------

#: Routes that are no page to walk: the login form (no session yet), a download, an icon and
#: the REST API's Swagger docs.
NOT_PAGES = {"/login", "/memories/{memory_id}/export", "/favicon.ico", "/docs"}
#: Posts that take away what the later ones need (a memory, an entry, a key): made last.
LAST = ("/delete", "/erase", "/revoke")

#: Each control of the page that posts: where to, what it sends, and whether it is usable.
#: A type-to-confirm button the key may use gets its text typed first, as a person would.
CONTROLS = """() => {
  const out = [];
  for (const el of document.querySelectorAll("button, input[type=submit]")) {
    const form = el.form;
    const post = form && form.method === "post" ? form.getAttribute("action") : null;
    const action = el.getAttribute("hx-post") || el.getAttribute("formaction") || post;
    if (!action) continue;  // a filter form, a Copy button: nothing is posted
    const typed = el.hasAttribute("data-needs-confirm") && form.querySelector("[data-confirm]");
    if (typed) {
      typed.value = typed.dataset.confirm;
      typed.dispatchEvent(new Event("input"));
    }
    const entries = form ? [...new FormData(form, el.type === "submit" ? el : null)] : [];
    out.push({
      label: (el.getAttribute("aria-label") || el.textContent || el.value || "").trim(),
      action: action,
      disabled: el.matches(":disabled"),
      reason: el.getAttribute("title") || "",
      fields: entries.filter(([, v]) => typeof v === "string"),
      files: entries.filter(([, v]) => typeof v !== "string").map(([k]) => k),
      vals: Object.entries(JSON.parse(el.getAttribute("hx-vals") || "{}")),
    });
  }
  return out;
}"""


def walked_pages(memory_id: str, turn: int, fact: int, user_id: str) -> dict[str, list[str]]:
    """Addresses of each page route, with the ids of the memory the walk seeded."""
    m, person = f"/memories/{memory_id}", "id=王小明"
    return {
        "/": ["/"],
        "/memories/{memory_id}": [m],
        "/memories/{memory_id}/messages": [f"{m}/messages?open=1"],
        "/memories/{memory_id}/facts": [f"{m}/facts"],
        "/memories/{memory_id}/review": [f"{m}/review"],
        "/memories/{memory_id}/jobs": [f"{m}/jobs"],
        "/memories/{memory_id}/config": [f"{m}/config"],
        "/memories/{memory_id}/entries/{message_id}": [
            f"{m}/entries/{turn}",
            f"{m}/entries/{fact}",
        ],
        "/memories/{memory_id}/search": [f"{m}/search"],
        "/memories/{memory_id}/audit": [f"{m}/audit"],
        "/search": [f"/search?memory_id={memory_id}&query=Lisbon&similarity_threshold=0"],
        "/audit": ["/audit"],
        "/people": ["/people"],
        "/people/{kind}": [f"/people/user?{person}", "/people/agent?id=helper"],
        "/people/user/forget": [f"/people/user/forget?{person}"],
        "/people/user/erase": [f"/people/user/erase?{person}"],
        "/requests": ["/requests"],
        "/account": ["/account"],
        "/users": ["/users"],
        "/users/{user_id}/keys": [f"/users/{user_id}/keys"],
        "/memories/{memory_id}/delete": [f"{m}/delete"],
    }


def walk(page: Page, live: Live, addresses: list[str]) -> tuple[list[dict[str, Any]], set[str]]:
    """Every control that posts on these pages (each once), and every link in their main."""
    controls: dict[str, dict[str, Any]] = {}
    links: set[str] = set()
    for address in addresses:
        page.goto(live.url + address)
        for c in page.evaluate(CONTROLS):
            c["where"] = f"{address}: {c['label']!r} posting to {c['action']}"
            controls.setdefault(f"{c['action']} {c['fields']} {c['vals']}", c)
        hrefs = page.locator("main a[href^='/']:not([aria-disabled])")
        links |= set(hrefs.evaluate_all("as => as.map(a => a.getAttribute('href'))"))
    return list(controls.values()), links


def test_every_enabled_control_is_one_the_key_may_use(chromium: Any, live: Live) -> None:
    """A read-only, a read+write and a manage key walk every page the UI serves, over a memory
    holding three people's turns (one writing Chinese): each enabled control that posts is
    posted with the session's token, as the browser would send it, and is not refused (403);
    each disabled one says why; no link in a page leads to a refusal."""
    from recallery.web.site import ROUTERS

    walker = live.ok(live.api.post("/api/v1/users", json={"name": "walker"}))["id"]
    keys: dict[str, dict[str, Any]] = {}
    for name, caps in (
        ("read", ["read"]),
        ("read+write", ["read", "write"]),
        ("manage", ["read", "write", "manage"]),
    ):
        body = {"name": name, "capabilities": caps}
        keys[name] = live.ok(live.api.post(f"/api/v1/users/{walker}/keys", json=body))
    owner = {"Authorization": f"Bearer {keys['manage']['key']}"}
    with httpx.Client(base_url=live.url, headers=owner) as api:
        mine = Live(live.url, api, live.shots)
        memory_id = mine.memory("walked")
        said = {"maria": "I moved to Lisbon last March.", "tom": "I drink espresso every morning."}
        said["王小明"] = "我上周去了 Porto。"
        turns = {user: mine.say(memory_id, text, user=user) for user, text in said.items()}
        fact = mine.extracted(memory_id)[turns["maria"]][0]["message_id"]
    pages = walked_pages(memory_id, turns["tom"], fact, walker)
    served = {r.path for router in ROUTERS for r in router.routes if "GET" in r.methods}  # type: ignore[attr-defined]
    assert served - NOT_PAGES == set(pages), "a page the walk does not visit"
    addresses = [a for found in pages.values() for a in found]

    for name, key in keys.items():
        context = chromium.new_context(viewport={"width": 1360, "height": 900})
        page = context.new_page()
        try:
            log_in(page, live, key["key"])
            controls, links = walk(page, live, addresses)
            csrf = page.locator("input[name=csrf]").first.input_value()
            cookies = {c["name"]: c["value"] for c in context.cookies()}
        finally:
            context.close()
        for c in controls:
            if c["disabled"]:
                assert c["reason"], f"{name} key: disabled without a reason: {c['where']}"
        usable = [c for c in controls if not c["disabled"]]
        locked = [c for c in controls if "lacks" in c["reason"]]
        assert bool(locked) == (name != "manage"), f"{name} key: locked {locked}"
        usable.sort(key=lambda c: c["action"].endswith(LAST))
        with httpx.Client(base_url=live.url, cookies=cookies) as browser:
            for link in sorted(links):
                got = browser.get(link)
                assert got.status_code != 403, f"{name} key: the link {link} is refused"
            for c in usable:
                if c["action"] == "/logout" or c["action"].endswith(f"/{key['id']}/revoke"):
                    continue  # it ends the walk's own session
                data: dict[str, list[str]] = {}
                for k, v in [*c["fields"], *c["vals"]]:
                    data.setdefault(k, []).append(str(v))
                files = {f: ("", b"") for f in c["files"]} or None
                sent = browser.post(
                    c["action"], data=data, files=files, headers={"X-CSRF-Token": csrf}
                )
                assert sent.status_code != 403, f"{name} key: refused: {c['where']}"
