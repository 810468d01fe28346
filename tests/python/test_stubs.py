"""The stub backplane/_C.pyi against the module it describes: every name that backplane._C and
its classes define is in the stub, and the stub names nothing they lack, so that a function,
method or property added to the runtime without its stub fails here."""

import ast
import pathlib

import pytest

import backplane as bp
from backplane import _C

STUB = pathlib.Path(bp.__file__).parent / "_C.pyi"

# How objects print, pickle and are documented: stubs leave these to `object`.
NOT_IN_STUBS = {"__doc__", "__module__", "__repr__", "__str__", "__reduce__", "__weakref__"}
# The module's own attributes, which every module has.
MODULE_ATTRIBUTES = {"__doc__", "__file__", "__loader__", "__name__", "__package__", "__spec__"}
# What the stub defines for its own annotations: the builtins and classes it hides, and the
# number type of Scalar arguments.
STUB_HELPERS = {"_bool", "_int", "_float", "_dtype", "_device", "Number"}
# Slots of the C types that bring names with no use: tp_as_mapping's store also answers `del`,
# which the Tensor refuses.
SLOT_ONLY = {("Tensor", "__delitem__")}
RICH_COMPARISONS = ("__lt__", "__le__", "__gt__", "__ge__")


def defined_names(body):
    names = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


@pytest.fixture(scope="module")
def stub():
    return ast.parse(STUB.read_text(), str(STUB))


@pytest.fixture(scope="module")
def stub_classes(stub):
    return {node.name: node for node in stub.body if isinstance(node, ast.ClassDef)}


def is_stub_helper(name):
    # The named tuples of ops with named returns, which the runtime makes without a name.
    return name in STUB_HELPERS or name.startswith("_return_types_")


def test_the_stub_has_every_name_of_the_module_and_no_other(stub):
    stubbed = defined_names(stub.body)
    runtime = set(vars(_C)) - MODULE_ATTRIBUTES
    missing = sorted(runtime - stubbed)
    assert not missing, f"in backplane._C, not in the stub: {missing}"
    extra = sorted(name for name in stubbed - runtime if not is_stub_helper(name))
    assert not extra, f"in the stub, not in backplane._C: {extra}"


def comparisons_with_no_answer(cls):
    """The rich comparisons that a C type's tp_richcompare brings but does not answer."""
    sample = {"device": bp.device("cpu"), "Tensor": bp.zeros(1)}.get(cls.__name__)
    if sample is None:
        return set()
    return {name for name in RICH_COMPARISONS
            if name in vars(cls) and getattr(sample, name)(sample) is NotImplemented}


@pytest.mark.parametrize("name", sorted(
    name for name, value in vars(_C).items() if isinstance(value, type)))
def test_the_stub_of_each_class_has_its_names_and_no_other(stub_classes, name):
    cls = getattr(_C, name)
    assert name in stub_classes, f"class {name} is not in the stub"
    stubbed = defined_names(stub_classes[name].body)
    runtime = set(vars(cls)) - NOT_IN_STUBS - comparisons_with_no_answer(cls)
    runtime -= {member for owner, member in SLOT_ONLY if owner == name}
    # A constructor is __new__ in C and __init__ in the stub; a class without one (Tensor)
    # cannot be made from Python, which the stub says by declaring none.
    if "__new__" in runtime:
        runtime = (runtime - {"__new__"}) | {"__init__"}
    missing = sorted(runtime - stubbed)
    assert not missing, f"in backplane._C.{name}, not in the stub: {missing}"
    inherited = {member for base in cls.__mro__[1:] for member in vars(base)}
    extra = sorted(stubbed - runtime - inherited)
    assert not extra, f"in the stub's {name}, not in backplane._C.{name}: {extra}"
