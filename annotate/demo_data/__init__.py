"""The built-in demo response set: original questions and a seeded 2PL simulation (see README.md)."""
