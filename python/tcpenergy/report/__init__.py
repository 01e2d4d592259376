"""Human-readable renderings of results, scenarios and profiles."""
