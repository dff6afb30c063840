"""Every text cell of a SQLite database, read-only, for audits (``steadyhand audit``)."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

__all__ = ["text_cells"]


def text_cells(db: Path) -> Iterator[tuple[str, str, int, bytes]]:
    """Yield ``(table, column, row number (1-based), value as bytes)`` for every text or blob cell of ``db``.

    The file is opened read-only (``mode=ro``); nothing is written, no
    schema is assumed.  An unreadable or non-SQLite file yields nothing.
    """
    from sqlalchemy import column, create_engine, inspect, select, table
    from sqlalchemy.exc import SQLAlchemyError

    engine = create_engine(f"sqlite:///file:{db}?mode=ro&uri=true")
    try:
        insp = inspect(engine)
        with engine.connect() as conn:
            for name in insp.get_table_names():
                cols = [c["name"] for c in insp.get_columns(name)]
                t = table(name, *(column(c) for c in cols))
                for n, row in enumerate(conn.execute(select(t)), start=1):
                    for col, value in zip(cols, row, strict=True):
                        if isinstance(value, str):
                            yield name, col, n, value.encode("utf-8")
                        elif isinstance(value, bytes):
                            yield name, col, n, value
    except SQLAlchemyError:
        return
    finally:
        engine.dispose()
