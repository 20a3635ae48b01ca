"""What a user looks at: the report, the graph's drawing, the explorer in Jupyter."""
