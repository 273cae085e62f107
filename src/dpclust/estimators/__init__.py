"""Estimators: thin facades over the chain runner..."""
