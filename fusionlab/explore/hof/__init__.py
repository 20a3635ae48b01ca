"""Contractions as higher-order functions (Berényi et al., paper 003): terms, rules, exploration.

A two-operand contraction (``np.einsum`` with two operands, ``@``) is a linear nest of
higher-order functions -- ``map`` / ``zip`` over the output's indices and ``rnz`` (reduce of
a zip) over the summed ones -- around a scalar product. :mod:`.term` holds the term,
:mod:`.rules` the paper's rewrite rules as named data, :mod:`.explore` the enumeration of
every reachable arrangement with its derivation, :mod:`.loopnest` the Numba loop nest of an
arrangement, :mod:`.contraction` the term of einsum subscripts and shapes, and
:mod:`.pipeline` the fusion rules of eq. 19-34 on pipelines of HoFs, and :mod:`.view` a
contraction's whole rewrite space as data (the explorer's contraction view and report section).
"""
