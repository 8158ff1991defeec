"""Judgements over measured metrics: the bottleneck verdict and the profile's marks."""
