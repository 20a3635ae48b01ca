"""Tools around the pipeline: the machine's calibration and sweeps."""
