"""What the chapters show: the tables, boxes and figures built from the domain's numbers.

``scenario`` reads a chapter's models, GPUs and workload parameters; ``plans`` the serving
chapters' boxes and plan tables; ``disagg`` chapter 11's, ``sensitivity_tables`` and ``weight_tables``
the tables of their calculators; ``trends`` chapter 15's; ``audit_report`` and ``findings`` the
audit's verdict tables and the findings page; ``plan_report`` what ``python -m twopaths.plan``
prints. The calculators below return numbers and frozen values, never tables.
"""
