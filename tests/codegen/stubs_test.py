"""The _C.pyi that `bp-codegen python` writes is Python that parses, and a checker would take its
definitions: in each scope, a name defined more than once is a run of @overload'ed defs (or a
property and its setter), never two plain definitions where the second hides the first; and no
annotation names what the stub itself hides (the builtins bool, int and float behind the dtype
objects of those names, the classes dtype and device behind Tensor's properties).

usage: stubs_test.py BP_CODEGEN OPS_YAML
"""

import ast
import pathlib
import subprocess
import sys
import tempfile


def decorator_names(node):
    names = []
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Name):
            names.append(decorator.id)
        elif isinstance(decorator, ast.Attribute):
            names.append(decorator.attr)
    return names


def scope_problems(body, scope):
    """The names of `body` defined more than once, but not as a run of overloads."""
    problems = []
    runs = {}  # name -> [first index, last index, defs]
    for index, node in enumerate(body):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            run = runs.setdefault(node.name, [index, index, []])
            run[1] = index
            run[2].append(node)
    for name, (first, last, defs) in runs.items():
        if len(defs) == 1:
            continue
        kinds = [decorator_names(d) for d in defs]
        overloads = all("overload" in k for k in kinds)
        property_pair = len(defs) == 2 and "property" in kinds[0] and "setter" in kinds[1]
        if not (overloads or property_pair):
            problems.append(f"{scope}.{name}: defined {len(defs)} times, not as overloads")
        elif last - first + 1 != len(defs):
            problems.append(f"{scope}.{name}: its overloads are not next to each other")
    return problems


def annotations(node):
    """Every annotation in `node`: of parameters, returns and variables."""
    for child in ast.walk(node):
        if isinstance(child, ast.arg) and child.annotation is not None:
            yield child.annotation
        elif isinstance(child, (ast.FunctionDef, ast.AnnAssign)):
            annotation = child.returns if isinstance(child, ast.FunctionDef) else child.annotation
            if annotation is not None:
                yield annotation


def hidden_names(node, hidden, scope):
    problems = []
    for annotation in annotations(node):
        for name in ast.walk(annotation):
            if isinstance(name, ast.Name) and name.id in hidden:
                problems.append(f"{scope}, line {name.lineno}: an annotation names '{name.id}', "
                                "which the stub hides")
    return problems


def main():
    codegen, ops = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([codegen, "python", "--ops", ops, "--output-dir", out], check=True)
        path = pathlib.Path(out) / "_C.pyi"
        tree = ast.parse(path.read_text(), str(path))
    problems = scope_problems(tree.body, "_C")
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    for name, node in classes.items():
        problems += scope_problems(node.body, name)
    problems += hidden_names(tree, {"bool", "int", "float"}, "_C")
    problems += hidden_names(classes["Tensor"], {"dtype", "device"}, "Tensor")
    tensor_methods = {n.name for n in classes["Tensor"].body if isinstance(n, ast.FunctionDef)}
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    for expected in ("add", "add_", "max", "to", "shape"):
        if expected not in tensor_methods:
            problems.append(f"Tensor.{expected} is missing")
    for expected in ("add", "conv2d", "tensor", "from_dlpack"):
        if expected not in functions:
            problems.append(f"_C.{expected} is missing")
    for problem in problems:
        print(f"stubs_test: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
