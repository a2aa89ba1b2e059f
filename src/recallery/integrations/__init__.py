"""recallery inside agent frameworks: thin adapters over the SDK client, each an extra.

- :mod:`~recallery.integrations.langgraph`: a LangGraph ``BaseStore`` (extra ``langgraph``);
- :mod:`~recallery.integrations.openai_agents`: an OpenAI Agents SDK ``Session`` and recall
  and remember tools (extra ``openai-agents``);
- :mod:`~recallery.integrations.adk`: a Google ADK memory service (extra ``adk``);
- :mod:`~recallery.integrations.llamaindex`: a LlamaIndex memory block (extra ``llamaindex``).

Each takes a :class:`recallery.Client` or :class:`recallery.AsyncClient` and the id of the
memory it works in; the client's API key decides what exists and what may change, as it does
for every other way in. What they share (:mod:`~recallery.integrations.base`) lets each write
its calls once for both clients. Importing one without its extra raises one line naming what
to install.
"""
