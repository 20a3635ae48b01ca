"""The explorer on real cells: one budget, progressive display updated in place, interrupts,
the kernel channel, the static fallback view and the size of saved reports."""

from __future__ import annotations

import _thread
import io
import json
import threading
import time
from contextlib import redirect_stdout
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from IPython.testing.globalipapp import get_ipython
from IPython.utils.capture import capture_output

from fusionlab import parse
from fusionlab.support.budget import Budget
from fusionlab.ir.examples import fig3
from fusionlab.explore.jupyter import FuseResult
from fusionlab.explore.jupyter.channel import TARGET, ExplorerChannel
from fusionlab.explore.jupyter.display import ExplorerView
from fusionlab.explore.jupyter.session import normalise_timings
from fusionlab.explore.report import EXACT_ALGORITHMS, MIME_TYPE, validate_report
from fusionlab.explore.viz.fallback import fallback_html

from strategies import programs

ip = get_ipython()
ip.run_line_magic("load_ext", "fusionlab")

HEAT = """\
import numpy as np
n = {n}
u = np.zeros((n, n))
u[0, :] = 100.0
for it in range({steps}):
    u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                                           - 4 * u[1:-1, 1:-1])
total = float(u.sum())
"""


def plain(cell: str) -> dict[str, Any]:
    ns: dict[str, Any] = {}
    with redirect_stdout(io.StringIO()):
        exec(compile(cell, "<plain>", "exec"), ns)
    return ns


def fuse(line: str, cell: str) -> Any:
    with capture_output() as out:
        ip.run_cell_magic("fuse", line, cell)
    return out


def display_outputs(out: Any) -> list[Any]:
    """The outputs of the cell's one display, in order (the display, then its updates)."""
    got = [o for o in out.outputs if MIME_TYPE in o.data]
    ids = {(o.transient or {}).get("display_id") for o in got}
    assert len(ids) == 1, f"one display expected, got {ids}"
    return got


def magics() -> Any:
    return ip.magics_manager.registry["FuseMagics"]


# -- progressive display ------------------------------------------------------------------


def test_first_display_has_the_cheap_partitions_then_updates_in_place() -> None:
    out = fuse("--budget 4 --optimal-time 1 --algorithms singleton,linear,greedy,optimal --compare bohrium,robinson",
               HEAT.format(n=40, steps=3))
    outputs = display_outputs(out)
    first, last = outputs[0].data[MIME_TYPE], outputs[-1].data[MIME_TYPE]
    assert not outputs[0].update and all(o.update for o in outputs[1:]) and len(outputs) >= 2
    # the first display: program and graph known, the cheap algorithms under the chosen model done
    assert not first["status"]["complete"] and first["status"]["phase"] != "done"
    assert first["program"]["instructions"] and first["graph"]["dependencies"]
    status = {(p["algorithm"], p["cost_model"]): p["status"] for p in first["partitions"]}
    assert all(status[(a, "bohrium")] == "done" for a in ("singleton", "linear", "greedy"))
    assert ["optimal", "robinson"] in first["status"]["pending"]
    assert status[("optimal", "robinson")] == "pending"
    pending = next(p for p in first["partitions"] if p["status"] == "pending")
    assert pending["blocks"] == [] and pending["cost"] is None
    assert "computing:" in outputs[0].data["text/html"] and "pending" in outputs[0].data["text/html"]
    # the last update: everything known, the same id, the graph laid out in the fallback
    assert last["status"]["complete"] and last["status"]["phase"] == "done" and last["status"]["pending"] == []
    assert last["id"] == first["id"] == outputs[0].transient["display_id"]
    assert all(p["status"] in ("done", "budget") for p in last["partitions"])
    assert last["status"]["budget_seconds"] == 4.0
    for o in outputs:
        validate_report(o.data[MIME_TYPE])
        assert set(o.data) == {MIME_TYPE, "text/html", "text/plain"}
    np.testing.assert_array_equal(ip.user_ns["u"], plain(HEAT.format(n=40, steps=3))["u"])


