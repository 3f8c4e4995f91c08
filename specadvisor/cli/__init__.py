"""The headless command line: argument parsing and rendering only; the work lives in the core."""
