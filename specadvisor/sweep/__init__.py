"""Running sweeps: a plan of server configurations (arms), the runner that measures them (scheduler,
slots, GPU monitor, Ray), the adaptive policy that skips hopeless arms, and the capacity runner.
What reads the results (predictor, decision, recommendation, drift, summary) is `specadvisor.analysis`."""
