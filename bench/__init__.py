"""Benchmarks: each prints ratios measured in one run (ours vs raw Playwright or a peer tool)."""
