"""The store's first schema: runs, steps, observations, resolutions, verdicts, escalations, screen baselines
and changes, checkpoints, heal proposals.

Stores written before migrations were kept by Alembic carry schema version 1 in ``schema_meta`` and are
stamped with this revision; a new store is created from the models and stamped with the head.  So this
revision has nothing to do.
"""
from __future__ import annotations

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
