"""Live GPU readings while arms run: sampling, energy, and the free-memory check before a launch.

Plain Python on purpose (dataclasses, threads, asyncio; no pydantic, httpx or psutil): it must run
on a bare GPU machine that has only torch and nvidia-ml-py (benchmarks/gpu_telemetry_check.py).
The sweep turns its records into domain models in specadvisor.sweep.monitor.
"""
