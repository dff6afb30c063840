"""State graphs of flows and explorations (state_nodes, state_edges), the corrections a takeover offers (corrections) and each step's evidence: image difference, console errors, failed requests (step_evidence).

Revision 0002: new tables only; existing ones are untouched.
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('corrections',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('run_id', sa.String(length=64), nullable=False),
    sa.Column('project', sa.String(length=200), nullable=False),
    sa.Column('flow', sa.String(length=200), nullable=False),
    sa.Column('flow_file', sa.Text(), nullable=False),
    sa.Column('step_index', sa.Integer(), nullable=False),
    sa.Column('step_id', sa.String(length=200), nullable=False),
    sa.Column('step_title', sa.Text(), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('page', sa.JSON(), nullable=False),
    sa.Column('screenshot', sa.String(length=500), nullable=True),
    sa.Column('steps', sa.JSON(), nullable=False),
    sa.Column('crops', sa.JSON(), nullable=False),
    sa.Column('params', sa.JSON(), nullable=False),
    sa.Column('secrets', sa.JSON(), nullable=False),
    sa.Column('meaning', sa.String(length=16), nullable=False),
    sa.Column('continue_from', sa.Integer(), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('flow_digest', sa.String(length=64), nullable=False),
    sa.Column('diff', sa.Text(), nullable=False),
    sa.Column('review_reason', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('reviewed_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_corrections_flow_state', 'corrections', ['flow', 'state'], unique=False)
    op.create_table('state_edges',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('graph', sa.String(length=300), nullable=False),
    sa.Column('source', sa.String(length=64), nullable=False),
    sa.Column('target', sa.String(length=64), nullable=False),
    sa.Column('edge_key', sa.String(length=32), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('target_summary', sa.Text(), nullable=False),
    sa.Column('step_id', sa.String(length=200), nullable=False),
    sa.Column('count', sa.Integer(), nullable=False),
    sa.Column('verdicts', sa.JSON(), nullable=False),
    sa.Column('last_verdict', sa.String(length=32), nullable=False),
    sa.Column('last_run_id', sa.String(length=64), nullable=False),
    sa.Column('first_seen', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_seen', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('graph', 'source', 'target', 'edge_key', name='uq_state_edges_graph_edge')
    )
    op.create_index('ix_state_edges_graph', 'state_edges', ['graph'], unique=False)
    op.create_table('state_nodes',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('graph', sa.String(length=300), nullable=False),
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('structure', sa.String(length=64), nullable=False),
    sa.Column('dhash', sa.String(length=32), nullable=False),
    sa.Column('url', sa.Text(), nullable=False),
    sa.Column('title', sa.Text(), nullable=False),
    sa.Column('screenshot', sa.String(length=500), nullable=False),
    sa.Column('visits', sa.Integer(), nullable=False),
    sa.Column('runs', sa.Integer(), nullable=False),
    sa.Column('last_run_id', sa.String(length=64), nullable=False),
    sa.Column('first_seen', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_seen', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('graph', 'key', name='uq_state_nodes_graph_key')
    )
    op.create_index('ix_state_nodes_graph_structure', 'state_nodes', ['graph', 'structure'], unique=False)
    op.create_table('step_evidence',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('run_id', sa.String(length=64), nullable=False),
    sa.Column('step_index', sa.Integer(), nullable=False),
    sa.Column('attempt', sa.Integer(), nullable=False),
    sa.Column('action', sa.String(length=32), nullable=False),
    sa.Column('diff', sa.JSON(), nullable=True),
    sa.Column('console', sa.JSON(), nullable=False),
    sa.Column('failed_requests', sa.JSON(), nullable=False),
    sa.Column('assertions', sa.JSON(), nullable=False),
    sa.Column('phase_ms', sa.JSON(), nullable=False),
    sa.Column('active_ms', sa.Float(), nullable=False),
    sa.Column('wall_ms', sa.Float(), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_step_evidence_run_step', 'step_evidence', ['run_id', 'step_index'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_step_evidence_run_step', table_name='step_evidence')
    op.drop_table('step_evidence')
    op.drop_index('ix_state_nodes_graph_structure', table_name='state_nodes')
    op.drop_table('state_nodes')
    op.drop_index('ix_state_edges_graph', table_name='state_edges')
    op.drop_table('state_edges')
    op.drop_index('ix_corrections_flow_state', table_name='corrections')
    op.drop_table('corrections')
