"""Prediction without a run: a recipe's points answered from the simulator's model on a virtual clock."""
