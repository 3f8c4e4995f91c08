"""vLLM engine layer."""
