"""Alembic environment of the store: migrations run on the connection (and inside the transaction) given in
``config.attributes["connection"]`` by :func:`core.store.migrations.migrate`; there is no ini file and no URL."""
from __future__ import annotations

from alembic import context

from core.store.models import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True,
                  compare_type=True)
with context.begin_transaction():  # inside the caller's transaction: a failed revision rolls everything back
    context.run_migrations()
