"""A real JupyterLab server and Debian's Chromium driven by Playwright, for the extension's tests.

The server runs on 127.0.0.1 on a free port with a random token, from a temporary root
folder holding the notebooks under test, with its own config, settings and workspace
folders (so nothing of the user's JupyterLab leaks in). Its page config exposes the
application object to the page (``window.jupyterapp``, as galata does) so the tests run
JupyterLab commands rather than clicking menus, and says whether opening a notebook starts
its kernel: the tests switch that off to show that a saved notebook renders with none.
(Starting a kernel later by hand is no substitute for the live run: the ipywidgets manager
then fails to open its comms.)
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("FUSIONLAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
OUTPUT = Path(__file__).parent / "output"
SERVER_START_TIMEOUT = 90


def _need_browser() -> None:
    # The browser tests are part of every test run: a missing browser is a set-up error to
    # fix, not a reason to pass quietly.
    try:
        import playwright  # noqa: F401
    except ImportError:
        pytest.fail("playwright is not installed: run `make test` (it installs the test extras), "
                    "or `.venv/bin/pip install -e '.[test]'`")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make test` (it installs Debian's chromium), "
                    "or `apt-get install -y chromium`, or set FUSIONLAB_CHROMIUM to a Chromium binary")


def _die_with_parent() -> None:
    """In the server's process: get SIGTERM when the test process dies, however it dies (Linux)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """A running ``jupyter lab`` (or, with ``app="notebook"``, Notebook 7): its URL, token
    and root folder."""

    def __init__(self, root: Path, home: Path, app: str = "jupyterlab",
                 disabled: tuple[str, ...] = ()) -> None:
        self.disabled = disabled
        self.root = root
        self.port = _free_port()
        self.token = secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        config = home / "config"
        (config / "labconfig").mkdir(parents=True)
        self.page_config = config / "labconfig" / "page_config.json"
        self.set_kernel_autostart(True)
        env = dict(os.environ)
        env.update({
            "JUPYTER_CONFIG_DIR": str(config),
            "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "IPYTHONDIR": str(home / "ipython"),
            "PYTHONUNBUFFERED": "1",
        })
        cmd = [sys.executable, "-m", app, "--no-browser",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
               f"--IdentityProvider.token={self.token}", "--ServerApp.allow_root=True",
               f"--ServerApp.root_dir={root}"]
        if app == "jupyterlab":
            cmd += ["--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.news_url=None"]
        self.log_path = home / "server.log"
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True, preexec_fn=_die_with_parent)
        self._wait()

    def set_kernel_autostart(self, on: bool) -> None:
        """Whether opening a notebook starts its kernel, from the next page load on (the
        server reads its page config for every page)."""
        self.page_config.write_text(json.dumps({
            "exposeAppInBrowser": True,
            "notebookStartsKernel": on,
            "disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True,
                                   **{name: True for name in self.disabled}},
        }))

    def _wait(self) -> None:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited:\n{self.log()}")
            try:
                self.api("GET", "status")
                return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"jupyter lab did not answer in {SERVER_START_TIMEOUT} s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:]

    def api(self, method: str, path: str, body: object = None) -> object:
        req = urllib.request.Request(f"{self.base}/api/{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"},
                                     data=None if body is None else json.dumps(body).encode())
        with urllib.request.urlopen(req, timeout=10) as r:
            text = r.read()
        return json.loads(text) if text else None

    def url(self, path: str = "lab") -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base}/{path}{sep}token={self.token}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=15)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=5)
        self._log.close()


@pytest.fixture(scope="session")
def lab_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("lab-root")


@pytest.fixture(scope="session")
def lab(lab_root, tmp_path_factory):
    _need_browser()
    server = LabServer(lab_root, tmp_path_factory.mktemp("lab-home"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser, lab):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    p = context.new_page()
    errors: list[str] = []
    # uncaught errors raised in the extension's code (JupyterLab's own are not ours to judge)
    p.on("pageerror", lambda e: "fusionlab-explorer" in f"{e.stack}" and errors.append(f"{e}\n{e.stack}"))
    p.page_errors = errors  # type: ignore[attr-defined]
    yield p
    context.close()


@pytest.fixture(scope="session")
def output_dir() -> Path:
    OUTPUT.mkdir(exist_ok=True)
    return OUTPUT

