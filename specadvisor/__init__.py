"""specadvisor: choose, measure and export speculative-decoding settings for vLLM."""

__version__ = "0.1.0"