def test_updates_are_throttled_and_the_last_is_always_sent() -> None:
    shown: list[tuple[dict, dict]] = []
    result = FuseResult.from_program(fig3(), algorithms=["singleton", "linear", "greedy", "optimal"],
                                     cost_models=["bohrium", "robinson"])
    view = ExplorerView(result, display=lambda b, **kw: shown.append((b, kw)), interval=3600.0)
    result.compute(Budget(30.0), first_only=True)
    view.show()
    result.compute(Budget(30.0), on_update=view.throttled)
    assert len(shown) == 1  # nothing within the interval
    view.update(force=True)
    assert [kw["update"] for _, kw in shown] == [False, True]
    assert shown[-1][0][MIME_TYPE]["status"]["complete"]
    # with no interval, every partition's start and end update the display
    shown.clear()
    again = FuseResult.from_program(fig3(), algorithms=["singleton", "greedy"], cost_models=["bohrium"])
    eager = ExplorerView(again, display=lambda b, **kw: shown.append((b, kw)), interval=0.0)
    eager.show()  # computes the whole (small) grid first
    again.set_batch(0)
    again._status.clear()  # a batch never computed: the work starts again, updating as it goes
    again._parts.clear()
    again.compute(Budget(30.0), on_update=eager.throttled)
    phases = [b[MIME_TYPE]["status"]["phase"] for b, kw in shown[1:]]
    assert "singleton under bohrium" in phases and "greedy under bohrium" in phases


def test_budget_cuts_the_searches_and_says_not_proven() -> None:
    out = fuse("--budget 1 --algorithms singleton,greedy,optimal,ilp --compare bohrium,robinson,max_locality",
               HEAT.format(n=64, steps=20))
    report = display_outputs(out)[-1].data[MIME_TYPE]
    validate_report(report)
    assert report["status"]["budget_seconds"] == 1.0 and report["status"]["complete"]
    assert len(report["program"]["instructions"]) > 250
    cut = [p for p in report["partitions"] if p["status"] == "budget"]
    assert cut, "a 1 s budget cannot prove every exact search on 300 instructions under three models"
    for p in report["partitions"]:
        if p["algorithm"] in EXACT_ALGORITHMS and p["cost"] is not None:
            assert p["proven_optimal"] == (p["status"] == "done")
        if p["status"] == "budget" and p["cost"] is None:
            assert p["blocks"] == [] and any("budget" in n for n in p["notes"])
    html = display_outputs(out)[-1].data["text/html"]
    assert "not proven" in html or "cut by the time budget" in html
    np.testing.assert_array_equal(ip.user_ns["u"], plain(HEAT.format(n=64, steps=20))["u"])


def test_interrupt_keeps_what_is_known_and_the_plain_numpy_values() -> None:
    cell = HEAT.format(n=50, steps=25)
    stop = threading.Event()
    fired: list[str] = []

    def interrupt_during_a_search() -> None:
        deadline = time.monotonic() + 120
        while not stop.is_set() and time.monotonic() < deadline:
            current = magics().current
            # the first exact search: much work is left after it, so the interrupt lands in the work
            if current is not None and current.phase == "optimal under bohrium":
                fired.append(current.phase)
                _thread.interrupt_main()  # what Kernel -> Interrupt does
                return
            time.sleep(0.005)

    ip.user_ns.pop("total", None)
    thread = threading.Thread(target=interrupt_during_a_search, daemon=True)
    thread.start()
    try:
        out = fuse("--budget 600 --optimal-time 300 --algorithms singleton,linear,greedy,optimal,ilp "
                   "--compare bohrium,robinson,max_contract,max_locality", cell)
    finally:
        stop.set()
        thread.join()
    assert fired, "the searches ended before the interrupt could be sent"
    report = display_outputs(out)[-1].data[MIME_TYPE]
    validate_report(report)
    assert report["status"]["interrupted"] and not report["status"]["complete"]
    assert report["status"]["phase"] not in ("done", "interrupted")  # the phase it stopped in
    statuses = {p["status"] for p in report["partitions"]}
    assert "interrupted" in statuses and "done" in statuses
    assert "interrupted" in out.stderr and "interrupted" in display_outputs(out)[-1].data["text/html"]
    # the cheap partitions shown first are kept
    greedy = next(p for p in report["partitions"] if (p["algorithm"], p["cost_model"]) == ("greedy", "bohrium"))
    assert greedy["status"] == "done" and greedy["blocks"]
    want = plain(cell)
    for k in ("u", "total", "n"):
        got = ip.user_ns[k]
        assert type(got) is type(want[k])
        np.testing.assert_array_equal(got, want[k])


