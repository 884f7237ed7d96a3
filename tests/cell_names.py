"""The names a notebook cell binds and reads (``ast``), for the checks that a cell runs where a
reader runs it: a slider cell in a live kernel, an exercise's solution copied into their own."""

import ast
import builtins

BUILTINS = set(dir(builtins)) | {"display", "get_ipython"}


def defined(tree: ast.AST) -> set[str]:
    """Every name a cell binds: assignments, imports, functions, classes, loop and with targets,
    parameters, comprehension variables."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def read(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
