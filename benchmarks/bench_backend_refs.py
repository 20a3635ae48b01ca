# ruff: noqa: F841  (numexpr reads the locals its expression strings name)
"""The backend benchmark's points of comparison, one set per workload (used by bench_backend.py).

For each of the eight workloads there are:

- ``numpy``: the workload's own NumPy code (``fusionlab.workloads.paper``), with its random
  draws replaced by arrays drawn beforehand — fusionlab replays the recorded draws too, so
  every variant does the same work;
- ``numba``: that same function under ``numba.njit(parallel=True)`` — Numba's own fusion of
  NumPy code, with nothing rewritten (the NumPy functions are written so Numba accepts them);
- ``numexpr``: the same arithmetic as ``numexpr.evaluate`` expressions (None where not
  expressible; every workload here is);
- ``loop``: a hand-written fused ``prange`` loop: what a person writes who knows which
  temporaries are dead. It materialises only what the algorithm needs (a Jacobi sweep's new
  values, Shallow Water's half-step arrays), not what the Python program happens to keep
  alive between iterations (Leibniz's ``k``, Monte Carlo's ``x`` and ``y``).

The corpus rows (``fusionlab.workloads.corpus``, below) follow the same pattern with
``numpy``, Numba on it and ``loop``, and no numexpr variant.

Every variant returns the workload's scalar (a price, pi, a change), which the benchmark
compares against NumPy's. ``python benchmarks/bench_backend_refs.py`` checks them all at the
tiny size, as does ``tests/test_bench_refs.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numba
import numpy as np
from numba import prange

try:  # optional: `pip install -e '.[bench]'`
    import numexpr as ne
except ImportError:  # pragma: no cover - the benchmark reports the missing rows
    ne = None


# --- Black-Scholes -------------------------------------------------------------------------


def bs_numpy(s0, iterations):  # type: ignore[no-untyped-def]
    s = s0.copy()
    n = s.shape[0]
    strike, rate, volatility = 20.0, 0.08, 0.30
    t = 1.0 / 365.0

    def cnd(x):  # type: ignore[no-untyped-def]
        a1, a2, a3, a4, a5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
        ax = np.abs(x)
        k = 1.0 / (1.0 + 0.2316419 * ax)
        poly = a1 * k + a2 * k**2 + a3 * k**3 + a4 * k**4 + a5 * k**5
        w = 1.0 - 1.0 / np.sqrt(2.0 * np.pi) * np.exp(-ax * ax / 2.0) * poly
        mask = x < 0
        return w * (1 - mask) + (1.0 - w) * mask

    total = 0.0
    for _ in range(iterations):
        d1 = (np.log(s / strike) + (rate + volatility * volatility / 2.0) * t) / (volatility * np.sqrt(t))
        d2 = d1 - volatility * np.sqrt(t)
        call = s * cnd(d1) - strike * np.exp(-rate * t) * cnd(d2)
        total += np.sum(call) / n
        t += 1.0 / 365.0
    return total / iterations


def bs_numexpr(s0, iterations):  # type: ignore[no-untyped-def]
    s = s0.copy()
    n = s.shape[0]
    strike, rate, volatility = 20.0, 0.08, 0.30
    t = 1.0 / 365.0

    def cnd(x):  # type: ignore[no-untyped-def]
        k = ne.evaluate("1.0 / (1.0 + 0.2316419 * abs(x))")
        w = ne.evaluate("1.0 - 0.3989422804014327 * exp(-x * x / 2.0) * (0.31938153 * k - 0.356563782 * k**2 + 1.781477937 * k**3"
                        " - 1.821255978 * k**4 + 1.330274429 * k**5)")
        return ne.evaluate("where(x < 0, 1.0 - w, w)")

    total = 0.0
    for _ in range(iterations):
        c1, c2 = (rate + volatility * volatility / 2.0) * t, volatility * math.sqrt(t)
        d1 = ne.evaluate("(log(s / strike) + c1) / c2")
        d2 = ne.evaluate("d1 - c2")
        e = strike * math.exp(-rate * t)
        n1, n2 = cnd(d1), cnd(d2)
        total += float(ne.evaluate("sum(s * n1 - e * n2)")) / n
        t += 1.0 / 365.0
    return total / iterations


@numba.njit(inline="always", cache=True)
def _cnd(x):  # type: ignore[no-untyped-def]
    ax = abs(x)
    k = 1.0 / (1.0 + 0.2316419 * ax)
    poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))))
    w = 1.0 - 0.3989422804014327 * math.exp(-ax * ax / 2.0) * poly
    return 1.0 - w if x < 0 else w


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def bs_loop(s0, iterations):  # type: ignore[no-untyped-def]
    n = s0.shape[0]
    strike, rate, volatility = 20.0, 0.08, 0.30
    call = np.empty(n)
    t = 1.0 / 365.0
    total = 0.0
    for _ in range(iterations):
        c1, c2 = (rate + volatility * volatility / 2.0) * t, volatility * math.sqrt(t)
        e = strike * math.exp(-rate * t)
        acc = 0.0
        for i in prange(n):
            s = s0[i]
            d1 = (math.log(s / strike) + c1) / c2
            c = s * _cnd(d1) - e * _cnd(d1 - c2)
            call[i] = c
            acc += c
        total += acc / n
        t += 1.0 / 365.0
    return total / iterations


# --- Heat equation (Jacobi) ----------------------------------------------------------------


def heat_numpy(n, iterations):  # type: ignore[no-untyped-def]
    grid = np.zeros((n + 2, n + 2))
    grid[:, 0] = -273.15
    grid[:, -1] = -273.15
    grid[0, :] = 40.0
    grid[-1, :] = -273.15
    center = grid[1:-1, 1:-1]
    north = grid[:-2, 1:-1]
    south = grid[2:, 1:-1]
    east = grid[1:-1, 2:]
    west = grid[1:-1, :-2]
    delta = 0.0
    for _ in range(iterations):
        work = 0.2 * (center + north + east + west + south)
        diff = np.sum(np.abs(work - center))
        center[:] = work
        delta = diff
    return delta


def heat_numexpr(n, iterations):  # type: ignore[no-untyped-def]
    grid = np.zeros((n + 2, n + 2))
    grid[:, 0] = -273.15
    grid[:, -1] = -273.15
    grid[0, :] = 40.0
    grid[-1, :] = -273.15
    c, no, so, ea, we = grid[1:-1, 1:-1], grid[:-2, 1:-1], grid[2:, 1:-1], grid[1:-1, 2:], grid[1:-1, :-2]
    delta = 0.0
    for _ in range(iterations):
        work = ne.evaluate("0.2 * (c + no + ea + we + so)")
        delta = float(ne.evaluate("sum(abs(work - c))"))
        c[:] = work
    return delta


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def heat_loop(n, iterations):  # type: ignore[no-untyped-def]
    grid = np.zeros((n + 2, n + 2))
    grid[:, 0] = -273.15
    grid[:, -1] = -273.15
    grid[0, :] = 40.0
    grid[-1, :] = -273.15
    work = np.empty((n, n))
    delta = 0.0
    for _ in range(iterations):
        d = 0.0
        for i in prange(n):
            up, mid, down, out = grid[i], grid[i + 1], grid[i + 2], work[i]
            s = 0.0
            for j in range(n):
                w = 0.2 * (mid[j + 1] + up[j + 1] + mid[j + 2] + mid[j] + down[j + 1])
                out[j] = w
                s += abs(w - mid[j + 1])
            d += s
        for i in prange(n):
            mid, src = grid[i + 1], work[i]
            for j in range(n):
                mid[j + 1] = src[j]
        delta = d
    return delta


# --- Leibniz pi ----------------------------------------------------------------------------


def leibniz_numpy(n, iterations):  # type: ignore[no-untyped-def]
    total = 0.0
    for i in range(iterations):
        k = np.arange(float(i * n), float((i + 1) * n))
        total += np.sum(1.0 / (4.0 * k + 1.0) - 1.0 / (4.0 * k + 3.0))
    return 4.0 * total


def leibniz_numexpr(n, iterations):  # type: ignore[no-untyped-def]
    total = 0.0
    for i in range(iterations):
        k = np.arange(float(i * n), float((i + 1) * n))
        total += float(ne.evaluate("sum(1.0 / (4.0 * k + 1.0) - 1.0 / (4.0 * k + 3.0))"))
    return 4.0 * total


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def leibniz_loop(n, iterations):  # type: ignore[no-untyped-def]
    total = 0.0
    for i in range(iterations):
        s = 0.0
        for j in prange(n):
            k = float(i * n + j)
            s += 1.0 / (4.0 * k + 1.0) - 1.0 / (4.0 * k + 3.0)
        total += s
    return 4.0 * total


# --- Rosenbrock ----------------------------------------------------------------------------


def rosen_numpy(x0, iterations):  # type: ignore[no-untyped-def]
    x = x0.copy()
    value = 0.0
    for _ in range(iterations):
        value = np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    return value


def rosen_numexpr(x0, iterations):  # type: ignore[no-untyped-def]
    x = x0.copy()
    a, b = x[:-1], x[1:]
    value = 0.0
    for _ in range(iterations):
        value = float(ne.evaluate("sum(100.0 * (b - a**2)**2 + (1.0 - a)**2)"))
    return value


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def rosen_loop(x, iterations):  # type: ignore[no-untyped-def]
    value = 0.0
    for _ in range(iterations):
        s = 0.0
        for i in prange(x.shape[0] - 1):
            a = x[i + 1] - x[i] * x[i]
            b = 1.0 - x[i]
            s += 100.0 * a * a + b * b
        value = s
    return value


# --- Monte Carlo pi ------------------------------------------------------------------------


def mc_numpy(xs, ys):  # type: ignore[no-untyped-def]
    iterations, n = xs.shape
    total = 0.0
    for it in range(iterations):
        x = xs[it]
        y = ys[it]
        total += 4.0 * np.sum(np.sqrt(x * x + y * y) <= 1.0) / n
    return total / iterations


def mc_numexpr(xs, ys):  # type: ignore[no-untyped-def]
    iterations, n = xs.shape
    total = 0.0
    for it in range(iterations):
        x, y = xs[it], ys[it]
        total += 4.0 * float(ne.evaluate("sum(where(sqrt(x * x + y * y) <= 1.0, 1, 0))")) / n
    return total / iterations


@numba.njit(parallel=True, cache=True)
def mc_loop(xs, ys):  # type: ignore[no-untyped-def]
    iterations, n = xs.shape
    total = 0.0
    for it in range(iterations):
        x, y = xs[it], ys[it]
        inside = 0
        for i in prange(n):
            if math.sqrt(x[i] * x[i] + y[i] * y[i]) <= 1.0:
                inside += 1
        total += 4.0 * inside / n
    return total / iterations


# --- Shallow water -------------------------------------------------------------------------


def sw_numpy(n, iterations):  # type: ignore[no-untyped-def]
    g, dt, dx, dy = 9.8, 0.02, 1.0, 1.0
    h = np.ones((n + 2, n + 2))
    u = np.zeros((n + 2, n + 2))
    v = np.zeros((n + 2, n + 2))
    lo = 1 + n // 4
    hi = lo + max(n // 8, 1)
    h[lo:hi, lo:hi] += 1.0
    volume = 0.0
    for _ in range(iterations):
        h[:, 0] = h[:, 1]
        u[:, 0] = u[:, 1]
        v[:, 0] = -v[:, 1]
        h[:, -1] = h[:, -2]
        u[:, -1] = u[:, -2]
        v[:, -1] = -v[:, -2]
        h[0, :] = h[1, :]
        u[0, :] = -u[1, :]
        v[0, :] = v[1, :]
        h[-1, :] = h[-2, :]
        u[-1, :] = -u[-2, :]
        v[-1, :] = v[-2, :]
        h_n, h_s = h[1:, 1:-1], h[:-1, 1:-1]
        u_n, u_s = u[1:, 1:-1], u[:-1, 1:-1]
        v_n, v_s = v[1:, 1:-1], v[:-1, 1:-1]
        hx = (h_n + h_s) / 2 - dt / (2 * dx) * (u_n - u_s)
        ux = (u_n + u_s) / 2 - dt / (2 * dx) * ((u_n**2 / h_n + g / 2 * h_n**2) - (u_s**2 / h_s + g / 2 * h_s**2))
        vx = (v_n + v_s) / 2 - dt / (2 * dx) * (u_n * v_n / h_n - u_s * v_s / h_s)
        h_e, h_w = h[1:-1, 1:], h[1:-1, :-1]
        u_e, u_w = u[1:-1, 1:], u[1:-1, :-1]
        v_e, v_w = v[1:-1, 1:], v[1:-1, :-1]
        hy = (h_e + h_w) / 2 - dt / (2 * dy) * (v_e - v_w)
        uy = (u_e + u_w) / 2 - dt / (2 * dy) * (v_e * u_e / h_e - v_w * u_w / h_w)
        vy = (v_e + v_w) / 2 - dt / (2 * dy) * ((v_e**2 / h_e + g / 2 * h_e**2) - (v_w**2 / h_w + g / 2 * h_w**2))
        h[1:-1, 1:-1] -= (dt / dx) * (ux[1:, :] - ux[:-1, :]) + (dt / dy) * (vy[:, 1:] - vy[:, :-1])
        u[1:-1, 1:-1] -= (dt / dx) * (
            (ux[1:, :] ** 2 / hx[1:, :] + g / 2 * hx[1:, :] ** 2) - (ux[:-1, :] ** 2 / hx[:-1, :] + g / 2 * hx[:-1, :] ** 2)
        ) + (dt / dy) * (vy[:, 1:] * uy[:, 1:] / hy[:, 1:] - vy[:, :-1] * uy[:, :-1] / hy[:, :-1])
        v[1:-1, 1:-1] -= (dt / dx) * (ux[1:, :] * vx[1:, :] / hx[1:, :] - ux[:-1, :] * vx[:-1, :] / hx[:-1, :]) + (
            dt / dy
        ) * ((vy[:, 1:] ** 2 / hy[:, 1:] + g / 2 * hy[:, 1:] ** 2) - (vy[:, :-1] ** 2 / hy[:, :-1] + g / 2 * hy[:, :-1] ** 2))
        volume = np.sum(h[1:-1, 1:-1])
    return volume


def _sw_boundaries(h, u, v):  # type: ignore[no-untyped-def]
    h[:, 0] = h[:, 1]
    u[:, 0] = u[:, 1]
    v[:, 0] = -v[:, 1]
    h[:, -1] = h[:, -2]
    u[:, -1] = u[:, -2]
    v[:, -1] = -v[:, -2]
    h[0, :] = h[1, :]
    u[0, :] = -u[1, :]
    v[0, :] = v[1, :]
    h[-1, :] = h[-2, :]
    u[-1, :] = -u[-2, :]
    v[-1, :] = v[-2, :]


def sw_numexpr(n, iterations):  # type: ignore[no-untyped-def]
    g, dt, dx, dy = 9.8, 0.02, 1.0, 1.0
    h = np.ones((n + 2, n + 2))
    u = np.zeros((n + 2, n + 2))
    v = np.zeros((n + 2, n + 2))
    lo = 1 + n // 4
    hi = lo + max(n // 8, 1)
    h[lo:hi, lo:hi] += 1.0
    cx, cy = dt / (2 * dx), dt / (2 * dy)
    ex, ey = dt / dx, dt / dy
    volume = 0.0
    for _ in range(iterations):
        _sw_boundaries(h, u, v)
        h_n, h_s, u_n, u_s, v_n, v_s = h[1:, 1:-1], h[:-1, 1:-1], u[1:, 1:-1], u[:-1, 1:-1], v[1:, 1:-1], v[:-1, 1:-1]
        hx = ne.evaluate("(h_n + h_s) / 2 - cx * (u_n - u_s)")
        ux = ne.evaluate("(u_n + u_s) / 2 - cx * ((u_n**2 / h_n + g / 2 * h_n**2) - (u_s**2 / h_s + g / 2 * h_s**2))")
        vx = ne.evaluate("(v_n + v_s) / 2 - cx * (u_n * v_n / h_n - u_s * v_s / h_s)")
        h_e, h_w, u_e, u_w, v_e, v_w = h[1:-1, 1:], h[1:-1, :-1], u[1:-1, 1:], u[1:-1, :-1], v[1:-1, 1:], v[1:-1, :-1]
        hy = ne.evaluate("(h_e + h_w) / 2 - cy * (v_e - v_w)")
        uy = ne.evaluate("(u_e + u_w) / 2 - cy * (v_e * u_e / h_e - v_w * u_w / h_w)")
        vy = ne.evaluate("(v_e + v_w) / 2 - cy * ((v_e**2 / h_e + g / 2 * h_e**2) - (v_w**2 / h_w + g / 2 * h_w**2))")
        ux1, ux0, hx1, hx0, vx1, vx0 = ux[1:, :], ux[:-1, :], hx[1:, :], hx[:-1, :], vx[1:, :], vx[:-1, :]
        vy1, vy0, hy1, hy0, uy1, uy0 = vy[:, 1:], vy[:, :-1], hy[:, 1:], hy[:, :-1], uy[:, 1:], uy[:, :-1]
        hc, uc, vc = h[1:-1, 1:-1], u[1:-1, 1:-1], v[1:-1, 1:-1]
        ne.evaluate("hc - (ex * (ux1 - ux0) + ey * (vy1 - vy0))", out=hc)
        ne.evaluate("uc - (ex * ((ux1**2 / hx1 + g / 2 * hx1**2) - (ux0**2 / hx0 + g / 2 * hx0**2))"
                    " + ey * (vy1 * uy1 / hy1 - vy0 * uy0 / hy0))", out=uc)
        ne.evaluate("vc - (ex * (ux1 * vx1 / hx1 - ux0 * vx0 / hx0)"
                    " + ey * ((vy1**2 / hy1 + g / 2 * hy1**2) - (vy0**2 / hy0 + g / 2 * hy0**2)))", out=vc)
        volume = float(ne.evaluate("sum(hc)"))
    return volume


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def sw_loop(n, iterations):  # type: ignore[no-untyped-def]
    g, dt, dx, dy = 9.8, 0.02, 1.0, 1.0
    h = np.ones((n + 2, n + 2))
    u = np.zeros((n + 2, n + 2))
    v = np.zeros((n + 2, n + 2))
    lo = 1 + n // 4
    hi = lo + max(n // 8, 1)
    h[lo:hi, lo:hi] += 1.0
    hx, ux, vx = np.empty((n + 1, n)), np.empty((n + 1, n)), np.empty((n + 1, n))
    hy, uy, vy = np.empty((n, n + 1)), np.empty((n, n + 1)), np.empty((n, n + 1))
    cx, cy, ex, ey = dt / (2 * dx), dt / (2 * dy), dt / dx, dt / dy
    volume = 0.0
    for _ in range(iterations):
        for i in range(n + 2):  # reflecting boundaries, in the program's order
            h[i, 0] = h[i, 1]
            u[i, 0] = u[i, 1]
            v[i, 0] = -v[i, 1]
            h[i, n + 1] = h[i, n]
            u[i, n + 1] = u[i, n]
            v[i, n + 1] = -v[i, n]
        for j in range(n + 2):
            h[0, j] = h[1, j]
            u[0, j] = -u[1, j]
            v[0, j] = v[1, j]
            h[n + 1, j] = h[n, j]
            u[n + 1, j] = -u[n, j]
            v[n + 1, j] = v[n, j]
        for i in prange(n + 1):  # both half steps, row by row
            for j in range(n):
                hn, hs, un, us, vn, vs = h[i + 1, j + 1], h[i, j + 1], u[i + 1, j + 1], u[i, j + 1], v[i + 1, j + 1], v[i, j + 1]
                hx[i, j] = (hn + hs) / 2 - cx * (un - us)
                ux[i, j] = (un + us) / 2 - cx * ((un**2 / hn + g / 2 * hn**2) - (us**2 / hs + g / 2 * hs**2))
                vx[i, j] = (vn + vs) / 2 - cx * (un * vn / hn - us * vs / hs)
            if i < n:
                for j in range(n + 1):
                    he, hw, ue, uw, ve, vw = h[i + 1, j + 1], h[i + 1, j], u[i + 1, j + 1], u[i + 1, j], v[i + 1, j + 1], v[i + 1, j]
                    hy[i, j] = (he + hw) / 2 - cy * (ve - vw)
                    uy[i, j] = (ue + uw) / 2 - cy * (ve * ue / he - vw * uw / hw)
                    vy[i, j] = (ve + vw) / 2 - cy * ((ve**2 / he + g / 2 * he**2) - (vw**2 / hw + g / 2 * hw**2))
        vol = 0.0
        for i in prange(n):
            s = 0.0
            for j in range(n):
                ux1, ux0, hx1, hx0, vx1, vx0 = ux[i + 1, j], ux[i, j], hx[i + 1, j], hx[i, j], vx[i + 1, j], vx[i, j]
                vy1, vy0, hy1, hy0, uy1, uy0 = vy[i, j + 1], vy[i, j], hy[i, j + 1], hy[i, j], uy[i, j + 1], uy[i, j]
                hh = h[i + 1, j + 1] - (ex * (ux1 - ux0) + ey * (vy1 - vy0))
                h[i + 1, j + 1] = hh
                u[i + 1, j + 1] -= ex * ((ux1**2 / hx1 + g / 2 * hx1**2) - (ux0**2 / hx0 + g / 2 * hx0**2)) + ey * (
                    vy1 * uy1 / hy1 - vy0 * uy0 / hy0)
                v[i + 1, j + 1] -= ex * (ux1 * vx1 / hx1 - ux0 * vx0 / hx0) + ey * (
                    (vy1**2 / hy1 + g / 2 * hy1**2) - (vy0**2 / hy0 + g / 2 * hy0**2))
                s += hh
            vol += s
        volume = vol
    return volume


# --- Successive over-relaxation (red-black) ------------------------------------------------


def sor_numpy(n, iterations):  # type: ignore[no-untyped-def]
    grid = np.zeros((n + 2, n + 2))
    grid[0, :] = 1.0
    delta = 0.0
    for _ in range(iterations):
        delta = 0.0
        for q in range(4):  # the quarters r1, r0, b1, b0: (row, column) of their first element
            r, c = (2, 1, 2, 1)[q], (2, 1, 1, 2)[q]
            x = grid[r:r + n:2, c:c + n:2]
            new = (x + grid[r - 1:r - 1 + n:2, c:c + n:2] + grid[r + 1:r + 1 + n:2, c:c + n:2]
                   + grid[r:r + n:2, c - 1:c - 1 + n:2] + grid[r:r + n:2, c + 1:c + 1 + n:2]) * 0.2
            delta += np.sum(np.abs(new - x))
            x[:] = new
    return delta


def sor_numexpr(n, iterations):  # type: ignore[no-untyped-def]
    grid = np.zeros((n + 2, n + 2))
    grid[0, :] = 1.0
    delta = 0.0
    for _ in range(iterations):
        delta = 0.0
        for r, c in ((2, 2), (1, 1), (2, 1), (1, 2)):
            x = grid[r:r + n:2, c:c + n:2]
            a, b = grid[r - 1:r - 1 + n:2, c:c + n:2], grid[r + 1:r + 1 + n:2, c:c + n:2]
            d, e = grid[r:r + n:2, c - 1:c - 1 + n:2], grid[r:r + n:2, c + 1:c + 1 + n:2]
            new = ne.evaluate("(x + a + b + d + e) * 0.2")
            delta += float(ne.evaluate("sum(abs(new - x))"))
            x[:] = new
    return delta


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def sor_loop(n, iterations):  # type: ignore[no-untyped-def]
    # red cells (i + j even) first, then black; a cell's neighbours have the other colour,
    # so each colour updates in place in one pass
    grid = np.zeros((n + 2, n + 2))
    grid[0, :] = 1.0
    delta = 0.0
    for _ in range(iterations):
        delta = 0.0
        for colour in range(2):
            d = 0.0
            for i in prange(1, n + 1):
                up, mid, down = grid[i - 1], grid[i], grid[i + 1]
                s = 0.0
                for j in range(1 + (i + colour + 1) % 2, n + 1, 2):
                    old = mid[j]
                    new = (old + up[j] + down[j] + mid[j - 1] + mid[j + 1]) * 0.2
                    mid[j] = new
                    s += abs(new - old)
                d += s
            delta += d
    return delta


# --- 27-point stencil ----------------------------------------------------------------------


def st27_numpy(n, iterations):  # type: ignore[no-untyped-def]
    grid = np.zeros((n, n, n))
    lo, hi = n // 4, max(n // 2, n // 4 + 1)
    grid[lo:hi, lo:hi, lo:hi] = 100.0
    active = grid[1:-1, 1:-1, 1:-1]
    delta = 0.0
    for _ in range(iterations):
        acc = np.zeros((n - 2, n - 2, n - 2))
        for i in range(3):
            for j in range(3):
                for k in range(3):
                    acc += grid[i:n - 2 + i, j:n - 2 + j, k:n - 2 + k]
        new = acc / 27.0
        diff = np.sum(np.abs(new - active))
        active[:] = new
        delta = diff
    return delta


def st27_numexpr(n, iterations):  # type: ignore[no-untyped-def]
    grid = np.zeros((n, n, n))
    lo, hi = n // 4, max(n // 2, n // 4 + 1)
    grid[lo:hi, lo:hi, lo:hi] = 100.0
    active = grid[1:-1, 1:-1, 1:-1]
    names = [f"g{i}{j}{k}" for i in range(3) for j in range(3) for k in range(3)]
    views = {f"g{i}{j}{k}": grid[i:n - 2 + i, j:n - 2 + j, k:n - 2 + k]
             for i in range(3) for j in range(3) for k in range(3)}
    expr = "(" + " + ".join(names) + ") / 27.0"
    delta = 0.0
    for _ in range(iterations):
        new = ne.evaluate(expr, local_dict=views)
        delta = float(ne.evaluate("sum(abs(new - active))"))
        active[:] = new
    return delta


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def st27_loop(n, iterations):  # type: ignore[no-untyped-def]
    grid = np.zeros((n, n, n))
    lo, hi = n // 4, max(n // 2, n // 4 + 1)
    grid[lo:hi, lo:hi, lo:hi] = 100.0
    m = n - 2
    new = np.empty((m, m, m))
    delta = 0.0
    for _ in range(iterations):
        d = 0.0
        for i in prange(m):
            s = 0.0
            out = new[i]
            for j in range(m):
                acc = out[j]
                for k in range(m):
                    acc[k] = 0.0
                for a in range(3):
                    for b in range(3):
                        row = grid[i + a, j + b]
                        for k in range(m):
                            acc[k] += row[k] + row[k + 1] + row[k + 2]
                mid = grid[i + 1, j + 1]
                for k in range(m):
                    x = acc[k] / 27.0
                    acc[k] = x
                    s += abs(x - mid[k + 1])
            d += s
        for i in prange(m):
            for j in range(m):
                dst, src = grid[i + 1, j + 1], new[i, j]
                for k in range(m):
                    dst[k + 1] = src[k]
        delta = d
    return delta


# === the realistic corpus (fusionlab.workloads.corpus) ==========================================
# ``*_numpy`` is the corpus program with its random draws passed in (and its scalar returned),
# so that Numba compiles that very code; ``*_loop`` is what a person writes by hand: one
# ``prange`` pass per time step over double-buffered arrays (the NumPy code's temporaries
# contracted, its in-place updates turned into writes to the other buffer, since a stencil
# must read the old values), reductions folded into the pass that produces their input.
# Small serial work between the passes is written as plain loops: inside a parallel=True
# function Numba makes every array expression a parallel region, and hundreds of tiny ones
# (``counts[:, b].sum()`` per histogram bin) cost seconds when the cores are shared.


# --- Gray-Scott reaction-diffusion -----------------------------------------------------------


def gs_numpy(n, steps, iterations):  # type: ignore[no-untyped-def]
    du, dv, feed, kill = 0.16, 0.08, 0.035, 0.065
    u = np.ones((n + 2, n + 2))
    v = np.zeros((n + 2, n + 2))
    lo, hi = n // 2 - n // 8, n // 2 + n // 8 + 1
    u[lo:hi, lo:hi] = 0.50
    v[lo:hi, lo:hi] = 0.25
    uc = u[1:-1, 1:-1]
    vc = v[1:-1, 1:-1]
    mean_v = 0.0
    for _ in range(iterations):
        for _ in range(steps):
            lap_u = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * uc
            lap_v = v[:-2, 1:-1] + v[2:, 1:-1] + v[1:-1, :-2] + v[1:-1, 2:] - 4 * vc
            uvv = uc * vc * vc
            uc += du * lap_u - uvv + feed * (1 - uc)
            vc += dv * lap_v + uvv - (feed + kill) * vc
        mean_v = vc.mean()
    return mean_v


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def gs_loop(n, steps, iterations):  # type: ignore[no-untyped-def]
    du, dv, feed, kill = 0.16, 0.08, 0.035, 0.065
    u = np.ones((n + 2, n + 2))
    v = np.zeros((n + 2, n + 2))
    lo, hi = n // 2 - n // 8, n // 2 + n // 8 + 1
    u[lo:hi, lo:hi] = 0.50
    v[lo:hi, lo:hi] = 0.25
    u2, v2 = u.copy(), v.copy()  # the other buffers (same fixed edges)
    mean_v = 0.0
    for _ in range(iterations):
        acc = 0.0
        for step in range(steps):
            for i in prange(1, n + 1):
                un, uc, us, vn, vc, vs = u[i - 1], u[i], u[i + 1], v[i - 1], v[i], v[i + 1]
                uo, vo = u2[i], v2[i]
                s = 0.0
                for j in range(1, n + 1):
                    a, b = uc[j], vc[j]
                    uvv = a * b * b
                    uo[j] = a + du * (un[j] + us[j] + uc[j - 1] + uc[j + 1] - 4 * a) - uvv + feed * (1 - a)
                    nv = b + dv * (vn[j] + vs[j] + vc[j - 1] + vc[j + 1] - 4 * b) + uvv - (feed + kill) * b
                    vo[j] = nv
                    s += nv
                if step == steps - 1:
                    acc += s
            u, u2 = u2, u
            v, v2 = v2, v
        mean_v = acc / (n * n)
    return mean_v


# --- 1-D wave equation -----------------------------------------------------------------------


def jacobi_numpy(n, sweeps, iterations):  # type: ignore[no-untyped-def]
    h2 = (1.0 / (n - 1)) ** 2
    x = np.linspace(0.0, 1.0, n)
    f = np.sin(np.pi * x)[:, None] * np.sin(np.pi * x)[None, :]
    u = np.zeros((n, n))
    u[[0, -1], :] = 1.0
    u[:, [0, -1]] = 0.0
    residual = 0.0
    for _ in range(iterations):
        for _ in range(sweeps):
            new = u.copy()
            new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] + h2 * f[1:-1, 1:-1])
            new[[0, -1], :] = 1.0
            new[:, [0, -1]] = 0.0
            u = new
        r = (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]) / h2 + f[1:-1, 1:-1]
        residual = np.sqrt(np.mean(r ** 2))
    return residual


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def jacobi_loop(n, sweeps, iterations):  # type: ignore[no-untyped-def]
    h2 = (1.0 / (n - 1)) ** 2
    s = np.empty(n)
    for i in range(n):
        s[i] = math.sin(math.pi * (i / (n - 1)))
    u = np.zeros((n, n))
    u[0, :] = 1.0
    u[n - 1, :] = 1.0
    u[:, 0] = 0.0
    u[:, n - 1] = 0.0
    new = u.copy()   # two buffers swap: the walls never change, so both keep them
    residual = 0.0
    for _ in range(iterations):
        for _ in range(sweeps):
            for i in prange(1, n - 1):
                for j in range(1, n - 1):
                    new[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] + h2 * s[i] * s[j])
            u, new = new, u
        acc = 0.0
        for i in prange(1, n - 1):
            for j in range(1, n - 1):
                r = (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]) / h2 + s[i] * s[j]
                acc += r * r
        residual = math.sqrt(acc / ((n - 2) * (n - 2)))
    return residual


def wave_numpy(n, steps, iterations):  # type: ignore[no-untyped-def]
    c2 = 0.25
    x = np.linspace(0.0, 1.0, n)
    u_prev = np.exp(-200.0 * (x - 0.5) ** 2)
    u = u_prev.copy()
    energy = 0.0
    for _ in range(iterations):
        for _ in range(steps):
            u_next = np.empty_like(u)
            u_next[1:-1] = 2.0 * u[1:-1] - u_prev[1:-1] + c2 * (u[2:] - 2.0 * u[1:-1] + u[:-2])
            u_next[0] = 0.0
            u_next[-1] = 0.0
            u_prev, u = u, u_next
        energy = np.sum((u - u_prev) ** 2) + c2 * np.sum((u[1:] - u[:-1]) ** 2)
    return energy


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def wave_loop(n, steps, iterations):  # type: ignore[no-untyped-def]
    c2 = 0.25
    prev = np.empty(n)
    for i in prange(n):
        x = i / (n - 1)
        prev[i] = math.exp(-200.0 * (x - 0.5) ** 2)
    u = prev.copy()
    nxt = np.empty(n)
    energy = 0.0
    for _ in range(iterations):
        for _ in range(steps):
            for i in prange(1, n - 1):
                nxt[i] = 2.0 * u[i] - prev[i] + c2 * (u[i + 1] - 2.0 * u[i] + u[i - 1])
            nxt[0] = 0.0
            nxt[n - 1] = 0.0
            prev, u, nxt = u, nxt, prev  # three buffers rotate: no allocation
        e = 0.0
        for i in prange(n - 1):
            d, g = u[i] - prev[i], u[i + 1] - u[i]
            e += d * d + c2 * g * g
        d = u[n - 1] - prev[n - 1]
        energy = e + d * d
    return energy


# --- float32 heat equation ---------------------------------------------------------------------


def heatf_numpy(n, steps, iterations):  # type: ignore[no-untyped-def]
    u = np.zeros((n + 2, n + 2), dtype=np.float32)
    u[0, :] = 100.0
    alpha = 0.2
    mean = 0.0
    for _ in range(iterations):
        for _ in range(steps):
            lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
            u[1:-1, 1:-1] += alpha * lap
        mean = u[1:-1, 1:-1].mean()
    return mean


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def heatf_loop(n, steps, iterations):  # type: ignore[no-untyped-def]
    u = np.zeros((n + 2, n + 2), dtype=np.float32)
    u[0, :] = 100.0
    w = u.copy()
    alpha, four = np.float32(0.2), np.float32(4.0)
    mean = 0.0
    for _ in range(iterations):
        acc = 0.0
        for step in range(steps):
            for i in prange(1, n + 1):
                up, mid, down, out = u[i - 1], u[i], u[i + 1], w[i]
                s = 0.0
                for j in range(1, n + 1):
                    x = mid[j] + alpha * (up[j] + down[j] + mid[j - 1] + mid[j + 1] - four * mid[j])
                    out[j] = x
                    s += x
                if step == steps - 1:
                    acc += s
            u, w = w, u
        mean = acc / (n * n)
    return mean


# --- image blur --------------------------------------------------------------------------------


def blur_numpy(img0, passes, iterations):  # type: ignore[no-untyped-def]
    n = img0.shape[0]
    img = img0.copy()
    img[n // 4:n // 2, n // 4:n // 2] += 1.0
    sharpness = 0.0
    for _ in range(iterations):
        for _ in range(passes):
            out = np.empty_like(img)
            out[1:-1, 1:-1] = (
                4.0 * img[1:-1, 1:-1]
                + 2.0 * (img[:-2, 1:-1] + img[2:, 1:-1] + img[1:-1, :-2] + img[1:-1, 2:])
                + img[:-2, :-2] + img[:-2, 2:] + img[2:, :-2] + img[2:, 2:]
            ) / 16.0
            out[0, :] = img[0, :]
            out[-1, :] = img[-1, :]
            out[:, 0] = img[:, 0]
            out[:, -1] = img[:, -1]
            img = out
        gx = img[1:-1, 2:] - img[1:-1, :-2]
        gy = img[2:, 1:-1] - img[:-2, 1:-1]
        sharpness = np.mean(np.sqrt(gx * gx + gy * gy))
    return sharpness


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def blur_loop(img0, passes, iterations):  # type: ignore[no-untyped-def]
    n = img0.shape[0]
    img = img0.copy()
    img[n // 4:n // 2, n // 4:n // 2] += 1.0
    out = np.empty_like(img)
    sharpness = 0.0
    for _ in range(iterations):
        for _ in range(passes):
            for i in prange(1, n - 1):
                up, mid, down, o = img[i - 1], img[i], img[i + 1], out[i]
                o[0] = mid[0]
                o[n - 1] = mid[n - 1]
                for j in range(1, n - 1):
                    o[j] = (4.0 * mid[j] + 2.0 * (up[j] + down[j] + mid[j - 1] + mid[j + 1])
                            + up[j - 1] + up[j + 1] + down[j - 1] + down[j + 1]) / 16.0
            out[0, :] = img[0, :]
            out[n - 1, :] = img[n - 1, :]
            img, out = out, img
        s = 0.0
        for i in prange(1, n - 1):
            up, mid, down = img[i - 1], img[i], img[i + 1]
            r = 0.0
            for j in range(1, n - 1):
                gx, gy = mid[j + 1] - mid[j - 1], down[j] - up[j]
                r += math.sqrt(gx * gx + gy * gy)
            s += r
        sharpness = s / ((n - 2) * (n - 2))
    return sharpness


# --- Game of Life on uint8 ---------------------------------------------------------------------


def lifeu8_numpy(draw, iterations):  # type: ignore[no-untyped-def]
    n = draw.shape[0]
    board = np.zeros((n + 2, n + 2), dtype=np.uint8)
    board[1:-1, 1:-1] = draw < 0.35
    alive = 0
    for _ in range(iterations):
        board[0, 1:-1] = board[-2, 1:-1]
        board[-1, 1:-1] = board[1, 1:-1]
        board[:, 0] = board[:, -2]
        board[:, -1] = board[:, 1]
        neighbours = (
            board[:-2, :-2] + board[:-2, 1:-1] + board[:-2, 2:]
            + board[1:-1, :-2] + board[1:-1, 2:]
            + board[2:, :-2] + board[2:, 1:-1] + board[2:, 2:]
        )
        cells = board[1:-1, 1:-1]
        born = neighbours == 3
        survive = (cells == 1) & (neighbours == 2)
        board[1:-1, 1:-1] = born | survive
        alive = board[1:-1, 1:-1].sum()
    return alive


@numba.njit(parallel=True, cache=True)
def lifeu8_loop(draw, iterations):  # type: ignore[no-untyped-def]
    n = draw.shape[0]
    board = np.zeros((n + 2, n + 2), dtype=np.uint8)
    for i in prange(n):
        for j in range(n):
            board[i + 1, j + 1] = draw[i, j] < 0.35
    other = board.copy()
    alive = 0
    for _ in range(iterations):
        for j in range(1, n + 1):  # periodic edges: rows, then whole columns (corners wrap)
            board[0, j] = board[n, j]
            board[n + 1, j] = board[1, j]
        for i in range(n + 2):
            board[i, 0] = board[i, n]
            board[i, n + 1] = board[i, 1]
        count = 0
        for i in prange(1, n + 1):
            up, mid, down, out = board[i - 1], board[i], board[i + 1], other[i]
            c = 0
            for j in range(1, n + 1):
                nb = up[j - 1] + up[j] + up[j + 1] + mid[j - 1] + mid[j + 1] + down[j - 1] + down[j] + down[j + 1]
                new = 1 if nb == 3 or (mid[j] == 1 and nb == 2) else 0
                out[j] = new
                c += new
            count += c
        board, other = other, board
        alive = count
    return alive


# --- SIR epidemic with a dict of arrays ----------------------------------------------------------


def sir_numpy(n, steps, iterations):  # type: ignore[no-untyped-def]
    beta, gamma, diffusion, dt = 2.0, 0.5, 0.2, 0.1
    state = {"s": np.ones((n, n)), "i": np.zeros((n, n)), "r": np.zeros((n, n))}
    state["s"][n // 2, n // 2] = 0.5
    state["i"][n // 2, n // 2] = 0.5
    total = 0.0
    for _ in range(iterations):
        for _ in range(steps):
            s, i = state["s"], state["i"]
            lap = np.zeros_like(i)
            lap[1:-1, 1:-1] = i[:-2, 1:-1] + i[2:, 1:-1] + i[1:-1, :-2] + i[1:-1, 2:] - 4.0 * i[1:-1, 1:-1]
            infect = beta * s * i
            recover = gamma * i
            state = {
                "s": s - dt * infect,
                "i": i + dt * (infect - recover) + dt * diffusion * lap,
                "r": state["r"] + dt * recover,
            }
        total = state["s"].sum() + state["i"].sum() + state["r"].sum()  # the program's three totals
    return total


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def sir_loop(n, steps, iterations):  # type: ignore[no-untyped-def]
    beta, gamma, diffusion, dt = 2.0, 0.5, 0.2, 0.1
    s, i, r = np.ones((n, n)), np.zeros((n, n)), np.zeros((n, n))
    s[n // 2, n // 2] = 0.5
    i[n // 2, n // 2] = 0.5
    s2, i2, r2 = np.empty((n, n)), np.empty((n, n)), np.empty((n, n))
    total = 0.0
    for _ in range(iterations):
        acc = 0.0
        for step in range(steps):
            for a in prange(n):
                srow, irow, rrow = s[a], i[a], r[a]
                so, io, ro = s2[a], i2[a], r2[a]
                inner_row = 0 < a < n - 1
                t = 0.0
                for b in range(n):
                    x, y = srow[b], irow[b]
                    lap = 0.0
                    if inner_row and 0 < b < n - 1:
                        lap = i[a - 1, b] + i[a + 1, b] + irow[b - 1] + irow[b + 1] - 4.0 * y
                    infect, recover = beta * x * y, gamma * y
                    so[b] = x - dt * infect
                    ni = y + dt * (infect - recover) + dt * diffusion * lap
                    io[b] = ni
                    nr = rrow[b] + dt * recover
                    ro[b] = nr
                    t += (x - dt * infect) + ni + nr
                if step == steps - 1:
                    acc += t
            s, s2 = s2, s
            i, i2 = i2, i
            r, r2 = r2, r
        total = acc
    return total


# --- Black-Scholes in float32 --------------------------------------------------------------------


def bsf_numpy(s64, k64, t64, iterations):  # type: ignore[no-untyped-def]
    s = s64.astype(np.float32)
    k = k64.astype(np.float32)
    t = t64.astype(np.float32)
    r, sigma = 0.02, 0.30

    def cnd(x):  # type: ignore[no-untyped-def]
        kk = 1.0 / (1.0 + 0.2316419 * np.abs(x))
        poly = kk * (0.319381530 + kk * (-0.356563782 + kk * (1.781477937 + kk * (-1.821255978 + kk * 1.330274429))))
        w = 1.0 - 0.3989422804 * np.exp(-0.5 * x * x) * poly
        return np.where(x < 0, 1.0 - w, w)

    total = 0.0
    for _ in range(iterations):
        sqrt_t = np.sqrt(t)
        d1 = (np.log(s / k) + (r + 0.5 * sigma * sigma) * t) / (sigma * sqrt_t)
        d2 = d1 - sigma * sqrt_t
        discount = k * np.exp(-r * t)
        call = s * cnd(d1) - discount * cnd(d2)
        put = call - s + discount
        total = call.mean() + put.mean()
        s = s * 1.001
    return total


@numba.njit(inline="always", cache=True)
def _cnd32(x):  # type: ignore[no-untyped-def]
    kk = np.float32(1.0) / (np.float32(1.0) + np.float32(0.2316419) * abs(x))
    poly = kk * (np.float32(0.319381530) + kk * (np.float32(-0.356563782) + kk * (
        np.float32(1.781477937) + kk * (np.float32(-1.821255978) + kk * np.float32(1.330274429)))))
    w = np.float32(1.0) - np.float32(0.3989422804) * np.exp(np.float32(-0.5) * x * x) * poly
    return np.float32(1.0) - w if x < 0 else w


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def bsf_loop(s64, k64, t64, iterations):  # type: ignore[no-untyped-def]
    n = s64.shape[0]
    s = s64.astype(np.float32)
    k = k64.astype(np.float32)
    t = t64.astype(np.float32)
    call = np.empty(n, dtype=np.float32)
    put = np.empty(n, dtype=np.float32)
    r, sigma = np.float32(0.02), np.float32(0.30)
    c1 = r + np.float32(0.5) * sigma * sigma
    total = 0.0
    for _ in range(iterations):
        acc_c, acc_p = 0.0, 0.0
        for i in prange(n):
            si, ki, ti = s[i], k[i], t[i]
            st = np.sqrt(ti)
            d1 = (np.log(si / ki) + c1 * ti) / (sigma * st)
            disc = ki * np.exp(-r * ti)
            c = si * _cnd32(d1) - disc * _cnd32(d1 - sigma * st)
            p = c - si + disc
            call[i] = c
            put[i] = p
            acc_c += c
            acc_p += p
            s[i] = si * np.float32(1.001)
        total = (acc_c + acc_p) / n
    return total


# --- Asian option Monte Carlo --------------------------------------------------------------------


def asian_numpy(zs, steps, iterations):  # type: ignore[no-untyped-def]
    n = zs.shape[1]
    s0, strike, rate, sigma, maturity = 100.0, 100.0, 0.03, 0.25, 1.0
    dates = steps * iterations
    dt = maturity / dates
    drift = (rate - 0.5 * sigma * sigma) * dt
    vol = sigma * np.sqrt(dt)
    s = np.full(n, s0)
    running = np.zeros(n)
    for it in range(iterations):
        for st in range(steps):
            z = zs[it * steps + st]
            s = s * np.exp(drift + vol * z)
            running += s
    payoff = np.maximum(running / dates - strike, 0.0) * np.exp(-rate * maturity)
    return payoff.mean()


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def asian_loop(zs, steps, iterations):  # type: ignore[no-untyped-def]
    # paths in chunks: a chunk's spot and running sum stay in registers over all dates
    dates, n = zs.shape
    s0, strike, rate, sigma, maturity = 100.0, 100.0, 0.03, 0.25, 1.0
    dt = maturity / dates
    drift = (rate - 0.5 * sigma * sigma) * dt
    vol = sigma * math.sqrt(dt)
    discount = math.exp(-rate * maturity)
    chunk = 1024
    total = 0.0
    for c in prange((n + chunk - 1) // chunk):
        lo, hi = c * chunk, min(n, (c + 1) * chunk)
        s = np.full(hi - lo, s0)
        running = np.zeros(hi - lo)
        for d in range(dates):
            z = zs[d]
            for j in range(hi - lo):
                s[j] *= math.exp(drift + vol * z[lo + j])
                running[j] += s[j]
        part = 0.0
        for j in range(hi - lo):
            part += max(running[j] / dates - strike, 0.0) * discount
        total += part
    return total / n


# --- particles in a box ----------------------------------------------------------------------------


def particles_numpy(x0, y0, vx0, vy0, steps, iterations):  # type: ignore[no-untyped-def]
    x, y, vx, vy = x0.copy(), y0.copy(), vx0.copy(), vy0.copy()
    g, dt = 9.81, 0.01
    energy = 0.0
    for _ in range(iterations):
        for _ in range(steps):
            vy -= g * dt
            x += vx * dt
            y += vy * dt
            low = x < 0.0
            x[low] = -x[low]
            vx[low] = -vx[low]
            high = x > 1.0
            x[high] = 2.0 - x[high]
            vx[high] = -vx[high]
            bottom = y < 0.0
            y[bottom] = -y[bottom]
            vy[bottom] *= -0.9
        energy = 0.5 * np.sum(vx * vx + vy * vy) + g * np.sum(y)
    return energy


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def particles_loop(x0, y0, vx0, vy0, steps, iterations):  # type: ignore[no-untyped-def]
    # a particle's state stays in registers over a batch's steps: one pass per batch
    n = x0.shape[0]
    x, y, vx, vy = x0.copy(), y0.copy(), vx0.copy(), vy0.copy()
    g, dt = 9.81, 0.01
    energy = 0.0
    for _ in range(iterations):
        kin, pot = 0.0, 0.0
        for i in prange(n):
            a, b, va, vb = x[i], y[i], vx[i], vy[i]
            for _ in range(steps):
                vb -= g * dt
                a += va * dt
                b += vb * dt
                if a < 0.0:
                    a, va = -a, -va
                if a > 1.0:
                    a, va = 2.0 - a, -va
                if b < 0.0:
                    b, vb = -b, vb * -0.9
            x[i], y[i], vx[i], vy[i] = a, b, va, vb
            kin += va * va + vb * vb
            pot += b
        energy = 0.5 * kin + g * pot
    return energy


# --- n-body by broadcast pairs ---------------------------------------------------------------------


def nbody_numpy(pos0, m, iterations):  # type: ignore[no-untyped-def]
    pos = pos0.copy()
    vel = np.zeros_like(pos)
    g, dt, soft = 1.0, 1e-3, 1e-2
    kinetic = 0.0
    for _ in range(iterations):
        x, y, z = pos[0], pos[1], pos[2]
        dx = x[None, :] - x[:, None]
        dy = y[None, :] - y[:, None]
        dz = z[None, :] - z[:, None]
        inv_r3 = (dx * dx + dy * dy + dz * dz + soft) ** -1.5
        diagonal = inv_r3[0, :]
        diagonal.strides = (inv_r3.strides[0] + inv_r3.strides[1],)
        diagonal[:] = 0.0
        weight = g * m[None, :] * inv_r3
        vel[0] += dt * np.sum(weight * dx, axis=1)
        vel[1] += dt * np.sum(weight * dy, axis=1)
        vel[2] += dt * np.sum(weight * dz, axis=1)
        pos += dt * vel
        kinetic = 0.5 * np.sum(m * (vel * vel).sum(axis=0))
    return kinetic


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def nbody_loop(pos0, m, iterations):  # type: ignore[no-untyped-def]
    # one pass over the pairs per step (no n x n temporaries), then the update
    n = pos0.shape[1]
    pos = pos0.copy()
    vel = np.zeros_like(pos)
    acc = np.empty_like(pos)
    g, dt, soft = 1.0, 1e-3, 1e-2
    kinetic = 0.0
    for _ in range(iterations):
        for i in prange(n):
            xi, yi, zi = pos[0, i], pos[1, i], pos[2, i]
            ax, ay, az = 0.0, 0.0, 0.0
            for j in range(n):
                if j != i:
                    dx, dy, dz = pos[0, j] - xi, pos[1, j] - yi, pos[2, j] - zi
                    r2 = dx * dx + dy * dy + dz * dz + soft
                    w = g * m[j] / (r2 * math.sqrt(r2))
                    ax += w * dx
                    ay += w * dy
                    az += w * dz
            acc[0, i], acc[1, i], acc[2, i] = ax, ay, az
        k = 0.0
        for i in prange(n):
            s = 0.0
            for d in range(3):
                v = vel[d, i] + dt * acc[d, i]
                vel[d, i] = v
                pos[d, i] += dt * v
                s += v * v
            k += m[i] * s
        kinetic = 0.5 * k
    return kinetic


# --- k-means ---------------------------------------------------------------------------------------


def kmeans_numpy(true_centres, pick, noise, iterations):  # type: ignore[no-untyped-def]
    k = true_centres.shape[0]
    points = true_centres[pick] + noise
    centroids = points[:k].copy()
    inertia = 0.0
    for _ in range(iterations):
        d2 = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
        labels = d2.argmin(axis=1)
        inertia = d2.min(axis=1).sum()
        for j in range(k):
            members = points[labels == j]
            if len(members):
                centroids[j] = members.mean(axis=0)
    return inertia


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def kmeans_loop(true_centres, pick, noise, iterations):  # type: ignore[no-untyped-def]
    # per chunk of points: nearest centroid, label, and the chunk's sums per cluster
    k, n = true_centres.shape[0], pick.shape[0]
    points = np.empty((n, 2))
    for i in prange(n):
        points[i, 0] = true_centres[pick[i], 0] + noise[i, 0]
        points[i, 1] = true_centres[pick[i], 1] + noise[i, 1]
    centroids = points[:k].copy()
    labels = np.zeros(n, dtype=np.int64)
    chunk = 4096
    chunks = (n + chunk - 1) // chunk
    sums = np.zeros((chunks, k, 3))
    inertia = 0.0
    for _ in range(iterations):
        total = 0.0
        for c in prange(chunks):
            part = sums[c]
            part[:] = 0.0
            for i in range(c * chunk, min(n, (c + 1) * chunk)):
                px, py = points[i, 0], points[i, 1]
                best, label = np.inf, 0
                for j in range(k):
                    dx, dy = px - centroids[j, 0], py - centroids[j, 1]
                    d = dx * dx + dy * dy
                    if d < best:
                        best, label = d, j
                labels[i] = label
                part[label, 0] += px
                part[label, 1] += py
                part[label, 2] += 1.0
                total += best
        inertia = total
        for j in range(k):  # plain loops: an array expression here would be a parallel region each
            sx, sy, count = 0.0, 0.0, 0.0
            for c in range(chunks):
                sx += sums[c, j, 0]
                sy += sums[c, j, 1]
                count += sums[c, j, 2]
            if count > 0:
                centroids[j, 0] = sx / count
                centroids[j, 1] = sy / count
    return inertia


# --- softmax and logsumexp -------------------------------------------------------------------------


def softmax_numpy(logits, labels, iterations):  # type: ignore[no-untyped-def]
    rows, cols = logits.shape
    bias = np.zeros(cols)
    loss = 0.0
    for _ in range(iterations):
        z = logits + bias
        m = z.max(axis=1, keepdims=True)
        lse = m[:, 0] + np.log(np.sum(np.exp(z - m), axis=1))
        p = np.exp(z - lse[:, None])
        loss = np.mean(lse - z[np.arange(rows), labels])
        grad = p.mean(axis=0) - np.bincount(labels, minlength=cols) / rows
        bias -= 0.5 * grad
    return loss


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def softmax_loop(logits, labels, iterations):  # type: ignore[no-untyped-def]
    # per row: max, logsumexp, softmax and the loss term in one pass; then p's column sums
    # (a variant that summed p's columns per chunk of rows inside the prange ran 15-50x
    # slower under parallel=True than serially, so the column sums are a separate pass)
    rows, cols = logits.shape
    bias = np.zeros(cols)
    p = np.empty((rows, cols))
    lse = np.empty(rows)
    counts = np.zeros(cols)
    for r in range(rows):
        counts[labels[r]] += 1.0
    loss = 0.0
    for _ in range(iterations):
        total = 0.0
        for r in prange(rows):
            row, prow = logits[r], p[r]
            mx = -np.inf
            for j in range(cols):
                mx = max(mx, row[j] + bias[j])
            s = 0.0
            for j in range(cols):
                s += math.exp(row[j] + bias[j] - mx)
            lr = mx + math.log(s)
            lse[r] = lr
            for j in range(cols):
                prow[j] = math.exp(row[j] + bias[j] - lr)
            total += lr - (row[labels[r]] + bias[labels[r]])
        loss = total / rows
        colsum = p.sum(axis=0)
        for j in range(cols):
            bias[j] -= 0.5 * (colsum[j] / rows - counts[j] / rows)
    return loss


# --- histogram equalisation ------------------------------------------------------------------------


def histeq_numpy(values0, bins, iterations):  # type: ignore[no-untyped-def]
    values = values0.copy()
    score = 0.0
    for _ in range(iterations):
        lo, hi = values.min(), values.max()
        scaled = (values - lo) / (hi - lo)
        index = np.minimum((scaled * bins).astype(np.int64), bins - 1)
        hist = np.bincount(index, minlength=bins)
        cdf = np.cumsum(hist).astype(np.float64)
        cdf /= cdf[-1]
        values = cdf[index]
        z = (values - values.mean()) / values.std()
        score = np.abs(z).max()
    return score


@numba.njit(parallel=True, cache=True)  # no fastmath: the bin of a value must be NumPy's, bit for bit
def histeq_loop(values0, bins, iterations):  # type: ignore[no-untyped-def]
    # min/max; bin and count (per chunk); the CDF (bins long); map and sum; deviations
    n = values0.shape[0]
    values = values0.copy()
    index = np.empty(n, dtype=np.int64)
    chunk = 1 << 16
    chunks = (n + chunk - 1) // chunk
    counts = np.zeros((chunks, bins), dtype=np.int64)
    cdf = np.empty(bins)
    score = 0.0
    for _ in range(iterations):
        lo, hi = np.inf, -np.inf
        for i in prange(n):
            lo = min(lo, values[i])
            hi = max(hi, values[i])
        for c in prange(chunks):
            part = counts[c]
            part[:] = 0
            for i in range(c * chunk, min(n, (c + 1) * chunk)):
                b = min(int((values[i] - lo) / (hi - lo) * bins), bins - 1)
                index[i] = b
                part[b] += 1
        running = 0
        for b in range(bins):  # plain loops: `counts[:, b].sum()` would be a parallel region per bin
            for c in range(chunks):
                running += counts[c, b]
            cdf[b] = running
        last = cdf[bins - 1]
        for b in range(bins):
            cdf[b] /= last
        s = 0.0
        for i in prange(n):
            v = cdf[index[i]]
            values[i] = v
            s += v
        mean = s / n
        squares, dev = 0.0, 0.0
        for i in prange(n):
            d = values[i] - mean
            squares += d * d
            dev = max(dev, abs(d))
        score = dev / math.sqrt(squares / n)
    return score


# --- covariance shrinkage --------------------------------------------------------------------------


def cov_numpy(data0, iterations):  # type: ignore[no-untyped-def]
    samples, features = data0.shape
    data = data0.copy()
    data[:, 1:] += 0.6 * data[:, :-1]
    xc = data - data.mean(axis=0)
    shrunk = (xc.T @ xc) / (samples - 1)
    target = float(np.einsum("ii->i", shrunk).mean())
    diagonal = np.einsum("ii->i", shrunk)
    lag_one = 0.0
    for _ in range(iterations):
        shrunk *= 0.9
        diagonal += 0.1 * target
        sd = np.sqrt(diagonal)
        corr = shrunk / (sd[:, None] * sd[None, :])
        step = corr.strides[0] + corr.strides[1]
        superdiagonal = np.lib.stride_tricks.as_strided(corr[0, 1:], shape=(features - 1,), strides=(step,))
        lag_one = np.abs(superdiagonal).mean()
    return lag_one


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def cov_loop(data0, iterations):  # type: ignore[no-untyped-def]
    # the neighbour mixing and the column sums in one pass (per chunk), centring in a second,
    # the product by BLAS (np.dot, as a person calls it), then the small matrix by rows, serially
    samples, features = data0.shape
    data = np.empty_like(data0)
    chunk = 1024
    chunks = (samples + chunk - 1) // chunk
    sums = np.zeros((chunks, features))
    for c in prange(chunks):
        part = sums[c]
        for i in range(c * chunk, min(samples, (c + 1) * chunk)):
            row, out = data0[i], data[i]
            out[0] = row[0]
            part[0] += row[0]
            for j in range(1, features):
                v = row[j] + 0.6 * row[j - 1]
                out[j] = v
                part[j] += v
    mean = np.zeros(features)
    for c in range(chunks):  # a plain loop, not a parallel region for a few chunks
        for j in range(features):
            mean[j] += sums[c, j]
    for j in range(features):
        mean[j] /= samples
    for i in prange(samples):
        row = data[i]
        for j in range(features):
            row[j] -= mean[j]
    shrunk = np.dot(data.T, data) / (samples - 1)
    target = 0.0
    for i in range(features):
        target += shrunk[i, i]
    target /= features
    corr = np.empty_like(shrunk)
    sd = np.empty(features)
    lag_one = 0.0
    for _ in range(iterations):  # serial: a features x features matrix is too small for threads
        for i in range(features):
            row = shrunk[i]
            for j in range(features):
                row[j] *= 0.9
            row[i] += 0.1 * target
            sd[i] = math.sqrt(row[i])
        lag = 0.0
        for i in range(features):
            for j in range(features):
                corr[i, j] = shrunk[i, j] / (sd[i] * sd[j])
            if i + 1 < features:
                lag += abs(corr[i, i + 1])
        lag_one = lag / (features - 1)
    return lag_one


# --- Gauss elimination with partial pivoting -------------------------------------------------------
# The program's scalar, the residual max|A x - b| (about 1e-14), is rounding noise that no two
# orders of the same arithmetic share; these return sum(x) + residual, a value that checks the
# solution (the residual is computed all the same).


def gauss_numpy(a0, b0):  # type: ignore[no-untyped-def]
    n = a0.shape[0]
    a, b = a0.copy(), b0.copy()
    for k in range(n - 1):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        if p != k:
            a[[k, p]] = a[[p, k]]
            b[[k, p]] = b[[p, k]]
        factors = a[k + 1:, k] / a[k, k]
        a[k + 1:, k:] -= factors[:, None] * a[k, k:]
        b[k + 1:] -= factors * b[k]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - np.sum(a[i, i + 1:] * x[i + 1:])) / a[i, i]
    residual = float(np.max(np.abs(a0 @ x - b0)))
    return np.sum(x) + residual


# serial, and no fastmath (elimination's rounding is NumPy's): at these sizes (a 200 x 200
# matrix is 320 KB) a parallel region per column costs more than the column's work (1.8 ms
# serial against 4.4 s with a prange per column, measured with the two cores shared)
@numba.njit(cache=True)
def gauss_loop(a0, b0):  # type: ignore[no-untyped-def]
    # per column: the pivot search and the swap in place, then the rows below
    n = a0.shape[0]
    a, b = a0.copy(), b0.copy()
    for k in range(n - 1):
        p, best = k, abs(a[k, k])
        for i in range(k + 1, n):
            if abs(a[i, k]) > best:
                p, best = i, abs(a[i, k])
        if p != k:
            for j in range(n):
                a[k, j], a[p, j] = a[p, j], a[k, j]
            b[k], b[p] = b[p], b[k]
        pivot_row = a[k]
        for i in range(k + 1, n):
            row = a[i]
            f = row[k] / pivot_row[k]
            for j in range(k, n):
                row[j] -= f * pivot_row[j]
            b[i] -= f * b[k]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        s = 0.0
        for j in range(i + 1, n):
            s += a[i, j] * x[j]
        x[i] = (b[i] - s) / a[i, i]
    residual = 0.0
    for i in range(n):
        r = -b0[i]
        for j in range(n):
            r += a0[i, j] * x[j]
        residual = max(residual, abs(r))
    return np.sum(x) + residual


# --- LU by row operations --------------------------------------------------------------------------
# As for Gauss: the program's error max|L U - A| is rounding noise; these return sum(U) + error.


def lu_numpy(a0):  # type: ignore[no-untyped-def]
    n = a0.shape[0]
    a = a0.copy()
    a.flat[:: n + 1] += n
    u = a.copy()
    l = np.zeros((n, n))  # noqa: E741 (the factor's usual name)
    l.flat[:: n + 1] = 1.0
    for k in range(n - 1):
        pivot = u[k, k]
        if abs(float(pivot)) < 1e-12:
            raise ZeroDivisionError(f"zero pivot in column {k}")
        for i in range(k + 1, n):
            l[i, k] = u[i, k] / pivot
            u[i, k:] -= l[i, k] * u[k, k:]
    error = float(np.max(np.abs(l @ u - a)))
    return np.sum(u) + error


@numba.njit(cache=True)  # serial, no fastmath: as gauss_loop
def lu_loop(a0):  # type: ignore[no-untyped-def]
    # per column: the rows below, each its multiplier and its update
    n = a0.shape[0]
    a = a0.copy()
    for i in range(n):
        a[i, i] += n
    u = a.copy()
    l = np.zeros((n, n))  # noqa: E741 (the factor's usual name)
    for i in range(n):
        l[i, i] = 1.0
    for k in range(n - 1):
        pivot_row = u[k]
        if abs(pivot_row[k]) < 1e-12:
            raise ZeroDivisionError("zero pivot")
        for i in range(k + 1, n):
            row = u[i]
            f = row[k] / pivot_row[k]
            l[i, k] = f
            for j in range(k, n):
                row[j] -= f * pivot_row[j]
    product = np.dot(l, u)
    error = 0.0
    for i in range(n):
        for j in range(n):
            error = max(error, abs(product[i, j] - a[i, j]))
    return np.sum(u) + error


# --- dense layer with ReLU --------------------------------------------------------------------------


def dense_numpy(x, w0, iterations):  # type: ignore[no-untyped-def]
    # NumPy's two-step epilogue: the product, then the sum, then the ReLU (three arrays)
    w = w0 / np.sqrt(x.shape[1])
    b = np.zeros(w.shape[1])
    mean_h = 0.0
    for _ in range(iterations):
        h = np.maximum(x @ w + b, 0.0)
        mean_h = h.mean()
        b -= 0.1 * (mean_h - 0.5)
    return mean_h


@numba.njit(parallel=True, fastmath={"reassoc"}, cache=True)
def dense_loop(x, w0, iterations):  # type: ignore[no-untyped-def]
    # per row: the product row by the i-k-j order (w's rows streamed, the row's sums in a
    # contiguous accumulator the inner loop vectorises), the bias and ReLU before the store,
    # the row's sum for the mean; no BLAS
    n, features = x.shape
    units = w0.shape[1]
    w = w0 / np.sqrt(features)
    b = np.zeros(units)
    h = np.empty((n, units))
    mean_h = 0.0
    for _ in range(iterations):
        sums = np.zeros(n)
        for r in prange(n):
            row = np.zeros(units)
            for k in range(features):
                xk = x[r, k]
                wk = w[k]
                for j in range(units):
                    row[j] += xk * wk[j]
            total = 0.0
            for j in range(units):
                v = max(row[j] + b[j], 0.0)
                h[r, j] = v
                total += v
            sums[r] = total
        mean_h = sums.sum() / (n * units)
        for j in range(units):
            b[j] -= 0.1 * (mean_h - 0.5)
    return mean_h


def deposit_numpy(x0, v, cells, steps, iterations):  # type: ignore[no-untyped-def]
    x = x0.copy()
    n = x.shape[0]
    q = np.full(n, 1.0 / n)
    dx = 1.0 / cells
    rho = np.zeros(cells)
    peak = 0.0
    for _ in range(iterations):
        for _ in range(steps):
            x = (x + v) % 1.0
            s = x / dx
            left = s.astype(np.int64)
            frac = s - left
            rho = np.zeros(cells)
            np.add.at(rho, left % cells, q * (1.0 - frac))
            np.add.at(rho, (left + 1) % cells, q * frac)
            rho /= dx
        peak = rho.max()
    return peak


@numba.njit(cache=True)  # serial: the scatter's cells collide (a parallel one needs a histogram per thread)
def deposit_loop(x0, v, cells, steps, iterations):  # type: ignore[no-untyped-def]
    # move, cell and fraction, both deposits in one pass over the particles; then the density
    n = x0.shape[0]
    x = x0.copy()
    q = 1.0 / n
    dx = 1.0 / cells
    rho = np.zeros(cells)
    peak = 0.0
    for _ in range(iterations):
        for _ in range(steps):
            rho[:] = 0.0
            for i in range(n):
                xi = (x[i] + v[i]) % 1.0
                x[i] = xi
                s = xi / dx
                left = np.int64(s)
                frac = s - left
                rho[left % cells] += q * (1.0 - frac)
                rho[(left + 1) % cells] += q * frac
            for c in range(cells):
                rho[c] /= dx
        peak = rho.max()
    return peak


# --- the registry ----------------------------------------------------------------------------


@dataclass
class Refs:
    """One workload's points of comparison and how to make their arguments."""

    numpy: Callable[..., Any]
    numexpr: Callable[..., Any] | None
    loop: Callable[..., Any]
    args: Callable[[dict[str, Any]], tuple[Any, ...]]   # the preset's keyword arguments to the arguments
    numba_error: str = ""

    _numba: Any = None

    @property
    def numba(self) -> Callable[..., Any]:
        """The NumPy function under Numba's ``@njit(parallel=True)`` (compiled once)."""
        if self._numba is None:
            self._numba = numba.njit(parallel=True, cache=True)(self.numpy)
        return self._numba


