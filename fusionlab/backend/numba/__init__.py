"""The Numba backend: the kernel layout, the emission of kernels and drivers, and the plan
that runs a partition's blocks."""
