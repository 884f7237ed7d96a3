"""What the chapters show: the tables, boxes and figures built from the domain's numbers.

- ``scenario``: a chapter's models, GPUs and workload parameters, checked, and the titles that
  name them;
- ``plans``: the serving chapters' assumptions boxes, plan tables and shared headline plans;
- ``disagg_tables`` (chapter 11), ``weight_tables`` (chapter 10), ``sensitivity_tables``
  (chapter 14) and ``trends_table`` (chapter 15): the tables of their calculators;
- ``audit_report`` and ``findings``: the audit's verdict tables and the findings page;
- ``plan_report``: what ``python -m twopaths.plan`` prints;
- ``context_limit``: how every page, table and the command flag a context past a model's declared
  limit (``specs.max_position``).

The calculators below return numbers and frozen values, never tables.
"""