def _uniform(kw: dict[str, Any], lo: float, hi: float) -> tuple[Any, ...]:
    rng = np.random.default_rng(kw["seed"])
    return rng.uniform(lo, hi, kw["n"]), kw["iterations"]


def _two_draws(kw: dict[str, Any]) -> tuple[Any, ...]:
    # the workload draws x then y per iteration from one generator
    rng = np.random.default_rng(kw["seed"])
    xs, ys = np.empty((kw["iterations"], kw["n"])), np.empty((kw["iterations"], kw["n"]))
    for it in range(kw["iterations"]):
        xs[it] = rng.random(kw["n"])
        ys[it] = rng.random(kw["n"])
    return xs, ys


def _draw(kw: dict[str, Any], method: str, shape: Any) -> np.ndarray:
    # the program's first draw from default_rng(seed)
    return getattr(np.random.default_rng(kw["seed"]), method)(shape)


def _uniforms(kw: dict[str, Any], bounds: list[tuple[float, float]]) -> list[np.ndarray]:
    rng = np.random.default_rng(kw["seed"])
    return [rng.uniform(lo, hi, kw["n"]) for lo, hi in bounds]


def _draws(kw: dict[str, Any], calls: list[tuple[str, tuple[Any, ...]]]) -> list[np.ndarray]:
    # the program's draws from one default_rng(seed), in its order: (method, arguments)
    rng = np.random.default_rng(kw["seed"])
    return [getattr(rng, method)(*arguments) for method, arguments in calls]


