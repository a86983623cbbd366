"""Python syntax as error messages name it: the words a user knows for each construct zymase
does not compile (never the ``ast`` class name), and what to write instead."""

from __future__ import annotations

import ast

# ast class name -> (what the user wrote, what to do instead)
CONSTRUCTS = {
    "JoinedStr": ("f-strings", "compiled code computes numbers; format the results after "
                  "the call (print(...) inside the function prints numbers)"),
    "FormattedValue": ("f-strings", "format the results after the call"),
    "Import": ("`import` statements inside a compiled function",
               "import at the top of the module; compiled code reads the module's names"),
    "ImportFrom": ("`from ... import` statements inside a compiled function",
                   "import at the top of the module; compiled code reads the module's names"),
    "Try": ("`try` statements", "check the condition with `if` instead; errors raised in "
            "compiled code reach the caller"),
    "TryStar": ("`try`/`except*` statements", "check the condition with `if` instead"),
    "With": ("`with` blocks", "move the `with` around the call of the compiled function"),
    "AsyncWith": ("`async with` blocks", "compiled functions are not coroutines"),
    "AsyncFor": ("`async for` loops", "compiled functions are not coroutines"),
    "AsyncFunctionDef": ("`async def` functions", "compiled functions are not coroutines"),
    "Await": ("`await` expressions", "compiled functions are not coroutines"),
    "ClassDef": ("class definitions inside a compiled function",
                 "define the class at module level (dataclasses and namedtuples can be passed "
                 "in and returned)"),
    "FunctionDef": ("function definitions inside a compiled function",
                    "define the helper outside it (a `def` or `name = lambda ...` at module "
                    "level or in an enclosing function) and call it by name, or pass it in as an "
                    "argument"),
    "Global": ("`global` declarations", "compiled code cannot rebind module names; return the "
               "new value and assign it after the call"),
    "Nonlocal": ("`nonlocal` declarations", "return the new value instead"),
    "Delete": ("`del` statements", "leave the name bound (or assign a new value)"),
    "Match": ("`match` statements", "use if/elif"),
    "TypeAlias": ("`type` aliases", "define the alias at module level"),
    "Yield": ("generators (`yield`)", "build a list or an array and return it"),
    "YieldFrom": ("generators (`yield from`)", "build a list or an array and return it"),
    "NamedExpr": ("assignment expressions (`:=`)", "assign on a line of its own"),
    "Set": ("sets", "use a tuple, a list or an array"),
    "Dict": ("dict displays inside a compiled function", "pass a dict in as an argument, or "
             "use a tuple"),
    "Starred": ("`*` unpackings in this position", "index the tuple's items"),
    "Slice": ("slices outside `[...]`", "write the slice inside `[...]`"),
    "Lambda": ("lambdas inside a compiled function",
               "define the function outside it (a `def` or `name = lambda ...` at module "
               "level or in an enclosing function) and call it by name, or pass the lambda in "
               "as an argument"),
}

OPERATORS = {"Invert": "~", "Not": "not", "UAdd": "unary +", "USub": "unary -", "In": "in",
             "NotIn": "not in", "Is": "is", "IsNot": "is not", "Eq": "==", "NotEq": "!=",
             "Lt": "<", "LtE": "<=", "Gt": ">", "GtE": ">=", "Add": "+", "Sub": "-",
             "Mult": "*", "Div": "/", "FloorDiv": "//", "Mod": "%", "Pow": "**", "MatMult": "@",
             "BitAnd": "&", "BitOr": "|", "BitXor": "^", "LShift": "<<", "RShift": ">>",
             "And": "and", "Or": "or"}


def unsupported(node: ast.AST) -> str:
    """The message for a construct zymase does not compile: what it is and what to do."""
    found = CONSTRUCTS.get(type(node).__name__)
    if found is None:
        return f"this {_kind(node)} is not supported: `{_first_line(node)}`"
    what, instead = found
    return f"{what} are not supported; {instead}"


def symbol(op: ast.AST) -> str:
    """The symbol of an operator node (``~``, ``not in``)."""
    return OPERATORS.get(type(op).__name__, ast.unparse(op) if hasattr(op, "_fields") else "?")


def _kind(node) -> str:
    return "statement" if isinstance(node, ast.stmt) else "expression"


def _first_line(node) -> str:
    try:
        text = ast.unparse(node).splitlines()[0]
    except Exception:  # (a node unparse cannot print)
        return "?"
    return text if len(text) <= 40 else text[:37] + "..."
