"""The array bytecode: its opcodes, the program's types, the text form and the examples."""
