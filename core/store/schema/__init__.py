"""Alembic script directory of the store's schema: ``env.py`` and the revisions under ``versions/``.

Revision ids are the store's schema versions written with four digits
(``0001``, ``0002``...): :data:`core.store.models.SCHEMA_VERSION` is the head's
number.  :func:`core.store.migrations.migrate` runs them on the store's own
connection; nothing here is run by hand.  To change the schema: change the
models, add ``versions/NNNN_what.py`` (``revision = "NNNN"``,
``down_revision`` the previous one, portable ``op`` calls; SQLite needs
``op.batch_alter_table`` to alter a table), and bump ``SCHEMA_VERSION`` to
NNNN.  ``tests/core/store/test_store_alembic.py`` fails while the models and
the revisions disagree.
"""
