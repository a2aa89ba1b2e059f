"""The engine's own reports (:class:`recallery.observe.Observer`) as Prometheus series in an
app's registry: search latency by leg, model calls, embedding batch sizes and queue waits,
job runs by kind and outcome with their model calls and tokens, and the last index warm-up.

Every label value comes from a fixed set (the legs and steps of :data:`~recallery.observe.TIMED`,
job kinds and outcomes, ``prompt``/``completion``): never request text or a memory's name.
"""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from recallery.observe import Timed

#: A search leg takes from tens of microseconds (fusion) to tens of milliseconds (a leg over
#: a large memory on PostgreSQL).
LEG_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
MODEL_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128)
JOB_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)


class ObservedSeries:
    """A :class:`~recallery.observe.Listener` writing into one app's ``registry``."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.legs = Histogram(
            "recallery_search_leg_duration_seconds",
            "Time each leg of a search took: embed (the query), keyword (with conversation "
            "windows), vector (with every candidate's cosine), neighbours, fuse, rank.",
            ("leg",),
            buckets=LEG_BUCKETS,
            registry=registry,
        )
        self.models = Histogram(
            "recallery_model_call_duration_seconds",
            "Time of each model call: embed (one joined batch) or chat.",
            ("model",),
            buckets=MODEL_BUCKETS,
            registry=registry,
        )
        self.sizes = Histogram(
            "recallery_embedding_batch_texts",
            "Texts in each embedding model call (concurrent callers joined).",
            buckets=BATCH_BUCKETS,
            registry=registry,
        )
        self.wait = Histogram(
            "recallery_embedding_queue_wait_seconds",
            "How long each embedding caller waited for the model before its batch began.",
            buckets=LEG_BUCKETS,
            registry=registry,
        )
        self.warmup = Gauge(
            "recallery_index_warmup_seconds",
            "How long the last build of the in-process search indexes took.",
            registry=registry,
        )
        self.jobs = Histogram(
            "recallery_job_run_duration_seconds",
            "Time of each job run (extraction: its model calls and writes), by kind and "
            "outcome (retry: failed, another attempt due).",
            ("kind", "outcome"),
            buckets=JOB_BUCKETS,
            registry=registry,
        )
        self.calls = Counter(
            "recallery_job_model_calls",
            "Model calls made by job runs, failed calls included, by kind and outcome.",
            ("kind", "outcome"),
            registry=registry,
        )
        self.tokens = Counter(
            "recallery_job_tokens",
            "Tokens job runs' model calls reported, by kind, outcome and direction.",
            ("kind", "outcome", "direction"),
            registry=registry,
        )

    def timed(self, what: Timed, seconds: float) -> None:
        group, _, step = what.partition(".")
        if group == "search":
            self.legs.labels(step).observe(seconds)
        elif group == "model":
            self.models.labels(step).observe(seconds)
        else:
            self.warmup.set(seconds)

    def batch(self, texts: int, waits: Sequence[float]) -> None:
        self.sizes.observe(texts)
        for wait in waits:
            self.wait.observe(wait)

    def job(self, kind: str, outcome: str, seconds: float, tokens: tuple[int, int, int]) -> None:
        calls, prompt, completion = tokens
        self.jobs.labels(kind, outcome).observe(seconds)
        self.calls.labels(kind, outcome).inc(calls)
        self.tokens.labels(kind, outcome, "prompt").inc(prompt)
        self.tokens.labels(kind, outcome, "completion").inc(completion)


__all__ = ["ObservedSeries"]