# -- the kernel channel ----------------------------------------------------------------------


class FakeComm:
    """What the comm manager hands the target: on_msg to register, send to reply."""

    def __init__(self) -> None:
        self.handler: Any = None
        self.sent: list[dict[str, Any]] = []

    def on_msg(self, handler: Any) -> None:
        self.handler = handler

    def send(self, data: dict[str, Any]) -> None:
        self.sent.append(json.loads(json.dumps(data)))  # what goes over the wire is JSON


def test_channel_actions_update_the_display_and_reply() -> None:
    shown: list[tuple[dict, dict]] = []
    result = FuseResult.from_program(fig3(), algorithms=["singleton", "greedy", "optimal"],
                                     cost_models=["bohrium", "robinson"], trace_limit=10)
    view = ExplorerView(result, display=lambda b, **kw: shown.append((b, kw)))
    view.show()
    channel = ExplorerChannel()
    channel.add(view)
    comm = FakeComm()
    channel.open(comm, {"content": {"data": {"id": view.display_id}}})

    def send(**data: Any) -> dict[str, Any]:
        before = len(shown)
        comm.handler({"content": {"data": data}})
        reply = comm.sent[-1]
        assert reply["request"] == data.get("request")
        if data["action"] != "trace" and (reply["ok"] or "outcome" in reply):  # errors change nothing
            assert len(shown) == before + 1 and shown[-1][1]["update"]
            assert shown[-1][1]["display_id"] == view.display_id
            validate_report(shown[-1][0][MIME_TYPE])
        return reply

    reply = send(action="select", algorithm="singleton", cost_model="robinson", request=1)
    assert reply["ok"] and reply["selected"] == {"algorithm": "singleton", "cost_model": "robinson"}
    assert shown[-1][0][MIME_TYPE]["selected"] == reply["selected"]
    assert len(shown[-1][0][MIME_TYPE]["code"]) == 17  # the code of the new selection
    bad = send(action="merge", a=1, b=3, request="m1")  # COPY A and COPY D: different shapes
    assert not bad["ok"] and "forbidden" in bad["message"] and not bad["outcome"]["legal"]
    good = send(action="merge", a=1, b=5, request="m2")
    assert good["ok"] and good["selected"]["algorithm"] == "manual"
    manual = next(p for p in shown[-1][0][MIME_TYPE]["partitions"] if p["algorithm"] == "manual")
    assert len(manual["blocks"]) == 16 and manual["cost"] == good["outcome"]["cost_after"]
    two = next(k for k, b in enumerate(manual["blocks"], 1) if len(b) == 2)
    split = send(action="split", block=two, request="s")
    assert split["ok"] and split["outcome"]["cost_after"] == good["outcome"]["cost_before"]
    reset = send(action="reset")
    assert reset["ok"] and shown[-1][0][MIME_TYPE]["selected"]["algorithm"] != "manual"
    trace = send(action="trace", request="t")
    assert trace["ok"] and len(trace["trace"]["nodes"]) == trace["trace"]["explored"] > 10
    assert shown[-1][0][MIME_TYPE]["trace"]["truncated"]  # the report keeps 10 nodes only
    out_of_range = send(action="merge", a=1, b=99)
    assert not out_of_range["ok"] and "numbered 1 to" in out_of_range["message"]
    unknown = send(action="explode")
    assert not unknown["ok"] and "unknown action" in unknown["message"]
    gone = channel.handle({"id": "fusionlab-gone", "action": "select", "request": 5})
    assert gone == {"request": 5, "ok": False, "action": "select", "message": gone["message"]}
    assert "run the cell" in gone["message"]
    # a comm opened for an explorer the kernel does not know is closed at once, saying why
    closed: list[dict[str, Any]] = []
    stale = FakeComm()
    stale.close = lambda data=None: closed.append(data)  # type: ignore[attr-defined]
    channel.open(stale, {"content": {"data": {"id": "fusionlab-from-a-saved-notebook"}}})
    assert stale.handler is None and "run the cell again" in closed[0]["message"]


