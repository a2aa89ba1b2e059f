"""The one write-behind queue (use counts and the request log both write through it): items
put while a write runs wait for the next batch, in order, at most ``batch`` at a time; a
failed batch is logged and the next one is written; flush waits for everything put so far,
close writes the rest, and a put after close starts again."""

from __future__ import annotations

import logging
import threading

import pytest

from recallery.errors import RecalleryError
from recallery.store.writebehind import WriteBehind


class Writes:
    """A ``write`` that records its batches; the first one waits until released, so the
    items put meanwhile queue up."""

    def __init__(self, fail_on: str | None = None, error: type[Exception] = RecalleryError) -> None:
        self.batches: list[list[str]] = []
        self.first = threading.Event()
        self.release = threading.Event()
        self.fail_on = fail_on
        self.error = error

    def __call__(self, batch: list[str]) -> None:
        if not self.batches:
            self.first.set()
            assert self.release.wait(10)
        self.batches.append(list(batch))
        if self.fail_on in batch:
            raise self.error(f"could not write {self.fail_on}")


def _queued(behind: WriteBehind[str], writes: Writes, *later: str) -> None:
    """Put "a", wait until its write began, put ``later``, then let the writes go."""
    behind.put("a")
    assert writes.first.wait(10)
    for item in later:
        behind.put(item)
    writes.release.set()
    behind.flush()


def test_what_queues_during_a_write_goes_in_order_in_batches_of_at_most_batch() -> None:
    writes = Writes()
    behind = WriteBehind("test", writes, batch=2)
    _queued(behind, writes, "Берлин", "北京", "Tom", "Ann")
    assert writes.batches == [["a"], ["Берлин", "北京"], ["Tom", "Ann"]]
    behind.close()


def test_a_failed_batch_is_logged_and_the_next_is_written(
    caplog: pytest.LogCaptureFixture,
) -> None:
    writes = Writes(fail_on="bad")
    behind = WriteBehind("usage", writes, batch=1)
    with caplog.at_level(logging.ERROR, logger="recallery.store.writebehind"):
        _queued(behind, writes, "bad", "good")
    assert writes.batches == [["a"], ["bad"], ["good"]]
    assert "usage: could not write a batch of 1" in caplog.text
    behind.close()


@pytest.mark.parametrize("error", [RuntimeError, KeyError])
def test_a_batch_failing_with_any_exception_leaves_the_thread_writing(
    caplog: pytest.LogCaptureFixture, error: type[Exception]
) -> None:
    """Before, anything but a RecalleryError ended the thread: later items were never
    written and flush() waited for ever."""
    writes = Writes(fail_on="bad", error=error)
    behind = WriteBehind("requests", writes, batch=1)
    with caplog.at_level(logging.ERROR, logger="recallery.store.writebehind"):
        behind.put("a")
        assert writes.first.wait(10)
        behind.put("bad")
        behind.put("Москва")
        writes.release.set()
        for later in ("上海", None):
            if later:
                behind.put(later)
            done = threading.Thread(target=behind.flush, daemon=True)
            done.start()
            done.join(10)
            assert not done.is_alive(), "flush() waited for a thread that had died"
    assert writes.batches == [["a"], ["bad"], ["Москва"], ["上海"]]
    assert "requests: could not write a batch of 1" in caplog.text
    behind.close()


def test_close_writes_the_rest_and_a_later_put_starts_again() -> None:
    writes = Writes()
    writes.release.set()
    behind = WriteBehind("test", writes)
    behind.put("one")
    behind.close()
    assert writes.batches == [["one"]]
    assert not any(t.name == "test" for t in threading.enumerate())
    behind.put("two")
    behind.flush()
    assert writes.batches == [["one"], ["two"]]
    behind.close()


def test_flush_and_close_with_nothing_put_return_at_once() -> None:
    behind: WriteBehind[str] = WriteBehind("idle", Writes())
    behind.flush()
    behind.close()


def test_a_batch_of_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="batch"):
        WriteBehind("test", Writes(), batch=0)
