"""Reading measurements: the predictor for untested N, the decision rule and the one recommendation
drawn from it, baseline drift, the sweep summary, capacity answers, the power a view shows, the cost
history a plan's estimate uses, and the names arms go by. Pure functions over stored sessions: the
running code (`specadvisor.sweep`) and the reports both read results through here, and nothing here
launches or measures anything."""
