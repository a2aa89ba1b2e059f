"""The engine's services, one concern each, every one constructed with only what it needs
(the store, the model registry, the clock, settings). :class:`recallery.engine.Engine`
composes them into the one facade adapters call."""