def test_channel_batch_and_time_on_a_captured_cell() -> None:
    ip.run_cell("import numpy as np\nsig = np.linspace(0, 1, 5000)")
    cell = "acc = sig.copy()\nfor _ in range(3):\n    acc = np.sqrt(acc * 0.5 + 1.0)\n    print(float(acc[0]))\n"
    fuse("--no-explorer --compare bohrium --algorithms singleton,greedy", cell)
    result = ip.user_ns["_fuse"]
    shown: list[tuple[dict, dict]] = []
    view = ExplorerView(result, display=lambda b, **kw: shown.append((b, kw)))
    view.show()
    channel = ExplorerChannel()
    channel.add(view)
    other = next(b for b in range(len(result.batches)) if b != result.batch)
    reply = channel.handle({"id": view.display_id, "action": "batch", "batch": other, "request": "b"})
    assert reply["ok"] and shown[-1][0][MIME_TYPE]["batch"] == other
    assert shown[-1][0][MIME_TYPE]["status"]["complete"]
    before = ip.user_ns["sig"].copy()
    timed = channel.handle({"id": view.display_id, "action": "time", "repeat": 1})
    assert timed["ok"] and [r["cost_model"] for r in timed["timings"]["records"]] == ["numpy", "bohrium"]
    assert shown[-1][0][MIME_TYPE]["timings"] == timed["timings"]
    assert "median" in shown[-1][0]["text/html"] and "Numba kernels" in shown[-1][0]["text/html"]
    np.testing.assert_array_equal(ip.user_ns["sig"], before)


def test_the_magic_registers_explorers_with_its_channel() -> None:
    out = fuse("--algorithms singleton,greedy --compare bohrium", "import numpy as np\nw = np.arange(9.0) * 2\n")
    report = display_outputs(out)[-1].data[MIME_TYPE]
    channel = magics().channel
    assert report["id"] in channel.views and TARGET == "fusionlab.explorer"
    reply = channel.handle({"id": report["id"], "action": "select", "algorithm": "singleton"})
    assert reply["ok"] and reply["selected"]["algorithm"] == "singleton"


# -- the fallback view, widgets opt-in, sizes -----------------------------------------------------


def test_no_widget_by_default_and_widgets_read_the_same_report() -> None:
    out = fuse("--algorithms singleton,greedy --compare bohrium", "import numpy as np\nv = np.ones(6) * 4\n")
    assert not any("application/vnd.jupyter.widget-view+json" in o.data for o in out.outputs)
    out = fuse("--widgets --algorithms singleton,greedy --compare bohrium", "import numpy as np\nv = np.ones(6) * 4\n")
    assert any("application/vnd.jupyter.widget-view+json" in o.data for o in out.outputs)
    assert len(display_outputs(out)) >= 1  # still one report display


def test_fallback_view_escapes_and_summarises_large_graphs() -> None:
    hostile = parse("ARRAY a float64[4]\nARRAY b float64[4]\nCOPY a, 1\n"
                    'OPAQUE b, a, name="<script>alert(1)</script>"\nSYNC b\n')
    result = FuseResult.from_program(hostile, algorithms=["singleton", "greedy"], cost_models=["bohrium"])
    html = result.bundle()["text/html"]
    assert "<script" not in html and "&lt;script&gt;" in html and "data:image/svg+xml;base64," in html
    # 300 instructions: block level or a summary in words, never a 4,000-edge layout
    out = fuse("--budget 3 --algorithms singleton,linear,greedy --compare bohrium", HEAT.format(n=64, steps=20))
    last = display_outputs(out)[-1].data
    assert "block level" in last["text/html"] or "WSP graph: " in last["text/html"]
    assert last[MIME_TYPE]["graph"]["edges_total"] > 1000


def test_saved_report_of_a_300_instruction_cell_is_under_1_mb() -> None:
    out = fuse("", HEAT.format(n=500, steps=20))
    outputs = display_outputs(out)
    report = outputs[-1].data[MIME_TYPE]
    validate_report(report)
    assert len(report["program"]["instructions"]) >= 300
    size = len(json.dumps(report))
    assert size < 1_000_000, f"the report is {size:,} bytes"
    saved = len(json.dumps(outputs[-1].data))  # with the fallback HTML and text beside it
    assert saved < 2_000_000, f"the saved output is {saved:,} bytes"
    trace = report["trace"]
    assert trace is None or len(trace["nodes"]) <= 200


