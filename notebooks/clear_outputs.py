"""Clear outputs, execution counts and saved widget state from notebooks before committing.

    .venv/bin/python notebooks/clear_outputs.py notebooks/*.ipynb

``tests/test_notebooks.py`` checks the committed notebooks are clean. (``jupyter nbconvert
--clear-output`` keeps the widget state in the notebook metadata, hence this script.)
"""

from __future__ import annotations

import sys

import nbformat


def clear(path: str) -> bool:
    """Clear one notebook in place; return whether anything changed."""
    nb = nbformat.read(path, as_version=4)
    changed = nb.metadata.pop("widgets", None) is not None
    for cell in nb.cells:
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None):
            cell.outputs, cell.execution_count = [], None
            changed = True
    if changed:
        nbformat.write(nb, path)
    return changed


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(("cleared " if clear(p) else "clean   ") + p)
