"""The number of steps in the flow file as each run ran it (runs.steps_total), so that every list counts a run's
steps one way: steps passed / steps in the flow.

Revision 0004: one nullable column; runs stored before it have none (their lists count the steps they ran).
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("steps_total", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "steps_total")
