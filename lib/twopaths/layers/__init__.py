"""Toy PyTorch layers and caches, one concept per module."""
