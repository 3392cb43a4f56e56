//! Named retry policies from TOML. Not implemented yet (see the config issue).
