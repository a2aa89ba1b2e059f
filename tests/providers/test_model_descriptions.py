"""What a model id really is (issue 40 item 8): an ``@Builtin`` id names the local model it
resolves to, a configured provider its endpoint, an unconfigured one says so."""

from __future__ import annotations

import pytest

from recallery import InvalidInput
from recallery.providers.registry import ModelRegistry
from recallery.settings import ProviderConfig


def test_describe_says_which_model_an_id_resolves_to() -> None:
    models = ModelRegistry({"openai": ProviderConfig("http://llm.local/v1")})
    assert "all-MiniLM-L6-v2" in models.describe("BAAI/bge-small-en-v1.5@Builtin")
    assert "multilingual-e5-small" in models.describe("intfloat/multilingual-e5-small@Builtin")
    assert models.describe("gpt-4o-mini@OpenAI") == (
        "gpt-4o-mini at http://llm.local/v1 (provider 'openai')"
    )
    assert models.describe("glm@Zhipu") == (
        "provider 'zhipu', which is not configured (set RECALLERY_PROVIDER_ZHIPU_BASE_URL)"
    )
    with pytest.raises(InvalidInput):
        models.describe("no-provider")
    # the install's default first (this install has e5: the server extra)
    assert models.offered() == (
        "multilingual-e5-small@Builtin",
        "all-MiniLM-L6-v2@Builtin",
        "model@openai",
    )
    assert "multilingual-e5-small" in models.describe("BAAI/bge-m3@Builtin")


def test_an_unconfigured_provider_is_a_sentence_naming_the_variable_to_set() -> None:
    """Before: "Resolves to provider 'zhipu' is not configured." (issue 54 item 5)."""
    models = ModelRegistry({"openai": ProviderConfig("http://llm.local/v1")})
    assert models.resolution("glm-4@Zhipu-AI") == (
        "Provider 'zhipu_ai' is not configured, so this model cannot be used yet: set "
        "RECALLERY_PROVIDER_ZHIPU_AI_BASE_URL to its OpenAI-compatible endpoint (and "
        "RECALLERY_PROVIDER_ZHIPU_AI_API_KEY if it needs a key), then restart recallery."
    )
    assert models.resolution("gpt-4o-mini@OpenAI") == (
        "Resolves to gpt-4o-mini at http://llm.local/v1 (provider 'openai')."
    )
    # a name that says nothing of what it reads: the install's default
    assert models.resolution("x@Builtin").startswith("Resolves to the local multilingual-e5")
    assert models.resolution("bge-small-en@Builtin").startswith(
        "Resolves to the local all-MiniLM-L6-v2"
    )
