"""devtensor's mypy plugin under its former name: ``plugins = devtensor.mypy_plugin`` keeps working, but loading it
imports devtensor (and NumPy) on every mypy run; ``plugins = devtensor_mypy`` loads the same plugin alone (see
:mod:`devtensor_mypy`)."""

from devtensor_mypy import DevtensorPlugin, plugin

__all__ = ["DevtensorPlugin", "plugin"]
