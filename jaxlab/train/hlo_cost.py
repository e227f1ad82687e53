"""What XLA's cost analysis leaves out of a compiled program, read from its HLO text.

``compiled.cost_analysis()`` counts the body of a ``while`` loop (a ``lax.scan``, a
``fori_loop``) once, whatever its trip count. :func:`loop_correction` walks the compiled
HLO (``compiled.as_text()``), finds each loop's trip count (XLA annotates the loops whose
count it can prove, ``known_trip_count``) and estimates the FLOPs and bytes the repeats
add: per instruction, ``2·out·contracted`` FLOPs for ``dot``, ``2·out·kernel/out_features``
for ``convolution``, one FLOP per output element of the element-wise arithmetic and one per
input element of a ``reduce``; bytes as operands plus outputs of each unfused
instruction (XLA's own accounting of "bytes accessed").

:func:`matmul_flops_by_dtype` reads the *unoptimised* HLO (``lowered.compiler_ir("hlo")``;
XLA:CPU rewrites bf16 dots to f32 when it compiles) and splits the dot and convolution
FLOPs by the precision the accelerator runs them at: ``"bf16"`` (bf16, f16), ``"tf32"``
(f32 at JAX's default precision: TF32 tensor cores on A100/H100, one bf16 pass on TPUs),
``"fp32"`` (f32 at ``precision="highest"``), ``"fp8"``, ``"int8"`` and ``"fp64"``.

On a GPU, XLA compiles most dots and convolutions to library calls (``custom-call`` instructions of
cuBLAS ``__cublas$gemm`` / ``__cublas$lt$matmul`` and cuDNN ``__cudnn$conv*``), which its
``cost_analysis`` leaves out. The walk counts them from their operand shapes (the GEMM's
contracting dimensions from its ``backend_config``; a convolution's from ``dim_labels``),
so :attr:`LoopCorrection.flops` and :attr:`LoopCorrection.matmul_flops` (every loop at its
trip count) are the FLOPs of a program compiled for an accelerator.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping

__all__ = [
    "LoopCorrection",
    "loop_correction",
    "matmul_flops_by_dtype",
    "outer_loop_trips",
    "parse_hlo",
]

_BYTES = {
    "pred": 1,
    "s4": 1,
    "u4": 1,
    "s8": 1,
    "u8": 1,
    "s16": 2,
    "u16": 2,
    "f16": 2,
    "bf16": 2,
    "s32": 4,
    "u32": 4,
    "f32": 4,
    "s64": 8,
    "u64": 8,
    "f64": 8,
    "c64": 8,
    "c128": 16,
    "token": 0,
}
_NO_TRAFFIC = {
    "parameter",
    "constant",
    "tuple",
    "get-tuple-element",
    "bitcast",
    "while",
    "conditional",
    "call",
    "after-all",
    "partition-id",
    "replica-id",
    "iota",
}
_ELEMENTWISE = {
    "add",
    "subtract",
    "multiply",
    "divide",
    "maximum",
    "minimum",
    "negate",
    "abs",
    "exponential",
    "exponential-minus-one",
    "log",
    "log-plus-one",
    "tanh",
    "logistic",
    "sqrt",
    "rsqrt",
    "cbrt",
    "power",
    "remainder",
    "sine",
    "cosine",
    "tan",
    "atan2",
    "erf",
    "compare",
    "select",
    "clamp",
    "floor",
    "ceil",
    "round-nearest-even",
    "round-nearest-afz",
    "sign",
}
_SHAPE = re.compile(r"([a-z]+[0-9]*(?:e[0-9]m[0-9][a-z]*)?)\[([0-9,]*)\]")
_HEADER = re.compile(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s*(?:\(.*\)\s*->\s*.*)?\{\s*$")
_CALLEE = re.compile(
    r"\b(calls|to_apply|body|condition|true_computation|false_computation)"
    r"=%?([\w.\-]+)"
)
_BRANCHES = re.compile(r"branch_computations=\{([^}]*)\}")
_TRIPS = re.compile(r'"known_trip_count":\{"n":"([0-9]+)"\}')
_TARGET = re.compile(r'custom_call_target="([^"]*)"')
_GEMM_CONTRACTING = re.compile(r'"lhs_contracting_dimensions":\[([^\]]*)\]')
#: cuBLAS GEMM targets of XLA:GPU (``custom_call_target``).
GEMM_TARGETS = ("__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8")
#: cuDNN convolution targets of XLA:GPU, each with where the forward convolution's output
#: and its kernel are: an operand's index, or ``"out"`` (the call's result).
CONV_TARGETS: dict[str, tuple[int | str, int | str]] = {
    "__cudnn$convForward": ("out", 1),
    "__cudnn$convBiasActivationForward": ("out", 1),
    "__cudnn$convBackwardInput": (0, 1),
    "__cudnn$convBackwardFilter": (1, "out"),
}


@dataclasses.dataclass(frozen=True)
class Instruction:
    """One HLO instruction: its name, output shapes ``[(dtype, dims)]``, opcode, operand
    names and the text after the operands (attributes)."""

    name: str
    shapes: tuple[tuple[str, tuple[int, ...]], ...]
    opcode: str
    operands: tuple[str, ...]
    attributes: str


def _shapes(text: str) -> tuple[tuple[str, tuple[int, ...]], ...]:
    return tuple(
        (dtype, tuple(int(d) for d in dims.split(",") if d)) for dtype, dims in _SHAPE.findall(text)
    )


def _closing(text: str, start: int) -> int:
    """Index of the bracket closing the one at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i
    return len(text)