def _normals(kw: dict[str, Any]) -> np.ndarray:
    # one row per date, drawn in the program's order
    rng = np.random.default_rng(kw["seed"])
    dates = kw["steps"] * kw["iterations"]
    zs = np.empty((dates, kw["n"]))
    for d in range(dates):
        zs[d] = rng.standard_normal(kw["n"])
    return zs


REFS: dict[str, Refs] = {
    "black_scholes": Refs(bs_numpy, bs_numexpr, bs_loop, lambda kw: _uniform(kw, 4.0, 30.0)),
    "heat_equation": Refs(heat_numpy, heat_numexpr, heat_loop, lambda kw: (kw["n"], kw["iterations"])),
    "leibnitz_pi": Refs(leibniz_numpy, leibniz_numexpr, leibniz_loop, lambda kw: (kw["n"], kw["iterations"])),
    "rosenbrock": Refs(rosen_numpy, rosen_numexpr, rosen_loop, lambda kw: _uniform(kw, -2.0, 2.0)),
    "monte_carlo_pi": Refs(mc_numpy, mc_numexpr, mc_loop, _two_draws),
    "shallow_water": Refs(sw_numpy, sw_numexpr, sw_loop, lambda kw: (kw["n"], kw["iterations"])),
    "sor": Refs(sor_numpy, sor_numexpr, sor_loop, lambda kw: (kw["n"], kw["iterations"])),
    "stencil_27pt": Refs(st27_numpy, st27_numexpr, st27_loop, lambda kw: (kw["n"], kw["iterations"])),
    # the corpus rows (numexpr: not written for them; its column says so)
    "gray_scott": Refs(gs_numpy, None, gs_loop, lambda kw: (kw["n"], kw["steps"], kw["iterations"])),
    "wave_1d": Refs(wave_numpy, None, wave_loop, lambda kw: (kw["n"], kw["steps"], kw["iterations"])),
    "heat_f32": Refs(heatf_numpy, None, heatf_loop, lambda kw: (kw["n"], kw["steps"], kw["iterations"])),
    "image_blur": Refs(blur_numpy, None, blur_loop, lambda kw: (_draw(kw, "random", (kw["n"], kw["n"])),
                                                                kw["passes"], kw["iterations"])),
    "life_uint8": Refs(lifeu8_numpy, None, lifeu8_loop, lambda kw: (_draw(kw, "random", (kw["n"], kw["n"])),
                                                                    kw["iterations"])),
    "sir_dict": Refs(sir_numpy, None, sir_loop, lambda kw: (kw["n"], kw["steps"], kw["iterations"])),
    "black_scholes_f32": Refs(bsf_numpy, None, bsf_loop, lambda kw: (*_uniforms(kw, [(10.0, 50.0), (10.0, 50.0),
                                                                                     (0.25, 2.0)]), kw["iterations"])),
    "asian_option_mc": Refs(asian_numpy, None, asian_loop, lambda kw: (_normals(kw), kw["steps"], kw["iterations"])),
    "particles_box": Refs(particles_numpy, None, particles_loop, lambda kw: (*_draws(kw, [
        ("random", (kw["n"],)), ("random", (kw["n"],)), ("normal", (0.0, 1.0, kw["n"])), ("normal", (0.0, 1.0, kw["n"]))]),
        kw["steps"], kw["iterations"])),
    "nbody_pairwise": Refs(nbody_numpy, None, nbody_loop, lambda kw: (*_draws(kw, [
        ("uniform", (-1.0, 1.0, (3, kw["n"]))), ("uniform", (0.5, 1.5, kw["n"]))]), kw["iterations"])),
    "kmeans_step": Refs(kmeans_numpy, None, kmeans_loop, lambda kw: (*_draws(kw, [
        ("uniform", (-5.0, 5.0, (kw["k"], 2))), ("integers", (0, kw["k"], kw["n"])), ("normal", (0.0, 1.0, (kw["n"], 2)))]),
        kw["iterations"])),
    "softmax_logsumexp": Refs(softmax_numpy, None, softmax_loop, lambda kw: (*_draws(kw, [
        ("normal", (0.0, 3.0, (kw["rows"], kw["cols"]))), ("integers", (0, kw["cols"], kw["rows"]))]), kw["iterations"])),
    "histogram_equalize": Refs(histeq_numpy, None, histeq_loop, lambda kw: (*_draws(kw, [("gamma", (2.0, 1.0, kw["n"]))]),
                                                                            kw["bins"], kw["iterations"])),
    "covariance_shrinkage": Refs(cov_numpy, None, cov_loop, lambda kw: (*_draws(kw, [
        ("normal", (0.0, 1.0, (kw["samples"], kw["features"])))]), kw["iterations"])),
    "gauss_pivot": Refs(gauss_numpy, None, gauss_loop, lambda kw: tuple(_draws(kw, [
        ("random", ((kw["n"], kw["n"]),)), ("random", (kw["n"],))]))),
    "lu_rows": Refs(lu_numpy, None, lu_loop, lambda kw: tuple(_draws(kw, [("random", ((kw["n"], kw["n"]),))]))),
    "dense_relu": Refs(dense_numpy, None, dense_loop, lambda kw: (*_draws(kw, [
        ("standard_normal", ((kw["n"], kw["features"]),)), ("standard_normal", ((kw["features"], kw["units"]),))]),
        kw["iterations"])),
    "jacobi_poisson": Refs(jacobi_numpy, None, jacobi_loop, lambda kw: (kw["n"], kw["sweeps"], kw["iterations"])),
    "charge_deposit": Refs(deposit_numpy, None, deposit_loop, lambda kw: (*_draws(kw, [
        ("random", (kw["n"],)), ("normal", (0.0, 0.01, kw["n"]))]), kw["cells"], kw["steps"], kw["iterations"])),
}