def test_trace_limit_option_and_empty_programs() -> None:
    out = fuse("--trace-limit 5 --algorithms optimal,greedy --compare bohrium",
               "import numpy as np\nq = np.arange(8.0)\nr = np.sqrt(q) * 2 + q\ns = r - q\n")
    report = display_outputs(out)[-1].data[MIME_TYPE]
    assert report["trace"] is not None and len(report["trace"]["nodes"]) <= 5
    assert report["status"]["budget_seconds"] == 15.0  # the %fuse_config default
    # a cell with no array operation warns, and shows no "0 blocks, legal"
    out = fuse("", "x = 1 + 2\n")
    assert "warning" in out.stderr and "no array instruction" in out.stderr
    assert not [o for o in out.outputs if MIME_TYPE in o.data]
    empty = FuseResult.from_program(parse("ARRAY a float64[4]\n"), algorithms=["greedy"], cost_models=["bohrium"])
    report = empty.report()
    assert any(n["kind"] == "empty" for n in report["notices"])
    assert "empty program" in fallback_html(report) and "0 blocks, legal" not in fallback_html(report)
    assert "warning: the program is empty" in empty.text()


def test_timings_use_the_executors_fields_when_present_and_say_what_is_missing() -> None:
    with_quartiles = {"cost_model": "bohrium", "algorithm": "greedy", "median_seconds": 0.010,
                      "min_seconds": 0.008, "speedup": 2.0, "q1_seconds": 0.009, "q3_seconds": 0.0125,
                      "samples": [0.008, 0.009, 0.010, 0.0125, 0.013], "threads": 2, "busy": False}
    numpy_row = {"cost_model": "numpy", "algorithm": "eager", "median_seconds": 0.020, "min_seconds": 0.0199,
                 "speedup": 1.0, "threads": 0}
    old_style = {"cost_model": "robinson", "algorithm": "greedy", "median_seconds": 0.010, "min_seconds": 0.005,
                 "speedup": 2.0}
    t = normalise_timings([numpy_row, with_quartiles, old_style], 5, 0.0, 2)
    numpy_r, quart, old = t["records"]
    assert quart["spread"] == pytest.approx(0.35) and quart["samples"] == 5 and quart["threads"] == 2
    assert any("spread 35%" in w for w in quart["warnings"])
    assert numpy_r["threads"] == 1 and numpy_r["spread"] is None and numpy_r["warnings"] == []
    assert old["q1_seconds"] is None and old["spread"] is None and old["samples"] == 5
    assert any("minimum is 50% below the median" in w for w in old["warnings"])
    assert not t["busy"] and t["warnings"] == []
    busy = normalise_timings([old_style], 3, 1.4, 2)
    assert busy["busy"] and busy["records"][0]["busy"] and "1.40 cores busy" in busy["warnings"][0]
    from fusionlab.explore.viz.listing import timing_table_html

    html = timing_table_html(t, 3)
    assert "10 ms" in html and "35%" in html and "blocks (all 3 batches)" in html and "2 thread(s)" in html
    # the time model's prediction beside the measured median (issue 16); "—" where there is none
    predicted = normalise_timings([{**old_style, "predicted_seconds": 0.0123}], 3, 0.0, 2)
    assert predicted["records"][0]["predicted_seconds"] == 0.0123
    html = timing_table_html(predicted, 1)
    assert "time model predicted" in html and "12.3 ms" in html


