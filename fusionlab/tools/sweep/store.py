"""The sweep store: one Parquet file per row, written atomically, queried with DuckDB or pyarrow.

Layout::

    STORE/rows/<program>__<preset>__<algorithm>__<cost model>__<prepared>__<machine>__r<repeat>__<hash>.parquet

Every file holds one row with every column of :data:`SCHEMA` (the key columns included),
so ``read_parquet('STORE/rows/*.parquet')`` in DuckDB, ``pyarrow.dataset.dataset(...)``
or ``pandas.read_parquet`` read the whole store as one table. A file is written to a
temporary name beginning with a dot, then renamed (``os.replace``): a process killed while
writing leaves at most a dot-file that no reader looks at, never half a row, and rows
already stored are never rewritten. The file name is derived from the row's key, so
whether a row is stored is one ``stat``.

Examples
--------
>>> import tempfile
>>> store = Store(tempfile.mkdtemp())
>>> key = ("fig3", "tiny", "greedy", "bohrium", True, "host1", 0)
>>> store.has(key)
False
>>> _ = store.write({"program": "fig3", "preset": "tiny", "algorithm": "greedy",
...                  "cost_model": "bohrium", "prepared": True, "machine": "host1", "repeat": 0, "cost": 304.0})
>>> store.has(key), len(store)
(True, 1)
>>> store.query("SELECT program, machine, cost FROM rows")
[('fig3', 'host1', 304.0)]
"""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from pathlib import Path
from typing import Any, Iterator, Sequence

__all__ = ["Store", "SCHEMA_FIELDS", "KEY", "schema"]

#: The columns that identify a row.
KEY: tuple[str, ...] = ("program", "preset", "algorithm", "cost_model", "prepared", "machine", "repeat")

#: Every column, in order, with its Arrow type name (fixed, so that files written by
#: different workers and versions read as one table even where a value is missing).
SCHEMA_FIELDS: tuple[tuple[str, str], ...] = (
    ("program", "string"), ("preset", "string"), ("algorithm", "string"), ("cost_model", "string"),
    ("prepared", "bool"), ("machine", "string"), ("repeat", "int64"),
    ("program_kind", "string"), ("seed", "int64"), ("sweep", "string"), ("task_id", "string"),
    ("batches", "int64"), ("distinct_batches", "int64"), ("instructions", "int64"),
    ("cost", "float64"), ("cost_elements", "int64"), ("blocks", "int64"), ("kernels", "int64"),
    ("legal", "bool"), ("proven_optimal", "bool"), ("partition_seconds", "float64"),
    ("partition_hostname", "string"),
    ("timed", "bool"), ("numpy_seconds", "float64"), ("numpy_min_seconds", "float64"),
    ("fused_seconds", "float64"), ("fused_min_seconds", "float64"), ("compile_seconds", "float64"),
    ("speedup", "float64"), ("speedup_low", "float64"), ("speedup_high", "float64"),
    ("not_comparable", "string"), ("draws", "string"), ("compiled_kernels", "int64"), ("fallbacks", "int64"),
    ("max_abs_error", "float64"), ("driver", "string"), ("timing_runs", "int64"),
    ("timing_started", "float64"), ("timing_finished", "float64"), ("worker", "string"),
    ("error", "string"),
    ("hostname", "string"), ("cpu_model", "string"), ("cores", "int64"), ("platform", "string"),
    ("python_version", "string"), ("numpy_version", "string"), ("numba_version", "string"),
    ("numba_threads", "int64"), ("fusionlab_version", "string"), ("time_calibration", "string"),
    ("finished_at", "string"),
)


def schema() -> Any:
    """The store's :class:`pyarrow.Schema`.

    >>> schema().field("cost").type
    DataType(double)
    """
    import pyarrow as pa

    types = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_()}
    return pa.schema([(name, types[t]) for name, t in SCHEMA_FIELDS])


def _slug(value: object) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(value)).strip("-.")[:48] or "_"