def _split_top(text: str) -> list[str]:
    parts, depth, begin = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[begin:i])
            begin = i + 1
    parts.append(text[begin:])
    return [p.strip() for p in parts if p.strip()]


def _instruction(line: str) -> Instruction | None:
    line = line.strip()
    if line.startswith("ROOT "):
        line = line[5:]
    name, sep, rest = line.partition(" = ")
    if not sep:
        return None
    rest = rest.strip()
    if rest.startswith("("):
        end = _closing(rest, 0)
        type_text, rest = rest[: end + 1], rest[end + 1 :].strip()
    else:
        type_text, _, rest = rest.partition(" ")
    opcode, paren, rest = rest.partition("(")
    if not paren:
        return None
    end = _closing("(" + rest, 0) - 1
    operands = tuple(op.split()[-1].lstrip("%") for op in _split_top(rest[:end]) if op.split())
    return Instruction(
        name.strip().lstrip("%"), _shapes(type_text), opcode.strip(), operands, rest[end + 1 :]
    )


def parse_hlo(text: str) -> tuple[dict[str, list[Instruction]], str | None]:
    """``({computation: [instructions]}, entry name)`` of an HLO module's text."""
    computations: dict[str, list[Instruction]] = {}
    entry, current = None, None
    for line in text.splitlines():
        if current is None:
            header = _HEADER.match(line.strip()) if not line.startswith(" ") else None
            if header and not line.startswith("HloModule"):
                current = header.group(1)
                computations[current] = []
                if line.lstrip().startswith("ENTRY"):
                    entry = current
            continue
        if line.strip() == "}":
            current = None
            continue
        instruction = _instruction(line)
        if instruction is not None:
            computations[current].append(instruction)
    return computations, entry


def _elements(dims: tuple[int, ...]) -> int:
    return math.prod(dims)


def _bytes(shapes) -> int:
    return sum(_elements(dims) * _BYTES.get(dtype, 1) for dtype, dims in shapes)


def _dims(attributes: str, key: str) -> tuple[int, ...]:
    match = re.search(key + r"=\{([0-9,]*)\}", attributes)
    return tuple(int(d) for d in match.group(1).split(",") if d) if match else ()


def _conv_flops(forward_out: tuple[int, ...], kernel: tuple[int, ...], attributes: str) -> float:
    """``2 · forward output elements · kernel elements / output features``."""
    labels = re.search(r"dim_labels=[^_]*_([^-]*)->", attributes)
    if labels is None or "o" not in labels.group(1) or len(labels.group(1)) != len(kernel):
        return 0.0
    out_features = kernel[labels.group(1).index("o")]
    return 2.0 * _elements(forward_out) * _elements(kernel) / max(out_features, 1)


def _operand_dims(ins: Instruction, table: Mapping[str, Instruction], i: int):
    operand = table.get(ins.operands[i]) if len(ins.operands) > i else None
    return operand.shapes[0][1] if operand is not None and operand.shapes else None


