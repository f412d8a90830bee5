"""gtsim-sweep's modules (scripts/gtsim-sweep, docs/sweep.md): spec (the TOML spec and its
points), db (the SQLite database), run (running points here), plot (the plots), files
(atomic output)."""
