"""What the partitioner needs to know of a program: the WSP graph, legality, filters."""
