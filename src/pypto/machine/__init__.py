"""The simulated machine: presets (TOML, every number sourced) and the spec object."""
