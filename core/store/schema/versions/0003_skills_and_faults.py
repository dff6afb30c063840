"""Skills, their uses and failure records (skills, skill_uses, failure_records), what the model cost per run (model_usage), what a resumed run resumed and the writing actions under way (run_resumes, step_acts), and the kind and plain sentence of each escalation.

Revision 0003: new tables only; existing ones are untouched.
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('failure_records',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('project', sa.String(length=200), nullable=False),
    sa.Column('run_id', sa.String(length=64), nullable=False),
    sa.Column('flow', sa.String(length=200), nullable=False),
    sa.Column('step_index', sa.Integer(), nullable=False),
    sa.Column('step_id', sa.String(length=200), nullable=False),
    sa.Column('error_type', sa.String(length=32), nullable=False),
    sa.Column('message', sa.Text(), nullable=False),
    sa.Column('state', sa.String(length=64), nullable=False),
    sa.Column('url', sa.Text(), nullable=False),
    sa.Column('trajectory', sa.JSON(), nullable=False),
    sa.Column('page', sa.JSON(), nullable=False),
    sa.Column('screenshots', sa.JSON(), nullable=False),
    sa.Column('attribution', sa.JSON(), nullable=False),
    sa.Column('outcome', sa.String(length=16), nullable=False),
    sa.Column('correction_id', sa.Integer(), nullable=False),
    sa.Column('skill_id', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_failure_records_run', 'failure_records', ['run_id'], unique=False)
    op.create_table('model_usage',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('run_id', sa.String(length=64), nullable=False),
    sa.Column('flow', sa.String(length=200), nullable=False),
    sa.Column('model', sa.String(length=200), nullable=False),
    sa.Column('usage', sa.JSON(), nullable=False),
    sa.Column('judged_share', sa.Float(), nullable=False),
    sa.Column('alarm', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_model_usage_run', 'model_usage', ['run_id'], unique=False)
    op.create_table('skill_uses',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('skill_id', sa.String(length=64), nullable=False),
    sa.Column('run_id', sa.String(length=64), nullable=False),
    sa.Column('flow', sa.String(length=200), nullable=False),
    sa.Column('step_index', sa.Integer(), nullable=False),
    sa.Column('step_id', sa.String(length=200), nullable=False),
    sa.Column('outcome', sa.String(length=16), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('ms', sa.Float(), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_skill_uses_run', 'skill_uses', ['run_id'], unique=False)
    op.create_index('ix_skill_uses_skill', 'skill_uses', ['skill_id'], unique=False)
    op.create_table('skills',
    sa.Column('id', sa.String(length=64), nullable=False),
    sa.Column('product', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('quality', sa.Float(), nullable=False),
    sa.Column('successes', sa.Integer(), nullable=False),
    sa.Column('failures', sa.Integer(), nullable=False),
    sa.Column('data', sa.JSON(), nullable=False),
    sa.Column('review_reason', sa.Text(), nullable=False),
    sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('reviewed_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_skills_product_state', 'skills', ['product', 'state'], unique=False)
    op.create_table('run_resumes',
    sa.Column('run_id', sa.String(length=64), nullable=False),
    sa.Column('resumed_from', sa.String(length=64), nullable=False),
    sa.Column('plan', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['resumed_from'], ['runs.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('run_id')
    )
    op.create_index('ix_run_resumes_from', 'run_resumes', ['resumed_from'], unique=False)
    op.create_table('step_acts',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('run_id', sa.String(length=64), nullable=False),
    sa.Column('step_index', sa.Integer(), nullable=False),
    sa.Column('attempt', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_step_acts_run_step', 'step_acts', ['run_id', 'step_index'], unique=False)
    op.add_column('escalations', sa.Column('kind', sa.String(length=32), server_default='', nullable=False))
    op.add_column('escalations', sa.Column('plain', sa.Text(), server_default='', nullable=False))


def downgrade() -> None:
    op.drop_column('escalations', 'plain')
    op.drop_column('escalations', 'kind')
    op.drop_index('ix_step_acts_run_step', table_name='step_acts')
    op.drop_table('step_acts')
    op.drop_index('ix_run_resumes_from', table_name='run_resumes')
    op.drop_table('run_resumes')
    op.drop_index('ix_skills_product_state', table_name='skills')
    op.drop_table('skills')
    op.drop_index('ix_skill_uses_skill', table_name='skill_uses')
    op.drop_index('ix_skill_uses_run', table_name='skill_uses')
    op.drop_table('skill_uses')
    op.drop_index('ix_model_usage_run', table_name='model_usage')
    op.drop_table('model_usage')
    op.drop_index('ix_failure_records_run', table_name='failure_records')
    op.drop_table('failure_records')
