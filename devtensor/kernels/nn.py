"""Placeholder: the nn op family is being written (issue 3)."""

from __future__ import annotations

__all__: list[str] = []
