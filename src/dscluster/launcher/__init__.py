"""Building the DeepSpeed runner command for a run (pure, plan.py) and checking a launch before it starts
(prepare.py)."""
