"""Browser tests of the JupyterLab extension (a package, so its conftest has its own module name)."""
