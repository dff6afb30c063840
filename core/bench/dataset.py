"""Benchmark datasets given as a folder or as a tar archive (``.tar.xz``, ``.tar.gz``)."""
from __future__ import annotations

import contextlib
import tarfile
import tempfile
from pathlib import Path
from typing import Iterator

__all__ = ["open_dataset", "DatasetError"]


class DatasetError(ValueError):
    """The dataset path is missing or not a folder / tar archive of the expected format."""


@contextlib.contextmanager
def open_dataset(path: Path) -> Iterator[Path]:
    """Yield a folder holding the dataset's app folders.

    A tar archive is extracted into a temporary folder (removed afterwards);
    when the archive holds a single top folder with app folders inside, that
    folder is yielded.

    Raises
    ------
    DatasetError
        When ``path`` does not exist or is neither a folder nor a tar archive.
    """
    path = Path(path)
    if path.is_dir():
        yield path
        return
    if not path.is_file():
        raise DatasetError(f"{path}: dataset not found (expected a folder or a .tar.xz archive)")
    if not tarfile.is_tarfile(path):
        raise DatasetError(f"{path}: not a folder and not a tar archive")
    with tempfile.TemporaryDirectory(prefix="steadyhand-dataset-") as tmp:
        with tarfile.open(path) as tar:
            tar.extractall(tmp, filter="data")
        root = Path(tmp)
        dirs = [d for d in root.iterdir() if d.is_dir()]
        if len(dirs) == 1 and not any(root.glob("*/*.properties")):
            root = dirs[0]
        yield root
