"""Trio actors: one async function each, talking over memory channels."""