def _custom_call_flops(ins: Instruction, table: Mapping[str, Instruction]) -> float:
    """A cuBLAS GEMM's ``2·out·contracted`` or a cuDNN convolution's FLOPs (0 for any
    other custom call). The output is a tuple whose first element is the result."""
    target = _TARGET.search(ins.attributes)
    if target is None or not ins.shapes:
        return 0.0
    out = ins.shapes[0][1]
    if target.group(1) in GEMM_TARGETS:
        lhs = _operand_dims(ins, table, 0)
        contracting = _GEMM_CONTRACTING.search(ins.attributes)
        if lhs is None or contracting is None:
            return 0.0
        dims = [int(d) for d in re.findall(r"[0-9]+", contracting.group(1))]
        return 2.0 * _elements(out) * math.prod(lhs[d] for d in dims)
    if target.group(1) in CONV_TARGETS:
        where_out, where_kernel = CONV_TARGETS[target.group(1)]
        forward = out if isinstance(where_out, str) else _operand_dims(ins, table, where_out)
        kernel = out if isinstance(where_kernel, str) else _operand_dims(ins, table, where_kernel)
        if forward is None or kernel is None:
            return 0.0
        return _conv_flops(forward, kernel, ins.attributes)
    return 0.0


def _matmul_flops(ins: Instruction, table: Mapping[str, Instruction]) -> float:
    """FLOPs of a ``dot``, ``convolution`` or library-call GEMM/convolution (else 0)."""
    if ins.opcode == "custom-call":
        return _custom_call_flops(ins, table)
    if ins.opcode not in ("dot", "convolution"):
        return 0.0
    out = sum(_elements(d) for _, d in ins.shapes)
    if ins.opcode == "dot":
        lhs = _operand_dims(ins, table, 0)
        if lhs is None:
            return 0.0
        return 2.0 * out * math.prod(lhs[i] for i in _dims(ins.attributes, "lhs_contracting_dims"))
    kernel = _operand_dims(ins, table, 1)
    if kernel is None or not ins.shapes:
        return 0.0
    return _conv_flops(ins.shapes[0][1], kernel, ins.attributes)


def _own_flops(ins: Instruction, table: Mapping[str, Instruction]) -> float:
    if ins.opcode in ("dot", "convolution", "custom-call"):
        return _matmul_flops(ins, table)
    if ins.opcode in _ELEMENTWISE:
        return float(sum(_elements(d) for _, d in ins.shapes))
    if ins.opcode == "reduce" and ins.operands and ins.operands[0] in table:
        return float(sum(_elements(d) for _, d in table[ins.operands[0]].shapes))
    return 0.0


@dataclasses.dataclass(frozen=True)
class LoopCorrection:
    """What the repeats of the program's loop bodies add to XLA's once-counted figures, and
    the program's own FLOP count from its HLO.

    Attributes:
      extra_flops: FLOPs of the repeats (bodies × (trips − 1), nested loops multiplied).
      extra_bytes: bytes accessed by the repeats.
      trips: the trip count of each loop, outermost first (``None``: XLA cannot know it,
        and the loop is counted ``assumed_trips`` times).
      flops: every instruction's FLOPs read from the HLO (dots, convolutions, cuBLAS and
        cuDNN calls, element-wise arithmetic, reductions), each loop at its trip count.
      matmul_flops: the part of ``flops`` in dots, convolutions and library GEMMs and
        convolutions.
    """

    extra_flops: float
    extra_bytes: float
    trips: tuple[int | None, ...]
    flops: float = 0.0
    matmul_flops: float = 0.0


