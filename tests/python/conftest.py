"""Fixtures of the Python tests (defined in support.py)."""

from support import anyio_backend, dsh_bin, spawned

__all__ = ["anyio_backend", "dsh_bin", "spawned"]
