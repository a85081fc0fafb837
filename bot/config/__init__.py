"""Typed configuration: YAML plus ${VAR} interpolation, validated at the edge."""