#: The corpus programs with benchmark rows (all of them, in the corpus's order), and those
#: without one, with the reason (none at present).
CORPUS_ROWS = ["gray_scott", "wave_1d", "heat_f32", "image_blur", "life_uint8", "sir_dict", "particles_box",
               "nbody_pairwise", "kmeans_step", "black_scholes_f32", "asian_option_mc", "softmax_logsumexp",
               "histogram_equalize", "covariance_shrinkage", "gauss_pivot", "lu_rows", "dense_relu", "jacobi_poisson",
               "charge_deposit"]
CORPUS_NOT_ROWS: dict[str, str] = {}


def numba_refusal(exc: BaseException) -> str:
    """The one line of a Numba typing error that says what it refused: the signature it has
    no implementation for (and the reason its candidate gave), or the first telling line."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    signature = next((ln[4:] for ln in lines if ln.startswith(">>> ")), None)
    if signature is not None:
        reason = next((ln.split("TypingError: ", 1)[1] for ln in lines if "TypingError: " in ln), "")
        return (f"no implementation of {signature}" + (f": {reason}" if reason else ""))[:200]
    useful = [ln for ln in lines if ln.startswith(("Cannot", "No implementation", "Invalid use", "Unknown attribute",
                                                    "Use of unsupported"))]
    return (useful or lines or ["(no message)"])[0][:200]


def _scalar_of(name: str, result: Any) -> float:
    """The scalar a ``*_numpy`` reference returns, read from the program's own result."""
    if not isinstance(result, tuple):
        return float(result)
    if name == "sir_dict":
        return sum(result[1].values())
    if name == "asian_option_mc":
        return result[0]
    if name == "gauss_pivot":  # sum(x) + residual (see gauss_numpy)
        return float(np.sum(result[0])) + result[1]
    if name == "lu_rows":  # sum(U) + error (see lu_numpy)
        return float(np.sum(result[1])) + result[2]
    return float(result[-1])


if __name__ == "__main__":
    from fusionlab.workloads import get_workload

    for name, refs in REFS.items():
        kw = get_workload(name).kwargs("tiny")
        args = refs.args(kw)
        want = float(refs.numpy(*args))
        own = get_workload(name).run("tiny")
        assert np.isclose(want, _scalar_of(name, own), rtol=1e-6 if name.endswith("f32") else 1e-12), name
        got = {"loop": refs.loop(*args)}
        try:
            got["numba"] = refs.numba(*args)
        except (numba.core.errors.NumbaError, NotImplementedError) as exc:  # the row's Numba column says why
            print(name, "Numba refuses the NumPy code:", numba_refusal(exc))
        if ne is not None and refs.numexpr is not None:
            got["numexpr"] = refs.numexpr(*args)
        print(name, want, {k: float(v) for k, v in got.items()})
