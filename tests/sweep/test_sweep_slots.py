"""Slot planning (pure) and the NVML topology read through a fake NVML module."""

from __future__ import annotations

import pytest

from specadvisor.errors import InputError
from specadvisor.hardware import topology
from specadvisor.sweep.slots import Slot, cpu_slots, gpu_groups, plan_slots, tp_size


def test_groups_keep_nvlink_peers_together():
    # 0-2 and 1-3 are NVLink pairs; index order alone would pair 0-1 and 2-3
    links = {(0, 2): 2, (2, 0): 2, (1, 3): 2, (3, 1): 2}
    assert gpu_groups([0, 1, 2, 3], 2, links) == [(0, 2), (1, 3)]
    assert gpu_groups([0, 1, 2, 3], 2) == [(0, 1), (2, 3)]  # no topology known: index order
    assert gpu_groups([0, 1, 2, 3, 4], 2) == [(0, 1), (2, 3)]  # a GPU left over forms no group
    assert gpu_groups(list(range(8)), 4, {(a, b): 2 for a in range(0, 8, 2) for b in range(0, 8, 2) if a != b}) == [(0, 2, 4, 6), (1, 3, 5, 7)]


def test_cpu_slots_split_cores_into_contiguous_ranges():
    slots = cpu_slots([0, 1, 2, 3, 4], 2)
    assert [s.cores for s in slots] == [(0, 1, 2), (3, 4)]
    assert slots[0].label == "cores 0-2" and slots[0].server_env() == {"VLLM_CPU_OMP_THREADS_BIND": "0-2"}
    assert Slot(index=0, cores=(0, 1, 3)).server_env()["VLLM_CPU_OMP_THREADS_BIND"] == "0-1,3"
    with pytest.raises(InputError, match="needs 3 CPU cores"):
        cpu_slots([0, 1], 3)


def test_plan_slots_auto_and_k():
    assert plan_slots("auto", gpus=[], cores=[0, 1]) == [Slot(index=0)]  # CPU-only auto: serial
    assert [s.cores for s in plan_slots("2", gpus=[], cores=[0, 1])] == [(0,), (1,)]
    eight = plan_slots("auto", gpus=list(range(8)), tp=2)
    assert [s.gpus for s in eight] == [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert eight[0].gpu_ids == "0,1" and eight[0].server_env() == {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    assert [s.gpus for s in plan_slots(2, gpus=list(range(8)), tp=2)] == [(0, 1), (2, 3)]
    one_gpu = plan_slots("2", gpus=[0])  # two small servers on one GPU
    assert [s.gpus for s in one_gpu] == [(0,), (0,)] and all(s.shared for s in one_gpu)
    assert plan_slots("auto", gpus=[0]) == [Slot(index=0)]  # one group: unpinned, as before
    with pytest.raises(InputError, match="neither 'auto' nor a whole number"):
        plan_slots("many", gpus=[])
    with pytest.raises(InputError, match="needs 4 GPUs"):
        plan_slots("auto", gpus=[0, 1], tp=4)


def test_tp_size_reads_both_spellings():
    assert tp_size(["--max-model-len", "2048"]) == 1
    assert tp_size(["--tensor-parallel-size", "4"]) == 4
    assert tp_size(["-tp=2"]) == 2


class FakeNvml:
    NVML_P2P_CAPS_INDEX_NVLINK = 7
    NVML_P2P_STATUS_OK = 0
    NVML_TOPOLOGY_HOSTBRIDGE = 30

    def __init__(self, nvlink, ancestor):
        self.nvlink, self.ancestor = nvlink, ancestor
        self.shut = False

    def nvmlInit(self):
        pass

    def nvmlShutdown(self):
        self.shut = True

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetP2PStatus(self, a, b, cap):
        assert cap == self.NVML_P2P_CAPS_INDEX_NVLINK
        return 0 if frozenset((a, b)) in self.nvlink else 4

    def nvmlDeviceGetTopologyCommonAncestor(self, a, b):
        return self.ancestor.get(frozenset((a, b)), 50)


def test_nvml_affinity_scores_nvlink_then_host_bridge():
    fake = FakeNvml(nvlink={frozenset((0, 3))}, ancestor={frozenset((0, 1)): 30})
    aff = topology.nvidia_affinity([0, 1, 2, 3], loader=lambda: fake)
    assert aff[(0, 3)] == aff[(3, 0)] == topology.NVLINK
    assert aff[(0, 1)] == topology.SAME_BRIDGE and aff[(1, 2)] == topology.FAR
    assert fake.shut
    assert gpu_groups([0, 1, 2, 3], 2, aff) == [(0, 3), (1, 2)]


def test_unusable_nvml_means_no_topology():
    def broken():
        raise ImportError("no pynvml")

    assert topology.nvidia_affinity([0, 1], loader=broken) == {}
    assert topology.amd_affinity([0, 1], loader=broken) == {}
