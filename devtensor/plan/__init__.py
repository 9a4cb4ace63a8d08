"""Static plans (``dt.plan``, ``dt.planned``): trace a step once on meta stand-ins, plan its memory by liveness,
replay it as direct kernel calls. :mod:`devtensor.plan.core` traces and checks signatures,
:mod:`devtensor.plan.memory` plans the buffers, :mod:`devtensor.plan.replay` compiles the replay."""

from devtensor.errors import PlanError
from devtensor.plan.core import Plan, plan
from devtensor.plan.planned import Planned, planned

__all__ = ["Plan", "PlanError", "Planned", "plan", "planned"]
