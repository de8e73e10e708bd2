"""Benchmarks (not tests). ``python -m bench`` (``make bench``) runs the recall benchmark."""
