"""Pure policies: capacity and eviction."""