def loop_correction(compiled_text: str, assumed_trips: int | None = None) -> LoopCorrection:
    """The loop repeats of a compiled module (``compiled.as_text()``); a loop whose trip
    count XLA does not know counts ``assumed_trips`` times (``None``: once)."""
    computations, entry = parse_hlo(compiled_text)
    if entry is None:
        return LoopCorrection(0.0, 0.0, ())
    trips: list[int | None] = []
    memo: dict[tuple[str, bool, bool], tuple[float, float, float]] = {}

    def cost(name: str, fused: bool, repeat: bool) -> tuple[float, float, float]:
        """(FLOPs, bytes, matmul FLOPs) of a computation; loops at their trip counts when
        ``repeat``, else once."""
        key = (name, fused, repeat)
        if key in memo:
            return memo[key]
        memo[key] = (0.0, 0.0, 0.0)  # a recursive reference counts nothing
        table = {ins.name: ins for ins in computations.get(name, [])}
        flops = traffic = matmul = 0.0
        for ins in computations.get(name, []):
            callees = dict(_CALLEE.findall(ins.attributes))
            if ins.opcode == "while" and "body" in callees:
                known = _TRIPS.search(ins.attributes)
                count = int(known.group(1)) if known else None
                if repeat:
                    trips.append(count)
                n = (count if count is not None else (assumed_trips or 1)) if repeat else 1
                body = cost(callees["body"], fused, repeat)
                flops, traffic, matmul = (
                    flops + n * body[0],
                    traffic + n * body[1],
                    matmul + n * body[2],
                )
                continue
            if ins.opcode == "conditional":
                listed = _BRANCHES.search(ins.attributes)
                names = (
                    [b.strip().lstrip("%") for b in listed.group(1).split(",")]
                    if listed
                    else [
                        callees[k]
                        for k in ("true_computation", "false_computation")
                        if k in callees
                    ]
                )
                branches = [cost(b, fused, repeat) for b in names] or [(0.0, 0.0, 0.0)]
                flops += max(b[0] for b in branches)
                traffic += max(b[1] for b in branches)
                matmul += max(b[2] for b in branches)
                continue
            callee = callees.get("calls") or (ins.opcode == "call" and callees.get("to_apply"))
            if ins.opcode in ("fusion", "call") and callee:
                inner = cost(callee, fused or ins.opcode == "fusion", repeat)
                flops += inner[0]
                traffic += inner[1]
                matmul += inner[2]
            else:
                own = _own_flops(ins, table)
                flops += own
                if ins.opcode in ("dot", "convolution", "custom-call"):
                    matmul += own
            if not fused and ins.opcode not in _NO_TRAFFIC:
                operands = [table[o].shapes for o in ins.operands if o in table]
                traffic += _bytes(ins.shapes) + sum(_bytes(s) for s in operands)
        memo[key] = (flops, traffic, matmul)
        return memo[key]

    counted = cost(entry, False, True)
    once = cost(entry, False, False)
    return LoopCorrection(
        max(counted[0] - once[0], 0.0),
        max(counted[1] - once[1], 0.0),
        tuple(trips),
        flops=counted[0],
        matmul_flops=counted[2],
    )


def outer_loop_trips(compiled_text: str) -> tuple[int | None, ...]:
    """The trip counts of the loops a module runs outside any other loop (those of its
    entry computation and of the fusions, calls and branches it reaches, not of loop
    bodies)."""
    computations, entry = parse_hlo(compiled_text)
    found: list[int | None] = []
    seen: set[str] = set()
    pending = [entry] if entry is not None else []
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        for ins in computations.get(name, []):
            callees = dict(_CALLEE.findall(ins.attributes))
            if ins.opcode == "while":
                known = _TRIPS.search(ins.attributes)
                found.append(int(known.group(1)) if known else None)
                continue
            listed = _BRANCHES.search(ins.attributes)
            if listed:
                pending += [b.strip().lstrip("%") for b in listed.group(1).split(",")]
            pending += [c for k, c in callees.items() if k not in ("body", "condition")]
    return tuple(found)


def _precision(ins: Instruction, table: Mapping[str, Instruction]) -> str:
    operand = table.get(ins.operands[0]) if ins.operands else None
    dtype = (
        operand.shapes[0][0]
        if operand is not None and operand.shapes
        else (ins.shapes[0][0] if ins.shapes else "f32")
    )
    if dtype.startswith("f8"):
        return "fp8"
    if dtype in ("bf16", "f16"):
        return "bf16"
    if dtype in ("s8", "u8", "s4", "u4"):
        return "int8"
    if dtype == "f64":
        return "fp64"
    return "fp32" if "operand_precision={highest" in ins.attributes else "tf32"


def matmul_flops_by_dtype(hlo_text: str) -> dict[str, float]:
    """Dot and convolution FLOPs (each computation once) by the precision class they run
    at, from the unoptimised HLO text; ``{}`` for a program without matrix products."""
    computations, _ = parse_hlo(hlo_text)
    out: dict[str, float] = {}
    for instructions in computations.values():
        table = {ins.name: ins for ins in instructions}
        for ins in instructions:
            if ins.opcode in ("dot", "convolution"):
                flops = _matmul_flops(ins, table)
                if flops:
                    kind = _precision(ins, table)
                    out[kind] = out.get(kind, 0.0) + flops
    return out
