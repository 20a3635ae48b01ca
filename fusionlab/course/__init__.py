"""The course notebooks' exercises: a question, a cell to answer in, a check that says
"correct" or "not yet" with a hint, and the solution collapsed (:mod:`.checks`)."""

from fusionlab.course.checks import Verdict, check, check_choice, check_number, unanswered

__all__ = ["Verdict", "check", "check_number", "check_choice", "unanswered"]
