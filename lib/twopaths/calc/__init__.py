"""Calculators: plain functions over specs, SI units in and out (bytes, seconds, FLOP, bytes/s)."""
