"""Bench layer: prompt sources, the async load generator, /metrics deltas, statistics, measure one arm."""