class Store:
    """A folder of rows; see the module's documentation for the layout.

    Parameters
    ----------
    path
        The store's folder (created on the first write).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.rows_dir = self.path / "rows"

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r}: {len(self)} rows)"

    def file_for(self, key: Sequence[Any]) -> Path:
        """Where the row of ``key`` (the :data:`KEY` values, in order) is stored."""
        if len(key) != len(KEY):
            raise ValueError(f"a row key has {len(KEY)} parts ({', '.join(KEY)}), got {len(key)}")
        digest = hashlib.sha1(repr(tuple(key)).encode()).hexdigest()[:10]
        stem = "__".join(_slug(k) for k in key[:-1]) + f"__r{key[-1]}__{digest}"
        return self.rows_dir / f"{stem}.parquet"

    def has(self, key: Sequence[Any]) -> bool:
        """Whether the row of ``key`` is stored."""
        return self.file_for(key).exists()

    def read(self, key: Sequence[Any]) -> dict[str, Any]:
        """The stored row of ``key`` (``KeyError`` when it is not stored)."""
        import pyarrow.parquet as pq

        path = self.file_for(key)
        if not path.exists():
            raise KeyError(f"no row {tuple(key)} in {self.path}")
        return pq.read_table(path, schema=schema()).to_pylist()[0]

    def write(self, row: dict[str, Any]) -> Path:
        """Store one row atomically (a temporary dot-file, flushed, then renamed); returns its path.

        Columns not in :data:`SCHEMA_FIELDS` are refused: the schema is the store's contract.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        unknown = sorted(set(row) - {name for name, _ in SCHEMA_FIELDS})
        if unknown:
            raise ValueError(f"columns {unknown} are not in the store's schema (fusionlab.tools.sweep.store.SCHEMA_FIELDS)")
        final = self.file_for([row[k] for k in KEY])
        self.rows_dir.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist([{name: row.get(name) for name, _ in SCHEMA_FIELDS}], schema=schema())
        tmp = self.rows_dir / f".{final.stem}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
        try:
            with open(tmp, "wb") as fh:
                pq.write_table(table, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, final)
        finally:
            if tmp.exists():
                tmp.unlink()
        return final

    def files(self) -> list[Path]:
        """The stored rows' files (temporary dot-files excluded), sorted."""
        if not self.rows_dir.is_dir():
            return []
        return sorted(p for p in self.rows_dir.glob("*.parquet") if not p.name.startswith("."))

    def __len__(self) -> int:
        return len(self.files())

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows())

    @property
    def glob(self) -> str:
        """The pattern DuckDB's ``read_parquet`` takes to read every row."""
        return str(self.rows_dir / "*.parquet")

    def table(self) -> Any:
        """Every row as one :class:`pyarrow.Table` (an empty one when nothing is stored)."""
        import pyarrow.dataset as ds

        files = self.files()
        if not files:
            return schema().empty_table()
        return ds.dataset([str(f) for f in files], format="parquet", schema=schema()).to_table()

    def rows(self) -> list[dict[str, Any]]:
        """Every row as a dictionary, sorted by key."""
        return sorted(self.table().to_pylist(), key=lambda r: tuple(str(r[k]) for k in KEY))

    def connect(self) -> Any:
        """A DuckDB connection with the store as the view ``rows``.

        >>> import tempfile
        >>> Store(tempfile.mkdtemp()).connect().sql("SELECT count(*) FROM rows").fetchall()
        [(0,)]
        """
        import duckdb

        con = duckdb.connect()
        if self.files():
            escaped = self.glob.replace("'", "''")
            con.execute(f"CREATE VIEW rows AS SELECT * FROM read_parquet('{escaped}', union_by_name = true)")
        else:
            # an empty store still answers queries, with the right columns
            con.register("empty_rows", self.table())
            con.execute("CREATE VIEW rows AS SELECT * FROM empty_rows")
        return con

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        """Run SQL over the view ``rows`` with DuckDB; the result's rows as tuples."""
        return self.connect().sql(sql).fetchall()
