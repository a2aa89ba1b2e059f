"""Benchmarks: LoCoMo retrieval recall and peer memory systems."""
