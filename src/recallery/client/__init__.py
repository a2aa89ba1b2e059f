"""recallery's Python SDK: every REST route, typed results, the engine's exceptions.

::

    from recallery import Client

    with Client("http://127.0.0.1:9380", api_key="rc-...") as ms:
        memory = ms.create_memory("notes", ["raw", "semantic"], "all-MiniLM-L6-v2@Builtin",
                                  "gpt-4o-mini@OpenAI")
        ms.add_turn([memory.id], user_input="I moved to Lyon", agent_response="Noted.")
        hits = ms.search("where does the user live", [memory.id])

Each operation is written once, as a function that describes its request and how to read the
answer (a :class:`Call`): memories in :mod:`recallery.client.memories`, messages in
:mod:`~recallery.client.messages`, accounts and the audit log in
:mod:`~recallery.client.accounts`, bulk changes, the review queue and the timeline in
:mod:`~recallery.client.curation`. Answers are read by the pairs of :mod:`recallery.wire`, the
same shapes the server writes. :class:`Client` and :class:`AsyncClient`
(:mod:`~recallery.client.shells`) send them. An error envelope raises the exception the engine
would have raised (``NotFound``, ``InvalidInput`` with its field, ``Unauthorized``...).
Connection failures stay ``httpx`` exceptions.
"""

from __future__ import annotations

# Every operation under its own name, as the clients' methods wrap it.
from recallery.client.accounts import (  # noqa: F401
    audit_log,
    create_api_key,
    create_user,
    health,
    join_team,
    leave_team,
    list_api_keys,
    list_users,
    me,
    revoke_api_key,
    team_members,
)
from recallery.client.agents import add_entries, task_status  # noqa: F401
from recallery.client.call import Call
from recallery.client.curation import bulk, facts, review_queue, timeline  # noqa: F401
from recallery.client.memories import (  # noqa: F401
    create_memory,
    delete_memory,
    export_memory,
    get_memory,
    import_memory,
    jobs,
    list_memories,
    list_messages,
    retry_extraction,
    retry_failed_extraction,
    test_chat_model,
    update_memory,
)
from recallery.client.messages import (  # noqa: F401
    add_turn,
    context,
    correct,
    erase,
    evidence,
    forget,
    get_entry,
    history,
    recent,
    reinstate,
    restore,
    review,
    search,
    set_status,
)
from recallery.client.requestlog import entry_reads, request_log, requests  # noqa: F401
from recallery.client.shells import DEFAULT_URL, OPERATIONS, AsyncClient, Client  # noqa: F401
from recallery.client.subjects import (  # noqa: F401
    erase_subject,
    forget_subject,
    list_subjects,
    people,
)

__all__ = ["AsyncClient", "Call", "Client"]
