"""Where arms run: the host split into slots, one server per slot at a time.

On GPUs a slot is a group of tensor-parallel-size GPUs, grouped so that GPUs sharing NVLink/xGMI
stay together; the server sees only its group (CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES). On a
CPU-only host a slot is a contiguous core range (VLLM_CPU_OMP_THREADS_BIND), so parallel sweeps can
be run and tested without a GPU. One slot with no pinning is the serial sweep. Pure functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from specadvisor.errors import InputError


@dataclass(frozen=True)
class Slot:
    index: int
    gpus: tuple[int, ...] = ()
    cores: tuple[int, ...] = ()
    shared: bool = False  # more slots than GPU groups: this slot shares its GPUs with another
    env: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    name: str = ""  # a slot somewhere else ("ray 1"): the node it lands on is known only at launch

    @property
    def label(self) -> str:
        if self.gpus:
            return f"GPU {','.join(map(str, self.gpus))}"
        if self.cores:
            return f"cores {ranges(self.cores)}"
        return self.name

    @property
    def gpu_ids(self) -> str | None:
        return ",".join(map(str, self.gpus)) if self.gpus else None

    def server_env(self) -> dict[str, str]:
        """Environment the slot's server needs beyond the GPU selection (which ServerSpec.gpu_ids sets)."""
        env = dict(self.env)
        if self.cores:
            env["VLLM_CPU_OMP_THREADS_BIND"] = ranges(self.cores, sep=",")
        return env


def gpu_groups(gpus: list[int], size: int, affinity: dict[tuple[int, int], int] | None = None) -> list[tuple[int, ...]]:
    """Split `gpus` into groups of `size`, closest GPUs together (higher affinity = closer; missing
    pairs count 0). Greedy: each group starts at the lowest free GPU and adds the GPU closest to all
    members so far (ties: lowest index). GPUs left over (fewer than `size`) form no group."""
    if size < 1:
        raise InputError(f"tensor parallel size must be >= 1, got {size}", hint="fix --tensor-parallel-size")
    affinity = affinity or {}
    free = sorted(gpus)
    groups: list[tuple[int, ...]] = []
    while len(free) >= size:
        group = [free.pop(0)]
        while len(group) < size:
            best = max(free, key=lambda g: (min(affinity.get((m, g), 0) for m in group), -g))
            free.remove(best)
            group.append(best)
        groups.append(tuple(sorted(group)))
    return groups


def cpu_slots(cores: list[int], k: int) -> list[Slot]:
    """`k` slots of contiguous core ranges (the first ranges get the remainder)."""
    cores = sorted(cores)
    if k < 1:
        raise InputError(f"--parallel must be at least 1, got {k}", hint="pass --parallel 1 or more, or auto")
    if k > len(cores):
        raise InputError(f"--parallel {k} needs {k} CPU cores, this host offers {len(cores)}", hint=f"pass --parallel {len(cores)} or less")
    base, extra = divmod(len(cores), k)
    slots, start = [], 0
    for i in range(k):
        width = base + (1 if i < extra else 0)
        slots.append(Slot(index=i, cores=tuple(cores[start : start + width])))
        start += width
    return slots


def plan_slots(
    parallel: str | int,
    *,
    gpus: list[int],
    tp: int = 1,
    cores: list[int] | None = None,
    affinity: dict[tuple[int, int], int] | None = None,
) -> list[Slot]:
    """Slots for `--parallel auto|K`. auto: one slot per free GPU group (serial on a CPU-only host).
    K on GPUs: K groups; more than the groups share GPUs round-robin (two small servers on one GPU,
    each with a --gpu-memory-utilization share). K on a CPU-only host: K core ranges."""
    k = parallel_count(parallel)
    auto = k is None
    if gpus:
        groups = gpu_groups(gpus, tp, affinity)
        if not groups:
            raise InputError(f"tensor parallel size {tp} needs {tp} GPUs, {len(gpus)} visible", hint="lower --tensor-parallel-size or make more GPUs visible")
        if auto or k is None:
            k = len(groups)
        if k == 1:
            return [Slot(index=0)]  # one server at a time: it sees what the user made visible, unpinned
        # NVML numbers GPUs in PCI bus order, CUDA by default fastest first: make the indices agree.
        order = {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
        return [Slot(index=i, gpus=groups[i % len(groups)], shared=k > len(groups), env=order) for i in range(k)]
    if k is None or k == 1:  # auto on a CPU-only host: one server at a time
        return [Slot(index=0)]
    return cpu_slots(list(cores or []), k)


def parallel_count(parallel: str | int) -> int | None:
    """`--parallel` as typed: None for auto, else a positive count (InputError otherwise)."""
    return None if str(parallel).strip().lower() == "auto" else _positive_int(parallel)


def tp_size(args: list[str]) -> int:
    """The tensor parallel size a `vllm serve` argument list asks for (1 when absent)."""
    for i, arg in enumerate(args):
        for flag in ("--tensor-parallel-size", "-tp"):
            if arg == flag and i + 1 < len(args):
                return _positive_int(args[i + 1])
            if arg.startswith(flag + "="):
                return _positive_int(arg.split("=", 1)[1])
    return 1


def _positive_int(value: str | int) -> int:
    try:
        k = int(value)
    except (TypeError, ValueError):
        raise InputError(f"--parallel {value!r} is neither 'auto' nor a whole number", hint="pass --parallel auto or e.g. --parallel 2") from None
    if k < 1:
        raise InputError(f"--parallel must be at least 1, got {k}", hint="pass --parallel 1 or more, or auto")
    return k


def ranges(values: Sequence[int], sep: str = ",") -> str:
    """(0, 1, 2, 5) -> "0-2,5" (vLLM's VLLM_CPU_OMP_THREADS_BIND syntax)."""
    spans: list[list[int]] = []  # [first, last] of each run of consecutive values
    for v in values:
        if spans and v == spans[-1][1] + 1:
            spans[-1][1] = v
        else:
            spans.append([v, v])
    return sep.join(f"{first}-{last}" if last != first else f"{first}" for first, last in spans)


def slots_at_once(parallel: str | int, gpus: int, tp: int = 1) -> tuple[int, float]:
    """(servers at once, how much slower each runs beside the others) for a time estimate, as
    `plan_slots` places them: auto is one server per GPU group (one at a time without GPUs); K
    servers on fewer groups share GPUs, K on a CPU-only host split its cores K ways."""
    k = parallel_count(parallel)
    if gpus:
        groups = max(1, gpus // max(1, tp))
        k = groups if k is None else k
        return k, max(1.0, k / groups)
    if k is None or k <= 1:
        return 1, 1.0
    return k, float(k)
