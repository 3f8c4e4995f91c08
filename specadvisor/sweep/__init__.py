"""Sweeps: a plan of server configurations (arms), the runner that measures them, the predictor for
untested N, the adaptive policy that skips hopeless arms, and the recommendation drawn from results."""