def test_channel_over_a_real_kernel() -> None:
    """The comm target answers a front end's messages in a real ipykernel."""
    import uuid

    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        kc.execute_interactive("%load_ext fusionlab", timeout=120)
        ids: list[str] = []

        def keep_id(msg: dict[str, Any]) -> None:
            data = msg["content"].get("data", {})
            if MIME_TYPE in data:
                ids.append(data[MIME_TYPE]["id"])

        kc.execute_interactive("%%fuse --algorithms singleton,greedy --compare bohrium\n"
                               "import numpy as np\nx = np.arange(16.0)\ny = x * 2 + 1\nz = np.sqrt(y)\n",
                               timeout=120, output_hook=keep_id)
        assert ids, "the cell showed no report"
        comm_id = uuid.uuid4().hex
        kc.shell_channel.send(kc.session.msg("comm_open", {
            "comm_id": comm_id, "target_name": TARGET, "data": {"id": ids[-1]}}))
        kc.shell_channel.send(kc.session.msg("comm_msg", {
            "comm_id": comm_id, "data": {"action": "select", "algorithm": "singleton", "cost_model": "bohrium",
                                         "request": "r1"}}))
        reply, update = None, None
        deadline = time.monotonic() + 60
        while (reply is None or update is None) and time.monotonic() < deadline:
            msg = kc.get_iopub_msg(timeout=60)
            if msg["msg_type"] == "comm_msg" and msg["content"]["comm_id"] == comm_id:
                reply = msg["content"]["data"]
            elif msg["msg_type"] == "update_display_data":
                update = msg["content"]
        assert reply is not None and reply["ok"] and reply["request"] == "r1"
        assert reply["selected"] == {"algorithm": "singleton", "cost_model": "bohrium"}
        assert update is not None and update["transient"]["display_id"] == ids[-1]
        assert update["data"][MIME_TYPE]["selected"]["algorithm"] == "singleton"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(max_size=9), st.sampled_from([0.0, 0.001, 0.01, 0.05, None]))
def test_any_budget_gives_a_valid_report_of_legal_partitions(program: Any, seconds: float | None) -> None:
    """Whatever the budget cuts (the graph, an algorithm, the weights, the code), the report
    validates, says what was cut, and every partition it has covers the program legally."""
    from fusionlab.partition import evaluate

    result = FuseResult.from_program(program, algorithms=["singleton", "linear", "greedy", "optimal"],
                                     cost_models=["bohrium", "robinson"], budget_seconds=seconds)
    result.compute(Budget(seconds))
    report = result.report()
    validate_report(report)
    assert report["status"]["complete"] and report["status"]["pending"] == []
    for p in report["partitions"]:
        assert p["status"] in ("done", "budget")
        if not p["blocks"]:
            assert p["status"] == "budget" and p["cost"] is None
            continue
        assert sorted(n for b in p["blocks"] for n in b) == list(range(1, len(program) + 1))
        check = evaluate(program, [[n - 1 for n in b] for b in p["blocks"]], p["cost_model"])
        assert p["legal"] and check.legal and check.cost == pytest.approx(p["cost"])
        if p["algorithm"] == "optimal" and p["status"] == "done":
            assert p["proven_optimal"]
    if seconds is None:
        assert all(p["status"] == "done" for p in report["partitions"] if p["algorithm"] != "optimal")


def test_a_partition_running_at_the_first_display_time_is_left_pending(monkeypatch) -> None:
    # a greedy that takes until its budget runs out (a long program): the first display does
    # not wait for it, and it is computed in full afterwards, not kept as cut
    import fusionlab.explore.jupyter.session as session

    real = session.run_partition
    slow_once = {"greedy": 1}

    def slow(program, algorithm, model, *, budget, **kw):
        if slow_once.get(algorithm):
            slow_once[algorithm] -= 1
            while not budget.expired():
                time.sleep(0.001)
            return None, "budget"
        return real(program, algorithm, model, budget=budget, **kw)

    monkeypatch.setattr(session, "run_partition", slow)
    result = FuseResult.from_program(fig3(), algorithms=["singleton", "linear", "greedy"], cost_models=["bohrium"])
    budget = Budget(20.0)
    assert not result.compute(budget, first_only=True, first_by=time.perf_counter() + 0.2)
    assert budget.remaining() > 10.0  # stopped at the first display's time, not the cell's budget
    assert set(result.parts.entries) == {("singleton", "bohrium"), ("linear", "bohrium")}
    assert result.pending() == [("greedy", "bohrium")] and not result.first_display_ready()
    assert result.compute(budget)
    entry = result.parts.entries[("greedy", "bohrium")]
    assert entry["status"] == "done" and result.partitions[("greedy", "bohrium")].cost_elements == 38
