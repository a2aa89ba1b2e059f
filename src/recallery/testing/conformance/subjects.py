"""Conformance: the data-subject listing (the People page) groups a scope's entries by user,
agent or session id, counts facts (current extracted entries) and turns (raw entries) apart,
leaves out other memories and entries without an id, matches a part of the id literally, and
pages."""

from __future__ import annotations

from datetime import timedelta

from recallery.models import EntryType, Scope
from recallery.requests.subjects import SubjectKind
from recallery.store.base import Store
from recallery.testing.conformance.support import T0, Conformance, make_memory, unit


class SubjectConformance(Conformance):
    def test_subjects_are_counted_per_id_within_the_scope(self, store: Store) -> None:
        memory, other = make_memory(), make_memory()
        fact = {"message_type": EntryType.SEMANTIC}
        ids = self.seed(
            store,
            memory,
            [
                ("t1", unit(1), {"user_id": "tom", "agent_id": "helper"}),
                ("f1", unit(1), {**fact, "user_id": "tom"}),
                ("f2", unit(1), {**fact, "user_id": "tom"}),  # retired below: no fact
                ("t2", unit(1), {"user_id": "王小明", "session_id": "s/1"}),
                ("t3", unit(1), {}),  # nobody's
            ],
        )
        self.seed(store, other, [("x", unit(1), {"user_id": "outsider"})], T0 + timedelta(days=1))
        with store.write() as w:
            w.update_entries([ids[2]], {"retired_at": T0 + timedelta(hours=1)})
        with store.read() as r:
            users, total = r.subjects(Scope.of(memory.id), SubjectKind.USER, limit=10)
            agents, _ = r.subjects(Scope.of(memory.id), SubjectKind.AGENT, limit=10)
            sessions, _ = r.subjects(Scope.of(memory.id), SubjectKind.SESSION, limit=10)
            nobody = r.subjects(Scope(frozenset()), SubjectKind.USER, limit=10)
        assert total == 2 and nobody == ([], 0)
        counts = {p.id: (p.turns, p.facts, p.entries) for p in users}
        assert counts == {"tom": (1, 1, 3), "王小明": (1, 0, 1)}
        assert {p.last_at for p in users} == {T0}
        assert [(p.id, p.kind) for p in agents] == [("helper", SubjectKind.AGENT)]
        assert [p.id for p in sessions] == ["s/1"]

    def test_subjects_match_a_literal_part_and_page_newest_first(self, store: Store) -> None:
        memory = make_memory()
        for n, user in enumerate(("run_%1", "run-x1", "RUN_%2")):
            self.seed(store, memory, [("t", unit(1), {"user_id": user})], T0 + timedelta(n))
        scope = Scope.of(memory.id)
        with store.read() as r:
            literal, total = r.subjects(scope, SubjectKind.USER, "n_%", limit=10)
            first, all_ = r.subjects(scope, SubjectKind.USER, limit=2)
            rest, _ = r.subjects(scope, SubjectKind.USER, limit=2, offset=2)
            past = r.subjects(scope, SubjectKind.USER, limit=2, offset=4)
        assert [p.id for p in literal] == ["RUN_%2", "run_%1"] and total == 2
        assert [p.id for p in first] == ["RUN_%2", "run-x1"] and all_ == 3
        assert [p.id for p in rest] == ["run_%1"] and past == ([], 3)
