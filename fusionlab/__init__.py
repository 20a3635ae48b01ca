"""fusionlab: an interactive explorer for the fusion of array operations."""
from fusionlab.ir.bytecode import Base, Instruction, Literal, Opcode, OpFamily, Program, ProgramError, View
from fusionlab.ir.text import BytecodeError, format_program, parse

__version__ = "0.1.0"
__all__ = [
    "Base", "Instruction", "Literal", "Opcode", "OpFamily", "Program", "ProgramError", "View",
    "BytecodeError", "format_program", "parse",
]


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext fusionlab``: register ``%%fuse`` and ``%fuse_config``."""
    from fusionlab.explore.jupyter import load_ipython_extension as load

    load(ipython)

