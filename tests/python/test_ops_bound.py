"""Every op of core/ops/ops.yaml is bound in Python: its schema is among the ones bp-codegen
bound, bp.<op> exists for function variants and bp.Tensor.<op> for method variants, and each
one's docstring shows the schema. A new ops.yaml entry without a binding fails here."""

import pytest

import backplane as bp
from ops_yaml import read_entries

ENTRIES = read_entries()
BOUND = bp._C._bound_schemas()


def entry_ids(entries):
    return [entry.name for entry in entries]


def test_ops_yaml_reader_finds_the_entries():
    names = {entry.name for entry in ENTRIES}
    assert {"add.Tensor", "add_.Tensor", "add.out", "max.dim", "conv2d", "_sgd_step.out"} <= names
    assert len(names) == len(ENTRIES), "ops.yaml names an entry twice"


def test_bound_schemas_is_a_list_of_strings():
    assert isinstance(BOUND, list)
    assert all(isinstance(schema, str) for schema in BOUND)


def test_each_schema_is_bound_once():
    repeated = sorted({schema for schema in BOUND if BOUND.count(schema) > 1})
    assert not repeated


def test_nothing_is_bound_that_ops_yaml_does_not_list():
    assert sorted(set(BOUND) - {entry.schema for entry in ENTRIES}) == []


@pytest.mark.parametrize("entry", ENTRIES, ids=entry_ids(ENTRIES))
def test_schema_is_bound(entry):
    assert entry.schema in BOUND


FUNCTIONS = [entry for entry in ENTRIES if "function" in entry.variants]
METHODS = [entry for entry in ENTRIES if "method" in entry.variants]


@pytest.mark.parametrize("entry", FUNCTIONS, ids=entry_ids(FUNCTIONS))
def test_function_variant_is_a_module_function_documenting_its_schema(entry):
    function = getattr(bp, entry.op, None)
    assert callable(function), f"bp.{entry.op} is missing"
    assert entry.schema in (function.__doc__ or "")


@pytest.mark.parametrize("entry", METHODS, ids=entry_ids(METHODS))
def test_method_variant_is_a_tensor_method_documenting_its_schema(entry):
    method = getattr(bp.Tensor, entry.op, None)
    assert callable(method), f"bp.Tensor.{entry.op} is missing"
    assert entry.schema in (method.__doc__ or "")


def test_function_only_entries_are_not_tensor_methods():
    # ops.yaml decides where an op appears; a method no entry asks for would be a guess.
    method_ops = {entry.op for entry in METHODS}
    function_only = {entry.op for entry in FUNCTIONS} - method_ops
    assert sorted(op for op in function_only if hasattr(bp.Tensor, op)) == []


def test_method_only_entries_are_not_module_functions():
    function_ops = {entry.op for entry in FUNCTIONS}
    method_only = {entry.op for entry in METHODS} - function_ops
    assert sorted(op for op in method_only if hasattr(bp, op)) == []
