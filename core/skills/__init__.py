"""Skills from failures (K1-K7): triggers, capture, attribution, extraction, validation, runtime, upkeep.

The model is :mod:`core.domain.skill` (frozen dataclasses); rows live in
:mod:`core.store.skills`.  This package holds the rules: when a trigger
holds on a live page (:mod:`core.skills.trigger`), what a failure record
says (capture and attribution), what a correction teaches (extraction),
whether a candidate may reach review (validation), how the library is kept
(upkeep) and how skill files are read and written (files).
"""
