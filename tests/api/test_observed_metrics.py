"""/metrics: what the engine reports of its own work (search legs, embedding batches, model
calls, job runs with their tokens, index warm-up) moves with the work done, per app, and no
label carries a request's text or a memory's name."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from tests.support.api import API, Account, add_turn, create_memory, metric_value, ok, ok_text

from recallery import Engine
from recallery.api import create_app
from recallery.jobs import JobContext, JobResult, Worker, WorkerConfig
from recallery.models import JobKind, Outcome
from recallery.providers.base import ChatMessage, ChatReply, ChatRequest
from recallery.providers.batching import BatchingEmbedder
from recallery.providers.registry import ModelRegistry, TimedChat
from recallery.settings import Settings
from recallery.store.base import Store
from recallery.testing import DeterministicEmbedder, FrozenClock

LEGS = "recallery_search_leg_duration_seconds_count"


class Chat:
    model_id = "stub"

    def complete(self, request: ChatRequest) -> ChatReply:
        return ChatReply("{}", prompt_tokens=120, completion_tokens=7)


def _engine(store: Store, clock: FrozenClock) -> Engine:
    models = ModelRegistry(builtin=lambda: BatchingEmbedder(DeterministicEmbedder()))
    return Engine(store, models=models, clock=clock)


def test_search_legs_batches_jobs_and_warmup_move(
    store: Store, clock: FrozenClock, admin: Account
) -> None:
    engine = _engine(store, clock)
    app = create_app(engine)
    with TestClient(app, headers={"Authorization": f"Bearer {admin.key}"}) as scrape:
        key = engine.create_api_key(admin.principal, admin.user.id)[1]
        user = TestClient(app, headers={"Authorization": f"Bearer {key}"})
        before = ok_text(scrape)
        memory = create_memory(user, name="secret-garden")
        add_turn(user, memory["id"], "zanzibar marmalade")
        for _ in range(2):
            params = {"query": "zanzibar marmalade", "memory_id": memory["id"]}
            ok(user.get(f"{API}/messages/search", params=params))
        engine.warm()
        _run_a_job(engine, memory["id"])
        after = ok_text(scrape)
    for leg in ("embed", "keyword", "gather", "rank"):
        moved = metric_value(after, LEGS, f'leg="{leg}"') - metric_value(
            before, LEGS, f'leg="{leg}"'
        )
        assert moved == 2, leg
    sizes = "recallery_embedding_batch_texts_count"
    assert metric_value(after, sizes) - metric_value(before, sizes) >= 3  # the turn, two queries
    assert metric_value(after, "recallery_embedding_batch_texts_sum") >= 3
    assert metric_value(after, "recallery_embedding_queue_wait_seconds_count") >= 3
    assert metric_value(after, "recallery_model_call_duration_seconds_count", 'model="chat"') == 1
    done = ('kind="extraction"', 'outcome="done"')
    assert metric_value(after, "recallery_job_run_duration_seconds_count", *done) == 1
    assert metric_value(after, "recallery_job_model_calls_total", *done) == 1
    assert metric_value(after, "recallery_job_tokens_total", *done, 'direction="prompt"') == 120
    assert metric_value(after, "recallery_job_tokens_total", *done, 'direction="completion"') == 7
    assert "recallery_index_warmup_seconds " in after
    labels = " ".join(re.findall(r"\{[^}]*\}", after))
    for text in ("zanzibar", "marmalade", "secret-garden", memory["id"]):
        assert text not in labels


def _run_a_job(engine: Engine, memory_id: str) -> None:
    def handler(ctx: JobContext) -> JobResult:
        ctx.call(TimedChat(Chat(), engine.observer), ChatRequest((ChatMessage("user", "x"),)))
        return JobResult(Outcome.DONE, "ok")

    with engine.store.write() as w:
        w.enqueue_job(
            kind=JobKind.EXTRACTION,
            tenant_id=_tenant(engine, memory_id),
            memory_id=memory_id,
            message_id=None,
            at=engine.clock.now(),
        )
    worker = Worker(engine, config=WorkerConfig(), handlers={JobKind.EXTRACTION: handler})
    assert worker.run_until_idle() >= 1


def _tenant(engine: Engine, memory_id: str) -> str:
    with engine.store.read() as r:
        return r.memories([memory_id])[0].tenant_id


def test_two_apps_never_share_the_engines_series(
    store: Store, clock: FrozenClock, engine: Engine, admin: Account
) -> None:
    other = _engine(store, clock)
    one = create_app(engine, Settings(metrics="open"))
    two = create_app(other, Settings(metrics="open"))
    other.warm()
    with TestClient(one) as a, TestClient(two) as b:
        assert "recallery_index_warmup_seconds 0.0\n" in ok_text(a)
        assert "recallery_index_warmup_seconds 0.0\n" not in ok_text(b)
