"""The repr of backplane.Tensor, in PyTorch's format.

``tensor([[0.2689, 0.7311], [0.2689, 0.7311]])`` on two lines, numbers aligned in columns;
floats with 4 decimals, or without decimals (``1.``) when every one is an integer, or in
scientific notation when their magnitudes span too much; more than 1000 elements summarised
with ``...`` after the first and before the last 3 rows of each dim; then the device when it is
not the host, the dtype when the values do not imply it, and the autograd state.
"""

import math

from . import _C

# Tensors with more elements than this show only the edge rows of each dim.
_SUMMARY_THRESHOLD = 1000
_EDGE_ITEMS = 3
_LINE_WIDTH = 80
_PRECISION = 4

# Stands for the rows a summary leaves out.
_ELIDED = object()


def _default_dtypes():
    # The dtypes that printed values imply: float32 for floats, int64 for ints, and bool.
    return (_C.float32, _C.int64, _C.bool)


def _gather(tensor, summarize):
    """The values to print, as nested lists (a number for a 0-dim tensor), with _ELIDED in
    place of the rows a summary leaves out."""
    if tensor.dim() == 0 or not summarize:
        return tensor.tolist()
    rows = tensor.shape[0]
    if rows > 2 * _EDGE_ITEMS:
        if tensor.dim() == 1:
            return tensor[:_EDGE_ITEMS].tolist() + [_ELIDED] + tensor[-_EDGE_ITEMS:].tolist()
        first = [_gather(tensor[i], summarize) for i in range(_EDGE_ITEMS)]
        last = [_gather(tensor[i], summarize) for i in range(rows - _EDGE_ITEMS, rows)]
        return first + [_ELIDED] + last
    if tensor.dim() == 1:
        return tensor.tolist()
    return [_gather(tensor[i], summarize) for i in range(rows)]


def _flatten(values, out):
    if isinstance(values, list):
        for value in values:
            _flatten(value, out)
    elif values is not _ELIDED:
        out.append(values)
    return out


class _NumberFormat:
    """How every number of one tensor is written, so that they line up: one width, and for
    floats one notation."""

    def __init__(self, values, floating):
        self.floating = floating
        self.integers = True
        self.scientific = False
        self.width = 1
        if not floating:
            self.width = max([1] + [len(str(v)) for v in values])
            return
        # Zeros, infinities and NaN print the same in any notation: only the others decide.
        decisive = [v for v in values if v != 0 and math.isfinite(v)]
        if not decisive:
            return
        magnitudes = [abs(v) for v in decisive]
        smallest, largest = min(magnitudes), max(magnitudes)
        self.integers = all(v == math.ceil(v) for v in decisive)
        spread = largest / smallest > 1000.0 or largest > 1.0e8
        self.scientific = spread if self.integers else spread or smallest < 1.0e-4
        self.width = max([1] + [len(self._text(v)) for v in decisive])

    def _text(self, value):
        if self.scientific:
            return f"{value:.{_PRECISION}e}"
        if self.integers:
            # "1." marks a float that holds an integer; "nan" and "inf" keep no point.
            return f"{value:.0f}" + ("." if math.isfinite(value) else "")
        return f"{value:.{_PRECISION}f}"

    def __call__(self, value):
        text = self._text(value) if self.floating else str(value)
        return text.rjust(self.width)


def _format_vector(values, indent, number_format):
    # Each element takes its width plus ", "; a line holds as many as fit in the line width.
    per_line = max(1, (_LINE_WIDTH - indent) // (number_format.width + 2))
    items = [" ..." if v is _ELIDED else number_format(v) for v in values]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _format_nested(values, dims, indent, number_format):
    if dims == 0:
        return number_format(values)
    if dims == 1:
        return _format_vector(values, indent, number_format)
    rows = [
        "..." if row is _ELIDED else _format_nested(row, dims - 1, indent + 1, number_format)
        for row in values
    ]
    # Rows of a matrix are separated by one line break, of a 3-D tensor by two, and so on.
    separator = "," + "\n" * (dims - 1) + " " * (indent + 1)
    return "[" + separator.join(rows) + "]"


def _append_suffixes(text, suffixes, indent):
    # Each suffix follows on the last line while it fits in the line width, else on a line of
    # its own, aligned with the values.
    parts = [text]
    line_length = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if line_length + len(suffix) + 2 > _LINE_WIDTH:
            parts.append(",\n" + " " * indent + suffix)
            line_length = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            line_length += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _str(tensor):
    """The repr of a backplane.Tensor, as PyTorch writes a torch.Tensor's."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    device = tensor.device
    if device.type != "cpu":
        suffixes.append(f"device='{device}'")
    data = tensor.detach()
    if data.numel() == 0:
        body = "[]"
        if data.dim() != 1:
            suffixes.append(f"size={tuple(data.shape)}")
        if tensor.dtype is not _C.float32:
            suffixes.append(f"dtype={tensor.dtype!r}")
    else:
        if tensor.dtype not in _default_dtypes():
            suffixes.append(f"dtype={tensor.dtype!r}")
        summarize = data.numel() > _SUMMARY_THRESHOLD
        values = _gather(data, summarize)
        number_format = _NumberFormat(_flatten(values, []), tensor.dtype.is_floating_point)
        body = _format_nested(values, data.dim(), indent, number_format)
    grad_fn = tensor.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn.name()}>")
    elif tensor.requires_grad:
        suffixes.append("requires_grad=True")
    return _append_suffixes(prefix + body, suffixes, indent)
